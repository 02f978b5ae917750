"""The one top-k selection every ranker uses: best first, ties to the smaller index.

Tie-break, everywhere in RAG lab: **higher score first, then lower index** -- the first k of a sort
by (-score, index). NaN sorts after every number (``-inf`` included), NaNs among themselves by
index, as in ``numpy.lexsort((np.arange(n), -scores))``, the full sort this selection replaces.

Used by BM25 (:mod:`raglab.bm25.maxscore`, :mod:`raglab.bm25.index`), LSA (:mod:`raglab.embedding.lsa`), the
reranker's order (:mod:`raglab.pipeline.reranking`) and MMR's tail (:mod:`raglab.rerank.features`).
"""

from __future__ import annotations

import numpy as np

from raglab.base.ranking import FloatArray, IntArray

__all__ = ["top_k"]


def _full_order(scores: FloatArray, k: int) -> IntArray:
    # A stable sort of -score keeps equal scores in index order; NaN (its negation is NaN too)
    # sorts last, ties among NaNs by index.
    out: IntArray = np.argsort(-scores, kind="stable")[:k].astype(np.int64, copy=False)
    return out


def top_k(scores: FloatArray, k: int | None = None) -> IntArray:
    """Indices of the first ``min(k, N)`` entries of ``scores`` (N,) in the order (-score, index):
    higher score first, ties to the lower index, NaN last. ``k=None``: all N, in that order.

    Selection without sorting the whole row: the maxima of k equal blocks are k scores, so the
    k-th largest score is at least their minimum m. If k or more scores exceed m, the top k lie
    among them: a partition of those few finds the k-th largest value v, and every candidate
    scoring at least v is sorted. Otherwise the k-th largest score is m itself: the scores above
    m come first, then the lowest indices scoring m. The sort is stable over candidates in
    ascending index order, so ties go to the lower index. A partition of the whole row is
    avoided: numpy's selection is slow on the long runs of equal scores (documents matching no
    query term all score 0). When a block maximum is NaN (a NaN among the first k blocks), the
    full stable sort decides.
    """
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"scores must be one-dimensional, got shape {values.shape}")
    n = values.shape[0]
    k = n if k is None else min(int(k), n)
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k == n:
        return _full_order(values, k)
    block = n // k
    bound = values[: block * k].reshape(k, block).max(axis=1).min()
    if np.isnan(bound):
        return _full_order(values, k)
    # bound is a number: the k block maxima are numbers >= bound, so no NaN is among the top k.
    cand = np.flatnonzero(values > bound)
    vals = values[cand]
    if cand.size > k:
        kth = np.partition(vals, cand.size - k)[cand.size - k]
        keep = vals >= kth
        cand, vals = cand[keep], vals[keep]
    order = np.argsort(-vals, kind="stable")[:k]
    top = cand[order]
    if top.size < k:
        top = np.concatenate((top, np.flatnonzero(values == bound)[: k - top.size]))
    out: IntArray = top.astype(np.int64, copy=False)
    return out
