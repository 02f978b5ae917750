"""The exact sum of squares (raglab.base.exact).

Oracle: :func:`math.fsum` of the same float64 squares, the correctly rounded sum; and the
integer parts of any split adding to the whole's, which is what the row blocks of a matrix on
several workers rely on.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from raglab.base.exact import exact_sum_of_squares, rounded, scaled_sum_of_squares


def test_equals_fsum_over_wide_ranges_of_magnitude() -> None:
    rng = np.random.default_rng(3)
    for trial in range(60):
        n = int(rng.integers(0, 2_000))
        x = rng.standard_normal(n) * 10.0 ** rng.uniform(-150, 150, size=n)
        if trial % 5 == 0:  # a subnormal square's unit, a zero and a square that underflows
            x = np.concatenate([x, [2.0**-537, 0.0, 5e-324]])
        assert exact_sum_of_squares(x) == math.fsum((x * x).tolist())


def test_hand_worked_values() -> None:
    # 3^2 + 4^2 = 25; 0.1^2 rounds to 0.010000000000000002, and ten of them add exactly to
    # 0.10000000000000002 (float64's nearest to ten times that square), not the 0.10000000000000003
    # that adding them one by one in float64 reaches.
    assert exact_sum_of_squares([3.0, 4.0]) == 25.0
    tenth = np.full(10, 0.1)
    one_by_one = 0.0
    for v in tenth:
        one_by_one += v * v
    assert exact_sum_of_squares(tenth) == math.fsum([0.1 * 0.1] * 10)
    assert exact_sum_of_squares(tenth) != one_by_one
    assert exact_sum_of_squares([]) == 0.0


def test_any_split_adds_to_the_whole() -> None:
    rng = np.random.default_rng(5)
    x = rng.random(3_000_000)  # beyond one block of 2^20 values
    whole = scaled_sum_of_squares(x)
    cuts = sorted(rng.integers(0, x.size, size=6).tolist())
    parts = [scaled_sum_of_squares(p) for p in np.split(x, cuts)]
    assert sum(parts) == whole
    assert rounded(whole) == math.fsum((x * x).tolist())


def test_a_square_that_is_not_finite_is_refused() -> None:
    with pytest.raises(ValueError, match="not finite"):
        exact_sum_of_squares([1.0, 1e200])
