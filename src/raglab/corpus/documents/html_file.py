"""Reading an HTML page (``.html``/``.htm``) into headings and paragraphs with Beautiful Soup.

The stdlib ``html.parser`` backend is used (no C library needed; it is forgiving of broken
markup). ``script``, ``style``, ``nav`` and other non-content elements are dropped, and so are
the page's ``header`` and ``footer`` (not those of an ``article``, ``section`` or ``main``);
``h1``-``h6`` become headings; every block element (paragraph, list item, table cell, ...) its
own paragraph. A ``pre`` element (with the ``code`` in it) keeps its line breaks and
indentation, as a fenced code block (:func:`~raglab.corpus.documents.blocks.code_block`). The
title is the ``<title>`` element, else the first ``h1``. The encoding comes from the bytes (a
BOM, ``<meta charset>``, else a guess by Beautiful Soup).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from raglab.corpus.documents.blocks import Block, Document, DocumentError, assemble

DROPPED = frozenset({"script", "style", "nav", "noscript", "template", "svg", "head"})
# The page's banner and footer are boilerplate; a header or footer inside an article or section
# is that content's own (its title, its byline) and is kept.
_PAGE_FURNITURE = frozenset({"header", "footer"})
_CONTENT = frozenset({"article", "section", "main"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = frozenset(
    {
        "p", "div", "section", "article", "main", "aside", "li", "ul", "ol", "dl", "dt", "dd",
        "table", "tr", "td", "th", "thead", "tbody", "pre", "blockquote", "figure", "figcaption",
        "address", "details", "summary", "hr", "br", "body",
    }
)  # fmt: skip


def _walk(node: Any, blocks: list[Block], buf: list[str], in_content: bool = False) -> None:
    # The optional extra, imported when a page is met.
    from bs4.element import NavigableString, PreformattedString, Tag

    for child in node.children:
        if isinstance(child, Tag):
            name = child.name.lower()
            if name in DROPPED or (name in _PAGE_FURNITURE and not in_content):
                continue
            inner = in_content or name in _CONTENT
            if name == "pre":
                _flush(blocks, buf)
                blocks.append(Block(_pre_text(child), pre=True))
            elif name in _HEADINGS:
                _flush(blocks, buf)
                blocks.append(Block(child.get_text(" "), _HEADINGS[name]))
            elif name in _BLOCKS:
                _flush(blocks, buf)
                _walk(child, blocks, buf, inner)
                _flush(blocks, buf)
            else:
                _walk(child, blocks, buf, inner)
        elif isinstance(child, NavigableString) and not isinstance(child, PreformattedString):
            buf.append(str(child))  # comments, doctypes and CDATA are preformatted strings


def _pre_text(node: Any) -> str:
    """The text of a ``pre`` element as written, whitespace kept (``br`` a line break)."""
    from bs4.element import NavigableString, PreformattedString, Tag

    out: list[str] = []
    for child in node.children:
        if isinstance(child, Tag):
            name = child.name.lower()
            if name == "br":
                out.append("\n")
            elif name not in DROPPED:
                out.append(_pre_text(child))
        elif isinstance(child, NavigableString) and not isinstance(child, PreformattedString):
            out.append(str(child))
    return "".join(out)


def _flush(blocks: list[Block], buf: list[str]) -> None:
    text = " ".join("".join(buf).split())
    buf.clear()
    if text:
        blocks.append(Block(text))


def read_html(path: Path) -> Document:
    """The page's title, and its text with ``#`` heading lines; raises :class:`DocumentError`."""
    from bs4 import BeautifulSoup

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DocumentError(f"cannot be read ({exc.strerror or exc})") from None
    soup = BeautifulSoup(data, "html.parser")
    title_tag = soup.find("title")
    title = " ".join(title_tag.get_text(" ").split()) if title_tag is not None else ""
    blocks: list[Block] = []
    buf: list[str] = []
    _walk(soup.body if soup.body is not None else soup, blocks, buf)
    _flush(blocks, buf)
    return Document(title or None, assemble(blocks))
