"""Reading Word documents: heading styles, title, tables, broken files."""

from __future__ import annotations

import zipfile
from pathlib import Path

import docx
import pytest

from raglab.corpus.documents.blocks import DocumentError
from raglab.corpus.documents.docx_file import read_docx
from tests.corpus.documents.build import write_docx


def test_heading_styles_become_headings(tmp_path: Path) -> None:
    path = write_docx(
        tmp_path / "guide.docx",
        [
            ("Title", "Pump guide"),
            ("Normal", "Intro \ufb01rst."),
            ("Heading 1", "Setup"),
            ("Normal", "Plug it in."),
            ("Heading 2", "Cables"),
            ("Heading 4", "Colours"),
            ("Normal", "# Brown is live."),
        ],
    )
    doc = read_docx(path)
    assert doc.title == "Pump guide"
    assert doc.text == (
        "# Pump guide\n\nIntro first.\n\n# Setup\n\nPlug it in.\n\n## Cables\n\n### Colours\n\n"
        "\\# Brown is live.\n"
    )


def test_the_properties_title_wins_and_tables_read_by_row(tmp_path: Path) -> None:
    path = tmp_path / "table.docx"
    document = docx.Document()
    document.core_properties.title = "Price list"
    document.add_paragraph("Before.")
    table = document.add_table(rows=2, cols=2)
    for r, row in enumerate([("Item", "Price"), ("Pump", "12")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_paragraph("After.")
    document.save(str(path))
    doc = read_docx(path)
    assert (doc.title, doc.text) == (
        "Price list",
        "Before.\n\nItem | Price\n\nPump | 12\n\nAfter.\n",
    )


def test_a_broken_docx_is_refused_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "broken.docx"
    path.write_bytes(bytes(range(256)))
    with pytest.raises(DocumentError, match=r"^broken \.docx: not a zip archive"):
        read_docx(path)


def test_a_zip_that_is_no_word_document_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.docx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hello.txt", "not a document")
    with pytest.raises(DocumentError, match=r"^not a readable \.docx file \(\w+: "):
        read_docx(path)
