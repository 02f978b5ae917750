"""Reading a Word document (``.docx``) into headings and paragraphs with python-docx.

Paragraphs styled "Heading 1" to "Heading 6" (or based on one) become headings; a "Title"
paragraph gives the title when the document's properties hold none. Tables are read row by row,
a row one paragraph of its cells' text. A file that is not a Word package (a broken zip, another
format renamed) raises :class:`~raglab.corpus.documents.blocks.DocumentError`.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

from raglab.corpus.documents.blocks import Block, Document, DocumentError, assemble

_HEADING_STYLE = re.compile(r"heading ([1-6])")


def _level(style: Any) -> int:
    """1-6 for a heading style (or one based on it), -1 for "Title", else 0."""
    while style is not None:
        name = str(style.name or "").lower()
        if name == "title":
            return -1
        match = _HEADING_STYLE.fullmatch(name)
        if match:
            return int(match.group(1))
        style = style.base_style
    return 0


def read_docx(path: Path) -> Document:
    """The document's title, and its text with ``#`` heading lines; raises :class:`DocumentError`."""
    import docx  # the optional extra, imported when a .docx is met
    from docx.table import Table

    try:
        if not zipfile.is_zipfile(path):
            raise DocumentError(
                "broken .docx: not a zip archive (damaged, or another format renamed?)"
            )
        document = docx.Document(str(path))
        title = " ".join(str(document.core_properties.title or "").split())
        blocks: list[Block] = []
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                for row in item.rows:
                    cells = [" ".join(cell.text.split()) for cell in row.cells]
                    # A merged cell is returned once per grid column it spans.
                    unique = [c for i, c in enumerate(cells) if c and c not in cells[:i]]
                    blocks.append(Block(" | ".join(unique)))
                continue
            level = _level(item.style)
            if level == -1:
                title = title or " ".join(item.text.split())
                blocks.append(Block(item.text, 1))
            else:
                blocks.append(Block(item.text, level))
    except DocumentError:
        raise
    except Exception as exc:  # python-docx raises zip, XML and key errors on damaged files
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DocumentError(f"not a readable .docx file ({type(exc).__name__}: {reason})") from None
    return Document(title or None, assemble(blocks))
