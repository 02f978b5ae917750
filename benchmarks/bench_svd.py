"""Randomised SVD: raglab.embedding.lsa.randomized_svd against scikit-learn's, on the same TF-IDF matrices.

All sides get the same matrix (scipy CSR, float64), rank k = 48, oversampling p = 26 and three
power iterations (ours: the defaults of raglab._config, seed 0, LU between the passes and a QR at
the end; scikit-learn: ``n_oversamples=26, n_iter=3, random_state=0`` with its default
``power_iteration_normalizer="auto"``, which is LU at three iterations, the target; and with
``"QR"``, for reference). The sides draw different Gaussian test matrices, so their estimates
differ by the algorithm's randomness; the check is that each reaches the exact singular values
within the accuracy randomised subspace iteration promises, and the table gives each side's
error. The sides are timed round by round (one call of each per round, the order rotating), so
that a slow spell of a shared machine falls on all of them.

Matrices:

- the handbook's term x window TF-IDF matrix (``Lab.load().indexes.lsa_windows`` through
  ``raglab.embedding.lsa.term_window_matrix``), whose exact SVD numpy computes in milliseconds;
- two generated term x document TF-IDF matrices, 20,000 x 20,000 of density about 1e-3 and
  200,000 x 50,000 of density about 1e-4 (``--quick``: 5,000 x 5,000 and 20,000 x 5,000): that
  many (term, document) draws, terms from a Zipf distribution over the rows, documents uniform,
  summed into counts and weighted by idf = ln(N / df) (``raglab.embedding.vectors.idf_weights``). Their
  reference singular values come from ARPACK (``scipy.sparse.linalg.svds``, k = 48), which is
  timed too for scale.
"""

from __future__ import annotations

import gc
import statistics
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp  # type: ignore[import-untyped]
from common import (
    Config,
    Disagreement,
    FloatArray,
    Row,
    Section,
    mb,
    spread,
    timed,
    traced_peak,
)

from raglab.embedding.lsa import term_window_matrix
from raglab.embedding.svd import randomized_svd
from raglab.embedding.vectors import idf_weights
from raglab.settings import LSA_OVERSAMPLE, LSA_POWER_ITERATIONS, LSA_RANK, SEED

MATRIX_SEED = 7
ZIPF_EXPONENT = 1.0
# The square shape (rows, columns, density); --quick shrinks it. The tall one is Config's.
SQUARE = (20_000, 20_000, 1e-3)
SQUARE_QUICK = (5_000, 5_000, 1e-3)
# The accuracy every side must reach against the exact values before anything is timed: the
# leading half of the values within LEADING_RTOL, all k within ALL_RTOL (relative). Randomised
# subspace iteration with q = 3 and p = 26 stays well inside these on every matrix here.
LEADING_RTOL = 0.05
ALL_RTOL = 0.15
OURS = "ours"
SK_DEFAULT = "scikit-learn (default: LU)"
SK_QR = "scikit-learn (QR)"


def _handbook_matrix() -> Any:
    from raglab.pipeline.lab import Lab

    matrix, _, _ = term_window_matrix(Lab.load().indexes.lsa_windows)
    return sp.csr_matrix(matrix)  # every side gets CSR, as for the generated matrices


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


def _sklearn(matrix: Any, normalizer: str) -> Callable[[], FloatArray]:
    from sklearn.utils.extmath import randomized_svd as sk_randomized_svd

    def call() -> FloatArray:
        _, s, _ = sk_randomized_svd(
            matrix,
            LSA_RANK,
            n_oversamples=LSA_OVERSAMPLE,
            n_iter=LSA_POWER_ITERATIONS,
            power_iteration_normalizer=normalizer,
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


def _rounds(sides: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """Seconds of ``repeats`` calls of every side, one call of each per round; the order rotates
    from round to round, and the garbage collector runs between calls, not in them."""
    names = list(sides)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            gc.collect()
            gc.disable()
            try:
                _, seconds = timed(sides[name])
            finally:
                gc.enable()
            samples[name].append(seconds)
    return samples


def _case(
    name: str,
    matrix: Any,
    exact: FloatArray,
    exact_label: str,
    repeats: int,
    section: Section,
) -> None:
    sides: dict[str, Callable[[], FloatArray]] = {
        OURS: _ours(matrix),
        SK_DEFAULT: _sklearn(matrix, "auto"),
        SK_QR: _sklearn(matrix, "QR"),
    }
    errors = {}
    for side, call in sides.items():  # untimed: checked first
        s = call()
        _check(f"{side} on {name}", s, exact)
        errors[side] = _errors(s, exact)
    samples = _rounds(dict(sides), repeats)
    ours = samples[OURS]
    for peer, target in ((SK_DEFAULT, True), (SK_QR, False)):
        theirs = samples[peer]
        paired = statistics.median(a / b for a, b in zip(ours, theirs, strict=True))
        check = (
            f"largest relative error vs {exact_label} (leading half / all {LSA_RANK}): ours "
            f"{errors[OURS][0]:.1e} / {errors[OURS][1]:.1e}, peer {errors[peer][0]:.1e} / "
            f"{errors[peer][1]:.1e}; median of the {repeats} rounds' ratios {paired:.2f}"
        )
        section.rows.append(
            Row(
                name,
                f"time, k = {LSA_RANK} (median of {repeats} rounds)",
                "s",
                statistics.median(ours),
                peer,
                statistics.median(theirs),
                check,
                target=target,
                ours_range=spread(ours),
                peer_range=spread(theirs),
            )
        )
    _, ours_peak, _ = traced_peak(sides[OURS])
    _, theirs_peak, _ = traced_peak(sides[SK_DEFAULT])
    section.rows.append(
        Row(name, "peak memory", "MB", mb(ours_peak), SK_DEFAULT, mb(theirs_peak)),
    )


def _generated_case(rows: int, cols: int, density: float, repeats: int, section: Section) -> None:
    from scipy.sparse.linalg import svds  # type: ignore[import-untyped]

    matrix = _generated_matrix(rows, cols, density)
    reference, t_ref = timed(
        lambda: np.sort(svds(matrix, k=LSA_RANK, return_singular_vectors=False, random_state=SEED))[
            ::-1
        ]
    )
    filled = matrix.nnz / (matrix.shape[0] * matrix.shape[1])
    name = f"generated {matrix.shape[0]:,} x {matrix.shape[1]:,} (density {filled:.2g})"
    _case(name, matrix, reference, "ARPACK", repeats, section)
    section.rows.append(
        Row(name, "reference: scipy svds (ARPACK), one call", "s", None, "ARPACK", t_ref)
    )


def run(cfg: Config) -> Section:
    section = Section(
        "svd",
        "2. Randomised SVD: raglab.embedding.lsa.randomized_svd against scikit-learn",
        "Rank 48, oversampling 26, three power iterations, on the same TF-IDF matrix. Ours "
        "normalises by LU between the passes and by a Householder QR at the end; the target is "
        'scikit-learn\'s default (`power_iteration_normalizer="auto"`, LU at three '
        "iterations), and scikit-learn with QR at every pass is shown for reference. Every side "
        "must reproduce the exact singular values (within "
        f"{LEADING_RTOL:.0%} on the leading half and {ALL_RTOL:.0%} on all 48) before it "
        "is timed; each side's largest error is in the Agreement column. The sides are timed "
        "round by round, one call of each per round.",
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
    rows, cols, density = SQUARE_QUICK if cfg.quick else SQUARE
    _generated_case(rows, cols, density, cfg.slow_repeats + 2, section)
    _generated_case(cfg.svd_rows, cfg.svd_cols, cfg.svd_density, cfg.slow_repeats, section)
    section.notes += [
        "All sides call the same BLAS builds (numpy's and scipy's OpenBLAS) with the thread "
        "count given in the header.",
        "The generated matrices: rows x columns x density (term, document) draws, term ranks "
        f"Zipf (s = {ZIPF_EXPONENT}) over the rows, documents uniform over the columns, seed "
        f"{MATRIX_SEED}; counts weighted by idf = ln(N / df).",
        "Ratios: the median of our times over the median of the peer's; the Agreement column "
        "also gives the median of the per-round ratios, which a slow spell of the machine "
        "moves less.",
    ]
    return section
