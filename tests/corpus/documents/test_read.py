"""A corpus folder of Markdown, HTML, PDF and DOCX files read together; bad files named, skipped."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from raglab.chunking.chunkers import chunk_headings
from raglab.corpus.pages import load_corpus
from raglab.corpus.questions import parse_questions
from raglab.errors import InputError, RaglabWarning
from tests.corpus.documents.build import write_docx, write_pdf


def _folder(root: Path) -> Path:
    (root / "web" / "deep").mkdir(parents=True)
    (root / "a.md").write_text("# Markdown page\n\nPlain words.\n", encoding="utf-8")
    (root / "web" / "deep" / "faq.html").write_text(
        "<html><head><title>Cafe\u0301 FAQ</title></head><body><nav>menu</nav><h1>Questions</h1>"
        "<p>Why pumps?</p><h2>Shipping</h2><p>Ships in \ufb01ve days.</p></body></html>",
        encoding="utf-8",
    )
    write_pdf(
        root / "web" / "manual.pdf",
        [["Overview", "Filters need infor-", "mation."], [], ["Care", "Rinse weekly."]],
        outline=[("Overview", 0, 1), ("Care", 2, 1)],
        title="Pump manual",
    )
    write_docx(
        root / "guide.docx",
        [("Heading 1", "Setup"), ("Normal", "Plug it in."), ("Heading 2", "Cables")],
        title="Setup guide",
    )
    return root


def test_every_kind_becomes_a_page_the_heading_chunker_cuts(tmp_path: Path) -> None:
    with pytest.warns(RaglabWarning) as caught:
        corpus = load_corpus(_folder(tmp_path))
    assert [str(w.message) for w in caught] == [
        f"{tmp_path / 'web' / 'manual.pdf'}: scanned? no text on page 2"
    ]
    titles = {p.id: p.title for p in corpus}
    assert titles == {
        "a": "Markdown page",
        "faq": "Café FAQ",  # NFC
        "manual": "Pump manual",
        "guide": "Setup guide",
    }
    faq = corpus.page("faq")
    assert faq.text == "# Questions\n\nWhy pumps?\n\n## Shipping\n\nShips in five days.\n"
    assert [(s.heading, s.path) for s in faq.sections] == [
        ("Questions", ("Questions",)),
        ("Shipping", ("Questions", "Shipping")),
    ]
    manual = corpus.page("manual")
    assert "Filters need information." in manual.text
    assert [s.heading for s in manual.sections] == ["Overview", "Care"]
    chunks = chunk_headings(corpus, max_words=100)
    cut = {(c.page_id, c.heading_path[-1]): c.text for c in chunks}
    assert cut[("manual", "Care")] == "# Care\n\nRinse weekly."
    assert cut[("guide", "Setup")] == "# Setup\n\nPlug it in."
    assert cut[("faq", "Shipping")] == "## Shipping\n\nShips in five days."
    for chunk in chunks:  # offsets point into the very text chunking and answers see
        assert corpus.page(chunk.page_id).text[chunk.start : chunk.end] == chunk.text


def test_bad_files_are_named_with_the_reason_and_the_rest_reads(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    write_pdf(root / "locked.pdf", [["secret"]], password="pw")
    write_pdf(root / "scan.pdf", [[], [], []])
    (root / "broken.docx").write_bytes(b"PK\x03\x04 not really a zip")
    (root / "junk.pdf").write_bytes(b"%PDF-1.7\nnot a pdf at all")
    with pytest.warns(RaglabWarning) as caught:
        corpus = load_corpus(root)
    messages = sorted(str(w.message) for w in caught)
    junk = [m for m in messages if m.startswith(f"{root / 'junk.pdf'}: not a readable PDF (")]
    assert len(junk) == 1 and junk[0].endswith("); skipped")
    assert sorted(m for m in messages if m not in junk) == [
        f"{root / 'broken.docx'}: broken .docx: not a zip archive (damaged, or another format "
        "renamed?); skipped",
        f"{root / 'locked.pdf'}: encrypted PDF (it needs a password to open); skipped",
        f"{root / 'scan.pdf'}: no text layer on any of its 3 page(s) (scanned? RAG lab does no "
        "OCR); skipped",
        f"{root / 'web' / 'manual.pdf'}: scanned? no text on page 2",
    ]
    assert sorted(p.id for p in corpus) == ["a", "faq", "guide", "manual"]


def test_without_the_extra_each_kind_is_skipped_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _folder(tmp_path)
    write_pdf(root / "second.pdf", [["More text."]])
    # None in sys.modules makes "import pypdf" raise ImportError, as on an install without it.
    for module in ("pypdf", "docx", "bs4"):
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.warns(RaglabWarning) as caught:
        corpus = load_corpus(root)
    assert [str(w.message) for w in caught] == [
        f"{n} {kind} skipped: install raglab[formats] (pip install 'raglab[formats]') to read them"
        for n, kind in ((1, ".docx file"), (1, ".html file"), (2, ".pdf files"))
    ]
    assert [p.id for p in corpus] == ["a"]  # Markdown reads as before


def test_a_folder_where_no_file_reads_says_so(tmp_path: Path) -> None:
    write_pdf(tmp_path / "locked.pdf", [["secret"]], password="pw")
    with pytest.warns(RaglabWarning, match="encrypted PDF"), pytest.raises(InputError) as caught:
        load_corpus(tmp_path)
    assert [str(p) for p in caught.value.problems] == [
        f"{tmp_path}: no page could be read (each file is named above)"
    ]


def test_answer_passages_are_found_at_their_offsets_in_document_pages(tmp_path: Path) -> None:
    with pytest.warns(RaglabWarning):
        corpus = load_corpus(_folder(tmp_path))
    answers = {
        "q1": "Ships in five days.",  # written with the ligature "ﬁ" in the HTML
        "q2": "Filters need information.",  # hyphenated across two lines of the PDF
        "q3": "Plug it in.",
    }
    lines = [
        json.dumps({"id": q, "split": "test", "kind": "k", "question": "?", "answer": a})
        for q, a in answers.items()
    ]
    questions = parse_questions(lines, corpus=corpus)
    for question in questions.questions:
        (span,) = question.spans
        text = corpus.page(span.page_id).text
        assert text[span.start : span.end] == answers[question.id]
    assert [q.spans[0].page_id for q in questions.questions] == ["faq", "manual", "guide"]
