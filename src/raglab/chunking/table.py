"""A chunking of many pages held as arrays of offsets, each chunk made from its page on demand.

:class:`ChunkTable` is the list :func:`raglab.chunking.chunkers.chunk_pages` returns, held as
three numbers a chunk (its start and end offsets in its page and its word count, int64, 24
bytes) and each page's first row: no :class:`~raglab.chunking.chunk.Chunk` object and no copy
of a chunk's text stays in memory. ``table[i]`` makes chunk ``i`` from its page when asked
(:func:`~raglab.chunking.chunkers.make_chunk`: the same chunk, field for field), so a lab holds
its pages' texts once, not again in every chunking; a retrieval stage that reads a few chunks a
question (the reranker, the reader's packing) makes only those.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import overload

import numpy as np

from raglab.base.ranking import IntArray
from raglab.chunking.chunk import Chunk
from raglab.chunking.chunkers import chunk_pages, make_chunk, page_sections
from raglab.corpus.pages import Page, PageShelf, Section, prefetch, reading

__all__ = ["ChunkTable", "kept_pages", "page_rows"]


def page_rows(
    page: Page, *, method: str, size: int | None, overlap: int | None
) -> tuple[list[int], list[int], list[int]]:
    """One page's chunks under a chunker, as rows: their starts, ends and word counts, in
    order (``chunk_pages([page], ...)``, whose offsets do not depend on the other pages)."""
    chunks = chunk_pages([page], method=method, size=size, overlap=overlap)
    return [c.start for c in chunks], [c.end for c in chunks], [c.n_words for c in chunks]


def kept_pages(pages: Sequence[Page]) -> tuple[Sequence[Page], Mapping[str, int]]:
    """``pages`` as a table keeps them, with each id's row: a shelf (a Dask client's pages,
    held on its workers: :class:`~raglab.corpus.pages.PageShelf`) as it is, with its own index, so no
    chunking holds an object or an entry a page; any other sequence as a tuple and a dict."""
    if isinstance(pages, PageShelf):
        return pages, pages.rows
    kept = tuple(pages)
    return kept, {page.id: p for p, page in enumerate(kept)}


class ChunkTable(Sequence[Chunk]):
    """``chunk_pages(pages, method=..., size=..., overlap=...)`` as arrays (module docstring).

    Chunked one page at a time, so no more than one page's chunks are ever objects at once.
    ``starts``, ``ends`` and ``n_words`` are (n_chunks,) int64; ``first`` is (n_pages + 1,),
    page p's chunks being rows ``first[p]:first[p + 1]`` (a chunker keeps a page's chunks
    together, in page order).
    """

    __slots__ = ("_page_row", "ends", "first", "n_words", "pages", "starts")

    def __init__(
        self, pages: Sequence[Page], *, method: str, size: int | None, overlap: int | None
    ) -> None:
        self.pages, self._page_row = kept_pages(pages)
        counts = np.zeros(len(self.pages), dtype=np.int64)
        starts: list[int] = []
        ends: list[int] = []
        n_words: list[int] = []
        for p, page in enumerate(self.pages):
            a, b, w = page_rows(page, method=method, size=size, overlap=overlap)
            counts[p] = len(a)
            starts.extend(a)
            ends.extend(b)
            n_words.extend(w)
        self.first: IntArray = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.starts: IntArray = np.asarray(starts, dtype=np.int64)
        self.ends: IntArray = np.asarray(ends, dtype=np.int64)
        self.n_words: IntArray = np.asarray(n_words, dtype=np.int64)

    def __len__(self) -> int:
        return int(self.first[-1])

    def _page_of(self, i: int) -> int:
        return int(np.searchsorted(self.first, i, side="right")) - 1

    def _start(self, p: int) -> int:
        """Page ``p``'s first chunk's row."""
        return int(self.first[p])

    def _end(self, p: int) -> int:
        """The row after page ``p``'s last chunk."""
        return int(self.first[p + 1])

    def prefetch_pages(self, pages: Iterable[int]) -> None:
        """Say that the chunk rows of pages ``pages`` are about to be read: a table whose
        pages' rows are held elsewhere finds them at once; here, nothing."""

    def page_rows_of(self, rows: Sequence[int] | IntArray) -> IntArray:
        """The page of each of chunks ``rows`` ((n,) int64, their rows among the pages)."""
        got: IntArray = (
            np.searchsorted(self.first, np.asarray(rows, dtype=np.int64), side="right") - 1
        )
        return got

    def _page_rows(self, p: int) -> tuple[IntArray, IntArray, IntArray]:
        """Page ``p``'s chunks' starts, ends and word counts, in row order."""
        a, b = self._start(p), self._end(p)
        return self.starts[a:b], self.ends[a:b], self.n_words[a:b]

    def _row(self, p: int, i: int) -> tuple[int, int, int]:
        """Chunk ``i``'s start, end and word count (``p``: its page)."""
        return int(self.starts[i]), int(self.ends[i]), int(self.n_words[i])

    def _make(self, p: int, i: int, sections: Sequence[Section] | None = None) -> Chunk:
        page = self.pages[p]
        return make_chunk(
            page,
            page_sections(page) if sections is None else sections,
            i,
            i - self._start(p),
            *self._row(p, i),
        )

    def words_of(self, rows: Sequence[int] | IntArray) -> IntArray:
        """The word counts of chunks ``rows`` (int64, in that order)."""
        got: IntArray = self.n_words[np.asarray(rows, dtype=np.int64)]
        return got

    @property
    def total_words(self) -> int:
        """The word counts' sum over every chunk."""
        return int(self.n_words.sum())

    @overload
    def __getitem__(self, i: int) -> Chunk: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Chunk]: ...
    def __getitem__(self, i: int | slice) -> Chunk | Sequence[Chunk]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        j = int(i) + n if i < 0 else int(i)
        if not 0 <= j < n:
            raise IndexError(f"chunk {i} of {n}")
        return self._make(self._page_of(j), j)

    def __iter__(self) -> Iterator[Chunk]:
        # Page by page: each page's sections found once, not once a chunk; pages whose texts
        # are held elsewhere fetched in batches, not one round trip a page.
        with reading(self.pages):
            for p, page in enumerate(self.pages):
                sections = page_sections(page)
                for i in range(self._start(p), self._end(p)):
                    yield self._make(p, i, sections)

    def take(self, rows: Sequence[int]) -> list[Chunk]:
        """Chunks ``rows``, in that order, as ``[self[i] for i in rows]`` gives them, their
        pages read as one plan (:meth:`reading`): a stage that reads a few chunks a question
        (the reranker's candidates) fetches their held pages in one round trip, not one a
        page."""
        with self.reading(rows):
            return [self[int(i)] for i in rows]

    def reading(self, rows: Iterable[int]) -> AbstractContextManager[None]:
        """A block that will read chunks ``rows``, in that order: their pages are its plan
        (:func:`~raglab.corpus.pages.reading`). Around a stage over many questions' chunks,
        their held pages come in batches of the text budget, not in one round trip a
        question."""
        pages = [self._page_of(int(i)) for i in rows]
        # Pages held elsewhere (a Dask client's) come in one round trip, not one a page.
        prefetch(self.pages, pages)
        return reading(self.pages[p] for p in pages)

    def rows_of(self, page_id: str) -> range:
        """The rows of page ``page_id``'s chunks (empty for a page this chunking lacks)."""
        p = self._page_row.get(page_id)
        return range(0) if p is None else range(self._start(p), self._end(p))

    def page_id(self, i: int) -> str:
        """The id of chunk ``i``'s page, without making the chunk."""
        return self.pages[self._page_of(i)].id

    def page_ids(self, rows: Iterable[int]) -> list[str]:
        """The ids of chunks ``rows``' pages, in that order (their pages fetched at once where
        they are held elsewhere)."""
        pages = [self._page_of(int(i)) for i in rows]
        prefetch(self.pages, pages)
        return [self.pages[p].id for p in pages]

    def chunk_id(self, i: int) -> str:
        """The id of chunk ``i`` (``f"{page_id}#{position}"``, as :func:`make_chunk` gives it),
        without making the chunk or reading its page's text."""
        p = self._page_of(i)
        return f"{self.pages[p].id}#{i - self._start(p)}"

    def chunk_ids(self, rows: Iterable[int]) -> list[str]:
        """The ids of chunks ``rows``, in that order (:meth:`chunk_id`), their pages found at
        once where they are held elsewhere."""
        listed = [int(i) for i in rows]
        pages = self.page_rows_of(listed).tolist()
        prefetch(self.pages, pages)
        return [
            f"{self.pages[p].id}#{i - self._start(p)}" for i, p in zip(listed, pages, strict=True)
        ]

    def containing(self, page_id: str, start: int, end: int) -> list[int]:
        """Positions (ascending) of the chunks of ``page_id`` whose span contains [start, end)
        (:meth:`raglab.chunking.chunk.ChunkIndex.containing`'s answer)."""
        if start < 0 or end < start:
            raise ValueError(f"need 0 <= start <= end, got start={start}, end={end}")
        p = self._page_row.get(page_id)
        if p is None:
            return []
        starts, ends, _ = self._page_rows(p)
        inside = (starts <= start) & (ends >= end)
        return (np.flatnonzero(inside) + self._start(p)).tolist()
