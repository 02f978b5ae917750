"""Tests for raglab.embedding.lsa: windows, randomised SVD and the fitted LSA space."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

import raglab.embedding.lsa as lsa_module
from raglab.embedding.lsa import LSAModel, even_windows, fit_lsa, term_window_matrix, unit_rows
from raglab.embedding.sketch import seeded_matrix
from raglab.embedding.svd import _lu_basis, randomized_svd
from raglab.embedding.vectors import tfidf_matrix
from raglab.settings import LSA_OVERSAMPLE, LSA_POWER_ITERATIONS, LSA_RANK, LSA_WINDOWS, SEED
from raglab.text.tokens import tokenize

# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def cranfield_windows(cranfield_abstract_words: list[str]) -> list[list[str]]:
    """The Cranfield abstracts as 100 evenly spaced windows of 256 words, tokenised."""
    return [
        tokenize(" ".join(w), stem=False, analyzer="raglab")
        for w in even_windows(cranfield_abstract_words, count=LSA_WINDOWS, size=256)
    ]


@pytest.fixture(scope="module")
def cranfield_matrix(cranfield_windows: list[list[str]]) -> sp.csc_matrix:
    """A = TF-IDF term x window matrix of the Cranfield windows (about 3,000 x 100, sparse CSC)."""
    A, _, _ = term_window_matrix(cranfield_windows)
    return A


@pytest.fixture(scope="module")
def cranfield_model(cranfield_windows: list[list[str]]) -> LSAModel:
    return fit_lsa(cranfield_windows, rank=LSA_RANK, seed=SEED, oversample=26)


@pytest.fixture(scope="module")
def low_rank_matrix() -> np.ndarray:
    """400 x 150: rank-50 signal (singular values 100 down to 10, geometric) plus N(0, 0.1^2)
    noise, whose own singular values stay below about 0.1 (sqrt 400 + sqrt 150) = 3.2."""
    rng = np.random.default_rng(42)
    left = np.linalg.qr(rng.standard_normal((400, 50)))[0]
    right = np.linalg.qr(rng.standard_normal((150, 50)))[0]
    signal = left @ np.diag(np.geomspace(100, 10, 50)) @ right.T
    noise: np.ndarray = 0.1 * rng.standard_normal((400, 150))
    return signal + noise


def relative_error(estimate: np.ndarray, exact: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.abs(estimate - exact) / exact
    return out


# ---------------------------------------------------------------- even_windows


def test_even_windows_hand_example() -> None:
    """oracle: hand-worked; N = 10, size 4, count 3: starts linspace(0, 6, 3) = 0, 3, 6."""
    items = list(range(10))
    assert even_windows(items, count=3, size=4) == [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]]


def test_even_windows_round_half_to_even() -> None:
    """oracle: hand-worked; N = 11, size 4, count 3: linspace(0, 7, 3) = 0, 3.5, 7 and 3.5
    rounds to 4 (half to even)."""
    windows = even_windows(list(range(11)), count=3, size=4)
    assert [w[0] for w in windows] == [0, 4, 7]


def test_even_windows_short_input_is_one_window() -> None:
    """oracle: the definition; N <= size gives the whole sequence once."""
    assert even_windows(list("abc"), count=5, size=3) == [list("abc")]
    assert even_windows([], count=5, size=3) == [[]]


@given(
    n=st.integers(min_value=1, max_value=400),
    count=st.integers(min_value=1, max_value=30),
    size=st.integers(min_value=1, max_value=60),
)
def test_even_windows_properties(n: int, count: int, size: int) -> None:
    """oracle: the definition; count windows of size items, contiguous slices, first at 0 and
    (for count > 1) last ending at N, starts non-decreasing and evenly spaced to within 1."""
    items = list(range(n))
    windows = even_windows(items, count=count, size=size)
    if n <= size:
        assert windows == [items]
        return
    assert len(windows) == count
    starts = [w[0] for w in windows]
    for w in windows:
        assert w == list(range(w[0], w[0] + size))
    assert starts[0] == 0
    if count > 1:
        assert windows[-1][-1] == n - 1
        gaps = np.diff(starts)
        step = (n - size) / (count - 1)
        assert np.all(gaps >= 0) and np.all(np.abs(gaps - step) <= 1)


def test_even_windows_rejects_bad_sizes() -> None:
    """oracle: the contract."""
    with pytest.raises(ValueError, match="count"):
        even_windows([1, 2, 3], count=0, size=256)
    with pytest.raises(ValueError, match="size"):
        even_windows([1, 2, 3], size=0, count=LSA_WINDOWS)


# ---------------------------------------------------------------- randomized_svd accuracy


def test_cranfield_windows_shape(cranfield_matrix: sp.csc_matrix) -> None:
    """oracle: the collection; 100 windows, a few thousand terms, sparse."""
    assert cranfield_matrix.shape[1] == LSA_WINDOWS
    assert 2000 < cranfield_matrix.shape[0] < 5000
    assert cranfield_matrix.nnz < 0.1 * cranfield_matrix.shape[0] * LSA_WINDOWS


def test_singular_values_match_exact_svd_on_cranfield(cranfield_matrix: sp.csc_matrix) -> None:
    """oracle: numpy's exact SVD of the dense matrix.

    This spectrum is flat (s_48 / s_75 is about 1.16), the hard case for subspace iteration. With
    eight power passes all 48 values are within 0.5%. With the defaults (l = 74, three passes)
    the leading 24 are within 0.5% and all 48 within 2.5% (about 1.1% at seed 0). Rayleigh-Ritz
    estimates never exceed the exact values.
    """
    exact = np.linalg.svd(cranfield_matrix.toarray(), compute_uv=False)[:LSA_RANK]
    _, s8, _ = randomized_svd(
        cranfield_matrix, rank=LSA_RANK, power_iterations=8, oversample=LSA_OVERSAMPLE, seed=SEED
    )
    assert relative_error(s8, exact).max() < 0.005
    _, s, _ = randomized_svd(
        cranfield_matrix,
        rank=LSA_RANK,
        oversample=LSA_OVERSAMPLE,
        power_iterations=LSA_POWER_ITERATIONS,
        seed=SEED,
    )
    assert relative_error(s, exact)[:24].max() < 0.005
    assert relative_error(s, exact).max() < 0.025
    assert np.all(s <= exact * (1 + 1e-12)) and np.all(s8 <= exact * (1 + 1e-12))
    assert np.all(np.diff(s) <= 0)


def test_singular_values_match_exact_svd_on_low_rank_plus_noise(
    low_rank_matrix: np.ndarray,
) -> None:
    """oracle: numpy's exact SVD; with a clear spectral gap after the 50th value the defaults
    give all 48 leading values to far better than 0.5%, and the vectors span the same
    subspaces."""
    U_exact, exact, Vt_exact = np.linalg.svd(low_rank_matrix, full_matrices=False)
    U, s, Vt = randomized_svd(
        low_rank_matrix,
        rank=LSA_RANK,
        oversample=LSA_OVERSAMPLE,
        power_iterations=LSA_POWER_ITERATIONS,
        seed=SEED,
    )
    assert U.shape == (400, LSA_RANK) and s.shape == (LSA_RANK,) and Vt.shape == (LSA_RANK, 150)
    assert relative_error(s, exact[:LSA_RANK]).max() < 0.005
    # Distinct singular values: each column matches the exact one up to sign.
    np.testing.assert_allclose(np.abs(np.sum(U * U_exact[:, :LSA_RANK], axis=0)), 1, atol=1e-6)
    np.testing.assert_allclose(np.abs(np.sum(Vt * Vt_exact[:LSA_RANK], axis=1)), 1, atol=1e-6)


def test_full_width_sketch_is_the_exact_svd() -> None:
    """oracle: numpy's exact SVD; when l reaches min(A.shape) the sketch spans the whole range,
    so the result is exact (to rounding) and U diag(s) Vt rebuilds A."""
    A = np.random.default_rng(3).standard_normal((30, 12))
    U, s, Vt = randomized_svd(A, rank=12, oversample=5, power_iterations=0, seed=SEED)
    np.testing.assert_allclose(s, np.linalg.svd(A, compute_uv=False), rtol=1e-10)
    np.testing.assert_allclose(U @ np.diag(s) @ Vt, A, atol=1e-10)


def test_dense_and_sparse_input_agree(low_rank_matrix: np.ndarray) -> None:
    """oracle: the same computation on the dense array (only summation order differs)."""
    A = low_rank_matrix.copy()
    A[np.abs(A) < 0.05] = 0.0
    U1, s1, Vt1 = randomized_svd(
        A, rank=20, oversample=LSA_OVERSAMPLE, power_iterations=LSA_POWER_ITERATIONS, seed=SEED
    )
    U2, s2, Vt2 = randomized_svd(
        sp.csr_matrix(A),
        rank=20,
        oversample=LSA_OVERSAMPLE,
        power_iterations=LSA_POWER_ITERATIONS,
        seed=SEED,
    )
    np.testing.assert_allclose(s2, s1, rtol=1e-10)
    np.testing.assert_allclose(U2, U1, atol=1e-8)
    np.testing.assert_allclose(Vt2, Vt1, atol=1e-8)


def _subspace_iteration_with_qr(
    A: np.ndarray | sp.spmatrix, rank: int, oversample: int, passes: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Halko, Martinsson and Tropp (2011) Algorithm 4.4 as printed there: a Householder QR
    (numpy.linalg.qr) after every product, then the Rayleigh-Ritz step and sign convention that
    randomized_svd documents, from the same seeded start (raglab.embedding.sketch)."""
    width = min(rank + oversample, *A.shape)
    omega = seeded_matrix(A.shape[1], width, seed)
    Q = np.linalg.qr(np.asarray(A @ omega))[0]
    for _ in range(passes):
        Q = np.linalg.qr(np.asarray(A.T @ Q))[0]
        Q = np.linalg.qr(np.asarray(A @ Q))[0]
    B = np.asarray(A.T @ Q).T
    eigenvalues, W = np.linalg.eigh(B @ B.T)
    order = np.argsort(eigenvalues)[::-1][:rank]
    s = np.sqrt(eigenvalues[order])
    U = Q @ W[:, order]
    Vt = (W[:, order].T @ B) / s[:, None]
    signs = np.where(U[np.argmax(np.abs(U), axis=0), np.arange(rank)] < 0, -1.0, 1.0)
    return U * signs, s, Vt * signs[:, None]


@pytest.mark.parametrize("passes", [1, 3, 8])
def test_lu_between_passes_gives_the_factors_of_qr_at_every_pass(
    cranfield_matrix: sp.csc_matrix, low_rank_matrix: np.ndarray, passes: int
) -> None:
    """oracle: subspace iteration with a QR after every product (written out above). P L from
    X = P L U spans what X spans, so in exact arithmetic the two iterations carry the same
    subspace and only rounding separates them: the singular values agree to 1e-12 relative, the
    vectors to 1e-8 (each column up to the documented sign), on Cranfield's flat spectrum and on
    a spectrum with a gap."""
    for A in (cranfield_matrix, low_rank_matrix):
        U, s, Vt = randomized_svd(
            A, rank=LSA_RANK, power_iterations=passes, oversample=LSA_OVERSAMPLE, seed=SEED
        )
        U_ref, s_ref, Vt_ref = _subspace_iteration_with_qr(A, LSA_RANK, 26, passes, seed=0)
        np.testing.assert_allclose(s, s_ref, rtol=1e-12)
        np.testing.assert_allclose(U, U_ref, atol=1e-8)
        np.testing.assert_allclose(Vt, Vt_ref, atol=1e-8)


def test_lu_basis_is_p_times_l_and_spans_the_columns() -> None:
    """oracle: scipy.linalg.lu(permute_l=True), the same LU by scipy's own route (bit for bit),
    and the projector Q Q^T onto the columns from numpy.linalg.qr. The columns here are scaled
    from 1 down to 1e-6 (condition number about 1e6), yet P L has entries of magnitude at most 1
    and condition number below 100, which is what makes it a normaliser."""
    rng = np.random.default_rng(5)
    Y = rng.standard_normal((300, 20)) @ np.diag(np.geomspace(1.0, 1e-6, 20))
    basis = _lu_basis(Y.copy())
    reference, _ = scipy.linalg.lu(Y, permute_l=True)
    np.testing.assert_array_equal(basis, reference)
    assert np.abs(basis).max() <= 1.0 and np.linalg.cond(basis) < 100 < 1e5 < np.linalg.cond(Y)
    Q = np.linalg.qr(Y)[0]
    np.testing.assert_allclose(Q @ (Q.T @ basis), basis, atol=1e-12)


def test_lu_basis_of_a_rank_deficient_sketch_still_spans_it() -> None:
    """oracle: hand-worked; a zero column leaves dgetrf no pivot (info > 0), and the column of L
    stays a unit vector: the basis is finite, of full rank, and still holds Y's columns."""
    Y = np.zeros((6, 3))
    Y[:, 0] = np.arange(1.0, 7.0)
    Y[:, 2] = 1.0
    basis = _lu_basis(Y.copy())
    assert np.all(np.isfinite(basis)) and np.linalg.matrix_rank(basis) == 3
    coefficients = np.linalg.lstsq(basis, Y, rcond=None)[0]
    np.testing.assert_allclose(basis @ coefficients, Y, atol=1e-12)


def test_csc_and_csr_input_give_bitwise_the_same_factors(cranfield_matrix: sp.csc_matrix) -> None:
    """oracle: the same matrix in the other sparse format. A product with a CSR matrix or with
    the CSC view of its transpose adds each output entry's terms in the same order, so the
    transposed view the solver multiplies by changes no bit."""
    assert cranfield_matrix.format == "csc"
    csc = randomized_svd(
        cranfield_matrix,
        rank=LSA_RANK,
        oversample=LSA_OVERSAMPLE,
        power_iterations=LSA_POWER_ITERATIONS,
        seed=SEED,
    )
    csr = randomized_svd(
        cranfield_matrix.tocsr(),
        rank=LSA_RANK,
        oversample=LSA_OVERSAMPLE,
        power_iterations=LSA_POWER_ITERATIONS,
        seed=SEED,
    )
    for a, b in zip(csc, csr, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_randomized_svd_holds_no_copy_of_a_sparse_matrix(fmt: str) -> None:
    """oracle: the matrix's own bytes (data, indices and pointers). With a sketch of 10 columns the
    solver's dense arrays are small, so its traced peak stays under a quarter of one copy of A;
    a copy of A or of its transpose (12 bytes a non-zero) would exceed it."""
    A = sp.random(3000, 3000, density=0.05, format=fmt, random_state=0, dtype=np.float64)
    size = A.data.nbytes + A.indices.nbytes + A.indptr.nbytes
    tracemalloc.start()
    try:
        randomized_svd(A, rank=5, oversample=5, power_iterations=LSA_POWER_ITERATIONS, seed=SEED)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert size > 5_000_000 and peak < 0.25 * size


def test_term_window_matrix_is_the_transposed_tfidf(cranfield_windows: list[list[str]]) -> None:
    """oracle: raglab.embedding.vectors.tfidf_matrix of the same windows (window x term), transposed; the
    term x window matrix is that matrix's CSC view, sharing its arrays, not a copy."""
    A, vocabulary, idf = term_window_matrix(cranfield_windows)
    weighted, idf_direct = tfidf_matrix(cranfield_windows, vocabulary=vocabulary)
    assert A.shape == (len(vocabulary), len(cranfield_windows)) and A.format == "csc"
    np.testing.assert_array_equal(A.toarray(), weighted.toarray().T)
    np.testing.assert_array_equal(idf, idf_direct)


# ---------------------------------------------------------------- randomized_svd structure


def test_same_seed_is_bitwise_identical(cranfield_windows: list[list[str]]) -> None:
    """oracle: determinism; two fits with the same seed are equal bit for bit."""
    a = fit_lsa(cranfield_windows, seed=7, rank=LSA_RANK, oversample=26)
    b = fit_lsa(cranfield_windows, seed=7, rank=LSA_RANK, oversample=26)
    assert np.array_equal(a.U, b.U) and np.array_equal(a.s, b.s) and np.array_equal(a.Vt, b.Vt)
    assert a.frobenius_sq == b.frobenius_sq


def test_different_seeds_agree_on_singular_values(
    cranfield_matrix: sp.csc_matrix, low_rank_matrix: np.ndarray
) -> None:
    """oracle: seed invariance; the sketch changes, the spectrum it finds does not (to 1e-9
    with a spectral gap, to 3% on Cranfield's flat spectrum at the defaults)."""
    _, s0, _ = randomized_svd(
        low_rank_matrix,
        rank=LSA_RANK,
        seed=0,
        oversample=LSA_OVERSAMPLE,
        power_iterations=LSA_POWER_ITERATIONS,
    )
    _, s1, _ = randomized_svd(
        low_rank_matrix,
        rank=LSA_RANK,
        seed=1,
        oversample=LSA_OVERSAMPLE,
        power_iterations=LSA_POWER_ITERATIONS,
    )
    np.testing.assert_allclose(s1, s0, rtol=1e-9)
    _, c0, _ = randomized_svd(
        cranfield_matrix,
        rank=LSA_RANK,
        seed=0,
        oversample=LSA_OVERSAMPLE,
        power_iterations=LSA_POWER_ITERATIONS,
    )
    _, c1, _ = randomized_svd(
        cranfield_matrix,
        rank=LSA_RANK,
        seed=1,
        oversample=LSA_OVERSAMPLE,
        power_iterations=LSA_POWER_ITERATIONS,
    )
    assert not np.array_equal(c0, c1)
    np.testing.assert_allclose(c1, c0, rtol=0.03)
    np.testing.assert_allclose(c1[:16], c0[:16], rtol=0.005)


def test_singular_vectors_are_orthonormal(cranfield_model: LSAModel) -> None:
    """oracle: the identities U^T U = I and Vt Vt^T = I (Vt = W^T B / s)."""
    k = cranfield_model.rank
    np.testing.assert_allclose(cranfield_model.U.T @ cranfield_model.U, np.eye(k), atol=1e-12)
    np.testing.assert_allclose(cranfield_model.Vt @ cranfield_model.Vt.T, np.eye(k), atol=1e-10)


def test_sign_convention(cranfield_model: LSAModel) -> None:
    """oracle: the documented convention; each column's largest-magnitude entry is positive."""
    U = cranfield_model.U
    pivots = np.argmax(np.abs(U), axis=0)
    assert np.all(U[pivots, np.arange(U.shape[1])] > 0)


def test_randomized_svd_rejects_bad_arguments() -> None:
    """oracle: the contract."""
    A = np.ones((5, 3))
    with pytest.raises(ValueError, match="exceeds"):
        randomized_svd(
            A, rank=4, oversample=LSA_OVERSAMPLE, power_iterations=LSA_POWER_ITERATIONS, seed=SEED
        )
    with pytest.raises(ValueError, match="rank"):
        randomized_svd(
            A, rank=0, oversample=LSA_OVERSAMPLE, power_iterations=LSA_POWER_ITERATIONS, seed=SEED
        )
    with pytest.raises(ValueError, match="power_iterations"):
        randomized_svd(A, rank=2, power_iterations=-1, oversample=LSA_OVERSAMPLE, seed=SEED)
    with pytest.raises(ValueError, match="2-d"):
        randomized_svd(
            np.ones(3),
            rank=1,
            oversample=LSA_OVERSAMPLE,
            power_iterations=LSA_POWER_ITERATIONS,
            seed=SEED,
        )


# ---------------------------------------------------------------- LSAModel


def test_fold_in_of_a_training_window_reproduces_s_times_vt(
    cranfield_model: LSAModel, cranfield_windows: list[list[str]]
) -> None:
    """oracle: hand identity; U_k^T a_j = U_k^T A e_j = W^T Q^T A e_j = W^T B e_j = s * Vt[:, j]
    (exact for the randomised factors too, since Vt is defined as W^T B / s)."""
    projected = cranfield_model.project(cranfield_windows)
    expected = (cranfield_model.s[:, None] * cranfield_model.Vt).T
    assert projected.shape == (LSA_WINDOWS, LSA_RANK)
    np.testing.assert_allclose(projected, expected, rtol=1e-9, atol=1e-9)


def test_variance_shares(cranfield_model: LSAModel, cranfield_matrix: sp.csc_matrix) -> None:
    """oracle: ||A||_F^2 = sum of all squared singular values, so k of them share <= 1."""
    shares = cranfield_model.variance_share
    assert cranfield_model.frobenius_sq == pytest.approx(
        float(np.sum(cranfield_matrix.toarray() ** 2)), rel=1e-12
    )
    assert np.all(shares > 0) and np.all(np.diff(shares) <= 0)
    assert 0.3 < shares.sum() <= 1.0
    np.testing.assert_array_equal(cranfield_model.singular_values, cranfield_model.s)


def test_variance_shares_of_a_full_rank_fit_sum_to_one() -> None:
    """oracle: hand identity sum_i s_i^2 = ||A||_F^2 when every dimension is kept."""
    rng = np.random.default_rng(9)
    vocab = [f"t{i}" for i in range(30)]
    windows = [list(rng.choice(vocab, size=25)) for _ in range(8)]
    model = fit_lsa(windows, rank=8, seed=SEED, oversample=26)
    assert model.variance_share.sum() == pytest.approx(1.0, rel=1e-10)


def test_search_equals_brute_force_cosine(
    cranfield_model: LSAModel,
    cranfield_doc_tokens: list[list[str]],
    cranfield_query_tokens: list[list[str]],
) -> None:
    """oracle: brute force; the cosine of U_k^T q with each document's U_k^T d, computed one
    pair at a time and sorted by (-cosine, index)."""
    docs = cranfield_doc_tokens[:300]
    projections = cranfield_model.project(docs)
    for query in cranfield_query_tokens[:10]:
        q = cranfield_model.project([query])[0]
        cosines = np.array(
            [
                float(q @ d / (np.linalg.norm(q) * np.linalg.norm(d)))
                if np.linalg.norm(d) > 0
                else 0.0
                for d in projections
            ]
        )
        rounded = np.round(cosines, 10)
        expected = sorted(range(len(docs)), key=lambda i: (-rounded[i], i))[:10]
        ranking = cranfield_model.search(query, projections, k=10)
        assert ranking.indices.tolist() == expected
        np.testing.assert_allclose(ranking.scores, cosines[expected], rtol=1e-12)


def test_blocks_hand_example() -> None:
    """oracle: hand-worked; lists of 3, 0, 5, 1 and 0 tokens in blocks of at least 4 tokens end
    after the third list (3 + 0 + 5 = 8) and at the last; no lists, no blocks."""
    lists = [["a"] * 3, [], ["b"] * 5, ["c"], []]
    assert lsa_module._blocks(lists, 4) == [3, 5]
    assert lsa_module._blocks([[], []], 4) == [2]
    assert lsa_module._blocks([], 4) == []


def test_project_in_blocks_is_bitwise_each_list_alone(
    cranfield_model: LSAModel,
    cranfield_doc_tokens: list[list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """oracle: the fold-in of each token list on its own, stacked, and tfidf_matrix's weights of
    the long list times U. Each row depends on its own list only and counts add exactly, so
    blocks of about 500 tokens (dozens of boundaries, empty lists among them, and one list of
    over 5,000 tokens counted in pieces) give the same bits as the default blocks and as one
    list at a time."""
    long = [t for d in cranfield_doc_tokens[:60] for t in d]  # over 5,000 tokens, one list
    docs = [*cranfield_doc_tokens[:150], [], ["zzzz"], long, *cranfield_doc_tokens[150:300]]
    whole = cranfield_model.project(docs)
    monkeypatch.setattr(lsa_module, "_PROJECT_BLOCK_TOKENS", 500)
    assert len(lsa_module._blocks(docs, 500)) > 20 and len(long) > 10 * 500
    blocked = cranfield_model.project(docs)
    alone = np.vstack([cranfield_model.project([d]) for d in docs])
    np.testing.assert_array_equal(blocked, alone)
    np.testing.assert_array_equal(whole, alone)
    by_hand = tfidf_matrix([long], vocabulary=cranfield_model.vocabulary, idf=cranfield_model.idf)
    np.testing.assert_array_equal(blocked[152], (by_hand.matrix @ cranfield_model.U)[0])
    assert cranfield_model.project([]).shape == (0, LSA_RANK)


def test_search_zero_vectors_score_zero(cranfield_model: LSAModel) -> None:
    """oracle: the documented convention; a query or document with no known term scores 0 and
    ties fall back to ascending index."""
    projections = cranfield_model.project([["zzzz"], ["flow", "wing"], []])
    assert not np.any(projections[0]) and not np.any(projections[2])
    ranking = cranfield_model.search(["flow"], projections, k=3)
    assert ranking.indices.tolist() == [1, 0, 2]
    assert ranking.scores[1] == 0.0 and ranking.scores[2] == 0.0 and ranking.scores[0] > 0
    unknown = cranfield_model.search(["qqqq"], projections, k=2)
    assert unknown.indices.tolist() == [0, 1] and not np.any(unknown.scores)


def test_unit_rows_hand_example() -> None:
    """oracle: hand-worked; (3, 4) has norm 5, so (0.6, 0.8); a zero row stays zero."""
    np.testing.assert_allclose(
        unit_rows(np.array([[3.0, 4.0], [0.0, 0.0]])), [[0.6, 0.8], [0.0, 0.0]], rtol=1e-15
    )


def test_search_on_normalised_rows_is_bitwise_the_same(
    cranfield_model: LSAModel,
    cranfield_doc_tokens: list[list[str]],
    cranfield_query_tokens: list[list[str]],
) -> None:
    """oracle: search on the raw projections; rows normalised once by unit_rows and passed with
    normalised=True give the same indices and the same scores bit for bit (zero rows and
    repeated rows, hence exact ties, included)."""
    raw = cranfield_model.project(cranfield_doc_tokens[:200])
    docs = np.concatenate([raw, raw[:40], np.zeros((3, raw.shape[1]))])
    unit = unit_rows(docs)
    for query in [*cranfield_query_tokens[:15], ["zzzz"]]:
        for k in (1, 10, 100, len(docs)):
            plain = cranfield_model.search(query, docs, k=k)
            fast = cranfield_model.search(query, unit, k=k, normalised=True)
            np.testing.assert_array_equal(fast.indices, plain.indices)
            np.testing.assert_array_equal(fast.scores.view(np.int64), plain.scores.view(np.int64))


def test_search_keeps_ties_at_the_cut_in_index_order(cranfield_model: LSAModel) -> None:
    """oracle: Python's sorted() of every row by (-cosine, index). Four distinct directions
    repeated 30 times each tie exactly, so every cut k falls inside a run of ties."""
    base = cranfield_model.project([["flow"], ["wing"], ["flow", "wing"], ["zzzz"]])
    docs = np.tile(base, (30, 1))
    full = cranfield_model.search(["flow", "pressure"], docs, k=len(docs))
    cosine = np.empty(len(docs))
    cosine[full.indices] = full.scores
    for k in (1, 5, 29, 30, 31, 59, 61, 90, 119):
        expected = sorted(range(len(docs)), key=lambda i: (-cosine[i], i))[:k]
        ranking = cranfield_model.search(["flow", "pressure"], docs, k=k)
        assert ranking.indices.tolist() == expected


def test_ranking_sorts_nan_last_and_minus_infinity_before_it() -> None:
    """oracle: numpy.lexsort by (-score, index), the full sort the selection replaces; NaN sorts
    after every number, as it does there."""
    rng = np.random.default_rng(4)
    for _ in range(200):
        n = int(rng.integers(1, 30))
        scores = rng.integers(-1, 2, size=n).astype(np.float64)
        scores[rng.random(n) < 0.3] = np.nan
        scores[rng.integers(0, n)] = -np.inf
        full = np.lexsort((np.arange(n), -scores))
        for k in range(0, n + 1):
            np.testing.assert_array_equal(lsa_module._ranking(scores, k).indices, full[:k])


def test_search_rejects_projections_of_the_wrong_width(cranfield_model: LSAModel) -> None:
    """oracle: the contract."""
    with pytest.raises(ValueError, match="shape"):
        cranfield_model.search(["flow"], np.ones((3, 5)), k=2)


def test_neighbours_equal_brute_force(cranfield_model: LSAModel) -> None:
    """oracle: brute force; cosine of the rows of U_k S_k, the word itself excluded, sorted by
    (-cosine to 12 decimals, vocabulary index)."""
    vocab = cranfield_model.vocabulary
    rows = cranfield_model.U * cranfield_model.s
    target = rows[vocab["supersonic"]]
    norms = np.linalg.norm(rows, axis=1)
    cosines = rows @ target / np.where(norms > 0, norms * np.linalg.norm(target), 1.0)
    keys = np.round(cosines, 12)
    order = [i for i in np.lexsort((np.arange(len(cosines)), -keys)) if i != vocab["supersonic"]]
    found = cranfield_model.neighbours("supersonic", k=5)
    assert [w for w, _ in found] == [vocab.terms[i] for i in order[:5]]
    np.testing.assert_allclose([c for _, c in found], cosines[order[:5]], rtol=1e-10)
    assert "supersonic" not in [w for w, _ in found]
    assert cranfield_model.neighbours("not-a-word") == []


def test_neighbours_of_words_that_always_occur_together() -> None:
    """oracle: hand-worked; 'alpha' and 'beta' have identical rows of A (same counts in the same
    windows), hence identical rows of U_k S_k and cosine 1."""
    windows = [
        ["alpha", "beta", "one"],
        ["alpha", "beta", "two", "two"],
        ["gamma", "three"],
        ["gamma", "delta", "four"],
        ["delta", "five", "one"],
    ]
    model = fit_lsa(windows, rank=4, seed=SEED, oversample=26)
    (word, cosine), *_ = model.neighbours("alpha", k=3)
    assert word == "beta"
    assert cosine == pytest.approx(1.0, abs=1e-12)


def test_neighbours_tied_in_exact_arithmetic_come_in_vocabulary_order() -> None:
    """oracle: hand-worked; 'delta', 'beta', 'alpha' and 'gamma' always occur together, so their
    rows of A are equal and their cosines with 'omega' equal in exact arithmetic, whatever the
    factorisation's rounding makes of the last bits: they come in sorted vocabulary order,
    before "three", which shares one of omega's windows, for every seed."""
    group = ["delta", "beta", "alpha", "gamma"]
    windows = [
        [*group, "omega", "one"],
        [*group, "omega", "two", "two"],
        ["omega", "three", "three"],
        ["one", "four"],
        ["two", "five", "five"],
        ["four", "six"],
    ]
    for seed in range(5):
        model = fit_lsa(windows, rank=6, seed=seed, oversample=26)
        found = model.neighbours("omega", k=5)
        assert [w for w, _ in found] == [*sorted(group), "three"]
        assert max(c for _, c in found[:4]) - min(c for _, c in found[:4]) < 1e-12


def test_fit_lsa_rejects_impossible_ranks() -> None:
    """oracle: the contract; rank cannot exceed min(terms, windows)."""
    with pytest.raises(ValueError, match="exceeds"):
        fit_lsa([["a", "b"], ["b", "c"]], rank=3, seed=SEED, oversample=26)
    with pytest.raises(ValueError, match="at least one window"):
        fit_lsa([], rank=LSA_RANK, seed=SEED, oversample=26)
