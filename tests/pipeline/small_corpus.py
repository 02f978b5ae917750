"""Shared by the end-to-end tests: a three-page corpus with six questions, small enough to work
by hand (docs/design.md#reader), written into a test's temporary folder."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from raglab.pipeline.lab import Lab

PAGES = {
    "mounts": "# Mounts\n\nThe EQ5 mount carries a payload of 15 kg including the tube and finder. "
    "Tracking stops when the supply falls below 11 volts.\n",
    "returns": "# Returns\n\nA return needs an RMA number issued by support. Unopened goods may "
    "come back within 45 days of delivery.\n",
    "levels": "# Levels\n\nThe AL-32 level has 32x magnification and an accuracy of 1.0 mm per km.\n",
}
QUESTIONS = [
    (
        "t1",
        "train",
        "What payload does the EQ5 mount carry?",
        "The EQ5 mount carries a payload of 15 kg including the tube and finder.",
    ),
    (
        "t2",
        "train",
        "What magnification has the AL-32 level?",
        "The AL-32 level has 32x magnification and an accuracy of 1.0 mm per km.",
    ),
    ("t3", "train", "Do you sell telescope eyepieces?", None),
    (
        "s1",
        "test",
        "How many days for unopened goods to come back?",
        "Unopened goods may come back within 45 days of delivery.",
    ),
    (
        "s2",
        "test",
        "Below what supply voltage does tracking stop?",
        "Tracking stops when the supply falls below 11 volts.",
    ),
    ("s3", "test", "Is there a padded bag for the EQ5?", None),
]


def write_small_lab(
    folder: Path, questions: Sequence[tuple[str, str, str, str | None]] = QUESTIONS
) -> Lab:
    """The lab of :data:`PAGES` and ``questions`` (id, split, question, answer passage or None
    for out of corpus: kind "keyword" or "out-of-corpus"), its files written under ``folder``."""
    pages = folder / "pages"
    pages.mkdir(parents=True)
    for name, text in PAGES.items():
        (pages / f"{name}.md").write_text(text, encoding="utf-8")
    lines = [
        json.dumps(
            {
                "id": i,
                "split": s,
                "kind": "keyword" if a else "out-of-corpus",
                "question": q,
                "answer": a,
            }
        )
        for i, s, q, a in questions
    ]
    (folder / "q.jsonl").write_text("\n".join(lines), encoding="utf-8")
    return Lab.load(pages, folder / "q.jsonl")
