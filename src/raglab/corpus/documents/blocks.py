"""Turning a document's headings and paragraphs into the Markdown-like text a page holds.

A document reader yields blocks in reading order: a heading (level 1 to 6) or a paragraph.
:func:`assemble` writes each heading as a ``#`` line (levels 4 to 6 become ``###``, the deepest
level a corpus page splits at) and each paragraph as its own block, separated by blank lines, so
the heading chunker and sentence packing cut a document exactly as they cut a Markdown page. A
paragraph line that would read as a heading, a code fence or front matter gets a ``\\`` in front.
Text is NFC with the typographic ligatures (ﬁ, ﬂ, ...) spelled out and control characters gone.
A preformatted block (HTML's ``<pre>``) keeps its line breaks, indentation and blank lines: it is
written as a fenced code block, as a Markdown page holds code, so a ``#`` line in it is no
heading; only what must is normalised (NFC, ligatures, control characters, line ends, trailing
spaces, blank lines at its ends, and a ``\\`` before a line that would close the fence).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# The Unicode ligature block (U+FB00-U+FB06): NFKC spells each out; the rest of the text keeps
# its compatibility characters (NFKC everywhere would also turn "²" into "2").
_LIGATURES = {chr(c): unicodedata.normalize("NFKC", chr(c)) for c in range(0xFB00, 0xFB07)}
_LIGATURE = re.compile("[\ufb00-\ufb06]")
# C0 controls and DEL less tab and line feed, which no page may hold.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_MARKUP_START = re.compile(r"^(#|```|~~~|---)", re.MULTILINE)
_SPACES = re.compile(r"[ \t\u00a0]+")
_FENCE_START = re.compile(r"^(```|~~~)", re.MULTILINE)
MAX_LEVEL = 3
FENCE = "```"


@dataclass(frozen=True, slots=True)
class Block:
    """A heading (``level`` 1-6) or a paragraph (``level`` 0) of a document; ``pre``: a
    paragraph whose line breaks and spaces are its content (code, a terminal session)."""

    text: str
    level: int = 0
    pre: bool = False


@dataclass(frozen=True, slots=True)
class Document:
    """A document read: ``title`` (``None``: the page reader takes its first heading or file
    name), Markdown-like ``text`` and ``notes``, things the user should know (pages with no text)."""

    title: str | None
    text: str
    notes: tuple[str, ...] = ()


class DocumentError(ValueError):
    """A file that cannot be read as its kind says (encrypted, damaged); the message is the reason."""


def _normalised(text: str) -> str:
    """NFC, ligatures spelled out, control characters dropped, line ends made ``\\n``."""
    text = _LIGATURE.sub(lambda m: _LIGATURES[m.group()], unicodedata.normalize("NFC", text))
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def clean(text: str) -> str:
    """NFC, ligatures spelled out, control characters and runs of spaces dropped, lines stripped."""
    return "\n".join(_SPACES.sub(" ", line).strip() for line in _normalised(text).split("\n"))


def code_block(text: str) -> str:
    """A preformatted block as a fenced code block: lines, indentation and inner blank lines
    kept, trailing spaces and blank lines at either end dropped, a line opening with a fence
    escaped by a ``\\``; "" when nothing is left."""
    lines = [line.rstrip() for line in _normalised(text).split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    if not lines:
        return ""
    body = _FENCE_START.sub(r"\\\1", "\n".join(lines))
    return f"{FENCE}\n{body}\n{FENCE}"


def assemble(blocks: list[Block]) -> str:
    """The page text of ``blocks``: ``#`` heading lines and paragraphs, blank-line separated."""
    parts: list[str] = []
    for block in blocks:
        if block.pre:
            code = code_block(block.text)
            if code:
                parts.append(code)
            continue
        text = clean(block.text)
        if block.level:
            heading = " ".join(text.split())
            if heading:
                parts.append("#" * min(block.level, MAX_LEVEL) + " " + heading)
            continue
        lines = [line for line in text.split("\n") if line]
        if lines:
            parts.append(_MARKUP_START.sub(r"\\\1", "\n".join(lines)))
    return "\n\n".join(parts) + "\n" if parts else ""
