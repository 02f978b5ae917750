"""One BM25 shard: a contiguous range of the collection's chunks, scored with global statistics.

numpy, and the single index's compiled kernel when numba imports: this module never imports
Dask, so a shard can be built and checked on one machine.
:mod:`raglab.distributed.bm25` places shards on the workers.

A shard holds documents ``offset .. offset + n - 1`` of the whole collection. Its own counts
(:class:`ShardCounts`) give three partial statistics, reduced across shards by
:func:`global_statistics` into :class:`GlobalStatistics`:

- N, the number of documents (sum of the shards' n);
- L, the total length in tokens (an exact integer sum), so avgdl = L / N;
- n_t, each term's document frequency (sum of the shards' counts of documents holding t).

Scoring then follows :mod:`raglab.bm25.index` operation for operation, with the global N, avgdl and
n_t (never the shard's own: IDFs and length ratios from one shard would make a score depend on
how the collection was cut), through the one formula module (:mod:`raglab.bm25.formula`)::

    IDF(t)      = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))                      (float64, log1p)
    ratio(d)    = |d| / avgdl                 (1.0 for every document when avgdl = 0)
    sat(t, d)   = tf (k1 + 1) / (tf + k1 ((1 - b) + b ratio(d)))
    score(q, d) = 0.0 + sum over q's distinct terms t in ascending term order of
                  (IDF(t) * count_q(t)) * sat(t, d)

The same float64 operations in the same order as the single-machine index, so every score is
equal bit for bit. avgdl is L / N with L summed exactly in integers: numpy's mean of integer
lengths is that same quotient (its pairwise sum of integers below 2**53 is exact).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from raglab.base.ranking import FloatArray, IntArray
from raglab.bm25 import compiled as _bm25_compiled
from raglab.bm25.formula import impact, length_term, lucene_idf, saturation
from raglab.bm25.postings import build_postings, per_term_reduce
from raglab.distributed.weight import held_bytes

__all__ = [
    "GlobalStatistics",
    "ScoredShard",
    "ShardCounts",
    "add_statistics",
    "global_statistics",
    "merge_top_k",
    "shard_top_k",
]


@dataclass(frozen=True, slots=True)
class ShardCounts:
    """The term counts of one shard, column (term) by column, as a CSC matrix holds them.

    ``terms`` (V_s,) the shard's distinct terms, sorted as Python sorts strings (the order of the
    whole collection's vocabulary, of which this is a subset); ``indptr`` (V_s + 1,) int64:
    term j's postings are ``docs[indptr[j]:indptr[j + 1]]`` (int32, local document numbers,
    ascending) with frequencies ``tf`` (the smallest unsigned integer type holding them, as
    :class:`raglab.bm25.index.BM25Index` stores them); ``lengths`` (n,) int64 each document's number
    of tokens.
    """

    terms: tuple[str, ...]
    indptr: IntArray
    docs: np.ndarray
    tf: np.ndarray
    lengths: IntArray

    def __sizeof__(self) -> int:
        return object.__sizeof__(self) + held_bytes(
            self.terms, self.indptr, self.docs, self.tf, self.lengths
        )

    @classmethod
    def from_tokens(cls, token_lists: Sequence[Sequence[str]]) -> ShardCounts:
        """Count the tokens of the shard's documents (``token_lists[i]`` is local document i)
        with the single index's own streamed build (:func:`raglab.bm25.postings.build_postings`:
        a block of documents at a time, about 5 bytes a posting kept), so a shard's counts are
        the index's postings for its documents and cost a worker what they cost one machine."""
        terms, indptr, docs, tf, _ = build_postings(token_lists)
        lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=len(token_lists))
        return cls(terms=terms, indptr=indptr, docs=docs, tf=tf, lengths=lengths)

    @property
    def n_docs(self) -> int:
        return int(self.lengths.shape[0])

    def document_frequencies(self) -> dict[str, int]:
        """n_t within this shard for each of its terms."""
        return dict(zip(self.terms, np.diff(self.indptr).tolist(), strict=True))

    def statistics(self) -> GlobalStatistics:
        """This shard's own N, L and n_t, as :func:`add_statistics` reduces them."""
        return GlobalStatistics(self.n_docs, int(self.lengths.sum()), self.document_frequencies())

    def summary(self) -> tuple[int, int, dict[str, int]]:
        """(n, total length, document frequencies): what :func:`global_statistics` reduces."""
        return self.n_docs, int(self.lengths.sum()), self.document_frequencies()


@dataclass(frozen=True, slots=True)
class GlobalStatistics:
    """The whole collection's N, total length L (so avgdl = L / N) and n_t per term."""

    n_docs: int
    total_length: int
    df: Mapping[str, int]

    def __sizeof__(self) -> int:
        return object.__sizeof__(self) + held_bytes(self.df)

    @property
    def avgdl(self) -> float:
        return self.total_length / self.n_docs if self.n_docs else 0.0

    def for_terms(self, terms: Iterable[str]) -> GlobalStatistics:
        """N and L with the document frequencies of ``terms`` only: all a shard holding just
        those terms needs (its scores use no other term's n_t), so the table sent to each shard
        is cut by term instead of copied whole to every worker."""
        return GlobalStatistics(self.n_docs, self.total_length, {t: self.df[t] for t in terms})


def global_statistics(summaries: Iterable[tuple[int, int, Mapping[str, int]]]) -> GlobalStatistics:
    """Reduce the shards' :meth:`ShardCounts.summary` values: integer sums, so any grouping or
    order of the shards gives the same statistics."""
    return add_statistics(
        *(GlobalStatistics(int(n), int(length), dict(df)) for n, length, df in summaries)
    )


def add_statistics(*parts: GlobalStatistics) -> GlobalStatistics:
    """The statistics of several groups of shards together: N, L and each term's n_t summed.
    Integer sums, so any grouping of the shards (a tree of these sums on the workers) gives the
    same statistics. One object, not a bare dict, so that Dask pickles it whole when it moves
    between workers (it would serialise a dict entry by entry, some 10 s for 200,000 terms)."""
    n_docs = 0
    total = 0
    df: Counter[str] = Counter()
    for part in parts:
        n_docs += part.n_docs
        total += part.total_length
        df.update(part.df)
    return GlobalStatistics(n_docs, total, dict(df))


class ScoredShard:
    """A shard's counts with the global statistics laid over them: IDFs of its terms (V_s,) and
    length ratios of its documents (n,), all float64, as the single-machine index has them.
    ``offset`` is the global index of the shard's first document (shards are contiguous ranges
    of the collection, in its order)."""

    __slots__ = ("_bounds", "_column", "counts", "idf", "offset", "ratio")

    def __init__(self, counts: ShardCounts, stats: GlobalStatistics, offset: int) -> None:
        self.counts = counts
        self.offset = int(offset)
        # (k1, b), each document's k1 * length factor, each term's largest saturation: what
        # the compiled kernel needs at one (k1, b), kept for the next batch.
        self._bounds: tuple[tuple[float, float], FloatArray, FloatArray] | None = None
        self._column = {t: j for j, t in enumerate(counts.terms)}
        df = np.fromiter(
            (stats.df[t] for t in counts.terms), dtype=np.int64, count=len(counts.terms)
        )
        self.idf: FloatArray = lucene_idf(df, stats.n_docs)
        lengths = counts.lengths.astype(np.float64)
        avgdl = stats.avgdl
        self.ratio: FloatArray = lengths / avgdl if avgdl > 0 else np.ones_like(lengths)

    def __sizeof__(self) -> int:
        return object.__sizeof__(self) + held_bytes(
            self.counts, self._column, self.idf, self.ratio, self._bounds
        )

    def scores(self, query: Sequence[str], k1: float, b: float) -> FloatArray:
        """BM25 score of each of the shard's documents for one query, shape (n,), float64
        (the module docstring's formula)."""
        c = self.counts
        counts = Counter(self._column[t] for t in query if t in self._column)
        terms = np.array(sorted(counts), dtype=np.int64)
        if terms.shape[0] == 0:
            return np.zeros(c.n_docs, dtype=np.float64)
        weights = self.idf[terms] * np.array([counts[t] for t in terms.tolist()], dtype=np.int64)
        starts = c.indptr[terms]
        lengths = c.indptr[terms + 1] - starts
        ends = np.cumsum(lengths)
        # Every posting of every query term, laid out term after term (ascending columns), so
        # bincount adds each document's contributions in term order, from 0.0.
        pos = np.repeat(starts - (ends - lengths), lengths) + np.arange(ends[-1], dtype=np.int64)
        docs = c.docs[pos]
        tf = c.tf[pos]
        sat = saturation(tf, self.ratio[docs], k1, b)
        out: FloatArray = np.bincount(
            docs, weights=np.repeat(weights, lengths) * sat, minlength=c.n_docs
        ).astype(np.float64, copy=False)
        return out

    def search_many(
        self, queries: Sequence[Sequence[str]], *, k: int, k1: float, b: float
    ) -> tuple[IntArray, FloatArray]:
        """Each query's exact top ``min(k, n)`` of this shard, best first, ties by ascending
        index: (global document indices, scores), both (Q, min(k, n))."""
        if _bm25_compiled.available():
            return self._search_many_compiled(queries, int(k), float(k1), float(b))
        k_eff = min(int(k), self.counts.n_docs)
        out_docs = np.zeros((len(queries), k_eff), dtype=np.int64)
        out_scores = np.zeros((len(queries), k_eff), dtype=np.float64)
        for qi, query in enumerate(queries):
            scores = self.scores(query, k1, b)
            top = shard_top_k(scores, k_eff)
            out_docs[qi] = top + self.offset
            out_scores[qi] = scores[top]
        return out_docs, out_scores

    def _search_many_compiled(
        self, queries: Sequence[Sequence[str]], k: int, k1: float, b: float
    ) -> tuple[IntArray, FloatArray]:
        """:meth:`search_many` by the single index's compiled kernel (MaxScore, term at a
        time; :mod:`raglab.bm25.compiled`) over this shard's postings, IDFs and ratios: the
        kernel adds the same products in the same order as :meth:`scores`, so the lists are
        equal bit for bit, and most postings of frequent terms are skipped."""
        c = self.counts
        key = (k1, b)
        if self._bounds is None or self._bounds[0] != key:
            klf = length_term(self.ratio, k1, b)
            bound = per_term_reduce(
                c.indptr, lambda a, z: impact(c.tf[a:z], klf[c.docs[a:z]], k1), np.maximum
            )
            self._bounds = (key, klf, bound)
        _, klf, bound = self._bounds
        ptr = np.zeros(len(queries) + 1, dtype=np.int64)
        np.cumsum([len(q) for q in queries], out=ptr[1:])
        column = self._column.get
        ids = np.fromiter(
            (column(t, -1) for q in queries for t in q), dtype=np.int64, count=int(ptr[-1])
        )
        docs, scores = _bm25_compiled.search_many(
            c.indptr, c.docs, c.tf, klf, k1, bound, self.idf, c.n_docs, ptr, ids, k
        )
        return docs + self.offset, scores


def shard_top_k(scores: FloatArray, k: int) -> IntArray:
    """Indices of the first ``min(k, n)`` entries of ``scores`` (n,) ordered by (-score, index),
    without sorting the whole row: everything above the k-th largest value, then the lowest
    indices holding that value."""
    n = scores.shape[0]
    k = min(k, n)
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    kth = np.partition(scores, n - k)[n - k]
    above = np.flatnonzero(scores > kth)
    above = above[np.argsort(-scores[above], kind="stable")]
    tied = np.flatnonzero(scores == kth)[: k - above.shape[0]]
    out: IntArray = np.concatenate((above, tied)).astype(np.int64, copy=False)
    return out


def merge_top_k(
    parts: Sequence[tuple[IntArray, FloatArray]], k: int
) -> tuple[IntArray, FloatArray]:
    """Merge the shards' top-k lists (each (Q, k_s) documents and scores) into the collection's
    top ``min(k, N)``: (Q, min(k, N)) both, ordered by (-score, global index) as one index
    orders them.

    Exact: a document among the collection's top k has fewer than k documents before it in that
    order, so fewer than k in its own shard too, and its shard returned it.
    """
    parts = [p for p in parts if p[0].shape[1] > 0]
    if not parts:
        raise ValueError("no shard holds a document")
    docs = np.concatenate([p[0] for p in parts], axis=1)
    scores = np.concatenate([p[1] for p in parts], axis=1)
    k_eff = min(int(k), docs.shape[1])
    out_docs = np.zeros((docs.shape[0], k_eff), dtype=np.int64)
    out_scores = np.zeros((docs.shape[0], k_eff), dtype=np.float64)
    for qi in range(docs.shape[0]):
        order = np.lexsort((docs[qi], -scores[qi]))[:k_eff]
        out_docs[qi] = docs[qi, order]
        out_scores[qi] = scores[qi, order]
    return out_docs, out_scores
