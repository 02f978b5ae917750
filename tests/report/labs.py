"""Small labs the report tests share."""

from __future__ import annotations

import json
from pathlib import Path

from raglab.pipeline.lab import Lab


def page_labelled_lab(folder: Path) -> Lab:
    """Three pages and questions that name relevant pages instead of answer passages."""
    pages = folder / "pages"
    pages.mkdir()
    texts = {
        "mounts": "# Mounts\n\nThe EQ5 mount carries 15 kg. Tracking stops below 11 volts.\n",
        "returns": "# Returns\n\nUnopened goods may come back within 45 days of delivery.\n",
        "levels": "# Levels\n\nThe AL-32 level has 32x magnification.\n\n## Care\n\nWipe the lens.\n",
    }
    for name, text in texts.items():
        (pages / f"{name}.md").write_text(text, encoding="utf-8")
    rows = [
        ("a", "train", "What does the EQ5 mount carry?", ["mounts"]),
        ("b", "train", "When may unopened goods come back?", ["returns"]),
        ("c", "train", "What magnification has the level?", ["levels"]),
        ("d", "test", "Below what voltage does tracking stop?", ["mounts"]),
    ]
    questions = folder / "questions.jsonl"
    questions.write_text(
        "".join(
            json.dumps({"id": i, "split": s, "kind": "beir", "question": q, "pages": p}) + "\n"
            for i, s, q, p in rows
        ),
        encoding="utf-8",
    )
    return Lab.load(pages, questions)
