"""Reading a PDF's text layer, page by page, with pypdf (no OCR, no network).

Headings are the PDF's outline (bookmark) entries, where it has them: each becomes a ``#`` line
(its depth the level) at the line of its page that repeats its title, else at the top of its
page; a PDF without an outline has none. A word hyphenated at a line end is joined (``infor-`` +
``mation``); ligatures are spelled out (see :mod:`raglab.corpus.documents.blocks`). Pages with no
text are named in a note ("scanned? no text on pages 3–9"); a PDF with no text at all, an
encrypted one that opens with no empty password, or a damaged one raises
:class:`~raglab.corpus.documents.blocks.DocumentError`.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from raglab.corpus.documents.blocks import Block, Document, DocumentError, assemble, clean

# A lower-case letter, a hyphen at the line end, and a lower-case letter opening the next line: a
# word broken by the typesetter ("infor-\nmation"); "Jean-\nPaul" and "-\n2" stay as they are.
_HYPHEN_BREAK = re.compile(r"(?<=[^\W\d_])-[ \t]*\n[ \t]*(?=[^\W\d_A-Z])")


def _outline(reader: Any, items: Any, depth: int = 1) -> Iterator[tuple[int, int, str]]:
    """(page index, level, title) of every outline entry, in outline order."""
    for item in items:
        if isinstance(item, list):
            yield from _outline(reader, item, depth + 1)
            continue
        try:
            page = reader.get_destination_page_number(item)
        except Exception:  # an entry pointing nowhere: no heading, the text still reads
            continue
        title = " ".join(str(item.title or "").split())
        if page is not None and page >= 0 and title:
            yield page, depth, title


def _ranges(numbers: list[int]) -> str:
    """``[3, 4, 5, 9]`` -> ``"3–5, 9"``."""
    out: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], -1]:
        if n != prev + 1:
            out.append(str(start) if start == prev else f"{start}–{prev}")
            start = n
        prev = n
    return ", ".join(out)


def _page_blocks(text: str, heads: list[tuple[int, str]]) -> list[Block]:
    """One page's paragraphs (blank-line separated, broken words joined) with its headings put at
    the line repeating their title, else first."""
    text = _HYPHEN_BREAK.sub("", clean(text))
    blocks: list[Block] = []
    for para in re.split(r"\n\s*\n", text):
        lines = para.split("\n")
        buf: list[str] = []
        for line in lines:
            match = next((h for h in heads if " ".join(line.split()) == h[1]), None)
            if match is None:
                buf.append(line)
                continue
            heads.remove(match)
            if buf:
                blocks.append(Block("\n".join(buf)))
                buf = []
            blocks.append(Block(match[1], match[0]))
        if buf:
            blocks.append(Block("\n".join(buf)))
    return [Block(title, level) for level, title in heads] + blocks


@contextmanager
def _quiet() -> Iterator[None]:
    """pypdf's own log lines and warnings muted: it logs repairs ("EOF marker not found") without
    naming the file; what the user needs is the one warning naming file and reason."""
    log = logging.getLogger("pypdf")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        log.setLevel(level)


def read_pdf(path: Path) -> Document:
    """The PDF's title (its metadata), text and outline headings; raises :class:`DocumentError`."""
    with _quiet():
        return _read_pdf(path)


def _read_pdf(path: Path) -> Document:
    from pypdf import PdfReader  # the optional extra, imported when a PDF is met

    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise DocumentError("encrypted PDF (it needs a password to open)")
        pages = [page.extract_text() or "" for page in reader.pages]
    except DocumentError:
        raise
    except Exception as exc:  # pypdf raises many kinds on damaged files; each is the file's fault
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DocumentError(f"not a readable PDF ({reason})") from None
    heads: dict[int, list[tuple[int, str]]] = {}
    try:
        for page_no, level, title in _outline(reader, reader.outline):
            heads.setdefault(page_no, []).append((level, title))
    except Exception:  # a damaged outline: the text without headings
        heads = {}
    empty = [i + 1 for i, text in enumerate(pages) if not text.strip()]
    if len(empty) == len(pages):
        raise DocumentError(
            f"no text layer on any of its {len(pages)} page(s) (scanned? RAG lab does no OCR)"
        )
    blocks: list[Block] = []
    for i, text in enumerate(pages):
        blocks.extend(_page_blocks(text, heads.get(i, [])))
    notes = []
    if empty:
        notes.append(f"scanned? no text on page{'s' if len(empty) > 1 else ''} {_ranges(empty)}")
    try:
        title = str(reader.metadata.title or "") if reader.metadata is not None else ""
    except Exception:
        title = ""
    return Document(" ".join(title.split()) or None, assemble(blocks), tuple(notes))
