"""The seeded test matrix of the randomised SVD (docs/design.md#the-seeded-test-matrix)."""

from __future__ import annotations

import numpy as np

from raglab.embedding.sketch import seeded_matrix

MASK = 0xFFFFFFFF


def lowbias32(x: int) -> int:
    x ^= x >> 16
    x = (x * 0x7FEB352D) & MASK
    x ^= x >> 15
    x = (x * 0x846CA68B) & MASK
    return x ^ (x >> 16)


def entry(r: int, c: int, width: int, seed: int) -> float:
    """The definition written out with Python integers, one entry at a time."""
    key = lowbias32((seed & MASK) ^ 0x9E3779B9)
    i = r * width + c
    total = sum(
        lowbias32(lowbias32(((12 * i + j) & MASK) ^ key) ^ ((12 * i + j) >> 32)) for j in range(12)
    )
    return total / 2**32 - 6.0


def test_the_matrix_is_its_definition_entry_by_entry() -> None:
    """Oracle: the definition computed with Python integers, entry by entry (no numpy)."""
    for n, width, seed in ((3, 2, 0), (7, 5, 0), (4, 74, 12345), (2, 3, 2**40 + 3)):
        omega = seeded_matrix(n, width, seed)
        assert omega.shape == (n, width)
        expected = [[entry(r, c, width, seed) for c in range(width)] for r in range(n)]
        assert omega.tolist() == expected


def test_lowbias32_of_zero_is_zero_and_the_hash_scatters() -> None:
    """Oracle: hand-worked, mix(0) = 0 (every step keeps 0); one flipped input bit changes about
    half of the output bits (the hash's avalanche)."""
    assert lowbias32(0) == 0
    flips = [bin(lowbias32(x) ^ lowbias32(x ^ 1)).count("1") for x in range(1, 2000)]
    assert 14 < sum(flips) / len(flips) < 18


def test_blocks_do_not_change_the_draw() -> None:
    """A matrix larger than one block of words equals the rows drawn with it: oracle, the
    entry-by-entry definition on rows past the first block."""
    n, width = 100, 74  # 88,800 words: three blocks
    omega = seeded_matrix(n, width, 0)
    for r in (0, 36, 37, 99):
        assert omega[r, :3].tolist() == [entry(r, c, width, 0) for c in range(3)]


def test_the_entries_have_mean_0_and_variance_1() -> None:
    """Oracle: Irwin and Hall's distribution, mean 0 and variance 12 x 1/12 = 1; a sample of
    200,000 gives each within 5 standard errors (0.011 and 0.016), bounded by 6."""
    omega = seeded_matrix(2000, 100, 7)
    assert abs(omega.mean()) < 0.011
    assert abs(omega.var() - 1.0) < 0.016
    assert np.abs(omega).max() < 6
    assert not np.array_equal(omega, seeded_matrix(2000, 100, 8))
