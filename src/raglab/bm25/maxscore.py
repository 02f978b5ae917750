"""MaxScore (Turtle and Flood 1995), the exact top-k of one query that skips what cannot reach it.

One job: MaxScore's algorithm and its constants, which both of its forms read from here: the
numpy form (:func:`maxscore_top_k`, one query at a time, vectorised over posting sets) and the
compiled form inside :mod:`raglab.bm25.compiled` (document at a time). Turtle and Flood, "Query
evaluation: strategies and optimizations", IP&M 31(6), 1995. Both forms take the same steps:

1. **probe**: the documents of the shortest posting lists, shortest list first, each in its own
   order, until k are taken, at most ``PROBE_DOCS`` (:func:`probed`), are scored exactly; their
   k-th best score theta is a lower bound of the final k-th score. When k exceeds
   ``PROBE_DOCS`` the numpy form probes k documents, while the compiled form sets no theta and
   adds the query term at a time (probing k documents there cost 10 to 15 % a query at k = 100);
2. **skip**: each term's bound is ``weight * largest saturation``; taking the terms by ascending
   bound, those whose bounds (summed) stay below theta, with the relative guard ``BOUND_MARGIN``,
   cannot lift a document into the top k on their own: only the documents of the other
   ("essential") terms are candidates (:func:`skippable`);
3. **refine**: a candidate whose partial sum plus the bounds of the terms not yet looked at
   stays below theta is dropped; theta rises with the sums;
4. the survivors are scored exactly with every term and the top k taken.

Every score is its terms' ``weight * saturation`` (:mod:`raglab.bm25.formula`) added from 0.0 in
ascending term column, as the exhaustive path adds them, so MaxScore returns bitwise the
exhaustive scores and, with ties broken by ascending document index, the same ranking. It
returns None (the caller scores exhaustively) when pruning cannot help.
"""

from __future__ import annotations

import numpy as np

from raglab.base.ranking import FloatArray, IntArray
from raglab.base.topk import top_k
from raglab.bm25.formula import saturation
from raglab.bm25.postings import Columns

__all__ = [
    "BOUND_MARGIN",
    "PROBE_DOCS",
    "WALK_FACTOR",
    "exact_scores",
    "maxscore_top_k",
    "partial_scores",
    "probed",
    "skippable",
]

# The probe scores at most this many documents of the shortest lists (the numpy form k when k is
# larger): 32 rather than 128 took 10 % less time a pruned query of the compiled form at 10,000
# generated chunks, 5 % at 100,000; in the numpy form, the first 32 documents in list order
# rather than the best 256 by partial sum took 3 to 8 % less time a query at 30,000 chunks (k = 10),
# 8 to 36 % less at k = 100.
PROBE_DOCS = 32
# A set of terms is skipped only when its summed bounds, raised by this relative margin, stay
# below theta: a guard against last-bit differences between sums added in other orders.
BOUND_MARGIN = 1e-9
# The compiled form walks its essential lists document at a time only when they hold less than
# 1 / WALK_FACTOR of the query's postings once the probe has set theta; otherwise the query is
# added term at a time (a walked posting costs several times an added one).
WALK_FACTOR = 3.0
# Partial sums go through a dense vector of all N documents when the postings number at least
# N / this, and through a sort of the postings otherwise.
_DENSE_PARTIAL_RATIO = 16


def skippable(below: FloatArray, m: int, theta: float, margin: float) -> int:
    """How many of a query's m terms, taken by ascending bound, MaxScore skips: the largest r
    with ``below[r - 1] * (1 + margin) < theta``, where ``below[r]`` (m,) sums the r + 1
    smallest bounds in that order. Plain loops, so that the compiled form compiles this very
    function (the numpy form calls it as it is)."""
    n_skip = 0
    while n_skip < m and below[n_skip] * (1.0 + margin) < theta:
        n_skip += 1
    return n_skip


def probed(cols: Columns, shortest: IntArray, cap: int) -> IntArray:
    """The probe's documents, sorted and distinct, shape (at most cap,): those of the lists of
    ``shortest`` (term columns, shortest list first), each list in its own (ascending) order,
    until ``cap`` are taken. The compiled form takes the same documents in the same order."""
    taken: list[np.ndarray] = []
    room = cap
    for t in shortest.tolist():
        a = int(cols.indptr[t])
        part = cols.docs[a : min(int(cols.indptr[t + 1]), a + room)]
        taken.append(part)
        room -= part.shape[0]
        if room == 0:
            break
    return np.unique(np.concatenate(taken)).astype(np.int64)


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
       (holding k documents or more; the first ``max(PROBE_DOCS, k)`` of them, :func:`probed`),
       a lower bound of the final k-th score;
    2. the terms of smallest bound whose bounds, summed smallest first, stay below theta cannot
       lift a document into the top k on their own (:func:`skippable`): the documents of the
       other ("essential") terms are the candidates;
    3. each candidate's sum over the essential terms raises theta (its k-th best), and a
       candidate whose sum plus the skipped terms' bounds stays below theta is dropped;
    4. the rest are scored exactly with every term, and the top k taken.

    ``max_impact`` (V,) is each term's largest saturation at (k1, b), as the index keeps it;
    without it the query's terms' maxima are computed from their postings.

    Returns None (the caller scores exhaustively) when the shortest lists hold fewer than k
    documents, or when no term can be skipped. Returns (documents, scores), both (min(k, D),),
    best first, ties by ascending document.
    """
    m = terms.shape[0]
    indptr = cols.indptr
    lengths = indptr[terms + 1] - indptr[terms]
    by_length = np.argsort(lengths, kind="stable")
    n_probe = int(np.searchsorted(np.cumsum(lengths[by_length]), k)) + 1
    if n_probe >= m:
        return None
    probe_docs = probed(cols, terms[by_length[:n_probe]], max(PROBE_DOCS, k))
    if probe_docs.shape[0] < k:
        return None
    theta = _kth_largest(exact_scores(cols, terms, weights, k1, b, probe_docs), k)
    if max_impact is None:
        spans = [(int(indptr[t]), int(indptr[t + 1])) for t in terms.tolist()]
        largest = [
            saturation(cols.tf[a:z], cols.ratio[cols.docs[a:z]], k1, b).max() for a, z in spans
        ]
        bounds = weights * np.array(largest, dtype=np.float64)
    else:
        bounds = weights * max_impact[terms]
    # Skip the terms of smallest bound while their bounds, summed smallest first, stay below theta.
    by_bound = np.argsort(bounds, kind="stable")
    n_skip = skippable(np.cumsum(bounds[by_bound]), m, theta, BOUND_MARGIN)
    if n_skip == 0:
        return None
    skip = np.zeros(m, dtype=bool)
    skip[by_bound[:n_skip]] = True
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
        alive = (sums + rest_bound) * (1.0 + BOUND_MARGIN) >= theta
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
