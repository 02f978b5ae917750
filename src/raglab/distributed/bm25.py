"""BM25 over shards on Dask workers, with global statistics: the single index's answers.

What runs where:

1. **Workers, one task per partition**: count the partition's tokens
   (:meth:`~raglab.distributed.shard.ShardCounts.from_tokens`); the counts stay on the worker.
2. **Client, the reduction**: each shard sends only (n, total length, its terms' document
   frequencies); :func:`~raglab.distributed.shard.global_statistics` sums them into N, avgdl
   and n_t. Shard s starts at global index ``offset_s = n_0 + ... + n_{s-1}``.
3. **Workers**: each shard receives N, L and the document frequencies of its own terms (the
   global table cut by term, :meth:`~raglab.distributed.shard.GlobalStatistics.for_terms`),
   and turns its counts into IDFs and length ratios from them
   (:class:`~raglab.distributed.shard.ScoredShard`), never from its own N, avgdl or n_t:
   per-shard IDF would make a score depend on how the collection was split.
4. **Queries**: every batch goes to every shard, each returns its exact top k
   ((Q, min(k, n_s)) documents and scores), and the client merges them by (-score, global
   index) (:func:`~raglab.distributed.shard.merge_top_k`), the order of
   :meth:`raglab.bm25.BM25Index.search_many`.

Every score equals the single-machine index's bit for bit (the formula and its float
operations are in :mod:`raglab.distributed.shard`), so rankings, ties included, are the same.

A worker lost while it holds counts or shards is Dask's to handle: the scheduler reruns the
tasks whose results died with it, from their inputs, on the workers left (and a restarted one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from raglab._config import BM25_B, BM25_K1
from raglab._types import FloatArray, IntArray
from raglab.distributed.shard import (
    GlobalStatistics,
    ScoredShard,
    ShardCounts,
    global_statistics,
    merge_top_k,
)

__all__ = [
    "DistributedBM25",
    "count_partition",
    "search_shard",
    "shard_scores",
    "shard_scores_of",
]


def count_partition(token_lists: Sequence[Sequence[str]]) -> ShardCounts:
    """Task: one partition's term counts."""
    return ShardCounts.from_tokens(token_lists)


def _summary(counts: ShardCounts) -> tuple[int, int, dict[str, int]]:
    return counts.summary()


def _score_shard(counts: ShardCounts, stats: GlobalStatistics, offset: int) -> ScoredShard:
    return ScoredShard(counts, stats, offset)


def search_shard(
    shard: ScoredShard, queries: Sequence[Sequence[str]], k: int, k1: float, b: float
) -> tuple[IntArray, FloatArray]:
    """Task: one shard's exact top k of every query (global indices, scores)."""
    return shard.search_many(queries, k=k, k1=k1, b=b)


def shard_scores(shard: ScoredShard, query: Sequence[str], k1: float, b: float) -> FloatArray:
    """Task: one shard's score of each of its documents for one query, shape (n_s,)."""
    return shard.scores(query, k1, b)


def shard_scores_of(
    shard: ScoredShard,
    queries: Sequence[Sequence[str]],
    chunk_lists: Sequence[IntArray],
    k1: float,
    b: float,
) -> list[tuple[IntArray, FloatArray]]:
    """Task: for each query, the scores of those of its chunks (global indices) that this shard
    holds: (positions in the query's list, scores)."""
    lo, hi = shard.offset, shard.offset + shard.counts.n_docs
    out: list[tuple[IntArray, FloatArray]] = []
    for query, chunks in zip(queries, chunk_lists, strict=True):
        here = np.flatnonzero((chunks >= lo) & (chunks < hi))
        if here.size == 0:
            out.append((here, np.zeros(0, dtype=np.float64)))
            continue
        out.append((here, shard.scores(query, k1, b)[chunks[here] - lo]))
    return out


class DistributedBM25:
    """A BM25 index whose shards live on a Dask cluster's workers.

    Build it with :meth:`from_counts` (count futures already on the workers, as
    :func:`raglab.distributed.chunking.tokenised_partitions` leaves them) or
    :meth:`from_partitions` (token lists sent from here). Documents are numbered globally, shard
    after shard, in the partitions' order. ``k1`` and ``b`` are given per search: the shards
    hold counts, IDFs and length ratios, which do not depend on them.
    """

    def __init__(
        self, client: Any, shards: Sequence[Any], stats: GlobalStatistics, sizes: Sequence[int]
    ) -> None:
        self._client = client
        self._shards = list(shards)
        self.stats = stats
        self.sizes = tuple(int(n) for n in sizes)

    @classmethod
    def from_counts(cls, client: Any, counts: Sequence[Any]) -> DistributedBM25:
        """Reduce the global statistics of ``counts`` (futures of :class:`ShardCounts`, one per
        partition, in collection order) and lay them over every shard, on the workers."""
        summaries = client.gather([client.submit(_summary, c, pure=False) for c in counts])
        stats = global_statistics(summaries)
        if stats.n_docs == 0:
            raise ValueError("BM25 needs at least one document")
        sizes = [int(n) for n, _, _ in summaries]
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).tolist()
        # Each shard receives N, L and the n_t of its own terms only (the table cut by term),
        # not a copy of the whole table on every worker: with millions of terms that copy
        # would cost every worker hundreds of MB. The part travels in the shard's task, so the
        # scheduler can run the task again, part and all, when its worker is lost.
        shards = [
            client.submit(_score_shard, c, stats.for_terms(df), int(offset), pure=False)
            for c, (n, _, df), offset in zip(counts, summaries, offsets, strict=True)
            if n > 0
        ]
        return cls(client, shards, stats, [n for n in sizes if n > 0])

    @classmethod
    def from_partitions(
        cls, client: Any, partitions: Sequence[Sequence[Sequence[str]]]
    ) -> DistributedBM25:
        """Shards from token lists held here: ``partitions[s]`` holds shard s's documents, in
        collection order. Each partition is sent to a worker and counted there."""
        futures = client.scatter([list(p) for p in partitions])
        return cls.from_counts(client, [client.submit(count_partition, f) for f in futures])

    @property
    def n_docs(self) -> int:
        """N, the number of documents across every shard."""
        return self.stats.n_docs

    @property
    def avgdl(self) -> float:
        return self.stats.avgdl

    def search_many(
        self,
        queries: Sequence[Sequence[str]],
        *,
        k: int,
        k1: float = BM25_K1,
        b: float = BM25_B,
    ) -> tuple[IntArray, FloatArray]:
        """Every query's top ``min(k, N)``: (documents, scores), both (Q, min(k, N)), equal to
        ``BM25Index(all documents, k1=k1, b=b).search_many(queries, k=k)`` bit for bit."""
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        batch = [list(q) for q in queries]
        if not batch:
            k_eff = min(int(k), self.n_docs)
            return np.zeros((0, k_eff), dtype=np.int64), np.zeros((0, k_eff), dtype=np.float64)
        # Wrapped in a list: scatter sends each element of a list as its own piece of data.
        (sent,) = self._client.scatter([batch], broadcast=True)
        parts = self._client.gather(
            [
                self._client.submit(search_shard, s, sent, int(k), float(k1), float(b), pure=False)
                for s in self._shards
            ]
        )
        return merge_top_k(parts, int(k))

    def scores_of(
        self,
        queries: Sequence[Sequence[str]],
        chunk_lists: Sequence[IntArray],
        *,
        k1: float = BM25_K1,
        b: float = BM25_B,
    ) -> list[FloatArray]:
        """The BM25 scores of chosen chunks per query: ``out[q][i]`` is query q's score of chunk
        ``chunk_lists[q][i]`` (a global index), equal to ``BM25Index.scores(queries[q])`` there
        bit for bit. Each shard scores the chunks it holds (one batch to every shard), so a
        reranker's features need no index on the client."""
        if len(queries) != len(chunk_lists):
            raise ValueError(f"{len(queries)} queries but {len(chunk_lists)} chunk lists")
        lists = [np.asarray(c, dtype=np.int64) for c in chunk_lists]
        for c in lists:
            if c.size and (c.min() < 0 or c.max() >= self.n_docs):
                raise ValueError(f"chunk indices must lie in 0..{self.n_docs - 1}")
        if not lists:
            return []
        sent_queries, sent_lists = self._client.scatter(
            [[list(q) for q in queries], lists], broadcast=True
        )
        parts = self._client.gather(
            [
                self._client.submit(
                    shard_scores_of, s, sent_queries, sent_lists, float(k1), float(b), pure=False
                )
                for s in self._shards
            ]
        )
        out = [np.zeros(c.shape[0], dtype=np.float64) for c in lists]
        for part in parts:
            for row, (positions, values) in zip(out, part, strict=True):
                row[positions] = values
        return out

    def scores(self, query: Sequence[str], *, k1: float = BM25_K1, b: float = BM25_B) -> FloatArray:
        """Every document's score for one query, shape (N,), gathered from the shards (for
        checking against ``BM25Index.scores``; a large collection wants :meth:`search_many`)."""
        parts = self._client.gather(
            [
                self._client.submit(shard_scores, s, list(query), float(k1), float(b), pure=False)
                for s in self._shards
            ]
        )
        out: FloatArray = np.concatenate(parts).astype(np.float64, copy=False)
        return out
