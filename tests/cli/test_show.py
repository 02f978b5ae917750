"""``raglab show PAGE``: a page's text exactly as the chunkers see it, found by id or file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from raglab.cli.main import main
from raglab.pipeline.lab import Lab

RULE = "-" * 40 + "\n"


def show(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["show", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_text_shown_is_the_text_the_chunkers_cut(
    capsys: pytest.CaptureFixture[str], handbook_lab: Lab
) -> None:
    """Oracle: the library's page text (``lab.corpus``), which every chunker cuts."""
    for page in handbook_lab.corpus:
        code, out, _ = show(capsys, page.id, "--json")
        shown = json.loads(out)
        assert code == 0 and shown["text"] == page.text
        assert (shown["id"], shown["title"], shown["path"]) == (
            page.id,
            page.title,
            f"{page.id}.md",
        )
        assert [h["heading"] for h in shown["headings"]] == [s.heading for s in page.sections]
    page = handbook_lab.corpus.pages[0]
    code, out, _ = show(capsys, page.id)
    head, _, text = out.partition(RULE)
    assert code == 0 and text == page.text and f"id: {page.id}\n" in head


def test_every_labelled_answer_is_in_the_text_shown_for_its_page(
    capsys: pytest.CaptureFixture[str], handbook_lab: Lab
) -> None:
    """A passage copied from ``raglab show`` matches: each handbook answer passage is found
    verbatim in what show prints for its page, where show says it lies."""
    checked = 0
    for q in handbook_lab.questions:
        for span in q.spans:
            code, out, _ = show(capsys, span.page_id, "--json")
            shown = json.loads(out)
            assert code == 0 and q.answer is not None and q.answer in shown["text"]
            located = {"question": q.id, "start": span.start, "end": span.end}
            assert located in shown["answers"]
            assert shown["text"][span.start : span.end] == q.answer
            checked += 1
    assert checked == sum(len(q.spans) for q in handbook_lab.questions) > 0


def test_a_page_is_found_by_its_file_and_a_corpus_needs_no_questions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes").mkdir()
    text = "---\nid: pump\n---\n# Pump\n\nThe  pump\nmoves water.\n"
    (tmp_path / "notes" / "pump-notes.md").write_text(text, encoding="utf-8")
    code, out, _ = show(capsys, "notes/pump-notes.md", "--corpus", str(tmp_path), "--json")
    shown = json.loads(out)
    # The text after the front matter, its spacing and line breaks kept.
    assert code == 0 and (shown["id"], shown["text"]) == ("pump", text.split("---\n", 2)[2])
    assert shown["path"] == "notes/pump-notes.md" and shown["answers"] == []


def test_an_unknown_page_names_the_close_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = show(capsys, "dl5-eror-codes")
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith("raglab show: no page 'dl5-eror-codes' in ")
    assert "close: dl5-error-codes" in err
    code, out, _ = show(capsys, "dl5-eror-codes", "--json")
    assert code == 2 and "close: dl5-error-codes" in json.loads(out)["error"]["message"]
