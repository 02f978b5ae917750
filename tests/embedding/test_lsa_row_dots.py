"""LSA's cosine scores do not depend on which other rows are scored with a row, on either backend.

Oracles: the same rows scored alone (one row at a time, and in slices at every offset),
``math.fsum`` of each row's exact products for the size of the rounding, and numpy's own
``np.sum(X * v, axis=1)`` for the compiled kernel of :mod:`raglab.embedding.pairwise`, bit for
bit. numba is installed with the test extra; without it the compiled tests fail rather than
skip, as a missing backend is a broken test environment.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import raglab.embedding.lsa as lsa
import raglab.embedding.pairwise as pairwise
from raglab.embedding.lsa import LSAModel, row_dots, unit_rows
from raglab.embedding.vectors import Vocabulary
from raglab.pipeline.lab import Lab

BACKENDS = ("numba", "numpy")


def _rows(n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return unit_rows(rng.standard_normal((n, k))), unit_rows(rng.standard_normal((1, k)))[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_rows_dot_product_is_the_same_bits_alone_or_among_others(backend: str) -> None:
    """Oracle: each row scored alone. 1,403 unit rows of 48: every slice (offsets 0 to 8,
    lengths 1 to 997) and every row alone gives the bits the whole matrix gives, which BLAS's
    matrix-vector product does not (it rounds a row by its place among groups of four); each
    value lies within 4 ulps of 1 of the exactly rounded sum (``math.fsum``)."""
    X, v = _rows(1_403, 48, seed=7)
    whole = row_dots(X, v, backend=backend)
    for offset in range(9):
        for length in (1, 2, 3, 5, 997):
            part = row_dots(np.ascontiguousarray(X[offset : offset + length]), v, backend=backend)
            assert part.tobytes() == whole[offset : offset + length].tobytes(), (offset, length)
    for i in range(0, 1_403, 97):
        assert row_dots(X[i : i + 1], v, backend=backend)[0] == whole[i]
        exact = math.fsum(float(a) * float(b) for a, b in zip(X[i], v, strict=True))
        assert abs(whole[i] - exact) <= 4 * np.spacing(1.0)


@pytest.mark.parametrize("numba", [True, False])
def test_lsa_search_scores_a_slice_of_the_rows_as_the_whole(
    monkeypatch: pytest.MonkeyPatch, numba: bool
) -> None:
    """Oracle: LSAModel.search over every row. Searching a slice of the same unit rows (as a
    shard of a cluster holds them) gives each of its rows the very score it gets among all,
    with numba and as if it were not installed (the default backend then takes numpy)."""
    monkeypatch.setattr(pairwise, "available", lambda: numba)
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


def test_numba_is_installed_with_the_test_extra() -> None:
    assert pairwise.available()


def _spread(n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n rows of k normals scaled by 10^u, u uniform on [-8, 8], and a v alike: products of
    every size, so that any other order of the additions rounds some row otherwise."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, k)) * 10.0 ** rng.uniform(-8, 8, (n, k))
    v = rng.standard_normal(k) * 10.0 ** rng.uniform(-8, 8, k)
    return X, v


def test_the_compiled_sum_is_numpys_bit_for_bit_for_every_k_to_300() -> None:
    """oracle: ``np.sum(X * v, axis=1)``, numpy's own pairwise reduction. 61 rows for every k
    from 0 to 300: every remainder mod 8, below 8 (one running sum), 8 to 128 (eight
    accumulators and the rest), and above 128 (split in halves, twice past 256). Each row's
    products span 16 orders of magnitude, so a sum taken in any other order (left to right,
    the accumulators combined otherwise, halves split elsewhere) differs in some row."""
    for k in range(301):
        X, v = _spread(61, k, seed=1_000 + k)
        want = np.sum(X * v, axis=1)
        assert row_dots(X, v, backend="numba").tobytes() == want.tobytes(), k
        assert row_dots(X, v, backend="numpy").tobytes() == want.tobytes(), k


def test_the_pure_python_source_is_the_kernel_numba_compiles() -> None:
    """oracle: ``np.sum(X * v, axis=1)``. The kernel's Python source, run by the interpreter,
    gives numpy's bits too (k = 0 to 20, 127 to 129 and 300: each of its branches)."""
    for k in (*range(21), 127, 128, 129, 300):
        X, v = _spread(9, k, seed=k)
        out = np.empty(9)
        pairwise.rows_source(X, v, pairwise.plan(k), out, 0, 9)
        assert out.tobytes() == np.sum(X * v, axis=1).tobytes(), k


def test_the_plan_splits_as_numpys_recursion_worked_by_hand() -> None:
    """oracle: numpy's split worked by hand. 300 terms: n2 = 150 - 150 mod 8 = 144; 144 splits
    into 72 + 72 and the other 156 into 72 + 84 (78 - 78 mod 8 = 72), each at most 128."""
    leaf, add = pairwise.LEAF, pairwise.ADD
    assert pairwise.plan(300).tolist() == [
        [leaf, 0, 72], [leaf, 72, 72], [add, 0, 0],
        [leaf, 144, 72], [leaf, 216, 84], [add, 0, 0],
        [add, 0, 0],
    ]  # fmt: skip
    assert pairwise.plan(128).tolist() == [[leaf, 0, 128]]
    assert pairwise.plan(0).tolist() == [[leaf, 0, 0]]


def test_signed_zeros_and_infinities_come_out_as_numpys() -> None:
    """oracle: ``np.sum(X * v, axis=1)`` worked by hand. A zero row against a negative v has
    only -0.0 products, summed to -0.0 and added to numpy's identity 0.0: +0.0, for 3 terms
    (one running sum from -0.0) and 48 (eight accumulators); an infinite product stays
    infinite and inf - inf is NaN."""
    for k in (3, 48):
        X = np.zeros((4, k))
        X[1, 0] = np.inf
        X[2, :2] = (np.inf, -np.inf)
        X[3, 0] = -1.0
        v = -np.ones(k)
        got = row_dots(X, v, backend="numba")
        with np.errstate(invalid="ignore"):
            want = np.sum(X * v, axis=1)
        assert got.tobytes() == want.tobytes(), k
        assert not np.signbit(got[0]) and got[0] == 0.0
        assert got[1] == -np.inf and np.isnan(got[2]) and got[3] == 1.0


def test_the_handbooks_lsa_rows_score_alike_on_both_backends(handbook_lab: Lab) -> None:
    """oracle: the numpy backend, bit for bit. The handbook's chunks' unit fold-ins (226 x 48)
    against each chunk's own row and each of its 80 questions' unit fold-ins, and its terms'
    unit rows of U S against every 50th term."""
    cs = handbook_lab.indexes.chunk_set()
    unit = cs.lsa_unit_projections
    model = handbook_lab.indexes.lsa
    questions = [handbook_lab.indexes.tokens(q.question) for q in handbook_lab.questions]
    queries = unit_rows(model.project(questions))
    assert unit.shape[1] == 48 and queries.shape[0] >= 80
    for v in (*unit, *queries):
        assert row_dots(unit, v, backend="numba").tobytes() == np.sum(unit * v, 1).tobytes()
    terms = unit_rows(model.U * model.s[None, :])
    for v in terms[::50]:
        got = row_dots(terms, v, backend="numba")
        assert got.tobytes() == row_dots(terms, v, backend="numpy").tobytes()


@pytest.mark.parametrize("threads", [1, 2, 3, "auto"])
def test_rows_spread_over_threads_keep_their_bits(threads: int | str) -> None:
    """oracle: the numpy backend. 50,000 rows of 48 (three runs of at least 16,384 rows where
    threads allow) give numpy's bits on any number of threads."""
    X, v = _rows(50_000, 48, seed=5)
    want = row_dots(X, v, backend="numpy")
    assert row_dots(X, v, backend="numba", threads=threads).tobytes() == want.tobytes()


def test_a_layout_numpy_sums_otherwise_stays_with_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    """oracle: the numpy path on the same array. numpy sums a Fortran-ordered block's rows in
    another order (the rows are then the inner loop: one running sum per row), so the default
    backend leaves such an X to numpy and keeps its bits; asked for numba, the rows are summed
    as a C-ordered copy's."""
    X, v = _spread(500, 48, seed=3)
    F = np.asfortranarray(X)
    by_numpy = row_dots(F, v, backend="numpy")
    assert by_numpy.tobytes() != np.sum(X * v, axis=1).tobytes()
    assert row_dots(F, v).tobytes() == by_numpy.tobytes()
    assert row_dots(F, v, backend="numba").tobytes() == np.sum(X * v, axis=1).tobytes()


def test_row_dots_rejects_an_unknown_backend_and_numba_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    X, v = _rows(3, 4, seed=1)
    with pytest.raises(ValueError, match="backend must be one of"):
        row_dots(X, v, backend="blas")
    with pytest.raises(ValueError, match="threads must be"):
        row_dots(X, v, threads=0)
    monkeypatch.setattr(pairwise, "available", lambda: False)
    with pytest.raises(ValueError, match="needs numba installed"):
        row_dots(X, v, backend="numba")
    assert row_dots(X, v).tobytes() == row_dots(X, v, backend="numpy").tobytes()
    assert lsa._DOT_PART_ROWS * 3 < 50_000  # the threads test has three runs to share
