"""Randomised SVD: raglab.lsa.randomized_svd against scikit-learn's, on the same TF-IDF matrices.

Both sides get the same matrix (scipy CSR, float64), rank k = 48, oversampling p = 26 and three
power iterations re-orthonormalised by QR (sklearn: ``n_oversamples=26, n_iter=3,
power_iteration_normalizer="QR"``, ``random_state=0``; ours: the defaults of raglab._config,
seed 0). The two draw different Gaussian test matrices, so their estimates differ by the
algorithm's randomness; the check is that both reach the exact singular values within the
accuracy randomised subspace iteration promises, and the table gives each side's error.

Matrices:

- the handbook's term x window TF-IDF matrix (``Lab.load().lsa_windows`` through
  ``raglab.lsa.term_window_matrix``), whose exact SVD numpy computes in milliseconds;
- a generated 200,000 x 50,000 term x document TF-IDF matrix of density about 1e-4: one million
  (term, document) draws, terms from a Zipf distribution over the rows, documents uniform, summed
  into counts and weighted by idf = ln(N / df) (``raglab.vectors.idf_weights``). Its reference
  singular values come from ARPACK (``scipy.sparse.linalg.svds``, k = 48, converged to machine
  precision), which is timed too for scale.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from common import (
    Config,
    Disagreement,
    FloatArray,
    Row,
    Section,
    mb,
    spread,
    time_repeats,
    timed,
    traced_peak,
)

from raglab._config import LSA_OVERSAMPLE, LSA_POWER_ITERATIONS, LSA_RANK, SEED
from raglab.lsa import randomized_svd, term_window_matrix
from raglab.vectors import idf_weights

MATRIX_SEED = 7
ZIPF_EXPONENT = 1.0
# The accuracy both sides must reach against the exact values before anything is timed: the
# leading half of the values within LEADING_RTOL, all k within ALL_RTOL (relative). Randomised
# subspace iteration with q = 3 and p = 26 stays well inside these on both matrices.
LEADING_RTOL = 0.05
ALL_RTOL = 0.15


def _handbook_matrix() -> Any:
    from raglab.pipeline.lab import Lab

    matrix, _, _ = term_window_matrix(Lab.load().lsa_windows)
    return matrix


def _generated_matrix(rows: int, cols: int, density: float) -> Any:
    rng = np.random.default_rng(MATRIX_SEED)
    draws = round(rows * cols * density)
    p = 1.0 / np.arange(1, rows + 1, dtype=np.float64) ** ZIPF_EXPONENT
    p /= p.sum()
    term = rng.choice(rows, size=draws, p=p)
    doc = rng.integers(cols, size=draws)
    counts = sp.csr_matrix(
        (np.ones(draws), (term, doc)), shape=(rows, cols), dtype=np.float64
    )  # duplicates summed: term frequencies
    counts.sum_duplicates()
    df = np.diff(counts.indptr)
    counts.data *= np.repeat(idf_weights(df, cols), df)
    counts.eliminate_zeros()
    return counts


def _ours(matrix: Any) -> Callable[[], FloatArray]:
    def call() -> FloatArray:
        _, s, _ = randomized_svd(
            matrix,
            rank=LSA_RANK,
            oversample=LSA_OVERSAMPLE,
            power_iterations=LSA_POWER_ITERATIONS,
            seed=SEED,
        )
        return s

    return call


def _sklearn(matrix: Any) -> Callable[[], FloatArray]:
    from sklearn.utils.extmath import randomized_svd as sk_randomized_svd

    def call() -> FloatArray:
        _, s, _ = sk_randomized_svd(
            matrix,
            LSA_RANK,
            n_oversamples=LSA_OVERSAMPLE,
            n_iter=LSA_POWER_ITERATIONS,
            power_iteration_normalizer="QR",
            random_state=SEED,
        )
        return np.asarray(s, dtype=np.float64)

    return call


def _errors(s: FloatArray, exact: FloatArray) -> tuple[float, float]:
    """Largest relative error over the leading half and over all k values."""
    rel = np.abs(s - exact) / exact
    half = max(1, exact.size // 2)
    return float(rel[:half].max()), float(rel.max())


def _check(what: str, s: FloatArray, exact: FloatArray) -> None:
    leading, every = _errors(s, exact)
    if s.shape != exact.shape or leading > LEADING_RTOL or every > ALL_RTOL:
        raise Disagreement(
            f"{what}: singular values off the exact ones by {leading:.2%} (leading half) and "
            f"{every:.2%} (all {exact.size}); expected within {LEADING_RTOL:.0%} and {ALL_RTOL:.0%}"
        )


def _case(
    name: str,
    matrix: Any,
    exact: FloatArray,
    exact_label: str,
    repeats: int,
    section: Section,
) -> None:
    ours, theirs = _ours(matrix), _sklearn(matrix)
    s_ours, s_theirs = ours(), theirs()  # untimed: checked first
    _check(f"ours on {name}", s_ours, exact)
    _check(f"scikit-learn on {name}", s_theirs, exact)
    t_ours = time_repeats(ours, repeats=repeats)
    t_theirs = time_repeats(theirs, repeats=repeats)
    o_lead, o_all = _errors(s_ours, exact)
    t_lead, t_all = _errors(s_theirs, exact)
    agreement = (
        f"largest relative error vs {exact_label} (leading half / all {LSA_RANK}): ours "
        f"{o_lead:.1e} / {o_all:.1e}, sklearn {t_lead:.1e} / {t_all:.1e}"
    )
    _, ours_peak, _ = traced_peak(ours)
    _, theirs_peak, _ = traced_peak(theirs)
    section.rows += [
        Row(
            name,
            f"time, k = {LSA_RANK} (median of {repeats})",
            "s",
            t_ours.median,
            "scikit-learn",
            t_theirs.median,
            agreement,
            target=True,
            ours_range=spread(t_ours.samples),
            peer_range=spread(t_theirs.samples),
        ),
        Row(name, "peak memory", "MB", mb(ours_peak), "scikit-learn", mb(theirs_peak)),
    ]


def run(cfg: Config) -> Section:
    from scipy.sparse.linalg import svds

    section = Section(
        "svd",
        "2. Randomised SVD: raglab.lsa.randomized_svd against scikit-learn",
        "Rank 48, oversampling 26, three power iterations with QR re-orthonormalisation, on the "
        "same TF-IDF matrix. Both sides must reproduce the exact singular values (within "
        f"{LEADING_RTOL:.0%} on the leading half and {ALL_RTOL:.0%} on all 48) before they "
        "are timed; each side's largest error is in the Agreement column.",
    )
    handbook = _handbook_matrix()
    exact = np.linalg.svd(handbook.toarray(), compute_uv=False)[:LSA_RANK]
    _case(
        f"handbook {handbook.shape[0]:,} x {handbook.shape[1]:,} ({handbook.nnz:,} non-zeros)",
        handbook,
        exact,
        "exact (numpy.linalg.svd)",
        cfg.repeats,
        section,
    )
    big = _generated_matrix(cfg.svd_rows, cfg.svd_cols, cfg.svd_density)
    density = big.nnz / (big.shape[0] * big.shape[1])
    reference, t_ref = timed(
        lambda: np.sort(svds(big, k=LSA_RANK, return_singular_vectors=False, random_state=SEED))[
            ::-1
        ]
    )
    name = f"generated {big.shape[0]:,} x {big.shape[1]:,} (density {density:.2g})"
    _case(name, big, reference, "ARPACK", cfg.slow_repeats, section)
    section.rows.append(
        Row(name, "reference: scipy svds (ARPACK), one call", "s", None, "ARPACK", t_ref)
    )
    section.notes += [
        "Both sides call the same BLAS builds (numpy's and scipy's OpenBLAS) with the thread "
        "count given in the header.",
        "The generated matrix: one million (term, document) draws, term ranks Zipf "
        f"(s = {ZIPF_EXPONENT}) over the rows, documents uniform over the columns, seed "
        f"{MATRIX_SEED}; counts weighted by idf = ln(N / df).",
    ]
    return section
