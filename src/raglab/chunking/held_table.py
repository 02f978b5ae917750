"""A chunking whose rows are found in each page's text when the page is read: a Dask client's table.

:class:`HeldChunkTable` is a :class:`~raglab.chunking.table.ChunkTable` that holds each page's
number of chunks and of words (``first``, (n_pages + 1,), and a total), not three numbers a
chunk: the workers chunk their partitions and send only those counts. When a stage reads a
chunk, its page's chunks are cut again from the page's text, which the stage reads anyway to
make the chunk (``chunk_pages([page], ...)``, the same function and the same offsets as the
workers'), and kept with the text (:meth:`~raglab.corpus.pages.HeldPage.found_in`): dropped
with it, within the client's page-text budget. The table then holds O(pages) for a chunking,
not O(chunks); a Dask client's keeps even those on the workers
(:class:`~raglab.distributed.chunk_table.RemoteChunkTable`), and asks for the pages read.

What reads rows: making a chunk, the chunks of a page holding a labelled answer
(:meth:`containing`), and word counts (:meth:`words_of`, the packing's). A stage that would
read every chunk's row (a table of every chunk's tokens) reads every page, as it would to make
every chunk.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from raglab.base.ranking import IntArray
from raglab.chunking.table import ChunkTable, kept_pages, page_rows
from raglab.corpus.pages import HeldPage, Page

__all__ = ["HeldChunkTable"]


class HeldChunkTable(ChunkTable):
    """``ChunkTable`` of ``pages`` chunked elsewhere, holding counts only (module docstring):
    ``counts[p]`` chunks of page p, ``total_words`` words in all. It has no ``starts``,
    ``ends`` or ``n_words`` array; each page's rows are found when the page is read."""

    __slots__ = ("_chunking", "_total_words")
    _chunking: tuple[str, int | None, int | None]
    _total_words: int

    @classmethod
    def of_counts(
        cls,
        pages: Sequence[Page],
        counts: IntArray,
        total_words: int,
        *,
        method: str,
        size: int | None,
        overlap: int | None,
    ) -> HeldChunkTable:
        """The table of ``pages`` cut by the chunker ``method`` (``size``, ``overlap``) into
        ``counts[p]`` chunks each, ``total_words`` words in all."""
        if len(counts) != len(pages):
            raise ValueError(f"{len(counts)} pages' counts for {len(pages)} pages")
        table = object.__new__(cls)
        table.pages, table._page_row = kept_pages(pages)
        table.first = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        table._chunking = (method, size, overlap)
        table._total_words = int(total_words)
        return table

    def _page_rows(self, p: int) -> tuple[IntArray, IntArray, IntArray]:
        page = self.pages[p]
        method, size, overlap = self._chunking
        if isinstance(page, HeldPage):
            rows = page.found_in(f"chunk rows {method} {size} {overlap}", lambda _: self._cut(p))
        else:
            rows = self._cut(p)
        want = self._end(p) - self._start(p)
        if len(rows[0]) != want:
            raise ValueError(
                f"page {page.id!r} cut into {len(rows[0])} chunks here, {want} where it was "
                "chunked: its text or the chunker differs between the two"
            )
        return rows

    def _cut(self, p: int) -> tuple[IntArray, IntArray, IntArray]:
        method, size, overlap = self._chunking
        a, b, w = page_rows(self.pages[p], method=method, size=size, overlap=overlap)
        return (
            np.asarray(a, dtype=np.int64),
            np.asarray(b, dtype=np.int64),
            np.asarray(w, dtype=np.int64),
        )

    def _row(self, p: int, i: int) -> tuple[int, int, int]:
        starts, ends, n_words = self._page_rows(p)
        j = i - self._start(p)
        return int(starts[j]), int(ends[j]), int(n_words[j])

    def words_of(self, rows: Sequence[int] | IntArray) -> IntArray:
        """The word counts of chunks ``rows`` (int64, in that order), their pages read as one
        plan (:meth:`reading`)."""
        listed = np.asarray(rows, dtype=np.int64).tolist()
        out = np.zeros(len(listed), dtype=np.int64)
        with self.reading(listed):
            for k, i in enumerate(listed):
                p = self._page_of(i)
                out[k] = self._page_rows(p)[2][i - self._start(p)]
        return out

    @property
    def total_words(self) -> int:
        return self._total_words
