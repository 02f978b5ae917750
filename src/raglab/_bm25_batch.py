"""The dense batch behind :meth:`raglab.bm25.BM25Index.search_many` with numpy (private).

Many queries against a small collection are scored exhaustively together, every posting by
vectorised numpy, into one dense (queries x N) block (:func:`batch_top_k`), and each row's top k
is selected from it (:func:`top_k_rows`). The sums are those of the exhaustive and MaxScore
paths of :mod:`raglab._bm25_topk` bit for bit: each score adds its terms' ``weight *
saturation`` in ascending column order, from 0.0.
"""

from __future__ import annotations

import itertools

import numpy as np

from raglab._bm25_topk import Columns, impacts
from raglab._topk import top_k
from raglab._types import FloatArray, IntArray

__all__ = ["batch_top_k", "top_k_rows"]

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
