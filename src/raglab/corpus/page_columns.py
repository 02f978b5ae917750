"""The metadata of many held pages kept as columns: a few arrays in all, not objects a page.

A Dask client reads every page of the corpus once, to check it, and keeps what its stages read
of each page beside the text the workers hold (:class:`~raglab.corpus.pages.HeldPage`). As one
object a page, with its strings, an index entry, the paths handed to the workers and their
partition map, that weighed 1.13 KB a page (tracemalloc over 1,000 pages of the benchmark's
corpus): 1.1 GB at 100M chunks in pages of 100 chunks, 113 GB for one-chunk pages.
:class:`PageColumns` keeps the same fields as columns: each string field as one UTF-8 buffer and
(n + 1,) int64 offsets (:class:`~raglab.corpus.strings.StringColumn`), the numbers as arrays, the front-matter keys RAG
lab does not use as their JSON, and the ids' index as their hashes sorted ((n,) int64) with each
one's row ((n,) int32). By hand that is 78 bytes a page (five strings' offsets 40, the numbers
26, the index 12) beside the strings' own bytes, a path held as the part after the folder it
was read from; 86 as tracemalloc measures it, with the arrays' room to grow. A page is made, as
the :class:`~raglab.corpus.pages.HeldPage` it stands for (field for field), when a stage reads
it, and let go after.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import date
from typing import overload

import numpy as np

from raglab.base.ranking import IntArray
from raglab.corpus.pages import HeldPage, Page, PageShelf, PageTexts
from raglab.corpus.strings import StringColumn

__all__ = ["IdIndex", "PageColumns"]

_STATUS = ("current", "superseded")


class IdIndex(Mapping[str, int]):
    """Page id -> its row in ``ids``, looked up among the ids' hashes (``key``, default the
    str's own ``hash``, fixed within one process, which is all a lookup needs), sorted ((n,)
    int64), with each one's row ((n,) int32): 12 bytes a page, no object a page. A hash shared
    by two ids is told apart by the ids themselves. With an id given twice, the first row is
    found."""

    __slots__ = ("_hashes", "_ids", "_key", "_rows")

    def __init__(self, ids: Sequence[str], *, key: Callable[[str], int] = hash) -> None:
        self._ids = ids
        self._key = key
        hashes = np.fromiter((key(i) for i in ids), dtype=np.int64, count=len(ids))
        order = np.argsort(hashes, kind="stable")
        self._hashes: IntArray = hashes[order]
        self._rows = order.astype(np.int32 if len(order) < 2**31 else np.int64)

    def _candidates(self, page_id: str) -> range:
        h = self._key(page_id)
        return range(
            int(np.searchsorted(self._hashes, h, side="left")),
            int(np.searchsorted(self._hashes, h, side="right")),
        )

    def get(self, page_id: object, default: int | None = None) -> int | None:  # type: ignore[override]
        if not isinstance(page_id, str):
            return default
        for k in self._candidates(page_id):
            row = int(self._rows[k])
            if self._ids[row] == page_id:
                return row
        return default

    def __getitem__(self, page_id: str) -> int:
        row = self.get(page_id)
        if row is None:
            raise KeyError(page_id)
        return row

    def __contains__(self, page_id: object) -> bool:
        return self.get(page_id) is not None

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def repeated(self) -> list[tuple[int, int]]:
        """Each row whose id an earlier row has, with the first row holding it,
        ``(later, first)``, later rows ascending: the corpus's duplicate ids."""
        new_run = np.concatenate([[True], self._hashes[1:] != self._hashes[:-1], [True]])
        bounds = np.flatnonzero(new_run)
        found: list[tuple[int, int]] = []
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            if b - a < 2:
                continue
            # A run of equal hashes, its rows ascending (the sort is stable): ids told apart.
            first: dict[str, int] = {}
            for row in self._rows[a:b].tolist():
                seen = first.setdefault(self._ids[row], row)
                if seen != row:
                    found.append((row, seen))
        return sorted(found)


class PageColumns(PageShelf):
    """The pages added (:meth:`add`, in corpus order) as columns (module docstring), each
    made as a :class:`~raglab.corpus.pages.HeldPage` whose text ``texts`` fetches when it is
    read. ``rows``: the ids' index. ``prefix``: what every page's source starts with (the
    folder read, with its separator), held once."""

    def __init__(self, texts: PageTexts, *, prefix: str = "") -> None:
        self.texts = texts
        self.ids = StringColumn()
        self.titles = StringColumn()
        self.sources = StringColumn(prefix=prefix)
        self.supersedes = StringColumn()
        self._metas = StringColumn()
        self._updated = array("i")  # date.toordinal(), 0 for none
        self._status = bytearray()
        self._has_supersedes = bytearray()
        self._first_line = array("i")
        self._n_words = array("q")
        self._n_chars = array("q")
        self._rows: IdIndex | None = None
        # The texts' sizes are read from here, not from a dict of every page's.
        texts.size_of = self.chars_of

    def add(self, page: Page) -> None:
        """Keep ``page``'s metadata (not its text or sections) as the next row; before the
        index (:attr:`rows`) is first read."""
        if self._rows is not None:
            raise RuntimeError("a page is added after the ids' index was built")
        self.ids.append(page.id)
        self.titles.append(page.title)
        self.sources.append(page.source)
        self.supersedes.append(page.supersedes or "")
        self._has_supersedes.append(page.supersedes is not None)
        self._metas.append(json.dumps(dict(page.meta), ensure_ascii=False) if page.meta else "")
        self._updated.append(0 if page.updated is None else page.updated.toordinal())
        self._status.append(_STATUS.index(page.status))
        self._first_line.append(page.first_line)
        self._n_words.append(page.n_words)
        self._n_chars.append(len(page.text))

    def extend(self, other: PageColumns) -> None:
        """Keep ``other``'s pages as the next rows, column by column (pages a Dask worker
        read, :func:`raglab.distributed.pages.partition_pages`); before the index is built."""
        if self._rows is not None:
            raise RuntimeError("pages are added after the ids' index was built")
        for mine, theirs in zip(self._strings(), other._strings(), strict=True):
            mine.extend(theirs)
        for numbers, more in zip(self._numbers(), other._numbers(), strict=True):
            numbers.extend(more)

    def _strings(self) -> tuple[StringColumn, ...]:
        return (self.ids, self.titles, self.sources, self.supersedes, self._metas)

    def _numbers(self) -> tuple[array[int] | bytearray, ...]:
        return (
            self._updated,
            self._status,
            self._has_supersedes,
            self._first_line,
            self._n_words,
            self._n_chars,
        )

    def __getstate__(self) -> dict[str, object]:
        # The columns travel (from a Dask worker); the texts' source and the index do not.
        return {k: v for k, v in self.__dict__.items() if k not in ("texts", "_rows")}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._rows = None
        self.texts = PageTexts(0)
        self.texts.size_of = self.chars_of

    @property
    def rows(self) -> IdIndex:
        """Page id -> row (:class:`IdIndex`), built once the pages are added."""
        if self._rows is None:
            self._rows = IdIndex(self.ids)
        return self._rows

    def chars_of(self, page_id: str) -> int | None:
        """The length in characters of page ``page_id``'s text (None: no such page)."""
        row = self.rows.get(page_id)
        return None if row is None else self._n_chars[row]

    def updated_ordinals(self) -> IntArray:
        """Each page's ``updated`` as ``date.toordinal()`` ((n,) int64, 0 where it has none)."""
        return np.frombuffer(self._updated, dtype=np.int32).astype(np.int64)

    def __len__(self) -> int:
        return len(self._n_words)

    @overload
    def __getitem__(self, i: int) -> HeldPage: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[HeldPage]: ...
    def __getitem__(self, i: int | slice) -> HeldPage | Sequence[HeldPage]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError(f"page {i} of {n}")
        updated = self._updated[j]
        meta = self._metas[j]
        return HeldPage.made(
            self.texts,
            self._n_words[j],
            id=self.ids[j],
            title=self.titles[j],
            updated=None if updated == 0 else date.fromordinal(updated),
            status=_STATUS[self._status[j]],
            supersedes=self.supersedes[j] if self._has_supersedes[j] else None,
            source=self.sources[j],
            first_line=self._first_line[j],
            meta=json.loads(meta) if meta else {},
        )

    def __iter__(self) -> Iterator[HeldPage]:
        for j in range(len(self)):
            yield self[j]

    def nbytes(self) -> int:
        """What the columns hold, in bytes (the index's arrays included once it is built)."""
        strings = self._strings()
        numbers = (self._updated, self._first_line, self._n_words, self._n_chars)
        index = 0 if self._rows is None else self._rows._hashes.nbytes + self._rows._rows.nbytes
        return (
            sum(s.nbytes() for s in strings)
            + sum(a.itemsize * len(a) for a in numbers)
            + len(self._status)
            + len(self._has_supersedes)
            + index
        )
