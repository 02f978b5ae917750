"""Sums of squares added exactly, so that the total does not depend on how the values are split.

``||A||_F^2 = sum of a_ij^2`` over a matrix's stored values is the LSA exhibit's denominator
(each dimension's share of A's squared norm). Added in floating point, its last bits depend on
the order of the additions, so a matrix held in row blocks on several machines would give
another total than the whole matrix on one. Here each square a^2 is rounded to float64 as usual,
but the squares are then added exactly, in integers, and the exact total is rounded once
(round half to even, as Python's int / int division rounds): the correctly rounded sum, the
value :func:`math.fsum` of the same squares gives, whatever the order or the grouping.

How: ``frexp`` writes each square as f 2^e with f in [0.5, 1), so M = f 2^53 is a whole number
below 2^53. M is split as hi 2^27 + lo (hi < 2^26, lo < 2^27), and hi and lo are summed per
exponent e with ``numpy.bincount``: over at most 2^20 values a bin's float64 sum stays below
2^47, so every addition is exact. The bins are then combined in Python integers in units of
2^-1127, the smallest square's unit (2^-1074, a subnormal's, times 2^-53).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["SCALE_BITS", "exact_sum_of_squares", "rounded", "scaled_sum_of_squares"]

#: :func:`scaled_sum_of_squares` counts in units of 2^-SCALE_BITS.
SCALE_BITS = 1127
_MANTISSA_BITS = 53
_SPLIT_BITS = 27
# Values per bincount: 2^20 values below 2^27 sum to below 2^47 < 2^53, so each float64 addition
# is exact; it also bounds the temporaries at a few MB.
_BLOCK = 1 << 20


def scaled_sum_of_squares(values: Any) -> int:
    """The exact sum of the squares of ``values`` (any shape; each square rounded to float64 as
    ``values * values`` rounds it), as an integer in units of 2^-:data:`SCALE_BITS`. Integers
    add exactly, so the parts of a split array sum to the whole array's value.

    Raises ValueError when a square is not finite (no exact sum exists)."""
    flat = np.asarray(values, dtype=np.float64).ravel()
    total = 0
    for start in range(0, flat.size, _BLOCK):
        with np.errstate(over="ignore"):  # an infinite square is refused just below
            squares = flat[start : start + _BLOCK] * flat[start : start + _BLOCK]
        if not np.isfinite(squares).all():
            raise ValueError("a square is not finite: no exact sum")
        fraction, exponent = np.frexp(squares)
        whole = np.ldexp(fraction, _MANTISSA_BITS)  # integers below 2^53, exactly
        hi = np.floor(whole / (1 << _SPLIT_BITS))
        lo = whole - hi * (1 << _SPLIT_BITS)
        lowest = int(exponent.min()) if exponent.size else 0
        bins = exponent - lowest
        sums_hi = np.bincount(bins, weights=hi)
        sums_lo = np.bincount(bins, weights=lo)
        for i in np.flatnonzero(sums_hi + sums_lo).tolist():
            mantissas = (int(sums_hi[i]) << _SPLIT_BITS) + int(sums_lo[i])
            # The square f 2^e is M 2^(e - 53), i.e. M 2^(e - 53 + SCALE_BITS) units.
            total += mantissas << (lowest + i - _MANTISSA_BITS + SCALE_BITS)
    return total


def rounded(scaled: int) -> float:
    """A total of :func:`scaled_sum_of_squares` units as the nearest float64."""
    return scaled / (1 << SCALE_BITS)


def exact_sum_of_squares(values: Any) -> float:
    """sum(v^2 for v in values), each square rounded to float64 and the sum rounded once:
    equal to ``math.fsum(v * v for v in values)`` and independent of the values' order."""
    return rounded(scaled_sum_of_squares(values))
