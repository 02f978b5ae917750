"""Exact top-k BM25 retrieval kernels behind :class:`raglab.bm25.index.BM25Index` (private).

Three ways to the same answer, chosen by ``BM25Index`` from the work each would do:

- **exhaustive**: every posting of every query term is scored (``raglab.bm25.index._query_scores``) and
  the top k is selected from the dense score vector (:func:`raglab.base.topk.top_k`, the one top-k
  selection of RAG lab, re-exported here);
- **dense batch** (:func:`raglab.bm25.batch.batch_top_k`): many queries against a small
  collection at once, every posting of every query scored by vectorised numpy into one
  (queries x N) block, selected row by row;
- **MaxScore** (:func:`maxscore_top_k`): one query against a large collection, scoring only the
  documents that can still reach the top k (Turtle and Flood 1995, "Query evaluation: strategies
  and optimizations", IP&M 31(6)).

All three add the same products ``weight * saturation`` in the same order (ascending term
column) starting from 0.0, so they return bitwise the same scores and, with ties broken by
ascending document index everywhere, the same rankings.

The saturation of a posting is ``tf (k1 + 1) / (tf + k1 ((1 - b) + b |d| / avgdl))`` and a
term's weight is ``idf * query count``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from raglab.base.ranking import FloatArray, IntArray
from raglab.base.topk import top_k

__all__ = [
    "Columns",
    "exact_scores",
    "impacts",
    "maxscore_top_k",
    "partial_scores",
    "saturation",
]

# MaxScore skips a set of terms only when their summed bounds stay this far (relative) below the
# threshold: a guard against the last-bit differences between the bound's and a score's sums.
_BOUND_MARGIN = 1e-9
# theta comes from the exact scores of at most this many documents of the shortest lists (those
# with the best sums over the shortest lists' terms).
_PROBE_DOCS = 256
# Partial sums go through a dense vector of all N documents when the postings number at least
# N / this, and through a sort of the postings otherwise.
_DENSE_PARTIAL_RATIO = 16


@dataclass(frozen=True, slots=True)
class Columns:
    """The postings of a collection, column (term) by column, as MaxScore reads them.

    ``indptr`` (V + 1,) int64 and ``docs`` (nnz,) int32: the documents of term t are
    ``docs[indptr[t]:indptr[t + 1]]``, ascending. ``tf`` (nnz,) unsigned integers: their
    frequencies (exact in float64, so every saturation computed from them is exact).
    ``ratio`` (N,) float64: |d| / avgdl. Nothing per term but the pointers: per-term bounds
    depend on k1 and b and are the index's (see :func:`maxscore_top_k`).
    """

    indptr: IntArray
    docs: np.ndarray
    tf: FloatArray
    ratio: FloatArray

    @property
    def n_docs(self) -> int:
        return int(self.ratio.shape[0])


def saturation(tf: FloatArray, ratio: FloatArray, k1: float, b: float) -> FloatArray:
    """``tf (k1 + 1) / (tf + k1 ((1 - b) + b ratio))`` elementwise, in the one order of operations
    every path uses (so equal inputs give bitwise equal saturations)."""
    length_factor = (1.0 - b) + b * ratio
    out: FloatArray = (tf * (k1 + 1.0)) / (tf + k1 * length_factor)
    return out


def impacts(tf: np.ndarray, length_term: FloatArray, k1: float) -> FloatArray:
    """:func:`saturation` with its document part precomputed: ``length_term`` is
    ``k1 * ((1 - b) + b ratio)`` of each posting's document, so ``tf (k1 + 1) / (tf +
    length_term)`` is bitwise the saturation (the same operations on the same floats)."""
    out: FloatArray = (tf * (k1 + 1.0)) / (tf + length_term)
    return out


def exact_scores(
    cols: Columns, terms: IntArray, weights: FloatArray, k1: float, b: float, docs: IntArray
) -> FloatArray:
    """BM25 scores of the sorted, distinct documents ``docs`` for one query, shape (len(docs),).

    Term by term in ascending column order, each term's contribution (looked up by binary search
    in its postings, 0.0 where absent) is added: adding 0.0 changes no sum, so these are the
    exhaustive path's sums, bit for bit.
    """
    out = np.zeros(docs.shape[0], dtype=np.float64)
    for j in range(terms.shape[0]):
        out += _lookup(cols, int(terms[j]), float(weights[j]), k1, b, docs)
    return out


def partial_scores(
    cols: Columns, terms: IntArray, weights: FloatArray, k1: float, b: float
) -> tuple[IntArray, FloatArray]:
    """The documents holding any of ``terms`` (ascending columns) and their scores over those
    terms alone, summed in column order (so each is a lower bound of, or equal to, the full
    score). Returns (documents ascending, sums), both (D,).

    A stable sort of the postings by document keeps each document's contributions in term
    order, and ``add.reduceat`` sums them left to right.
    """
    indptr = cols.indptr
    spans = [(int(indptr[t]), int(indptr[t + 1])) for t in terms.tolist()]
    docs = np.concatenate([cols.docs[a:z] for a, z in spans])
    parts = [
        w * saturation(cols.tf[a:z], cols.ratio[cols.docs[a:z]], k1, b)
        for w, (a, z) in zip(weights.tolist(), spans, strict=True)
    ]
    contributions = np.concatenate(parts)
    if len(spans) == 1:
        return docs.astype(np.int64), contributions
    if docs.shape[0] * _DENSE_PARTIAL_RATIO >= cols.n_docs:
        # Many postings: adding them into a dense vector (in posting order, which is term
        # order) is cheaper than sorting them.
        dense = np.bincount(docs, weights=contributions, minlength=cols.n_docs)
        held = np.flatnonzero(dense)
        return held.astype(np.int64), dense[held].astype(np.float64, copy=False)
    order = np.argsort(docs, kind="stable")
    docs = docs[order]
    starts = np.flatnonzero(np.concatenate(([True], docs[1:] != docs[:-1])))
    sums: FloatArray = np.add.reduceat(contributions[order], starts)
    return docs[starts].astype(np.int64), sums


def _kth_largest(values: FloatArray, k: int) -> float:
    return float(np.partition(values, values.shape[0] - k)[values.shape[0] - k])


def maxscore_top_k(
    cols: Columns,
    terms: IntArray,
    weights: FloatArray,
    k1: float,
    b: float,
    k: int,
    max_impact: FloatArray | None = None,
) -> tuple[IntArray, FloatArray] | None:
    """The exact top ``k`` of one query by MaxScore, or None when pruning cannot help.

    ``terms`` (m,) are the query's distinct term columns, ascending; ``weights`` (m,) their
    ``idf * query count``. Each term's contribution to any document is at most
    ``U_t = weight_t * max_impact_t`` (its largest saturation), and a sum over some of a document's
    terms is at most its score. Steps:

    1. theta: the k-th best exact score among the documents of the shortest posting lists
       (holding k documents or more; at most ``max(_PROBE_DOCS, k)`` of them, those of best sum over
       these lists), a lower bound of the final k-th score;
    2. the terms of smallest bound whose bounds sum below theta cannot lift a document into the
       top k on their own: the documents of the other ("essential") terms are the candidates;
    3. each candidate's sum over the essential terms raises theta (its k-th best), and a
       candidate whose sum plus the skipped terms' bounds stays below theta is dropped;
    4. the rest are scored exactly with every term, and the top k taken.

    ``max_impact`` (V,) is each term's largest saturation at (k1, b), as the index keeps it;
    without it the query's terms' maxima are computed from their postings.

    Returns None (the caller scores exhaustively) when the shortest lists hold fewer than k
    documents, or when no term can be skipped.
    """
    m = terms.shape[0]
    indptr = cols.indptr
    lengths = indptr[terms + 1] - indptr[terms]
    by_length = np.argsort(lengths, kind="stable")
    n_probe = int(np.searchsorted(np.cumsum(lengths[by_length]), k)) + 1
    if n_probe >= m:
        return None
    probe = np.sort(by_length[:n_probe])
    probe_docs, probe_sums = partial_scores(cols, terms[probe], weights[probe], k1, b)
    if probe_docs.shape[0] < k:
        return None
    keep = max(_PROBE_DOCS, k)
    if probe_docs.shape[0] > keep:
        best = np.argpartition(probe_sums, probe_docs.shape[0] - keep)
        probe_docs = np.sort(probe_docs[best[probe_docs.shape[0] - keep :]])
    theta = _kth_largest(exact_scores(cols, terms, weights, k1, b, probe_docs), k)
    if max_impact is None:
        spans = [(int(indptr[t]), int(indptr[t + 1])) for t in terms.tolist()]
        largest = [
            saturation(cols.tf[a:z], cols.ratio[cols.docs[a:z]], k1, b).max() for a, z in spans
        ]
        bounds = weights * np.array(largest, dtype=np.float64)
    else:
        bounds = weights * max_impact[terms]
    # Skip the terms of smallest bound while their bounds, summed in the scores' own order
    # (ascending column), stay below theta.
    skip = np.zeros(m, dtype=bool)
    for j in np.argsort(bounds, kind="stable").tolist():
        skip[j] = True
        total = 0.0
        for bound in bounds[skip].tolist():
            total += bound
        if total * (1.0 + _BOUND_MARGIN) >= theta:
            skip[j] = False
            break
    if not skip.any():
        return None
    essential = np.flatnonzero(~skip)
    cand, sums = partial_scores(cols, terms[essential], weights[essential], k1, b)
    # The skipped terms, largest bound first: each one's true contribution replaces its bound in
    # every surviving candidate's upper bound, theta rises with the sums, and candidates fall.
    # These sums are added in another order than the score's, so they serve only for pruning
    # (the margin absorbs their last-bit differences); the survivors are scored exactly below.
    rest = sorted(np.flatnonzero(skip).tolist(), key=lambda j: -float(bounds[j]))
    while True:
        theta = max(theta, _kth_largest(sums, k))
        rest_bound = float(sum(float(bounds[j]) for j in rest))
        alive = (sums + rest_bound) * (1.0 + _BOUND_MARGIN) >= theta
        cand, sums = cand[alive], sums[alive]
        if not rest or cand.shape[0] <= k:
            break
        j = rest.pop(0)
        sums = sums + _lookup(cols, int(terms[j]), float(weights[j]), k1, b, cand)
    scores = exact_scores(cols, terms, weights, k1, b, cand)
    top = top_k(scores, k)
    return cand[top], scores[top]


def _lookup(
    cols: Columns, term: int, weight: float, k1: float, b: float, docs: IntArray
) -> FloatArray:
    """``weight * saturation`` of ``term`` in each of the sorted ``docs`` (0 where absent)."""
    start, end = int(cols.indptr[term]), int(cols.indptr[term + 1])
    postings = cols.docs[start:end]
    pos = np.searchsorted(postings, docs)
    np.minimum(pos, end - start - 1, out=pos)
    hit = np.flatnonzero(postings[pos] == docs)
    out = np.zeros(docs.shape[0], dtype=np.float64)
    at = pos[hit] + start
    out[hit] = weight * saturation(cols.tf[at], cols.ratio[docs[hit]], k1, b)
    return out
