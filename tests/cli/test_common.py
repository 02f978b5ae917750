"""Every command that reads the corpus says its warnings: one ``raglab: ...`` line each on stderr.

Oracle: the messages written out by hand, as ``raglab validate`` words them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from raglab.cli.main import main

ROWS = [
    ("a1", "train", "What battery does the AX-12 need?", "The AX-12 unit needs a 9 V battery."),
    ("a2", "train", "What does E-101 mean?", "Code E-101 means the lid is open."),
    ("a3", "test", "How long to return items?", "Items may be returned within 30 days."),
    ("a4", "test", "What does E-110 mean?", "Code E-110 means the battery is low."),
]


def _untidy(tmp_path: Path) -> tuple[Path, Path]:
    """Two UTF-8 pages, a cp1252 page and a page with a site generator's front matter."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "alpha.md").write_text(
        "# Alpha\n\n## Setup\n\nThe AX-12 unit needs a 9 V battery.\n\n## Errors\n\nCode E-101 "
        "means the lid is open. Code E-110 means the battery is low.\n",
        encoding="utf-8",
    )
    (docs / "beta.md").write_text(
        "# Beta\n\nItems may be returned within 30 days. Keep the receipt.\n", encoding="utf-8"
    )
    (docs / "cafe.md").write_bytes("# Café\n\nLe café est très chaud.\n".encode("cp1252"))
    (docs / "site.md").write_text("---\nlayout: post\n---\n# Site\n\nWords.\n", encoding="utf-8")
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        "".join(
            json.dumps({"id": i, "split": s, "kind": "k", "question": q, "answer": a}) + "\n"
            for i, s, q, a in ROWS
        ),
        encoding="utf-8",
    )
    return docs, questions


@pytest.mark.parametrize("command", [["chunk"], ["fuse", "--depth", "5"]], ids=lambda c: c[0])
def test_a_command_prints_each_corpus_warning_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    docs, questions = _untidy(tmp_path)
    argv = [*command, "--corpus", str(docs), "--questions", str(questions), "--quiet"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if line.startswith("raglab:")] == [
        f"raglab: {docs / 'cafe.md'}:1: is not UTF-8 (byte 0xe9 at offset 5): read as cp1252 "
        "(detected; --encoding forces one)",
        f"raglab: {docs}: 1 page carries front-matter keys RAG lab does not use (layout): kept "
        "as metadata (--strict refuses them)",
    ]
