"""A chunk, and which chunks contain a span: the relevance of every chunk to every answer.

A chunk contains a span when ``chunk.start <= start`` and ``end <= chunk.end`` on the same page
(docs/design.md#spans). :class:`ChunkIndex` answers that for many spans at once; it is what a
lab's chunk sets hold.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from typing import overload

import numpy as np

from raglab.base.ranking import IntArray

__all__ = ["Chunk", "ChunkIndex", "containing_chunks"]


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk: ``text == page.text[start:end]`` for the page ``page_id``.

    ``index`` is the chunk's position in the list a chunker returns (the index rankings use);
    ``position`` is its 0-based place within its page, and ``id`` is ``f"{page_id}#{position}"``.
    ``heading_path`` is the path of the section the chunk starts in; ``title``, ``updated`` and
    ``status`` are copied from the page; ``n_words`` counts the whitespace words of ``text``.
    """

    index: int
    id: str
    page_id: str
    title: str
    heading_path: tuple[str, ...]
    start: int
    end: int
    position: int
    n_words: int
    updated: date | None
    status: str
    text: str


class ChunkIndex(Sequence[Chunk]):
    """The chunks, plus a per-page index answering "which chunks contain this span?" fast.

    It is a ``Sequence[Chunk]`` itself, so it can stand wherever the chunk list does. Built once
    in O(n log n); each query is a binary search over the page's chunks sorted by start, then one
    vectorised comparison of their ends.
    """

    __slots__ = ("_by_page", "_chunks")

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        self._chunks = tuple(chunks)
        grouped: dict[str, list[tuple[int, int, int]]] = {}
        for i, c in enumerate(self._chunks):
            grouped.setdefault(c.page_id, []).append((c.start, c.end, i))
        self._by_page: dict[str, tuple[IntArray, IntArray, IntArray]] = {}
        for page_id, rows in grouped.items():
            table = np.asarray(sorted(rows), dtype=np.int64)
            self._by_page[page_id] = (table[:, 0].copy(), table[:, 1].copy(), table[:, 2].copy())

    def __len__(self) -> int:
        return len(self._chunks)

    @overload
    def __getitem__(self, i: int) -> Chunk: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Chunk]: ...
    def __getitem__(self, i: int | slice) -> Chunk | Sequence[Chunk]:
        return self._chunks[i]

    def __iter__(self) -> Iterator[Chunk]:
        return iter(self._chunks)

    def containing(self, page_id: str, start: int, end: int) -> list[int]:
        """Positions (ascending) of the chunks of ``page_id`` whose span contains [start, end)."""
        if start < 0 or end < start:
            raise ValueError(f"need 0 <= start <= end, got start={start}, end={end}")
        entry = self._by_page.get(page_id)
        if entry is None:
            return []
        starts, ends, positions = entry
        k = int(np.searchsorted(starts, start, side="right"))
        hits = positions[:k][ends[:k] >= end]
        return sorted(hits.tolist())


def containing_chunks(chunks: Sequence[Chunk], page_id: str, start: int, end: int) -> list[int]:
    """Indices into ``chunks`` (ascending) of the chunks on ``page_id`` that contain [start, end).

    A chunk contains a span when ``chunk.start <= start`` and ``end <= chunk.end`` on the same page
    (docs/design.md#spans); such a chunk is relevant to the question. For a chunker's own list the
    indices equal ``Chunk.index``. Pass a :class:`ChunkIndex` to answer many spans with one index;
    any other sequence is indexed afresh on each call.
    """
    index = chunks if isinstance(chunks, ChunkIndex) else ChunkIndex(chunks)
    return index.containing(page_id, start, end)
