"""A chunking's table whose pages' first rows stay on the Dask workers: nothing a page on the client.

:class:`RemoteChunkTable` is a :class:`~raglab.chunking.held_table.HeldChunkTable` over a
corpus whose pages the workers hold (:class:`~raglab.distributed.pages.RemotePages`): each
partition's worker keeps its pages' first chunk rows, counted from the partition's first
((n_pages + 1,) int64, :func:`chunk_firsts`), and the client keeps each partition's first
chunk row and page row (O(partitions)). The page of a chunk and the chunk rows of a page are
asked of the partition's worker, in one task a partition for the rows a stage says it will
read (:meth:`RemoteChunkTable.reading`, :meth:`RemoteChunkTable.prefetch_pages`), and kept here
for the last ``keep`` chunks and pages read (a cluster command's:
:data:`~raglab.settings.CLIENT_PAGE_RECORDS`). A chunk is then
made as a held table makes it: its page's rows cut again from the page's text.

The reranker's page ages (:meth:`RemoteChunkTable.age_basis`): the newest date and the median
age that fills a missing one, found from each partition's count of chunks a date, the same
floats as one machine's table of every page's age.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from raglab.base.ranking import IntArray
from raglab.chunking.chunk import Chunk
from raglab.chunking.held_table import HeldChunkTable
from raglab.corpus.pages import prefetch
from raglab.distributed.chunking import ChunkedPartition, PagesRead, partition_groups
from raglab.distributed.cluster import submit_beside
from raglab.distributed.pages import RemotePages
from raglab.rerank.features import DAYS_PER_YEAR
from raglab.run_settings import ChunkingKey

__all__ = ["RemoteChunkTable", "chunk_firsts", "remote_chunk_table"]

#: A partition's pages' first chunk rows ((n_pages + 1,) int64, from 0) and its chunks' words.
Firsts = tuple[IntArray, int]


def chunk_firsts(part: ChunkedPartition) -> Firsts:
    """Task: a chunked partition's pages' first chunk rows, counted from the partition's
    first chunk, and its chunks' words in all; held on the worker for the command."""
    row = {page_id: p for p, (page_id, _, _) in enumerate(part.pages)}
    counts = np.zeros(len(part.pages), dtype=np.int64)
    for c in part.chunks:
        counts[row[c.page_id]] += 1
    firsts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return firsts, sum(c.n_words for c in part.chunks)


def _size(held: Firsts) -> tuple[int, int, int]:
    firsts, words = held
    return len(firsts) - 1, int(firsts[-1]), words


def _pages_of(held: Firsts, rows: Sequence[int]) -> list[tuple[int, int, int]]:
    """Task: for each of a partition's chunk ``rows`` (from its first), its page's row, first
    chunk row and row after its last, all from the partition's first."""
    firsts = held[0]
    pages = np.searchsorted(firsts, np.asarray(rows, dtype=np.int64), side="right") - 1
    return [(int(p), int(firsts[p]), int(firsts[p + 1])) for p in pages.tolist()]


def _spans(held: Firsts, pages: Sequence[int]) -> list[tuple[int, int]]:
    """Task: each of a partition's ``pages``' first chunk row and the row after its last."""
    firsts = held[0]
    return [(int(firsts[p]), int(firsts[p + 1])) for p in pages]


def _dated(read: PagesRead, held: Firsts) -> Counter[int]:
    """Task: the partition's chunks by their page's date (``date.toordinal()``), undated pages
    and pages without a chunk left out."""
    counts = np.diff(held[0])
    dated: Counter[int] = Counter()
    for p, page in enumerate(read.pages):
        if page.updated is not None and counts[p] > 0:
            dated[page.updated.toordinal()] += int(counts[p])
    return dated


class RemoteChunkTable(HeldChunkTable):
    """The table of the pages ``pages`` (held on the workers) chunked by ``method``
    (``size``, ``overlap``), whose partitions' first rows ``held`` (futures of :data:`Firsts`,
    one a partition of ``pages``, in order) stay on the workers (module docstring)."""

    __slots__ = (
        "_age_basis",
        "_chunk_bounds",
        "_client",
        "_held",
        "_keep",
        "_page_bounds",
        "_reads",
        "_spans",
        "_where",
    )

    def __init__(
        self,
        client: Any,
        pages: RemotePages,
        reads: Sequence[Any],
        held: Sequence[Any],
        *,
        method: str,
        size: int | None,
        overlap: int | None,
        keep: int,
    ) -> None:
        self._client = client
        self.pages = pages
        self._page_row = pages.rows
        self._reads = list(reads)
        self._held = list(held)
        self._chunking = (method, size, overlap)
        got = client.gather([submit_beside(client, _size, h) for h in self._held])
        self._page_bounds = np.concatenate([[0], np.cumsum([n for n, _, _ in got])]).astype(
            np.int64
        )
        self._chunk_bounds = np.concatenate([[0], np.cumsum([c for _, c, _ in got])]).astype(
            np.int64
        )
        if int(self._page_bounds[-1]) != len(pages):
            raise ValueError(f"{int(self._page_bounds[-1])} pages chunked for {len(pages)} pages")
        self._total_words = sum(w for _, _, w in got)
        self._keep = max(1, keep)
        # Chunk row -> its page's row; page row -> its chunks' rows (start, end); each the
        # least recently used first out.
        self._where: dict[int, int] = {}
        self._spans: dict[int, tuple[int, int]] = {}
        self._age_basis: tuple[float, float] | None = None

    def __len__(self) -> int:
        return int(self._chunk_bounds[-1])

    def _kept(self, cache: dict[int, Any], key: int, value: Any) -> None:
        cache.pop(key, None)
        cache[key] = value
        while len(cache) > self._keep:
            del cache[next(iter(cache))]

    def _asked(
        self, task: Any, firsts: IntArray, rows: list[int]
    ) -> Iterator[tuple[int, list[int], list[Any]]]:
        """``task(held[g], rows counted from partition g's first)`` for each partition g
        holding some of ``rows`` (``firsts``: the partitions' first rows), gathered at once:
        each partition's places in ``rows`` and its answers."""
        by_group = partition_groups(firsts, rows)
        asked = {
            g: submit_beside(
                self._client, task, self._held[g], [rows[i] - int(firsts[g]) for i in places]
            )
            for g, places in by_group.items()
        }
        got = self._client.gather(list(asked.values()))
        for g, answers in zip(asked, got, strict=True):
            yield g, by_group[g], answers

    def prefetch_chunks(self, rows: Iterable[int]) -> None:
        """Find the pages of those of chunks ``rows`` not known, one task a partition asked."""
        wanted = [r for r in dict.fromkeys(int(r) for r in rows) if r not in self._where]
        wanted = wanted[: self._keep]
        if not wanted:
            return
        for g, places, got in self._asked(_pages_of, self._chunk_bounds, wanted):
            page0, chunk0 = int(self._page_bounds[g]), int(self._chunk_bounds[g])
            for i, (p, a, b) in zip(places, got, strict=True):
                self._kept(self._where, wanted[i], page0 + p)
                self._kept(self._spans, page0 + p, (chunk0 + a, chunk0 + b))

    def prefetch_pages(self, pages: Iterable[int]) -> None:
        """Find the chunk rows of those of pages ``pages`` not known, one task a partition."""
        wanted = [p for p in dict.fromkeys(int(p) for p in pages) if p not in self._spans]
        wanted = wanted[: self._keep]
        if not wanted:
            return
        for g, places, got in self._asked(_spans, self._page_bounds, wanted):
            chunk0 = int(self._chunk_bounds[g])
            for i, (a, b) in zip(places, got, strict=True):
                self._kept(self._spans, wanted[i], (chunk0 + a, chunk0 + b))

    def _page_of(self, i: int) -> int:
        if i not in self._where:
            self.prefetch_chunks([i])
        return self._where[i]

    def _span(self, p: int) -> tuple[int, int]:
        if p not in self._spans:
            self.prefetch_pages([p])
        return self._spans[p]

    def _start(self, p: int) -> int:
        return self._span(p)[0]

    def _end(self, p: int) -> int:
        return self._span(p)[1]

    def page_rows_of(self, rows: Sequence[int] | IntArray) -> IntArray:
        listed = np.asarray(rows, dtype=np.int64).tolist()
        self.prefetch_chunks(listed)
        return np.asarray([self._page_of(i) for i in listed], dtype=np.int64)

    def reading(self, rows: Iterable[int]) -> AbstractContextManager[None]:
        listed = [int(i) for i in rows]
        self.prefetch_chunks(listed)
        return super().reading(listed)

    def page_ids(self, rows: Iterable[int]) -> list[str]:
        listed = [int(i) for i in rows]
        self.prefetch_chunks(listed)
        return super().page_ids(listed)

    def __iter__(self) -> Iterator[Chunk]:
        # Pages a block at a time: their chunk rows asked in one task a partition.
        block = min(self._keep, 4096)
        for start in range(0, len(self.pages), block):
            pages = range(start, min(len(self.pages), start + block))
            self.prefetch_pages(pages)
            prefetch(self.pages, pages)
            for p in pages:
                for i in range(self._start(p), self._end(p)):
                    yield self._make(p, i)

    def age_basis(self) -> tuple[float, float] | None:
        """The newest page date among the pages with a chunk (``date.toordinal()``, as a
        float) and the median age in years of their chunks, which fills a missing date; None
        when no page with a chunk is dated (every age is then 0). As one machine finds them over
        every page's age (:attr:`raglab.pipeline.indexes.ChunkSet.ages_of`), from each
        partition's chunks counted by date."""
        if self._age_basis is None:
            dated: Counter[int] = Counter()
            for got in self._client.gather(
                [
                    submit_beside(self._client, _dated, read, held)
                    for read, held in zip(self._reads, self._held, strict=True)
                ]
            ):
                dated.update(got)
            if not dated:
                return None
            newest = float(max(dated))
            # Oldest ordinal last: ages ascending, as one machine sorts them.
            ordinals = sorted(dated, reverse=True)
            ages = (newest - np.asarray(ordinals, dtype=np.float64)) / DAYS_PER_YEAR
            ends = np.cumsum([dated[o] for o in ordinals])
            n = int(ends[-1])
            middle = [n // 2 - 1, n // 2] if n % 2 == 0 else [n // 2]
            picked = ages[np.searchsorted(ends, middle, side="right")]
            self._age_basis = (newest, float(np.median(picked)))
        return self._age_basis


def remote_chunk_table(
    client: Any,
    pages: RemotePages,
    reads: Sequence[Any],
    parts: Sequence[Any],
    key: ChunkingKey,
    *,
    keep: int,
) -> RemoteChunkTable:
    """The :class:`RemoteChunkTable` of ``pages`` (read on the workers as ``reads``, futures
    of :class:`PagesRead`) under ``key``, from the workers' chunked partitions ``parts``
    (futures of :class:`ChunkedPartition`, one a partition of ``reads``)."""
    key = key.resolved()
    held = [submit_beside(client, chunk_firsts, part) for part in parts]
    return RemoteChunkTable(
        client,
        pages,
        reads,
        held,
        method=key.method,
        size=key.size,
        overlap=key.overlap,
        keep=keep,
    )
