"""BM25 over shards on Dask workers, with global statistics: the single index's answers.

What runs where:

1. **Workers, one task per partition**: count the partition's tokens
   (:meth:`~raglab.distributed.shard.ShardCounts.from_tokens`); the counts stay on the worker.
2. **Workers, the reduction**: N and the total length L are summed on the client from each
   shard's two integers; the document frequencies n_t are summed on the workers, in a tree of
   :func:`~raglab.distributed.shard.add_statistics` tasks (:data:`TREE_ARITY` tables a task),
   so the whole table is built on one worker and never travels to the client.
   Shard s starts at global index ``offset_s = n_0 + ... + n_{s-1}``.
3. **Workers**: each shard receives N, L and the document frequencies of its own terms (the
   tree's table cut by term on the worker holding it,
   :meth:`~raglab.distributed.shard.GlobalStatistics.for_terms`), and turns its counts into
   IDFs and length ratios from them (:class:`~raglab.distributed.shard.ScoredShard`), never
   from its own N, avgdl or n_t: per-shard IDF would make a score depend on how the
   collection was split.
4. **Queries**: every batch goes to every shard, each returns its exact top k
   ((Q, min(k, n_s)) documents and scores), and the client merges them by (-score, global
   index) (:func:`~raglab.distributed.shard.merge_top_k`), the order of
   :meth:`raglab.bm25.index.BM25Index.search_many`.

Every score equals the single-machine index's bit for bit (the formula and its float
operations are in :mod:`raglab.distributed.shard`), so rankings, ties included, are the same.

A worker lost while it holds counts or shards is Dask's to handle: the scheduler reruns the
tasks whose results died with it, from their inputs, on the workers left (and a restarted one).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from raglab.base.ranking import FloatArray, IntArray
from raglab.distributed.cluster import share
from raglab.distributed.shard import (
    GlobalStatistics,
    ScoredShard,
    ShardCounts,
    add_statistics,
    merge_top_k,
)

__all__ = [
    "TREE_ARITY",
    "DistributedBM25",
    "count_partition",
    "search_shard",
    "search_shard_grid",
    "shard_scores",
    "shard_scores_of",
    "term_columns",
]


#: How many n_t tables one task of the reduction tree adds: log_8 of the shards levels, so 400
#: shards reduce in three levels, and no task holds more than eight tables at once.
TREE_ARITY = 8


def count_partition(token_lists: Sequence[Sequence[str]]) -> ShardCounts:
    """Task: one partition's term counts."""
    return ShardCounts.from_tokens(token_lists)


def _size(counts: ShardCounts) -> tuple[int, int]:
    return counts.n_docs, int(counts.lengths.sum())


def _statistics(counts: ShardCounts) -> GlobalStatistics:
    return counts.statistics()


def _cut(total: GlobalStatistics, own: GlobalStatistics) -> GlobalStatistics:
    # Runs where the reduced table is: only the shard's own terms' part leaves that worker.
    return total.for_terms(own.df)


def _score_shard(counts: ShardCounts, stats: GlobalStatistics, offset: int) -> ScoredShard:
    return ScoredShard(counts, stats, offset)


def _sorted_terms(stats: GlobalStatistics) -> tuple[str, ...]:
    return tuple(sorted(stats.df))


def term_columns(
    vocabulary: Sequence[str], stats: GlobalStatistics, terms: Sequence[str]
) -> tuple[int, int, IntArray, IntArray]:
    """Task, where the reduced table is: (N, V, columns, df) of ``terms`` against the sorted
    ``vocabulary`` (V terms) of the whole collection, as
    :data:`raglab.pipeline.indexes.TermStatistics` gives them."""
    columns = np.fromiter(
        (bisect.bisect_left(vocabulary, t) for t in terms), dtype=np.int64, count=len(terms)
    )
    missing = [t for t in terms if t not in stats.df]
    if missing:
        raise ValueError(f"terms not in the collection: {missing[:5]}")
    df = np.fromiter((stats.df[t] for t in terms), dtype=np.int64, count=len(terms))
    return stats.n_docs, len(vocabulary), columns, df


def reduce_tree(client: Any, parts: Sequence[Any], arity: int = TREE_ARITY) -> Any:
    """A future of the sum of the statistics ``parts`` (futures of
    :class:`~raglab.distributed.shard.GlobalStatistics`), added on the workers in a tree: each
    task adds up to ``arity`` of the level below (:func:`add_statistics`)."""
    if arity < 2:
        raise ValueError(f"arity must be at least 2, got {arity}")
    level = list(parts)
    if not level:
        raise ValueError("no statistics to reduce")
    while len(level) > 1:
        level = [
            client.submit(add_statistics, *level[i : i + arity], pure=False)
            for i in range(0, len(level), arity)
        ]
    return level[0]


def search_shard(
    shard: ScoredShard, queries: Sequence[Sequence[str]], k: int, k1: float, b: float
) -> tuple[IntArray, FloatArray]:
    """Task: one shard's exact top k of every query (global indices, scores)."""
    return shard.search_many(queries, k=k, k1=k1, b=b)


def search_shard_grid(
    shard: ScoredShard,
    queries: Sequence[Sequence[str]],
    k: int,
    k1s: Sequence[float],
    bs: Sequence[float],
) -> list[tuple[IntArray, FloatArray]]:
    """Task: the shard's exact top k of every query at every (k1, b) of a grid, the cells in
    row order (k1 by k1, b by b within each)."""
    return [shard.search_many(queries, k=k, k1=k1, b=b) for k1 in k1s for b in bs]


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
        self,
        client: Any,
        shards: Sequence[Any],
        stats: GlobalStatistics,
        sizes: Sequence[int],
        frequencies: Any = None,
    ) -> None:
        self._client = client
        self._shards = list(shards)
        #: N and L (its ``df`` is empty: the n_t table stays on a worker, ``frequencies``).
        self.stats = stats
        self.sizes = tuple(int(n) for n in sizes)
        self._frequencies = frequencies
        self._vocabulary: Any = None  # the reduced table's terms sorted, on its worker
        # (N, V, {term: (column, df)}) of the terms asked for ahead (:meth:`ahead`).
        self._ahead: tuple[int, int, dict[str, tuple[int, int]]] | None = None

    @classmethod
    def from_counts(
        cls, client: Any, counts: Sequence[Any], *, arity: int = TREE_ARITY
    ) -> DistributedBM25:
        """Reduce the global statistics of ``counts`` (futures of :class:`ShardCounts`, one per
        partition, in collection order) and lay them over every shard, on the workers: N and L
        summed here from two integers a shard, n_t in a tree of ``arity`` tables a task
        (:func:`reduce_tree`) on the workers."""
        sizes_lengths = client.gather([client.submit(_size, c, pure=False) for c in counts])
        sizes = [int(n) for n, _ in sizes_lengths]
        n_docs, total = sum(sizes), sum(int(length) for _, length in sizes_lengths)
        if n_docs == 0:
            raise ValueError("BM25 needs at least one document")
        own = [client.submit(_statistics, c, pure=False) for c in counts]
        table = reduce_tree(client, own, arity)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).tolist()
        # Each shard receives N, L and the n_t of its own terms only (the table cut by term
        # where it was reduced), not a copy of the whole table on every worker: with millions
        # of terms that copy would cost every worker hundreds of MB. The cut is a task, so
        # the scheduler can run it again, with the tree below it, when a worker is lost.
        shards = [
            client.submit(
                _score_shard,
                c,
                client.submit(_cut, table, part, pure=False),
                int(offset),
                pure=False,
            )
            for c, part, n, offset in zip(counts, own, sizes, offsets, strict=True)
            if n > 0
        ]
        stats = GlobalStatistics(n_docs, total, {})
        return cls(client, shards, stats, [n for n in sizes if n > 0], table)

    def document_frequencies(self) -> dict[str, int]:
        """The whole n_t table, fetched from the worker that reduced it (for checking: a
        large collection's table is what the tree keeps off the client)."""
        if self._frequencies is None:
            raise ValueError("this index holds no reduced table")
        reduced: GlobalStatistics = self._client.gather(self._frequencies)
        return dict(reduced.df)

    @classmethod
    def from_partitions(
        cls, client: Any, partitions: Sequence[Sequence[Sequence[str]]]
    ) -> DistributedBM25:
        """Shards from token lists held here: ``partitions[s]`` holds shard s's documents, in
        collection order. Each partition travels inside the task that counts it, so the
        scheduler keeps it and counts it again if the worker holding the counts is lost."""
        counts = [client.submit(count_partition, list(p), pure=False) for p in partitions]
        return cls.from_counts(client, counts)

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
        k1: float,
        b: float,
    ) -> tuple[IntArray, FloatArray]:
        """Every query's top ``min(k, N)``: (documents, scores), both (Q, min(k, N)), equal to
        ``BM25Index(all documents, k1=k1, b=b).search_many(queries, k=k)`` bit for bit."""
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        batch = [list(q) for q in queries]
        if not batch:
            k_eff = min(int(k), self.n_docs)
            return np.zeros((0, k_eff), dtype=np.int64), np.zeros((0, k_eff), dtype=np.float64)
        sent = share(self._client, batch)
        parts = self._client.gather(
            [
                self._client.submit(search_shard, s, sent, int(k), float(k1), float(b), pure=False)
                for s in self._shards
            ]
        )
        return merge_top_k(parts, int(k))

    def search_grid(
        self,
        queries: Sequence[Sequence[str]],
        *,
        k: int,
        k1s: Sequence[float],
        bs: Sequence[float],
    ) -> tuple[IntArray, FloatArray]:
        """:meth:`search_many` at every (k1, b) of a grid, one task per shard for all cells:
        documents and scores, both (len(k1s), len(bs), Q, min(k, N)), each cell equal to
        ``search_many(queries, k=k, k1=k1s[i], b=bs[j])`` (and so to
        :func:`raglab.bm25.grid.grid_top_k`'s cell) bit for bit."""
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        k1_list, b_list = [float(v) for v in k1s], [float(v) for v in bs]
        if not k1_list or not b_list:
            raise ValueError("k1s and bs must not be empty")
        batch = [list(q) for q in queries]
        k_eff = min(int(k), self.n_docs)
        shape = (len(k1_list), len(b_list), len(batch), k_eff)
        docs = np.zeros(shape, dtype=np.int64)
        scores = np.zeros(shape, dtype=np.float64)
        if not batch:
            return docs, scores
        sent = share(self._client, batch)
        parts = self._client.gather(
            [
                self._client.submit(search_shard_grid, s, sent, int(k), k1_list, b_list, pure=False)
                for s in self._shards
            ]
        )
        for cell in range(len(k1_list) * len(b_list)):
            i, j = divmod(cell, len(b_list))
            docs[i, j], scores[i, j] = merge_top_k([part[cell] for part in parts], int(k))
        return docs, scores

    def scores_of(
        self,
        queries: Sequence[Sequence[str]],
        chunk_lists: Sequence[IntArray],
        *,
        k1: float,
        b: float,
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
        sent_queries = share(self._client, [list(q) for q in queries])
        sent_lists = share(self._client, lists)
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

    def term_columns(self, terms: Sequence[str]) -> tuple[int, int, IntArray, IntArray]:
        """(N, V, columns, df) of sorted, distinct ``terms`` of the collection: each one's
        column in the sorted vocabulary of every chunk's terms (V of them) and its document
        frequency, looked up on the worker holding the reduced table (sorted there once), so
        TF-IDF rows of chosen chunks (:meth:`raglab.pipeline.indexes.ChunkSet.tfidf_rows`)
        need no table on the client. ValueError for a term no chunk holds."""
        if self._ahead is not None and all(t in self._ahead[2] for t in terms):
            n_docs, n_terms, known = self._ahead
            found = [known[t] for t in terms]
            columns = np.array([c for c, _ in found], dtype=np.int64)
            df = np.array([d for _, d in found], dtype=np.int64)
            return n_docs, n_terms, columns, df
        if self._frequencies is None:
            raise ValueError("this index holds no reduced table")
        if self._vocabulary is None:
            self._vocabulary = self._client.submit(_sorted_terms, self._frequencies, pure=False)
        future = self._client.submit(
            term_columns, self._vocabulary, self._frequencies, list(terms), pure=False
        )
        result: tuple[int, int, IntArray, IntArray] = self._client.gather(future)
        return result

    def ahead(self, terms: Iterable[str]) -> None:
        """Look up the columns and document frequencies of ``terms`` (each held by some chunk)
        in one round trip and keep them here, so a later :meth:`term_columns` of terms among
        them asks the workers nothing (the reranker's candidates' TF-IDF rows, a question at a
        time). Replaces what an earlier call kept: the memory is that of the terms asked."""
        asked = sorted(set(terms))
        n_docs, n_terms, columns, df = self.term_columns(asked)
        known = dict(zip(asked, zip(columns.tolist(), df.tolist(), strict=True), strict=True))
        self._ahead = (int(n_docs), int(n_terms), known)

    def scores(self, query: Sequence[str], *, k1: float, b: float) -> FloatArray:
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
