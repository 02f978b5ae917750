"""The corpus's page ids held on the Dask workers in buckets: duplicates, dangling supersedes, lookups.

Each partition's worker cuts its pages' ids into ``B`` buckets by a hash that is the same in
every process (CRC-32 of the id's UTF-8 bytes; Python's own ``hash`` of a str differs from one
process to the next), each id with its row in the corpus (its partition's first row, given
by the client, plus its place there) and its file, and each ``supersedes`` into the bucket of
the id it names (:func:`id_pieces`). Bucket ``b``'s task joins every partition's piece ``b``, in
partition order (:func:`bucket_ids`), and keeps, on its worker, each id's first row: every
page with that id is in that bucket, so an id given twice is found there, and a ``supersedes``
naming no page is one its bucket lacks. The client gathers only those findings (a few entries,
or none) and asks a bucket for the rows of ids (:meth:`PageIds.rows`): nothing of one entry a
page is ever held here, where a Python dict of every id would weigh about 100 bytes a page.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import getitem
from typing import Any

from raglab.distributed.chunking import PagesRead
from raglab.distributed.cluster import submit_beside

__all__ = ["IdBucket", "IdPiece", "PageIds", "bucket_ids", "bucket_of", "id_pieces"]


def bucket_of(page_id: str, n_buckets: int) -> int:
    """The bucket of ``page_id`` among ``n_buckets``: CRC-32 of its UTF-8 bytes, modulo."""
    return zlib.crc32(page_id.encode("utf-8", "surrogatepass")) % n_buckets


@dataclass(frozen=True, slots=True)
class IdPiece:
    """One partition's share of one bucket: its pages whose id falls there (id, row, file),
    and its pages whose ``supersedes`` does (the id named, and the page's row, id and file)."""

    ids: list[tuple[str, int, str]] = field(default_factory=list)
    supersedes: list[tuple[str, int, str, str]] = field(default_factory=list)


def id_pieces(read: PagesRead, first_row: int, n_buckets: int) -> tuple[IdPiece, ...]:
    """Task: a partition's ids and ``supersedes`` cut into ``n_buckets`` pieces, its pages'
    rows counted from ``first_row``."""
    pieces = tuple(IdPiece() for _ in range(n_buckets))
    for k, page in enumerate(read.pages):
        row = first_row + k
        pieces[bucket_of(page.id, n_buckets)].ids.append((page.id, row, page.source))
        if page.supersedes is not None:
            pieces[bucket_of(page.supersedes, n_buckets)].supersedes.append(
                (page.supersedes, row, page.id, page.source)
            )
    return pieces


@dataclass(frozen=True, slots=True)
class IdBucket:
    """A bucket's ids joined (:func:`bucket_ids`), held on its worker: each id's first row;
    ``twice``, each later page with an id (row, id, file, the first page's file); ``dangling``,
    each page whose ``supersedes`` names an id of this bucket that no page has (row, id, file,
    the id named)."""

    rows: dict[str, int]
    twice: list[tuple[int, str, str, str]]
    dangling: list[tuple[int, str, str, str]]


def bucket_ids(*pieces: IdPiece) -> IdBucket:
    """Task: a bucket's pieces, one a partition in partition order, joined."""
    rows: dict[str, int] = {}
    sources: dict[str, str] = {}
    twice: list[tuple[int, str, str, str]] = []
    for piece in pieces:
        for page_id, row, source in piece.ids:
            if page_id in rows:
                twice.append((row, page_id, source, sources[page_id]))
            else:
                rows[page_id] = row
                sources[page_id] = source
    dangling = [
        (row, page_id, source, named)
        for piece in pieces
        for named, row, page_id, source in piece.supersedes
        if named not in rows
    ]
    return IdBucket(rows, twice, dangling)


def _findings(bucket: IdBucket) -> tuple[list[tuple[int, str, str, str]], ...]:
    return bucket.twice, bucket.dangling


def _rows(bucket: IdBucket, ids: Sequence[str]) -> list[int | None]:
    return [bucket.rows.get(page_id) for page_id in ids]


class PageIds:
    """The corpus's ids in ``n_buckets`` buckets on the workers (module docstring), from the
    partitions ``parts`` (futures of :class:`PagesRead`, in order) whose first rows are
    ``first_rows``."""

    def __init__(
        self, client: Any, parts: Sequence[Any], first_rows: Sequence[int], n_buckets: int
    ) -> None:
        self._client = client
        self.n_buckets = max(1, n_buckets)
        cut = [
            submit_beside(client, id_pieces, part, first, self.n_buckets)
            for part, first in zip(parts, first_rows, strict=True)
        ]
        self._buckets = [
            client.submit(bucket_ids, *[client.submit(getitem, c, b) for c in cut], pure=False)
            for b in range(self.n_buckets)
        ]

    def findings(
        self,
    ) -> tuple[list[tuple[int, str, str, str]], list[tuple[int, str, str, str]]]:
        """The ids given twice and the ``supersedes`` naming no page (:class:`IdBucket`'s
        ``twice`` and ``dangling``), each in row order, a page given twice left out of
        ``dangling`` (as one machine checks it)."""
        found = self._client.gather(
            [submit_beside(self._client, _findings, b) for b in self._buckets]
        )
        twice = sorted(entry for got, _ in found for entry in got)
        again = {row for row, *_ in twice}
        dangling = sorted(entry for _, got in found for entry in got if entry[0] not in again)
        return twice, dangling

    def rows(self, ids: Sequence[str]) -> list[int | None]:
        """The row of each of ``ids`` (None: no page has it), one task a bucket asked."""
        asked: dict[int, list[int]] = {}
        for k, page_id in enumerate(ids):
            asked.setdefault(bucket_of(page_id, self.n_buckets), []).append(k)
        futures = {
            b: submit_beside(self._client, _rows, self._buckets[b], [ids[k] for k in ks])
            for b, ks in asked.items()
        }
        out: list[int | None] = [None] * len(ids)
        for b, got in zip(futures, self._client.gather(list(futures.values())), strict=True):
            for k, row in zip(asked[b], got, strict=True):
                out[k] = row
        return out
