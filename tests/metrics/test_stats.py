"""Wilson intervals and the exact McNemar test, against statsmodels and by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from raglab.metrics.stats import McNemarResult, mcnemar_exact, wilson_interval
from raglab.settings import WILSON_Z

# --- Wilson interval ------------------------------------------------------------------------

GRID = [(k, n) for n in [*range(1, 41), 50, 80, 99, 250, 1000, 12345] for k in range(n + 1)]


def test_wilson_equals_statsmodels_over_a_grid() -> None:
    """Oracle: statsmodels proportion_confint(count, nobs, alpha=0.05, method="wilson")."""
    counts = np.array([k for k, _ in GRID])
    sizes = np.array([n for _, n in GRID])
    low, high = proportion_confint(counts, sizes, alpha=0.05, method="wilson")
    ours = np.array([wilson_interval(k, n, z=1.959963984540054) for k, n in GRID])
    np.testing.assert_allclose(ours[:, 0], low, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours[:, 1], high, rtol=0, atol=1e-12)


def test_wilson_stays_in_the_unit_interval_and_covers_the_estimate() -> None:
    """Oracle: the definition (0 <= low <= k/n <= high <= 1, strictly inside for 0 < k < n)."""
    for k, n in GRID:
        low, high = wilson_interval(k, n, z=1.959963984540054)
        assert 0.0 <= low <= k / n <= high <= 1.0
        if 0 < k < n:
            assert 0.0 < low < k / n < high < 1.0


def test_wilson_on_thirty_questions_is_about_seventeen_points_wide() -> None:
    """Oracle: hand computation (the seed's "on 30 questions about +-17 points").

    k = 15, n = 30, z = 1.96: z^2 = 3.8415, z^2/n = 0.12805, centre = (0.5 + 0.06403)/1.12805 = 0.5;
    half-width = 1.96 * sqrt(0.25/30 + 3.8415/3600) / 1.12805
               = 1.96 * sqrt(0.0083333 + 0.0010671) / 1.12805 = 1.96 * 0.096956 / 1.12805 = 0.16846.
    """
    low, high = wilson_interval(15, 30, z=1.959963984540054)
    assert (low + high) / 2 == pytest.approx(0.5, abs=1e-15)
    z2 = WILSON_Z**2
    half = WILSON_Z * math.sqrt(0.25 / 30 + z2 / 3600) / (1 + z2 / 30)
    assert (high - low) / 2 == pytest.approx(half, abs=1e-15)
    assert (high - low) / 2 == pytest.approx(0.16846, abs=1e-5)
    # Neighbouring accuracies stay about as uncertain: 13 to 17 right out of 30.
    for k in range(13, 18):
        lo, hi = wilson_interval(k, 30, z=1.959963984540054)
        assert 0.16 < (hi - lo) / 2 < 0.18


def test_wilson_at_zero_successes_by_hand() -> None:
    """Oracle: hand computation. p = 0 gives low = 0 and high = (z^2/n) / (1 + z^2/n) = z^2/(n + z^2).

    n = 26 (the bundled answerable test questions): 3.8415 / 29.8415 = 0.12873.
    """
    low, high = wilson_interval(0, 26, z=1.959963984540054)
    assert low == 0.0
    assert high == pytest.approx(WILSON_Z**2 / (26 + WILSON_Z**2), abs=1e-15)
    assert high == pytest.approx(0.12873, abs=1e-5)
    # And by symmetry, all right mirrors all wrong.
    assert wilson_interval(26, 26, z=1.959963984540054) == pytest.approx((1 - high, 1.0), abs=1e-15)


def test_wilson_z_changes_the_width() -> None:
    """Oracle: statsmodels at alpha = 0.1 (z = 1.6449) and the nesting of intervals."""
    low, high = wilson_interval(7, 20, z=1.6448536269514722)
    ref_low, ref_high = proportion_confint(7, 20, alpha=0.1, method="wilson")
    assert (low, high) == pytest.approx((ref_low, ref_high), abs=1e-12)
    wide_low, wide_high = wilson_interval(7, 20, z=1.959963984540054)
    assert wide_low < low < high < wide_high


@pytest.mark.parametrize(
    ("successes", "n", "z", "message"),
    [
        (0, 0, WILSON_Z, "n must be at least 1"),
        (3, 2, WILSON_Z, "between 0 and n"),
        (-1, 2, WILSON_Z, "between 0 and n"),
        (1.5, 2, WILSON_Z, "integer"),
        (True, 2, WILSON_Z, "integer"),
        (1, 2, 0.0, "positive finite"),
        (1, 2, float("inf"), "positive finite"),
    ],
)
def test_wilson_bad_input(successes: int, n: int, z: float, message: str) -> None:
    """Oracle: the validation contract (n = 0 and impossible counts raise ValueError)."""
    with pytest.raises(ValueError, match=message):
        wilson_interval(successes, n, z=z)


# --- McNemar --------------------------------------------------------------------------------


def runs_for(
    only_a: int, only_b: int, both_right: int = 3, both_wrong: int = 2
) -> tuple[list[bool], list[bool]]:
    """Two runs' per-question outcomes realising the given 2x2 table, shuffled by a fixed seed."""
    a = [True] * both_right + [True] * only_a + [False] * only_b + [False] * both_wrong
    b = [True] * both_right + [False] * only_a + [True] * only_b + [False] * both_wrong
    order = np.random.default_rng(only_a * 1000 + only_b).permutation(len(a))
    return [a[i] for i in order], [b[i] for i in order]


def test_mcnemar_by_hand() -> None:
    """Oracle: hand computation of 2 * P(X <= min) for X ~ Binomial(m, 1/2).

    only_a = 5, only_b = 0: p = 2 * C(5,0)/2^5 = 2/32 = 0.0625.
    only_a = 6, only_b = 1: p = 2 * (C(7,0) + C(7,1))/2^7 = 2 * 8/128 = 0.125.
    only_a = 4, only_b = 4: 2 * P(X <= 4; 8) = 2 * 163/256 > 1, so p = 1.
    """
    result = mcnemar_exact(*runs_for(5, 0))
    assert result == McNemarResult(
        n=10, both_right=3, only_a=5, only_b=0, both_wrong=2, p_value=0.0625
    )
    assert mcnemar_exact(*runs_for(6, 1)).p_value == 0.125
    assert mcnemar_exact(*runs_for(4, 4)).p_value == 1.0


def test_mcnemar_without_discordant_pairs_is_one() -> None:
    """Oracle: the definition (no question separates the runs: p = 1), including no questions."""
    a = [True, False, True]
    assert mcnemar_exact(a, a).p_value == 1.0
    empty = mcnemar_exact([], [])
    assert (empty.n, empty.p_value) == (0, 1.0)


def test_mcnemar_equals_statsmodels_on_every_small_table() -> None:
    """Oracle: statsmodels mcnemar(table, exact=True).pvalue, every table with up to 40 discordant."""
    for only_a in range(41):
        for only_b in range(41 - only_a):
            ours = mcnemar_exact(*runs_for(only_a, only_b))
            assert (ours.only_a, ours.only_b) == (only_a, only_b)
            table = [[ours.both_right, ours.only_a], [ours.only_b, ours.both_wrong]]
            expected = float(mcnemar(table, exact=True).pvalue)
            assert ours.p_value == pytest.approx(expected, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("seed", range(20))
def test_mcnemar_equals_statsmodels_on_random_runs(seed: int) -> None:
    """Oracle: statsmodels mcnemar(table, exact=True).pvalue on seeded runs of up to 3,000 questions."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3001))
    a = rng.random(n) < rng.uniform(0.2, 0.9)
    b = np.where(rng.random(n) < rng.uniform(0.5, 0.99), a, rng.random(n) < 0.5)
    ours = mcnemar_exact(a.tolist(), b.tolist())
    assert ours.both_right + ours.only_a + ours.only_b + ours.both_wrong == ours.n == n
    table = [[ours.both_right, ours.only_a], [ours.only_b, ours.both_wrong]]
    expected = float(mcnemar(table, exact=True).pvalue)
    assert ours.p_value == pytest.approx(expected, rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("seed", range(5))
def test_mcnemar_is_symmetric(seed: int) -> None:
    """Oracle: the unswapped test (swapping a and b swaps only_a and only_b, p is unchanged)."""
    rng = np.random.default_rng(seed)
    a = (rng.random(200) < 0.6).tolist()
    b = (rng.random(200) < 0.5).tolist()
    ab, ba = mcnemar_exact(a, b), mcnemar_exact(b, a)
    assert (ab.only_a, ab.only_b) == (ba.only_b, ba.only_a)
    assert (ab.both_right, ab.both_wrong) == (ba.both_right, ba.both_wrong)
    assert ab.p_value == ba.p_value


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([True, False], [True], "same questions"),
        ([1, 0], [1, 0], "booleans"),
        ([[True]], [[True]], "1-d"),
    ],
)
def test_mcnemar_bad_input(a: list[bool], b: list[bool], message: str) -> None:
    """Oracle: the validation contract (ValueError naming the problem)."""
    with pytest.raises(ValueError, match=message):
        mcnemar_exact(a, b)
