"""Row dot products in numpy's pairwise order, compiled: LSA's cosines when numba is installed.

:func:`raglab.embedding.lsa.row_dots` computes ``np.sum(X * v, axis=1)`` (X (n, k) C-ordered
float64, v (k,)), which writes every product to memory and reads it back (3.4 times BLAS's
``X @ v`` at 100,000 x 100 on an idle machine; ``benchmarks/bench_row_dots.py`` times both).
The kernel here forms each product in a register and adds them in the very order numpy's
reduction does (numpy 2.4.6, ``numpy/_core/src/umath/loops_utils.h.src``,
``DOUBLE_pairwise_sum``, reached from ``DOUBLE_add``'s reduce branch with the row's k elements,
since the reduced axis is the contiguous one):

- fewer than 8 terms: ``res = -0.0``, then each term added in order;
- 8 to 128 terms: eight accumulators r_0..r_7 start at the first eight terms, term 8i + j is
  added to r_j for every whole group of eight, then
  ``res = ((r_0 + r_1) + (r_2 + r_3)) + ((r_4 + r_5) + (r_6 + r_7))`` and the n mod 8 terms left
  are added to res in order;
- more than 128: split at n2 = n // 2 - (n // 2) mod 8, each half summed so, the halves added.

numpy's result is then the reduction's identity plus that sum, ``0.0 + res`` (``reduction.c``
fills the result with add's identity before the loop adds the row, so a row of negative zeros
gives +0.0, as ``np.sum`` does). Each product is rounded to float64 before it is added: numba
fuses no multiply and add without fast-math, which is not asked for (the compiled code holds
no ``vfmadd``; with ``fastmath=True`` the tests find rows that differ). Rows are independent,
so they may be spread over threads without changing a bit.

numba is optional: :func:`available` says whether it imports; :func:`compiled` compiles the
kernel on first use (cached on disk by numba where it can write).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from raglab.base.ranking import IntArray

__all__ = ["ADD", "BLOCK", "LEAF", "available", "block_source", "compiled", "plan", "rows_source"]

# numpy's PW_BLOCKSIZE: up to this many terms are summed by eight accumulators, more are halved.
BLOCK = 128


def block_source(x: Any, v: Any) -> float:
    """numpy's pairwise sum of x[j] * v[j] over x (n,) and v (n,), n <= BLOCK (see the module):
    a row of X, or a run of it, and the same run of v. Each group of eight is read through
    slices starting at 0, which the compiler turns into plain loads (no negative index to
    wrap): 1.7 times faster than indexing the whole row at an offset (100,000 rows of 48 and
    of 100, interleaved, load 8 on 2 cores)."""
    n = x.shape[0]
    if n < 8:
        res = -0.0
        for j in range(n):
            res += x[j] * v[j]
        return res
    r0 = x[0] * v[0]
    r1 = x[1] * v[1]
    r2 = x[2] * v[2]
    r3 = x[3] * v[3]
    r4 = x[4] * v[4]
    r5 = x[5] * v[5]
    r6 = x[6] * v[6]
    r7 = x[7] * v[7]
    whole = n - n % 8
    for at in range(8, whole, 8):
        xs = x[at : at + 8]
        vs = v[at : at + 8]
        r0 += xs[0] * vs[0]
        r1 += xs[1] * vs[1]
        r2 += xs[2] * vs[2]
        r3 += xs[3] * vs[3]
        r4 += xs[4] * vs[4]
        r5 += xs[5] * vs[5]
        r6 += xs[6] * vs[6]
        r7 += xs[7] * vs[7]
    total: float = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for j in range(whole, n):
        total += x[j] * v[j]
    return total


# The kernel calls this name: the Python function until compiled() publishes its compiled twin.
_block: Callable[..., float] = block_source

# A plan's steps: sum a block (its first column and length follow), or add the last two sums.
LEAF = 0
ADD = 1


def plan(k: int) -> IntArray:
    """numpy's pairwise tree over k terms as steps, (m, 3) int64 in post-order: ``[LEAF, lo,
    n]`` sums terms lo..lo + n - 1 by :func:`block_source` (n <= BLOCK), ``[ADD, 0, 0]``
    replaces the last two sums by their sum. Above BLOCK terms a run is split after n2 =
    n // 2 - (n // 2) mod 8 terms, as numpy's recursion splits it; one leaf up to BLOCK."""
    steps: list[tuple[int, int, int]] = []

    def walk(lo: int, n: int) -> None:
        if n <= BLOCK:
            steps.append((LEAF, lo, n))
            return
        n2 = n // 2
        n2 -= n2 % 8
        walk(lo, n2)
        walk(lo + n2, n - n2)
        steps.append((ADD, 0, 0))

    walk(0, int(k))
    return np.array(steps, dtype=np.int64).reshape(-1, 3)


def rows_source(X: Any, v: Any, steps: Any, out: Any, start: int, stop: int) -> None:
    """``out[i] = 0.0 + pairwise(X[i] * v)`` for start <= i < stop, the pairwise tree given
    by ``steps`` (:func:`plan` of k): ``np.sum(X * v, axis=1)``'s bits for those rows
    (X (n, k) float64, v (k,), out (n,))."""
    if steps.shape[0] == 1:
        for i in range(start, stop):
            out[i] = 0.0 + _block(X[i], v)
        return
    stack = np.empty(steps.shape[0], dtype=np.float64)
    for i in range(start, stop):
        top = 0
        for s in range(steps.shape[0]):
            if steps[s, 0] == LEAF:
                lo, hi = steps[s, 1], steps[s, 1] + steps[s, 2]
                stack[top] = _block(X[i, lo:hi], v[lo:hi])
                top += 1
            else:
                top -= 1
                stack[top - 1] = stack[top - 1] + stack[top]
        out[i] = 0.0 + stack[0]


@cache
def available() -> bool:
    """Whether numba can be imported here."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


@cache
def compiled() -> Callable[[Any, Any, Any, Any, int, int], None]:
    """:func:`rows_source` compiled by numba (ImportError without it), without the GIL, its
    block sum inlined (no recursion: numba's cache of a self-calling function crashed when
    loaded); compiled once and called once on a tiny array so that a timed call never
    pays for compiling."""
    import numba

    global _block
    try:
        _block = numba.njit(cache=True, nogil=True, inline="always")(block_source)
        rows = numba.njit(cache=True, nogil=True)(rows_source)
    except RuntimeError:
        # numba found nowhere to write its cache (read-only install and home): compile anew.
        _block = numba.njit(nogil=True, inline="always")(block_source)
        rows = numba.njit(nogil=True)(rows_source)
    out = np.empty(1, dtype=np.float64)
    rows(np.ones((1, 2), dtype=np.float64), np.ones(2, dtype=np.float64), plan(2), out, 0, 1)
    return rows
