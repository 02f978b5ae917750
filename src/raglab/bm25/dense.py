"""The compiled kernel's dense path: a query added term at a time into all N sums, its best k taken.

The Python sources that :func:`compiled` hands to numba for :mod:`raglab.bm25.compiled`, which
scores a query with short posting lists term at a time into one
dense accumulator of all N documents (:func:`dense_top_k_source`), then takes the best k from
it by block maxima (:func:`select_dense_source`): the largest sum of every block of
``SELECT_BLOCK`` documents first, in a loop of fixed length the compiler vectorises, then the
k-th largest of those maxima, theta, which no k-th best sum can be below (k blocks each hold a
sum of at least theta); only the blocks whose maximum reaches theta are read again. Every list
is ordered by (-score, document), ties to the lower document, as everywhere in RAG lab. The
top-k buffer both paths of the kernel fill (:func:`hold_source`) and the galloping search in a
posting list (:func:`seek_source`) are the kernel's building blocks here too; the saturation is
:func:`raglab.bm25.formula.impact`, compiled as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from raglab.bm25.formula import impact

__all__ = [
    "SELECT_BLOCK",
    "compiled",
    "dense_top_k_source",
    "hold_source",
    "seek_source",
    "select_dense_source",
]

# Dense selection reads the largest sum of each block of this many documents first.
SELECT_BLOCK = 32


def seek_source(docs: Any, lo: int, end: int, d: int) -> int:
    """The first position in ``docs[lo:end]`` (ascending) holding d or more, else ``end``:
    galloping from ``lo`` (the documents asked for ascend, so the answer is usually near), then
    bisecting the last stride."""  # pragma: no cover - compiled
    step = 1
    while lo + step < end and docs[lo + step] < d:
        lo += step
        step *= 2
    hi = min(lo + step, end)
    while lo < hi:
        mid = (lo + hi) // 2
        if docs[mid] < d:
            lo = mid + 1
        else:
            hi = mid
    return lo


def hold_source(top_d: Any, top_s: Any, filled: int, k: int, d: int, s: float) -> int:
    """Offer document d with score s to the buffer of the best ``filled`` (at most k) documents,
    sorted by (-score, document); returns the new count."""  # pragma: no cover - compiled
    if filled == k:
        if s < top_s[k - 1] or (s == top_s[k - 1] and d > top_d[k - 1]):
            return filled
        at = k - 1
    else:
        at = filled
        filled += 1
    while at > 0 and (s > top_s[at - 1] or (s == top_s[at - 1] and d < top_d[at - 1])):
        top_s[at] = top_s[at - 1]
        top_d[at] = top_d[at - 1]
        at -= 1
    top_s[at] = s
    top_d[at] = d
    return filled


def dense_top_k_source(
    acc: Any,
    indptr: Any,
    docs: Any,
    tf: Any,
    length_term: Any,
    k1: float,
    terms: Any,
    weights: Any,
    m: int,
    block_max: Any,
    k: int,
    top_d: Any,
    top_s: Any,
) -> int:
    """Term at a time into the dense accumulator ``acc`` (N,), then :func:`_select_dense`: the
    query's m terms ``terms[:m]`` (ascending) with their weights. Each saturation is computed
    where it is added (one loop beats a vectorised loop of divisions and then the scattered
    adds), and this is a function of its own so that the compiler treats its loops alone.
    """  # pragma: no cover - compiled
    for j in range(m):
        w = weights[j]
        for p in range(indptr[terms[j]], indptr[terms[j] + 1]):
            d = docs[p]
            acc[d] += w * _impact(tf[p], length_term[d], k1)
    return _select_dense(acc, block_max, k, top_d, top_s)


def select_dense_source(acc: Any, block_max: Any, k: int, top_d: Any, top_s: Any) -> int:
    """The best k positive sums of ``acc`` into ``top_d``/``top_s`` (by -score, then document),
    clearing ``acc``; returns how many were held (fewer than k when fewer are positive).

    Block-max selection: the largest sum of every block of ``SELECT_BLOCK`` documents first (one
    tight pass), then the k-th largest of those maxima, theta, which no k-th best sum can be below
    (k blocks hold a sum of at least theta each). Only blocks whose maximum reaches theta are
    read again, and only their sums of at least theta are offered: about k blocks, not N sums
    each behind a branch.
    """  # pragma: no cover - compiled
    n_docs = acc.shape[0]
    n_blocks = block_max.shape[0]
    whole = n_docs // SELECT_BLOCK
    for b in range(whole):
        # A fixed trip count, which the compiler vectorises (2.8 against 7.8 us over 10,000).
        best = 0.0
        for d in range(b * SELECT_BLOCK, b * SELECT_BLOCK + SELECT_BLOCK):
            v = acc[d]
            best = v if v > best else best
        block_max[b] = best
    if whole < n_blocks:
        best = 0.0
        for d in range(whole * SELECT_BLOCK, n_docs):
            v = acc[d]
            best = v if v > best else best
        block_max[whole] = best
    filled = 0
    for b in range(n_blocks):
        v = block_max[b]
        if v > 0.0 and (filled < k or v > top_s[k - 1]):
            filled = _hold(top_d, top_s, filled, k, b, v)
    theta = top_s[k - 1] if filled == k else 0.0
    filled = 0
    for b in range(n_blocks):
        v = block_max[b]
        if v > 0.0 and v >= theta:
            a = b * SELECT_BLOCK
            for d in range(a, min(a + SELECT_BLOCK, n_docs)):
                s = acc[d]
                if s > 0.0 and s >= theta and (filled < k or s >= top_s[k - 1]):
                    filled = _hold(top_d, top_s, filled, k, d, s)
    acc[:] = 0.0
    return filled


# The functions call these names: the Python functions until compiled() publishes their twins.
_impact: Callable[..., float] = impact
_hold: Callable[..., int] = hold_source
_select_dense: Callable[..., int] = select_dense_source


@cache
def compiled() -> tuple[Callable[..., float], Callable[..., int], Callable[..., int]]:
    """The compiled saturation and top-k buffer (both inlined where they are called) and dense
    path: (impact, hold, dense_top_k). The saturation is :func:`raglab.bm25.formula.impact`
    itself, compiled for scalars. The selection is compiled after the buffer is published, so
    that it calls the compiled twin, and on its own, not inlined, so that the compiler optimises
    each loop alone (inlined, it ran 1.6 times slower on Cranfield)."""
    import numba

    global _impact, _hold, _select_dense
    try:
        _impact = numba.njit(cache=True, nogil=True, inline="always")(impact)
        _hold = numba.njit(cache=True, nogil=True, inline="always")(hold_source)
        _select_dense = numba.njit(cache=True, nogil=True)(select_dense_source)
        dense = numba.njit(cache=True, nogil=True)(dense_top_k_source)
    except RuntimeError:
        # numba found nowhere to write its cache (read-only install and home): compile anew.
        _impact = numba.njit(nogil=True, inline="always")(impact)
        _hold = numba.njit(nogil=True, inline="always")(hold_source)
        _select_dense = numba.njit(nogil=True)(select_dense_source)
        dense = numba.njit(nogil=True)(dense_top_k_source)
    return _impact, _hold, dense
