"""Reading PDFs: outline headings, ligatures and hyphenation, pages with no text, bad files."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from raglab.corpus.documents.blocks import DocumentError
from raglab.corpus.documents.pdf_file import read_pdf
from tests.corpus.documents.build import write_pdf

MANUAL = [
    ["Pump guide", "Overview", "The \ufb01lter needs infor-", "mation about Jean-", "Paul."],
    [],
    [],
    ["Maintenance", "Clean the \ufb01lter weekly."],
    ["Seals are checked", "yearly."],
]


def test_outline_entries_become_headings_at_their_lines(tmp_path: Path) -> None:
    path = write_pdf(
        tmp_path / "manual.pdf",
        MANUAL,
        outline=[("Overview", 0, 1), ("Maintenance", 3, 1), ("Seals", 4, 2)],
        title="Pump manual",
    )
    doc = read_pdf(path)
    assert doc.title == "Pump manual"
    # "Overview" and "Maintenance" are lines of their pages: they become the headings; "Seals"
    # is no line of page 5, so its heading opens the page.
    assert doc.text == (
        "Pump guide\n\n# Overview\n\nThe filter needs information about Jean-\nPaul.\n\n"
        "# Maintenance\n\nClean the filter weekly.\n\n## Seals\n\nSeals are checked\nyearly.\n"
    )
    assert doc.notes == ("scanned? no text on pages 2–3",)


def test_without_outline_or_title_there_are_no_headings(tmp_path: Path) -> None:
    doc = read_pdf(write_pdf(tmp_path / "plain.pdf", [["Overview", "Some text."], ["More."]]))
    assert doc.title is None
    assert doc.text == "Overview\nSome text.\n\nMore.\n"
    assert doc.notes == ()


def test_a_pdf_with_no_text_layer_is_refused_by_name(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "scan.pdf", [[], []])
    with pytest.raises(DocumentError, match=r"no text layer on any of its 2 page\(s\) \(scanned"):
        read_pdf(path)


def test_an_encrypted_pdf_is_refused(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "locked.pdf", [["secret"]], password="pw")
    with pytest.raises(DocumentError, match=r"^encrypted PDF"):
        read_pdf(path)


def test_an_encrypted_pdf_with_an_empty_password_reads(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "open.pdf", [["Readable text."]], password="")
    assert read_pdf(path).text == "Readable text.\n"


def test_a_damaged_pdf_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 4)
    with pytest.raises(DocumentError, match=r"^not a readable PDF \("):
        read_pdf(path)


def test_a_damaged_pdf_logs_nothing_of_its_own(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "cut.pdf"
    path.write_bytes(b"%PDF-1.7\nnot a pdf at all")  # pypdf logs "EOF marker not found"
    with caplog.at_level(logging.WARNING), pytest.raises(DocumentError):
        read_pdf(path)
    assert caplog.records == []  # the one warning naming file and reason is the reader's
