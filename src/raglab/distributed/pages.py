"""A corpus folder read and checked on the Dask workers, its pages held there: none on the client.

:func:`load_corpus_on_cluster` is :func:`raglab.corpus.pages.load_corpus` with the files read
where the pages are held for the command: the folder is cut into ranges of paths, each listed
and read by a worker (:mod:`raglab.distributed.listing`; neither the client nor the scheduler
holds a path a file), and each partition's worker reads its files as ``load_corpus`` reads each one and says what it
found (:func:`partition_summary`: the files' problems and warnings, the documents' notes, its
empty pages and unused front-matter keys); the ids are joined in buckets on the workers
(:class:`~raglab.distributed.page_ids.PageIds`: duplicates, a ``supersedes`` naming no page);
the client checks the whole with ``load_corpus``'s own checks
(:func:`raglab.corpus.pages.check_pages`). A folder gives the same pages, the same problems in
the same order and the same warnings as on one machine, and each page file is read once per
command, by a worker.

The corpus's pages are then :class:`RemotePages`: a page's metadata (all of it but the text,
the same fields) is fetched from its partition's worker when a stage reads the page, in one
round trip per partition for the pages a stage says it will read (:meth:`RemotePages.prefetch`),
and kept here for the last ``keep`` pages read (a cluster command's:
:data:`~raglab.settings.CLIENT_PAGE_RECORDS`); an id's row is asked of its bucket. The client holds each partition's first row, not an entry a page.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, overload

import numpy as np

from raglab.corpus.documents.read import DocumentReader
from raglab.corpus.listing import Key
from raglab.corpus.pages import (
    Corpus,
    HeldPage,
    PageChecks,
    PageShelf,
    PageTexts,
    check_pages,
    corpus_folder,
)
from raglab.distributed.chunking import PagesRead, page_digest, partition_groups
from raglab.distributed.cluster import shards, submit_beside
from raglab.distributed.listing import folder_ranges, submit_ranges
from raglab.distributed.page_ids import PageIds
from raglab.errors import Problem, RaglabWarning

__all__ = [
    "CorpusRead",
    "PartitionSummary",
    "RemotePages",
    "load_corpus_on_cluster",
    "page_records",
    "partition_summary",
]

#: Pages a round trip when a stage reads every page in order (a report's word count), or the
#: pages kept if fewer.
BLOCK_PAGES = 4096


@dataclass(frozen=True, slots=True)
class PartitionSummary:
    """What a partition's worker says of its pages (:func:`partition_summary`): how many, what
    the reading said (:class:`~raglab.distributed.chunking.PagesRead`'s problems with their rows,
    warnings, notes and documents skipped), its pages without a word (source, id), the pages
    with unused front-matter keys and those keys, the ids' digest
    (:func:`~raglab.distributed.chunking.page_digest`) and the words in all."""

    n_pages: int
    problems: tuple[Problem, ...]
    problem_rows: tuple[int, ...]
    said: tuple[Problem, ...]
    notes: tuple[str, ...]
    skipped: tuple[tuple[str, int], ...]
    empty: tuple[tuple[str, str], ...]
    with_meta: int
    meta_keys: frozenset[str]
    digest: bytes
    n_words: int


def partition_summary(read: PagesRead) -> PartitionSummary:
    """Task: what the client checks of a partition's pages, with nothing of one entry a page
    but its empty pages (each is a warning)."""
    meta_keys: set[str] = set()
    for page in read.pages:
        meta_keys.update(page.meta)
    return PartitionSummary(
        len(read.pages),
        read.problems,
        read.problem_rows,
        read.said,
        read.notes,
        read.skipped,
        tuple((p.source, p.id) for k, p in enumerate(read.pages) if not read.worded[k]),
        sum(bool(p.meta) for p in read.pages),
        frozenset(meta_keys),
        page_digest(p.id for p in read.pages),
        sum(p.n_words for p in read.pages),
    )


#: A page's metadata as it travels: id, title, updated (date.toordinal(), 0 for none),
#: status, supersedes, source, first line, meta, words, characters.
Record = tuple[str, str, int, str, str | None, str, int, dict[str, str], int, int]


def page_records(read: PagesRead, rows: Sequence[int]) -> list[Record]:
    """Task: the metadata of a partition's pages ``rows`` (counted from its first), in order."""
    out: list[Record] = []
    for k in rows:
        p = read.pages[k]
        updated = 0 if p.updated is None else p.updated.toordinal()
        out.append(
            (
                p.id,
                p.title,
                updated,
                p.status,
                p.supersedes,
                p.source,
                p.first_line,
                dict(p.meta),
                p.n_words,
                len(p.text),
            )
        )
    return out


class _RemoteRows(Mapping[str, int]):
    """A :class:`RemotePages`' ids -> rows: asked of the ids' buckets, kept for the pages kept."""

    def __init__(self, pages: RemotePages) -> None:
        self._pages = pages

    def get(self, page_id: object, default: int | None = None) -> int | None:  # type: ignore[override]
        if not isinstance(page_id, str):
            return default
        row = self._pages.row_of(page_id)
        return default if row is None else row

    def __getitem__(self, page_id: str) -> int:
        row = self.get(page_id)
        if row is None:
            raise KeyError(page_id)
        return row

    def __contains__(self, page_id: object) -> bool:
        return self.get(page_id) is not None

    def __len__(self) -> int:
        return len(self._pages)

    def __iter__(self) -> Iterator[str]:
        return (page.id for page in self._pages)


class _Field(Sequence[str]):
    """One string field of every page of a :class:`RemotePages`, read page by page."""

    def __init__(self, pages: RemotePages, name: str) -> None:
        self._pages = pages
        self._name = name

    def __len__(self) -> int:
        return len(self._pages)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...
    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        if isinstance(i, slice):
            return [getattr(page, self._name) for page in self._pages[i]]
        return str(getattr(self._pages[i], self._name))

    def __iter__(self) -> Iterator[str]:
        return (str(getattr(page, self._name)) for page in self._pages)

    def digests(self) -> list[tuple[int, bytes]]:
        """Each partition's (pages, :func:`page_digest` of their ids), found there."""
        return self._pages.digests()


class RemotePages(PageShelf):
    """The pages of a corpus read on the workers (:func:`load_corpus_on_cluster`), each made
    when read as the :class:`~raglab.corpus.pages.HeldPage` it stands for (its text from
    ``texts``), from its metadata fetched from its partition's worker (``parts``, futures of
    :class:`PagesRead`; partition g holds rows ``bounds[g]:bounds[g + 1]``); ids' rows asked
    of ``ids``. Keeps the last ``keep`` pages' metadata read."""

    def __init__(
        self,
        client: Any,
        parts: Sequence[Any],
        bounds: Sequence[int],
        ids: PageIds,
        texts: PageTexts,
        summaries: Sequence[PartitionSummary],
        *,
        keep: int,
    ) -> None:
        self._client = client
        self._parts = list(parts)
        self._firsts = np.asarray(bounds, dtype=np.int64)
        self._ids = ids
        self.texts = texts
        self._digests = [(s.n_pages, s.digest) for s in summaries]
        self.total_words = sum(s.n_words for s in summaries)
        self._keep = max(1, keep)
        # Row -> record, the least recently used first; id -> row for the same pages; the
        # ids last asked that no page has.
        self._records: dict[int, Record] = {}
        self._rows: dict[str, int] = {}
        self._missing: dict[str, None] = {}
        self.fetched = 0
        self.round_trips = 0
        texts.size_of = self.chars_of

    @property
    def rows(self) -> Mapping[str, int]:
        return _RemoteRows(self)

    @property
    def ids(self) -> _Field:
        """Every page's id, in order, each read when asked for."""
        return _Field(self, "id")

    @property
    def sources(self) -> _Field:
        """Every page's source (its file), in order, each read when asked for."""
        return _Field(self, "source")

    def digests(self) -> list[tuple[int, bytes]]:
        """Each partition's (pages, :func:`page_digest` of their ids), as read there."""
        return list(self._digests)

    def __len__(self) -> int:
        return int(self._firsts[-1])

    def prefetch(self, rows: Iterable[int]) -> None:
        """Fetch the metadata of those of pages ``rows`` not kept, one task a partition asked
        (as many as :data:`keep` at most: the first ones)."""
        wanted = [
            int(r) for r in dict.fromkeys(int(r) for r in rows) if int(r) not in self._records
        ]
        if not wanted:
            return
        wanted = wanted[: self._keep]
        by_group = partition_groups(self._firsts, wanted)
        futures = {
            g: submit_beside(
                self._client,
                page_records,
                self._parts[g],
                [wanted[i] - int(self._firsts[g]) for i in places],
            )
            for g, places in by_group.items()
        }
        got = self._client.gather(list(futures.values()))
        self.round_trips += 1
        for g, records in zip(futures, got, strict=True):
            for i, record in zip(by_group[g], records, strict=True):
                self._keep_record(wanted[i], record)

    def _keep_record(self, row: int, record: Record) -> None:
        self._records[row] = record
        self._rows[record[0]] = row
        self.fetched += 1
        while len(self._records) > self._keep:
            oldest = next(iter(self._records))
            self._rows.pop(self._records.pop(oldest)[0], None)

    def prefetch_ids(self, ids: Iterable[str]) -> None:
        """Find the rows of those of ``ids`` not known, one task a bucket asked, and fetch the
        pages' metadata (:meth:`prefetch`)."""
        unknown = [i for i in dict.fromkeys(ids) if i not in self._rows and i not in self._missing]
        if not unknown:
            return
        rows = self._ids.rows(unknown)
        for page_id, row in zip(unknown, rows, strict=True):
            if row is None:
                self._note_missing(page_id)
        self.prefetch(row for row in rows if row is not None)

    def _note_missing(self, page_id: str) -> None:
        self._missing[page_id] = None
        while len(self._missing) > self._keep:
            del self._missing[next(iter(self._missing))]

    def row_of(self, page_id: str) -> int | None:
        """The row of page ``page_id`` (None: no page has it), its page's metadata fetched."""
        row = self._rows.get(page_id)
        if row is not None or page_id in self._missing:
            return row
        (row,) = self._ids.rows([page_id])
        if row is None:
            self._note_missing(page_id)
        else:
            self.prefetch([row])
        return row

    def chars_of(self, page_id: str) -> int | None:
        """The length in characters of page ``page_id``'s text (None: no such page)."""
        row = self.row_of(page_id)
        return None if row is None else self._record(row)[9]

    def _record(self, row: int) -> Record:
        record = self._records.get(row)
        if record is None:
            self.prefetch([row])
            record = self._records[row]
        else:
            # Least recently used first out: the dict keeps the order of use.
            self._records[row] = self._records.pop(row)
        return record

    @overload
    def __getitem__(self, i: int) -> HeldPage: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[HeldPage]: ...
    def __getitem__(self, i: int | slice) -> HeldPage | Sequence[HeldPage]:
        if isinstance(i, slice):
            rows = range(*i.indices(len(self)))
            self.prefetch(rows)
            return [self[j] for j in rows]
        n = len(self)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError(f"page {i} of {n}")
        (page_id, title, updated, status, supersedes, source, first_line, meta, words, _) = (
            self._record(j)
        )
        return HeldPage.made(
            self.texts,
            words,
            id=page_id,
            title=title,
            updated=None if updated == 0 else date.fromordinal(updated),
            status=status,
            supersedes=supersedes,
            source=source,
            first_line=first_line,
            meta=meta,
        )

    def __iter__(self) -> Iterator[HeldPage]:
        # Block by block: a stage that reads every page (a report's counts) costs a round
        # trip a block, and holds no more than the pages kept.
        size = min(BLOCK_PAGES, self._keep)
        for start in range(0, len(self), size):
            block = range(start, min(len(self), start + size))
            self.prefetch(block)
            for j in block:
                yield self[j]


@dataclass(frozen=True)
class CorpusRead:
    """A corpus read on the workers (:func:`load_corpus_on_cluster`): the corpus, its pages
    :class:`RemotePages`; the number of files read (a file skipped has no page); the futures
    of each partition's pages (:class:`PagesRead`, held on the workers for every stage); where
    each partition's pages start among the corpus's (the last entry: the number of pages),
    what :func:`raglab.distributed.chunking.text_fetcher` finds a page's partition by."""

    corpus: Corpus
    n_files: int
    parts: list[Any]
    bounds: list[int]


def load_corpus_on_cluster(
    client: Any,
    path: str | Path | None,
    *,
    texts: PageTexts,
    encoding: str | None = None,
    progress: Callable[[Sequence[int]], Iterable[int]] | None = None,
    listed: Callable[[Iterator[Key]], Iterable[Key]] | None = None,
    keep: int,
) -> CorpusRead:
    """``load_corpus(path, encoding=encoding)`` with every file read on the workers and the
    pages held there (:class:`RemotePages`, whose texts ``texts`` fetches; ``keep``: the pages'
    metadata kept here at most): the same pages, the same
    :class:`~raglab.errors.InputError` (the same problems, in the same order) and the same
    warnings (each document's, as a :class:`~raglab.errors.RaglabWarning`). ``listed`` wraps
    the folder's files' keys as the client lists them
    (:func:`~raglab.distributed.listing.folder_ranges`), ``progress`` the partitions' numbers
    as each one's summary comes."""
    root = corpus_folder(path, encoding)
    ranges, n_files = folder_ranges(root, shards(client), progress=listed)
    parts = submit_ranges(client, root, ranges, encoding=encoding, cwd=Path.cwd())
    summaries: list[PartitionSummary] = []
    found: list[tuple[int, Problem]] = []
    said: list[Problem] = []
    skipped: Counter[str] = Counter()
    bounds = [0]
    numbers = range(len(parts))
    for g in numbers if progress is None else progress(numbers):
        got: PartitionSummary = submit_beside(client, partition_summary, parts[g]).result()
        summaries.append(got)
        found.extend(
            (bounds[-1] + row, problem)
            for row, problem in zip(got.problem_rows, got.problems, strict=True)
        )
        said.extend(got.said)
        for note in got.notes:
            warnings.warn(note, RaglabWarning, stacklevel=2)
        skipped.update(dict(got.skipped))
        bounds.append(bounds[-1] + got.n_pages)
    documents = DocumentReader()
    documents.skipped.update(skipped)
    documents.finish()
    ids = PageIds(client, parts, bounds[:-1], len(parts))
    twice, dangling = ids.findings()
    meta_keys: frozenset[str] = frozenset().union(*(s.meta_keys for s in summaries))
    checks = PageChecks(
        bounds[-1],
        twice,
        dangling,
        [entry for s in summaries for entry in s.empty],
        sum(s.with_meta for s in summaries),
        meta_keys,
    )
    warned = check_pages(root, n_files, checks, found, said)
    pages = RemotePages(client, parts, bounds, ids, texts, summaries, keep=keep)
    return CorpusRead(Corpus(pages, str(root), warned), n_files, parts, bounds)
