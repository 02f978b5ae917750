"""The compiled BM25 kernel: the exact top k of many queries at once, used when numba is installed.

Inputs are the index's postings (CSC-style ``indptr``, ``docs``, ``tf``), each document's length
term ``k1 * length_factor`` and each term's largest saturation, at the index's k1 and b. A
posting's saturation is :func:`raglab.bm25.formula.impact`, compiled by numba as it is and
inlined where the posting is read (so no per-posting float is stored, and the float operations
are numpy's, in numpy's order). For each
query the kernel counts its known terms (weight = ``idf * count``, the same float product numpy
forms) and then either

- adds ``weight * impact`` term by term, in ascending column order, into one reused accumulator
  and keeps the best k of the documents it touched (short posting lists); when the lists touch
  a good share of the collection, the best k come from a block-max selection over the whole
  accumulator (:mod:`raglab.bm25.dense`), or
- walks the posting lists document at a time with MaxScore (Turtle and Flood 1995), the
  compiled form of :mod:`raglab.bm25.maxscore` with its constants and its skip rule: the terms
  whose bounds (``weight * largest impact``) sum to no more than the current k-th score cannot
  lift a document into the top k on their own, so only the documents of the other lists are
  visited, and a visited document is dropped as soon as its partial sum plus the bounds of the
  terms not yet looked at cannot beat the k-th score (term at a time when too few can be skipped).

Either way a document's score is its contributions added from 0.0 in ascending column order, the
numpy paths' sums bit for bit (numba fuses no multiply and add without fast-math, which is not
asked for), and the top k is ordered by (-score, document); documents matching no term fill the
list in ascending index.

numba is optional: :func:`available` says whether it imports; the kernel compiles on first use
(cached on disk by numba where it can write).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial
from typing import Any

import numpy as np

from raglab.base.ranking import FloatArray, IntArray
from raglab.base.threads import check_threads, even_parts, resolve_threads, run_parts
from raglab.bm25 import dense as _bm25_dense
from raglab.bm25 import maxscore as _maxscore
from raglab.bm25.dense import SELECT_BLOCK, dense_top_k_source, hold_source, seek_source
from raglab.bm25.formula import impact
from raglab.bm25.maxscore import skippable
from raglab.settings import THREADS

# From this many postings a query is evaluated document at a time (MaxScore), below term at a time.
MAXSCORE_MIN_POSTINGS = 8192
# Below MaxScore's size, a query touching at least N / this postings is selected from the dense
# accumulator; one touching fewer keeps a list of the documents it touched. (16, not 8: 7 % less
# time a query at 10,000 and 100,000 generated chunks, Cranfield and 200,000 chunks unchanged.)
DENSE_FACTOR = 16
# search_many spreads a batch over threads in runs of at least this many queries (a run costs
# the pool's hand-over and fresh scratch arrays of N floats), up to this many runs a thread (so
# a thread that finishes early takes another run instead of waiting for the slowest).
PART_QUERIES = 8
PARTS_PER_THREAD = 4
# MaxScore's own constants (probe size, bound margin, walk factor) are raglab.bm25.maxscore's,
# read there at every call.


@cache
def available() -> bool:
    """Whether numba can be imported here."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


# The kernel calls these names: the Python functions until _kernel() publishes compiled twins.
_impact: Callable[..., float] = impact
_seek: Callable[..., int] = seek_source
_skippable: Callable[..., int] = skippable
_hold: Callable[..., int] = hold_source
_dense_top_k: Callable[..., int] = dense_top_k_source


def _kernel_source(
    indptr: Any,
    docs: Any,
    tf: Any,
    length_term: Any,
    k1: float,
    max_impact: Any,
    idf: Any,
    n_docs: int,
    query_ptr: Any,
    query_ids: Any,
    k: int,
    maxscore_min_postings: int,
    margin: float,
    dense_factor: int,
    probe_docs: int,
    walk_factor: float,
    out_docs: Any,
    out_scores: Any,
) -> None:  # pragma: no cover - runs compiled; its results are tested against the numpy paths
    # Every contribution is positive, so a document's sum is 0.0 exactly until it is touched.
    acc = np.zeros(n_docs, dtype=np.float64)
    touched = np.empty(n_docs, dtype=np.int64)
    block_max = np.empty((n_docs + SELECT_BLOCK - 1) // SELECT_BLOCK, dtype=np.float64)
    top_d = np.empty(k, dtype=np.int64)
    top_s = np.empty(k, dtype=np.float64)
    max_terms = 1
    for q in range(query_ptr.shape[0] - 1):
        max_terms = max(max_terms, query_ptr[q + 1] - query_ptr[q])
    terms = np.empty(max_terms, dtype=np.int64)
    weights = np.empty(max_terms, dtype=np.float64)
    bounds = np.empty(max_terms, dtype=np.float64)
    by_bound = np.empty(max_terms, dtype=np.int64)
    by_length = np.empty(max_terms, dtype=np.int64)
    probe = np.empty(max(probe_docs, 1), dtype=np.int64)
    below = np.empty(max_terms, dtype=np.float64)  # below[r]: bounds of by_bound[0..r] summed
    cursor = np.empty(max_terms, dtype=np.int64)
    list_cur = np.empty(max_terms, dtype=np.int64)
    list_end = np.empty(max_terms, dtype=np.int64)
    list_doc = np.empty(max_terms, dtype=np.int64)
    was_set = np.empty(max_terms, dtype=np.int64)
    contribution = np.zeros(max_terms, dtype=np.float64)
    for q in range(query_ptr.shape[0] - 1):
        # The query's distinct known terms, ascending (insertion sort: queries are short).
        m = 0
        for i in range(query_ptr[q], query_ptr[q + 1]):
            t = query_ids[i]
            if t < 0:
                continue
            at = m
            while at > 0 and terms[at - 1] > t:
                terms[at] = terms[at - 1]
                at -= 1
            terms[at] = t
            m += 1
        distinct = 0
        i = 0
        while i < m:
            t = terms[i]
            count = 0
            while i < m and terms[i] == t:
                count += 1
                i += 1
            terms[distinct] = t
            weights[distinct] = idf[t] * count
            distinct += 1
        m = distinct
        postings = 0
        for j in range(m):
            postings += indptr[terms[j] + 1] - indptr[terms[j]]
        filled = 0
        n_touched = 0
        # MaxScore needs two terms and enough postings to skip; term at a time otherwise.
        walk = postings >= maxscore_min_postings and m >= 2
        if walk:
            # Document at a time with MaxScore. Terms by bound, ascending: the first n_skip of
            # them are skipped ("non-essential"); below[r] sums the bounds of the first r + 1.
            for j in range(m):
                bounds[j] = weights[j] * max_impact[terms[j]]
                at = j
                while at > 0 and bounds[by_bound[at - 1]] > bounds[j]:
                    by_bound[at] = by_bound[at - 1]
                    at -= 1
                by_bound[at] = j
                length = indptr[terms[j] + 1] - indptr[terms[j]]
                at = j
                while at > 0 and (
                    indptr[terms[by_length[at - 1]] + 1] - indptr[terms[by_length[at - 1]]] > length
                ):
                    by_length[at] = by_length[at - 1]
                    at -= 1
                by_length[at] = j
            total = 0.0
            for r in range(m):
                total += bounds[by_bound[r]]
                below[r] = total
            # The probe: the documents of the shortest lists, shortest first, until k are
            # taken (at most probe_docs), scored exactly and marked (acc = 1) so that the walk
            # below does not score them again. Their k-th score is where pruning starts: with a
            # rare term's few documents among them it is high from the start. Held documents
            # are then not all in ascending order, so a document is dropped only when it
            # cannot reach the k-th score (ties may still win).
            n_probe = 0
            for r in range(m):
                j = by_length[r]
                for p in range(indptr[terms[j]], indptr[terms[j] + 1]):
                    if n_probe == probe_docs:
                        break
                    probe[n_probe] = docs[p]
                    n_probe += 1
                if n_probe >= k or n_probe == probe_docs:
                    break
            probe[:n_probe].sort()
            kept = 0
            for i in range(n_probe):
                if kept == 0 or probe[i] != probe[kept - 1]:
                    probe[kept] = probe[i]
                    kept += 1
            n_probe = kept
            for j in range(m):
                cursor[j] = indptr[terms[j]]
            for i in range(n_probe):
                d = probe[i]
                s = 0.0
                for j in range(m):
                    c = _seek(docs, cursor[j], indptr[terms[j] + 1], d)
                    cursor[j] = c
                    if c < indptr[terms[j] + 1] and docs[c] == d:
                        s += weights[j] * _impact(tf[c], length_term[d], k1)
                acc[d] = 1.0
                if filled < k or s > top_s[k - 1] or (s == top_s[k - 1] and d < top_d[k - 1]):
                    filled = _hold(top_d, top_s, filled, k, d, s)
            theta = top_s[k - 1] if filled == k else -1.0
            n_skip = _skippable(below, m, theta, margin)
            # The walk visits every posting of the essential lists document at a time, several
            # times dearer a posting than adding term at a time: when the probe left too many
            # of the postings essential (a query whose rare terms hold fewer than k documents,
            # say, never skips its frequent ones), the query is added term at a time instead.
            essential = 0
            for r in range(n_skip, m):
                essential += indptr[terms[by_bound[r]] + 1] - indptr[terms[by_bound[r]]]
            if essential * walk_factor > postings:
                walk = False
                filled = 0
            else:
                # The lists in bound order, each with its cursor, its end and (while essential) the
                # document under its cursor (n_docs once it is exhausted).
                for r in range(m):
                    j = by_bound[r]
                    list_cur[r] = indptr[terms[j]]
                    list_end[r] = indptr[terms[j] + 1]
                    list_doc[r] = docs[list_cur[r]] if list_cur[r] < list_end[r] else n_docs
                while True:
                    # The next document: the smallest under an essential list's cursor.
                    d = n_docs
                    for r in range(n_skip, m):
                        if list_doc[r] < d:
                            d = list_doc[r]
                    if d == n_docs:
                        break
                    n_set = 0
                    partial = 0.0
                    for r in range(n_skip, m):
                        if list_doc[r] == d:
                            c = list_cur[r]
                            j = by_bound[r]
                            contribution[j] = weights[j] * _impact(tf[c], length_term[d], k1)
                            partial += contribution[j]
                            was_set[n_set] = j
                            n_set += 1
                            list_cur[r] = c + 1
                            list_doc[r] = docs[c + 1] if c + 1 < list_end[r] else n_docs
                    # The skipped terms, largest bound first, while the document can still win.
                    alive = acc[d] == 0.0
                    for r in range(n_skip - 1, -1, -1):
                        if not alive or (partial + below[r]) * (1.0 + margin) < theta:
                            alive = False
                            break
                        c = _seek(docs, list_cur[r], list_end[r], d)
                        list_cur[r] = c
                        if c < list_end[r] and docs[c] == d:
                            j = by_bound[r]
                            contribution[j] = weights[j] * _impact(tf[c], length_term[d], k1)
                            partial += contribution[j]
                            was_set[n_set] = j
                            n_set += 1
                    if alive:
                        s = 0.0
                        for j in range(m):  # the exact score: ascending columns, from 0.0
                            s += contribution[j]
                        if (
                            filled < k
                            or s > top_s[k - 1]
                            or (s == top_s[k - 1] and d < top_d[k - 1])
                        ):
                            filled = _hold(top_d, top_s, filled, k, d, s)
                        if filled == k and top_s[k - 1] > theta:
                            theta = top_s[k - 1]
                            # Lists leave the essential ones: their cursors stay where they are.
                            n_skip = _skippable(below, m, theta, margin)
                    for i in range(n_set):
                        contribution[was_set[i]] = 0.0
            for i in range(n_probe):
                acc[probe[i]] = 0.0
        if not walk:
            dense = n_docs <= dense_factor * postings
            if dense:
                filled = _dense_top_k(
                    acc, indptr, docs, tf, length_term, k1, terms, weights, m, block_max, k,
                    top_d, top_s,
                )  # fmt: skip
            else:
                for j in range(m):
                    w = weights[j]
                    for p in range(indptr[terms[j]], indptr[terms[j] + 1]):
                        d = docs[p]
                        # Remember first touches without a branch (a sum is 0.0 until touched).
                        touched[n_touched] = d
                        n_touched += acc[d] == 0.0
                        acc[d] += w * _impact(tf[p], length_term[d], k1)
                for i in range(n_touched):
                    d = touched[i]
                    s = acc[d]
                    # Offered only when it enters the buffer: a call of the inlined _hold that
                    # turns the document away still cost about 25 ns here (a query of one term
                    # in 306 documents took 8.8 us, 2.0 us with this test in place).
                    if filled < k or s > top_s[k - 1] or (s == top_s[k - 1] and d < top_d[k - 1]):
                        filled = _hold(top_d, top_s, filled, k, d, s)
        # Fewer than k matches: the lowest-indexed documents scoring 0 come next. Every
        # matching document is then among the held ones (nothing is pruned before k are held).
        held = filled
        d = 0
        while filled < k and d < n_docs:
            matched = False
            for i in range(held):
                if top_d[i] == d:
                    matched = True
                    break
            if not matched:
                top_s[filled] = 0.0
                top_d[filled] = d
                filled += 1
            d += 1
        for i in range(k):
            out_docs[q, i] = top_d[i]
            out_scores[q, i] = top_s[i]
        for i in range(n_touched):
            acc[touched[i]] = 0.0


@cache
def _kernel() -> Callable[..., None]:
    import numba

    global _hold, _impact, _seek, _skippable, _dense_top_k
    # The saturation, the buffer and the dense path first, so that the kernel compiles against
    # their twins (numba reads a global function when it compiles a caller, on its first call).
    _impact, _hold, _dense_top_k = _bm25_dense.compiled()
    sources = (seek_source, skippable)
    try:
        jit = partial(numba.njit, cache=True, nogil=True)
        helpers: list[Any] = [jit(inline="always")(f) for f in sources]
        kernel = jit()(_kernel_source)
    except RuntimeError:
        # numba found nowhere to write its cache (read-only install and home): compile anew.
        jit = partial(numba.njit, nogil=True)
        helpers = [jit(inline="always")(f) for f in sources]
        kernel = jit()(_kernel_source)
    _seek, _skippable = helpers
    compiled: Callable[..., None] = kernel
    return compiled


def search_many(
    indptr: IntArray,
    docs: np.ndarray,
    tf: np.ndarray,
    length_term: FloatArray,
    k1: float,
    max_impact: FloatArray,
    idf: FloatArray,
    n_docs: int,
    query_ptr: IntArray,
    query_ids: IntArray,
    k: int,
    threads: int | str | None = None,
) -> tuple[IntArray, FloatArray]:
    """Top ``min(k, n_docs)`` of every query, compiled: (documents, scores), both (Q, k).

    Query q's tokens are the column ids ``query_ids[query_ptr[q]:query_ptr[q + 1]]`` (-1 for a
    token outside the vocabulary; repeats count). ``tf`` (nnz,) is each posting's frequency,
    ``length_term`` (N,) each document's ``k1 * length_factor``, ``max_impact`` (V,) each
    term's largest saturation, ``idf`` (V,) Lucene's IDF.

    ``threads`` (:func:`raglab.base.threads.resolve_threads`; None: the setting's "auto"):
    a batch of at least ``2 * PART_QUERIES`` queries is cut into runs of consecutive queries,
    up to ``PARTS_PER_THREAD`` a thread, which the kernel (compiled without the GIL) answers
    on that many threads at once, each run with its own scratch arrays. Every query is answered
    alone, whichever run holds it, so the lists are those of one thread bit for bit.
    """
    n_queries = query_ptr.shape[0] - 1
    k = min(k, n_docs)
    out_docs = np.zeros((n_queries, k), dtype=np.int64)
    out_scores = np.zeros((n_queries, k), dtype=np.float64)
    kernel = _kernel()

    def answer(a: int, z: int) -> None:
        kernel(
            indptr, docs, tf, length_term, k1, max_impact, idf, n_docs, query_ptr[a : z + 1],
            query_ids, k, MAXSCORE_MIN_POSTINGS, _maxscore.BOUND_MARGIN, DENSE_FACTOR,
            _maxscore.PROBE_DOCS, _maxscore.WALK_FACTOR, out_docs[a:z], out_scores[a:z],
        )  # fmt: skip

    # A single query (or a small batch) never reads the machine's load: one call, as before.
    threads = check_threads(THREADS if threads is None else threads)
    count = resolve_threads(threads) if n_queries >= 2 * PART_QUERIES else 1
    if count == 1:
        answer(0, n_queries)
        return out_docs, out_scores
    bounds = even_parts(n_queries, count * PARTS_PER_THREAD, PART_QUERIES)
    run_parts(len(bounds) - 1, count, lambda i: answer(bounds[i], bounds[i + 1]))
    return out_docs, out_scores
