"""Uncertainty of an accuracy and the comparison of two runs on the same questions."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

__all__ = ["McNemarResult", "mcnemar_exact", "wilson_interval"]


def _count(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return operator.index(value)


def wilson_interval(successes: int, n: int, *, z: float) -> tuple[float, float]:
    """Wilson's score interval for a proportion (Wilson 1927): ``(low, high)`` inside [0, 1].

    With p = successes / n:
    (p + z^2/2n -+ z sqrt(p(1 - p)/n + z^2/4n^2)) / (1 + z^2/n).
    z = ``raglab.settings.WILSON_Z`` (the 97.5% normal quantile), which the lab passes, gives a 95%
    interval. It inverts the
    score test, so unlike p -+ z sqrt(p(1 - p)/n) it stays inside [0, 1] and does not collapse to
    a point at p = 0 or 1. The bounds are exactly 0 at p = 0 and 1 at p = 1, and clipped to
    [0, 1] against rounding. Raises ValueError unless 0 <= successes <= n and n >= 1, or when z
    is not a positive finite number.
    """
    successes = _count(successes, "successes")
    n = _count(n, "n")
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n = {n}, got {successes}")
    if isinstance(z, bool) or not isinstance(z, Real) or not math.isfinite(z) or z <= 0:
        raise ValueError(f"z must be a positive finite number, got {z!r}")
    p = successes / n
    z2 = float(z) ** 2
    denom = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = float(z) * math.sqrt(p * (1 - p) / n + z2 / (4 * n**2)) / denom
    # At p = 0 (p = 1) the lower (upper) bound is exactly 0 (1); rounding must not move it off.
    low = 0.0 if successes == 0 else max(0.0, center - half)
    high = 1.0 if successes == n else min(1.0, center + half)
    return low, high


def _two_sided_sign_p(smaller: int, m: int) -> float:
    """min(1, 2 * P(X <= smaller)) for X ~ Binomial(m, 1/2), m >= 1, in exact integer arithmetic.

    2 * sum_{i<=smaller} C(m, i) / 2^m is a ratio of integers, and Python's int / int is
    correctly rounded, so the p-value is exact to the last bit even where it underflows.
    """
    term = 1  # C(m, 0)
    total = 1
    for i in range(smaller):
        term = term * (m - i) // (i + 1)  # C(m, i + 1), exact
        total += term
    return min(1.0, total / (1 << (m - 1)))


@dataclass(frozen=True, slots=True)
class McNemarResult:
    """The 2x2 table of two runs scored on the same ``n`` questions, and the exact p-value.

    ``both_right``, ``only_a`` (a right, b wrong), ``only_b`` (b right, a wrong) and
    ``both_wrong`` sum to ``n``; only the discordant ``only_a`` and ``only_b`` enter the test.
    """

    n: int
    both_right: int
    only_a: int
    only_b: int
    both_wrong: int
    p_value: float


def _outcomes(values: Sequence[bool], name: str) -> np.ndarray[tuple[int], np.dtype[np.bool_]]:
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-d sequence of booleans, got shape {array.shape}")
    if array.size and array.dtype != np.bool_:
        raise ValueError(f"{name} must hold booleans (right or wrong), got dtype {array.dtype}")
    return array.astype(np.bool_)


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> McNemarResult:
    """Exact McNemar test of two runs' per-question correctness (McNemar 1947).

    ``a`` and ``b``: (n,) booleans, question i right or wrong under each run, same questions in
    the same order. Under the null hypothesis that both runs are equally accurate, each of the
    m = only_a + only_b discordant questions favours either run with probability 1/2, so the
    two-sided exact p-value is p = min(1, 2 * BinomCDF(min(only_a, only_b); m, 1/2)), and p = 1
    when there are no discordant questions. Symmetric in ``a`` and ``b``.
    """
    right_a = _outcomes(a, "a")
    right_b = _outcomes(b, "b")
    if right_a.shape != right_b.shape:
        raise ValueError(
            f"a and b must score the same questions, got {right_a.size} and {right_b.size}"
        )
    only_a = int(np.count_nonzero(right_a & ~right_b))
    only_b = int(np.count_nonzero(~right_a & right_b))
    both_right = int(np.count_nonzero(right_a & right_b))
    discordant = only_a + only_b
    p_value = 1.0
    if discordant:
        p_value = _two_sided_sign_p(min(only_a, only_b), discordant)
    return McNemarResult(
        n=int(right_a.size),
        both_right=both_right,
        only_a=only_a,
        only_b=only_b,
        both_wrong=int(right_a.size) - both_right - discordant,
        p_value=p_value,
    )
