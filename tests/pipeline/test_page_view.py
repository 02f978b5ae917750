"""One page as retrieval sees it: the same object from ``raglab show --json`` and the API.

Oracle: a page written in the test, whose offsets are counted by hand, and the two faces held
against :func:`~raglab.pipeline.page_view.page_view` and each other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from raglab.cli.main import main
from raglab.corpus.pages import load_corpus
from raglab.corpus.questions import load_questions
from raglab.pipeline.lab import Lab
from raglab.pipeline.page_view import find_page, page_view


def test_a_page_view_gives_its_file_text_headings_and_answers(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "guides").mkdir(parents=True)
    (docs / "guides" / "pump.md").write_text(
        "---\ntitle: Pump\nlayout: wide\n---\n# Pump\n\nThe pump runs at 12 V.\n",
        encoding="utf-8",
    )
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps(
            {
                "id": "q1",
                "question": "Volts?",
                "answer": "runs at 12 V",
                "split": "test",
                "kind": "keyword",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    corpus = load_corpus(docs)
    qs = load_questions(questions, corpus=corpus)
    page = find_page(corpus, "guides/pump.md")
    assert page is not None and find_page(corpus, page.id) is page
    view = page_view(corpus, qs, page)
    # "# Pump\n\n" is 8 characters, "The pump " 9 more: the answer starts at 17.
    assert view["text"] == "# Pump\n\nThe pump runs at 12 V.\n"
    assert view["answers"] == [{"question": "q1", "start": 17, "end": 29}]
    assert view["text"][17:29] == "runs at 12 V"
    assert view["path"] == "guides/pump.md" and view["format"] == "md"
    assert view["meta"] == {"layout": "wide"} and view["title"] == "Pump"
    assert [h["heading"] for h in view["headings"]] == ["Pump"]


def test_show_and_the_api_give_the_same_page(
    capsys: pytest.CaptureFixture[str], api: Any, lab: Lab
) -> None:
    page = next(p for p in lab.corpus if page_view(lab.corpus, lab.questions, p)["answers"])
    capsys.readouterr()
    assert main(["show", page.id, "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    web = api.get(f"/api/page/{page.id}").json()
    assert cli == web == json.loads(json.dumps(page_view(lab.corpus, lab.questions, page)))
