"""Exact top-k BM25 retrieval kernels behind :class:`raglab.bm25.BM25Index` (private).

Three ways to the same answer, chosen by ``BM25Index`` from the work each would do:

- **exhaustive**: every posting of every query term is scored (``raglab.bm25._query_scores``) and
  the top k is selected from the dense score vector (:func:`raglab._topk.top_k`, the one top-k
  selection of RAG lab, re-exported here);
- **dense batch** (:func:`batch_top_k`): many queries against a small collection at once, every
  posting of every query scored by vectorised numpy, added into one (queries x N) block by
  ``bincount`` and selected row by row;
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

import itertools
from dataclasses import dataclass

import numpy as np

from raglab._topk import top_k
from raglab._types import FloatArray, IntArray

__all__ = [
    "Columns",
    "batch_top_k",
    "exact_scores",
    "impacts",
    "maxscore_top_k",
    "partial_scores",
    "saturation",
    "top_k",
    "top_k_rows",
]

# MaxScore skips a set of terms only when their summed bounds stay this far (relative) below the
# threshold: a guard against the last-bit differences between the bound's and a score's sums.
_BOUND_MARGIN = 1e-9
# theta comes from the exact scores of at most this many documents of the shortest lists (those
# with the best sums over the shortest lists' terms).
_PROBE_DOCS = 256
# Up to this k, top_k_rows finds each row's top k by repeated argmax instead of block bounds,
# on blocks of at most this many scores (k passes over a block that outgrows the cache cost
# more than the block bounds' three: 6.2 against 2.5 ms at k = 8 on 136 x 10,000).
_ARGMAX_TOP_K = 8
_ARGMAX_MAX_ELEMENTS = 1 << 19
# batch_top_k sums every posting of a batch at once (bincount) when its distinct terms hold fewer
# postings than this on average: the term-by-term path's Python step per term would dominate.
# The bincount path takes at most _BINCOUNT_BLOCK postings at a time.
_BINCOUNT_POSTINGS_PER_TERM = 2048
_BINCOUNT_BLOCK = 1 << 18
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


def top_k_rows(
    scores: FloatArray, k: int, *, overwrite: bool = False
) -> tuple[IntArray, FloatArray]:
    """Top ``min(k, N)`` columns of every row of ``scores`` (R, N), best first, ties by ascending
    column; returns (columns, values), both (R, k). Scores must not be NaN. Row by row this is
    :func:`raglab._topk.top_k` (the same order), done for all rows at once.

    For k up to ``_ARGMAX_TOP_K`` on a block small enough to stay in cache (or k = 1), k passes
    of argmax (which returns the first, lowest, column of a tie) over all rows at once; with
    ``overwrite`` they may scribble on ``scores`` instead of a copy. Otherwise, per row the
    k-th largest of the maxima of 4k blocks is a lower bound t of
    the row's k-th largest score (k distinct blocks reach it), so the top k are among the entries
    >= t: only those few are sorted, all rows at once, by (row, -score, column). A row whose
    bound is not positive (fewer than k blocks hold a match) goes through :func:`top_k` on its
    own, which fills with the lowest-indexed zeros.
    """
    n_rows, n = scores.shape
    k = min(k, n)
    cols = np.zeros((n_rows, k), dtype=np.int64)
    vals = np.zeros((n_rows, k), dtype=np.float64)
    if k == 0 or n_rows == 0:
        return cols, vals
    if k <= _ARGMAX_TOP_K and (k == 1 or scores.size <= _ARGMAX_MAX_ELEMENTS):
        work = scores if overwrite else scores.copy()
        every_row = np.arange(n_rows)
        for j in range(k):
            best = np.argmax(work, axis=1)
            cols[:, j] = best
            vals[:, j] = work[every_row, best]
            work[every_row, best] = -np.inf
        return cols, vals
    n_blocks = min(n, 4 * k)
    block = n // n_blocks
    maxima = scores[:, : n_blocks * block].reshape(n_rows, n_blocks, block).max(axis=2)
    bound = np.partition(maxima, n_blocks - k, axis=1)[:, n_blocks - k]
    easy = bound > 0
    rows = np.flatnonzero(easy)
    if rows.size:
        # Every row is easy but for rare queries: then the block is read in place, not copied.
        sub = scores if rows.size == n_rows else scores[rows]
        # flatnonzero of the raveled mask, not nonzero of the 2-d one: the same positions in
        # the same (row-major) order, at a quarter of the time (6 -> 1.4 ms on 136 x 10,000).
        r, c = np.divmod(np.flatnonzero(sub >= bound[rows, None]), n)
        v = sub[r, c]
        order = np.lexsort((c, -v, r))
        r, c, v = r[order], c[order], v[order]
        first = np.searchsorted(r, np.arange(rows.size))
        take = first[:, None] + np.arange(k)
        cols[rows] = c[take]
        vals[rows] = v[take]
    for row in np.flatnonzero(~easy):
        top = top_k(scores[row], k)
        cols[row] = top
        vals[row] = scores[row, top]
    return cols, vals


def batch_top_k(
    cols: Columns,
    length_term: FloatArray,
    k1: float,
    pairs: tuple[IntArray, IntArray, FloatArray],
    n_rows: int,
    k: int,
) -> tuple[IntArray, FloatArray]:
    """Top k of ``n_rows`` queries scored exhaustively together: (documents, scores), both
    (n_rows, min(k, N)).

    ``pairs`` = (row, term, weight), each (T,): every (query, distinct term) of the batch with
    its weight ``idf * query count``; ``length_term`` (N,) is ``k1 * length_factor`` (see
    :func:`impacts`). The scores live in one dense (n_rows, N) block. The batch's distinct terms
    are taken in ascending column order, each term's saturations computed once and added, times
    each weight, into every row that holds the term: so every row receives its terms in
    ascending column from 0.0, the exhaustive path's sums bit for bit, and a term shared by many
    queries (the frequent ones, which hold most postings) costs one saturation pass. A term
    held by a quarter of the documents or more is spread over all N columns (0.0 elsewhere,
    which changes no sum) so that its rows are added as contiguous vectors. When the batch's
    distinct terms hold fewer than ``_BINCOUNT_POSTINGS_PER_TERM`` postings each on average
    (short lists, where a Python step per term would cost more than its arithmetic), every
    posting of every pair is summed at once instead (:func:`_bincount_scores`): the same sums.
    """
    row, term, weight = pairs
    n = cols.n_docs
    lengths = cols.indptr[term + 1] - cols.indptr[term]
    distinct = np.unique(term).shape[0]
    if int(lengths.sum()) < _BINCOUNT_POSTINGS_PER_TERM * distinct:
        dense = _bincount_scores(cols, length_term, k1, pairs, lengths, n_rows)
        return top_k_rows(dense, k, overwrite=True)
    dense = np.zeros((n_rows, n), dtype=np.float64)
    scratch = np.empty(n, dtype=np.float64)
    order = np.argsort(term, kind="stable")
    row, term, weight = row[order], term[order], weight[order]
    edges = np.append(np.flatnonzero(np.diff(term, prepend=-1)), term.shape[0]).tolist()
    for a, z in itertools.pairwise(edges):
        t = int(term[a])
        start, end = int(cols.indptr[t]), int(cols.indptr[t + 1])
        docs = cols.docs[start:end]
        sat = impacts(cols.tf[start:end], length_term[docs], k1)
        rows, w = row[a:z], weight[a:z]
        if (end - start) * 4 >= n:
            spread = np.zeros(n, dtype=np.float64)
            spread[docs] = sat
            # Row by row, in place: a fancy-indexed ``dense[rows] += w[:, None] * spread`` would
            # copy the rows out, form the product block and copy them back (five passes).
            for r, wr in zip(rows.tolist(), w.tolist(), strict=True):
                np.multiply(spread, wr, out=scratch)
                np.add(dense[r], scratch, out=dense[r])
        elif z - a == 1:
            dense[int(rows[0]), docs] += float(w[0]) * sat
        else:
            dense[rows[:, None], docs[None, :]] += w[:, None] * sat
    return top_k_rows(dense, k, overwrite=True)


def _bincount_scores(
    cols: Columns,
    length_term: FloatArray,
    k1: float,
    pairs: tuple[IntArray, IntArray, FloatArray],
    lengths: IntArray,
    n_rows: int,
) -> FloatArray:
    """The (n_rows, N) scores of :func:`batch_top_k`'s pairs, every posting of every pair at once:
    ``weight * saturation`` summed per (row, document) by ``numpy.bincount``, which adds its
    weights in the order given, from 0.0. The pairs come row by row, each row's terms ascending,
    so each score adds its terms' contributions in ascending column order from 0.0: the sums of
    the term-by-term path, bit for bit, with no Python step per term. Rows go a slice at a time,
    at most ``_BINCOUNT_BLOCK`` postings each (about 60 bytes of temporaries a posting)."""
    row, term, weight = pairs
    n = cols.n_docs
    dense = np.empty((n_rows, n), dtype=np.float64)
    # The first pair of each row (a row without a known term has none), and the postings held
    # by the pairs before it.
    row_first = np.searchsorted(row, np.arange(n_rows + 1))
    held = np.concatenate(([0], np.cumsum(lengths)))[row_first]
    at = 0
    while at < n_rows:
        stop = int(np.searchsorted(held[1:], held[at] + _BINCOUNT_BLOCK, "right"))
        stop = min(max(stop, at + 1), n_rows)
        a, z = int(row_first[at]), int(row_first[stop])
        span = lengths[a:z]
        total = int(span.sum())
        first = np.cumsum(span) - span
        pos = np.repeat(cols.indptr[term[a:z]] - first, span) + np.arange(total)
        docs = cols.docs[pos]
        contribution = impacts(cols.tf[pos], length_term[docs], k1)
        contribution *= np.repeat(weight[a:z], span)
        flat = np.repeat((row[a:z] - at) * n, span) + docs
        sums = np.bincount(flat, weights=contribution, minlength=(stop - at) * n)
        dense[at:stop] = sums.reshape(stop - at, n)
        at = stop
    return dense


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
