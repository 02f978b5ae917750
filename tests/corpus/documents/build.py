"""Real HTML, PDF and DOCX files written by the tests, each with known titles, headings and text."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pypdf import PdfWriter
from pypdf.generic import (
    ArrayObject,
    DecodedStreamObject,
    DictionaryObject,
    NameObject,
    NumberObject,
)

# Byte 200 of the PDFs' font is the glyph "fi": text extracted from it is U+FB01, as from a PDF
# typeset with ligatures.
_FI_BYTE = "\\310"


def _font() -> DictionaryObject:
    encoding = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Encoding"),
            NameObject("/BaseEncoding"): NameObject("/WinAnsiEncoding"),
            NameObject("/Differences"): ArrayObject([NumberObject(200), NameObject("/fi")]),
        }
    )
    return DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
            NameObject("/Encoding"): encoding,
        }
    )


def write_pdf(
    path: Path,
    pages: Sequence[Sequence[str]],
    *,
    outline: Sequence[tuple[str, int, int]] = (),
    title: str | None = None,
    password: str | None = None,
) -> Path:
    """A PDF whose page ``i`` shows the lines ``pages[i]`` in Helvetica (an empty list: a page
    with no text layer, as a scan has); ``outline`` holds (title, page index, depth 1 or 2)."""
    writer = PdfWriter()
    font = writer._add_object(_font())
    for lines in pages:
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
        if not lines:
            continue
        ops = ["BT", "/F1 12 Tf", "72 720 Td", "14 TL"]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({escaped.replace('ﬁ', _FI_BYTE)}) '")
        ops.append("ET")
        stream = DecodedStreamObject()
        stream.set_data("\n".join(ops).encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
    parent = None
    for heading, page_index, depth in outline:
        item = writer.add_outline_item(heading, page_index, parent if depth > 1 else None)
        if depth == 1:
            parent = item
    if title is not None:
        writer.add_metadata({"/Title": title})
    if password is not None:
        writer.encrypt(password, algorithm="RC4-128")
    with path.open("wb") as out:
        writer.write(out)
    return path


def write_docx(path: Path, blocks: Sequence[tuple[str, str]], *, title: str = "") -> Path:
    """A Word file of (style, text) paragraphs ("Heading 1", "Normal", "Title", ...)."""
    import docx

    document = docx.Document()
    document.core_properties.title = title
    for style, text in blocks:
        document.add_paragraph(text, style=style)
    document.save(str(path))
    return path
