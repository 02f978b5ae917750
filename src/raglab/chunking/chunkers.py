"""Cutting pages into chunks: fixed word windows, sentence packing, or one chunk per section.

Every chunk is a character span of one page (docs/design.md#spans): ``page.text[start:end]``. A chunk
contains an answer when the answer's span lies wholly inside it, and chunkers never cross pages.
Sizes are counted in whitespace words (docs/design.md#words).

The fixed chunker's count and cut rate have closed forms, :func:`expected_chunk_count` and
:func:`cut_probability`, which the tests hold the chunker to.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from raglab.base.ranking import IntArray
from raglab.chunking.chunk import Chunk
from raglab.chunking.closed_forms import (
    _check_int,
    _check_window,
    expected_chunk_count,
)
from raglab.corpus.pages import Page, Section, find_sections
from raglab.text.tokens import count_words, sentence_spans, word_offsets, word_starts

__all__ = [
    "METHODS",
    "chunk_fixed",
    "chunk_headings",
    "chunk_pages",
    "chunk_sentences",
    "fixed_window_spans",
    "make_chunk",
    "page_sections",
]

METHODS = ("fixed", "sentence", "heading")


# --- validation -----------------------------------------------------------------------------


def page_sections(page: Page) -> tuple[Section, ...]:
    """``page``'s sections, in page order: :func:`make_chunk`'s ``sections``."""
    # A Page built by hand may carry no sections; find them the way the corpus reader does.
    return page.sections or find_sections(page.text, title=page.title)


def _make_chunks(
    pages: Iterable[Page], spans_of: Callable[[Page], list[tuple[int, int]]]
) -> list[Chunk]:
    """Chunks for every page, in page order, from ``spans_of(page)``'s sorted spans."""
    chunks: list[Chunk] = []
    for page in pages:
        sections = page_sections(page)
        for position, (start, end) in enumerate(spans_of(page)):
            chunks.append(make_chunk(page, sections, len(chunks), position, start, end))
    return chunks


def make_chunk(
    page: Page,
    sections: Sequence[Section],
    index: int,
    position: int,
    start: int,
    end: int,
    n_words: int | None = None,
) -> Chunk:
    """The chunk ``page.text[start:end]``, ``position``-th of its page and ``index``-th of its
    list; ``sections``: :func:`page_sections` of the page, the last one starting at or before
    ``start`` gives its heading path (the page's title before the first). ``n_words``: the
    text's word count when known already (None: counted here)."""
    k = bisect.bisect_right(sections, start, key=lambda s: s.start) - 1
    path = sections[k].path if k >= 0 else (page.title,)
    text = page.text[start:end]
    return Chunk(
        index=index,
        id=f"{page.id}#{position}",
        page_id=page.id,
        title=page.title,
        heading_path=path,
        start=start,
        end=end,
        position=position,
        n_words=count_words(text) if n_words is None else n_words,
        updated=page.updated,
        status=page.status,
        text=text,
    )


# --- fixed windows --------------------------------------------------------------------------


def _fixed_windows(n_words: int, size: int, overlap: int) -> tuple[IntArray, IntArray]:
    """First and last word index of each window: starts 0, s−o, 2(s−o), … (vectorised).

    Window i covers words [i(s−o), min(i(s−o)+s, N)); there are ⌈(N−o)/(s−o)⌉ windows when
    N > s, one when 0 < N ≤ s, none when N = 0.
    """
    count = expected_chunk_count(n_words, size=size, overlap=overlap)
    first = np.arange(count, dtype=np.int64) * (size - overlap)
    last = np.minimum(first + size, n_words) - 1
    return first, last


def fixed_window_spans(words: IntArray, *, size: int, overlap: int) -> tuple[IntArray, IntArray]:
    """Start and end offsets of the fixed chunker's windows over one page, each shape (n,).

    ``words`` is the page's :func:`word_offsets`. These are exactly the spans of the chunks
    :func:`chunk_fixed` makes of the page, without building the chunks: a sweep over many sizes
    (the intact-rate curve) needs only where the cuts fall. Requires ``0 <= overlap < size``.
    """
    s, o = _check_window(size, overlap)
    first, last = _fixed_windows(len(words), s, o)
    return words[first, 0], words[last, 1]


def chunk_fixed(pages: Iterable[Page], *, size: int, overlap: int) -> list[Chunk]:
    """Fixed windows of ``size`` words, consecutive windows sharing ``overlap`` words.

    No defaults here: a face passes the settings' (``raglab.settings.CHUNK_SIZES["fixed"]``,
    ``FIXED_OVERLAP``) where the user gave none. Windows start at
    word 0, s−o, 2(s−o), …; the last window is the first whose end reaches the page end, so a page
    of N words gives exactly ⌈(N−o)/(s−o)⌉ chunks (one when N ≤ s, none for an empty page). A
    chunk's span runs from its first word's start to its last word's end. Requires
    ``0 <= overlap < size``.
    """
    s, o = _check_window(size, overlap)

    def spans(page: Page) -> list[tuple[int, int]]:
        starts, ends = fixed_window_spans(word_offsets(page.text), size=s, overlap=o)
        return list(zip(starts.tolist(), ends.tolist(), strict=True))

    return _make_chunks(pages, spans)


# --- sentence packing -----------------------------------------------------------------------

_BLANK_LINE = re.compile(r"\n[ \t]*(?=\n)")
_HEADING_PREFIX = re.compile(r" {0,3}#{1,6}[ \t]+")

# A unit is (start, end, paragraph label): one sentence of a page.
_Unit = tuple[int, int, int]


def _sentence_units(
    text: str, sentences: Sequence[tuple[int, int]], blanks: Sequence[int]
) -> list[_Unit]:
    """``sentences`` of ``text`` with their paragraph labels.

    ``blanks`` holds the offsets of the blank lines of ``text``; a paragraph is a blank-line
    separated block. A paragraph that holds only heading lines takes the label of the paragraph
    after it, so packing never strands a heading at the end of a chunk.
    """
    rows: list[tuple[int, int, int, bool]] = []  # (start, end, block, is_heading)
    heading_only: dict[int, bool] = {}
    for start, end in sentences:
        line_start = text.rfind("\n", 0, start) + 1
        is_heading = _HEADING_PREFIX.fullmatch(text, line_start, start) is not None
        block = bisect.bisect_right(blanks, start)
        heading_only[block] = heading_only.get(block, True) and is_heading
        rows.append((start, end, block, is_heading))
    units: list[_Unit] = []
    label: int | None = None  # the label of the unit after this one
    for start, end, block, _ in reversed(rows):
        label = label if heading_only[block] and label is not None else block
        units.append((start, end, label))
    units.reverse()
    return units


def _blank_lines(text: str) -> list[int]:
    return [m.start() for m in _BLANK_LINE.finditer(text)]


def _pack(units: Sequence[_Unit], word_starts: Sequence[int], size: int) -> list[tuple[int, int]]:
    """Greedy, paragraph-aware packing of ``units`` into spans of at most ``size`` words.

    Units join the open chunk while its words fit. A unit longer than ``size`` stands alone. When
    a paragraph does not fit in the open chunk but fits in an empty one, a new chunk starts at the
    paragraph, so every paragraph that fits in a chunk stays whole. Words are counted over the
    whole span (list markers between sentences included) from ``word_starts``, the sorted start
    offsets of the text's words; every unit starts and ends on a word boundary.
    """

    def words(start: int, end: int) -> int:
        return bisect.bisect_left(word_starts, end) - bisect.bisect_left(word_starts, start)

    paragraphs: dict[int, tuple[int, int]] = {}  # label -> (first start, last end)
    for start, end, par in units:
        paragraphs[par] = (paragraphs.get(par, (start, end))[0], end)
    spans: list[tuple[int, int]] = []
    open_start: int | None = None
    open_end = 0
    previous_par: int | None = None
    for start, end, par in units:
        if open_start is not None:
            par_start, par_end = paragraphs[par]
            moves_paragraph = par != previous_par and words(open_start, par_end) > size >= words(
                par_start, par_end
            )
            if moves_paragraph or words(open_start, end) > size:
                spans.append((open_start, open_end))
                open_start = None
        if open_start is None:
            open_start = start
        open_end, previous_par = end, par
    if open_start is not None:
        spans.append((open_start, open_end))
    return spans


def _sentence_chunks(text: str, size: int, *, from_start: bool = False) -> list[tuple[int, int]]:
    """Spans of ``text`` that pack its sentences (:func:`_pack`).

    ``from_start`` stretches the first span back to offset 0, so that it includes the heading
    marks that open a section.
    """
    units = _sentence_units(text, sentence_spans(text), _blank_lines(text))
    if from_start and units:
        units[0] = (0, *units[0][1:])
    return _pack(units, word_starts(text), size)


def chunk_sentences(pages: Iterable[Page], *, size: int) -> list[Chunk]:
    """Whole sentences (:func:`raglab.text.tokens.sentence_spans`) packed greedily up to ``size`` words.

    The settings' size is ``raglab.settings.CHUNK_SIZES["sentence"]``; a face passes it where the
    user gave none. A sentence longer than ``size`` stands alone.
    Paragraph-aware: when the next paragraph does not fit in the current chunk but fits in an
    empty one, a new chunk starts at the paragraph boundary; a heading-only paragraph travels with
    the paragraph after it. A chunk's span runs from its first sentence's start to its last
    sentence's end, so no chunk ever cuts inside a sentence.
    """
    s = _check_int("size", size, minimum=1)

    def spans(page: Page) -> list[tuple[int, int]]:
        return _sentence_chunks(page.text, s)

    return _make_chunks(pages, spans)


# --- sections -------------------------------------------------------------------------------


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    piece = text[start:end]
    lead = len(piece) - len(piece.lstrip())
    return start + lead, start + len(piece.rstrip())


def _heading_spans(page: Page, max_words: int) -> list[tuple[int, int]]:
    text = page.text
    blocks: list[tuple[int, int]] = []  # trimmed section spans, heading-only ones merged forward
    pending: int | None = None  # start of heading-only sections waiting for a body
    for section in page_sections(page):
        start, end = _trimmed(text, section.start, section.end)
        if start >= end:
            continue
        body = text[start:end].partition("\n")[2]
        if section.level > 0 and not body.strip():
            pending = start if pending is None else pending
            continue
        blocks.append((start if pending is None else pending, end))
        pending = None
    if pending is not None:  # heading-only sections at the end of the page stand alone
        blocks.append(_trimmed(text, pending, len(text)))
    spans: list[tuple[int, int]] = []
    for start, end in blocks:
        if count_words(text[start:end]) <= max_words:
            spans.append((start, end))
        else:  # split the block on its own, so no piece can leave it
            pieces = _sentence_chunks(text[start:end], max_words, from_start=True)
            spans.extend((start + a, start + b) for a, b in pieces)
    return spans


def chunk_headings(pages: Iterable[Page], *, max_words: int) -> list[Chunk]:
    """One chunk per section (:class:`raglab.corpus.pages.Section`), heading line included.

    The settings' cap is ``raglab.settings.CHUNK_SIZES["heading"]``; a face passes it where the
    user gave none. Section spans are trimmed of
    surrounding whitespace. A section whose body is only its heading line is merged into the
    following section (a page's last such section stands alone). A section longer than
    ``max_words`` words is split with the same sentence packing as :func:`chunk_sentences`, its
    first piece starting at the heading line.
    """
    m = _check_int("max_words", max_words, minimum=1)

    def spans(page: Page) -> list[tuple[int, int]]:
        return _heading_spans(page, m)

    return _make_chunks(pages, spans)


def chunk_pages(
    pages: Iterable[Page], *, method: str, size: int | None, overlap: int | None
) -> list[Chunk]:
    """Chunk ``pages`` by ``method`` (one of :data:`METHODS`) with the values given.

    ``size`` is the window for ``"fixed"``, the packing limit for ``"sentence"`` and the section
    cap for ``"heading"``; ``overlap`` applies to ``"fixed"`` only (which needs one) and any other
    method rejects a non-zero overlap. Nothing is defaulted here: ``raglab.settings.chunk_size``
    and ``chunk_overlap`` turn the ``size`` and ``overlap`` settings' None into the chunker's own
    before the call (a None size here is a ValueError, not a default).
    """
    if size is None:
        raise ValueError(f"the {method!r} chunker needs a size (raglab.settings.chunk_size)")
    if method == "fixed":
        if overlap is None:
            raise ValueError("the fixed chunker needs an overlap (0 for none)")
        return chunk_fixed(pages, size=size, overlap=overlap)
    if method not in METHODS:
        raise ValueError(f"unknown chunking method {method!r}; expected one of {METHODS}")
    if overlap:
        raise ValueError(f"overlap applies only to the fixed chunker, not to {method!r}")
    if method == "sentence":
        return chunk_sentences(pages, size=size)
    return chunk_headings(pages, max_words=size)
