"""LSA's cosine scores do not depend on which other rows are scored with a row.

Oracle: the same rows scored alone (one row at a time, and in slices at every offset), and
``math.fsum`` of each row's exact products for the size of the rounding.
"""

from __future__ import annotations

import math

import numpy as np

from raglab.embedding.lsa import LSAModel, row_dots, unit_rows
from raglab.embedding.vectors import Vocabulary


def _rows(n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return unit_rows(rng.standard_normal((n, k))), unit_rows(rng.standard_normal((1, k)))[0]


def test_a_rows_dot_product_is_the_same_bits_alone_or_among_others() -> None:
    """Oracle: each row scored alone. 1,403 unit rows of 48: every slice (offsets 0 to 8,
    lengths 1 to 997) and every row alone gives the bits the whole matrix gives, which BLAS's
    matrix-vector product does not (it rounds a row by its place among groups of four); each
    value lies within 4 ulps of 1 of the exactly rounded sum (``math.fsum``)."""
    X, v = _rows(1_403, 48, seed=7)
    whole = row_dots(X, v)
    for offset in range(9):
        for length in (1, 2, 3, 5, 997):
            part = row_dots(np.ascontiguousarray(X[offset : offset + length]), v)
            assert part.tobytes() == whole[offset : offset + length].tobytes(), (offset, length)
    for i in range(0, 1_403, 97):
        assert row_dots(X[i : i + 1], v)[0] == whole[i]
        exact = math.fsum(float(a) * float(b) for a, b in zip(X[i], v, strict=True))
        assert abs(whole[i] - exact) <= 4 * np.spacing(1.0)


def test_lsa_search_scores_a_slice_of_the_rows_as_the_whole() -> None:
    """Oracle: LSAModel.search over every row. Searching a slice of the same unit rows (as a
    shard of a cluster holds them) gives each of its rows the very score it gets among all."""
    X, _ = _rows(1_403, 8, seed=11)
    terms = ("a", "b", "c")
    U = unit_rows(np.random.default_rng(3).standard_normal((3, 8)))
    model = LSAModel(
        Vocabulary(terms), np.ones(3), U, np.ones(8), np.zeros((8, 0)), frobenius_sq=8.0
    )
    whole = model.search(["a", "c", "c"], X, k=1_403, normalised=True)
    by_row = dict(zip(whole.indices.tolist(), whole.scores.tolist(), strict=True))
    for a, b in ((1, 700), (3, 1_403), (5, 6)):
        part = model.search(["a", "c", "c"], X[a:b], k=b - a, normalised=True)
        for i, score in zip(part.indices.tolist(), part.scores.tolist(), strict=True):
            assert score == by_row[a + i], (a, b, i)
