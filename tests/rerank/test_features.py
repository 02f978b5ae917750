"""Tests for raglab.rerank.features: features, standardisation, logistic regression and MMR."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]

from raglab.base.ranking import FloatArray
from raglab.rerank.features import DAYS_PER_YEAR, FEATURES, candidate_features, page_age_years
from raglab.rerank.logistic import (
    RERANK_INIT_SCALE,
    LogisticModel,
    Standardiser,
    fit_logistic,
    logistic_objective,
)
from raglab.rerank.mmr import mmr
from raglab.settings import (
    RERANK_FEATURES,
    RERANK_ITERATIONS,
    RERANK_L2,
    RERANK_LEARNING_RATE,
    SEED,
)

# --------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def training_rows() -> tuple[FloatArray, FloatArray]:
    """200 candidate rows with six raw features on different scales and noisy labels.

    The labels come from a logistic model plus noise, so the classes overlap (not separable) and
    the penalised optimum is well inside the space of finite weights.
    """
    rng = np.random.default_rng(7)
    m = 200
    X = np.column_stack(
        [
            rng.gamma(2.0, 3.0, m),  # bm25-like, positive and skewed
            rng.uniform(-0.2, 0.9, m),  # cosine
            rng.choice([-1.0, 0.0, 1.0], m),  # identifier match
            rng.choice([0.0, 0.25, 0.5, 1.0], m),  # title match
            rng.exponential(1.5, m),  # page age in years
            rng.integers(1, 21, m).astype(np.float64),  # position
        ]
    )
    z = 0.3 * (X[:, 0] - 6) + 2.0 * X[:, 1] + 1.0 * X[:, 2] - 0.1 * X[:, 5]
    y = (rng.uniform(size=m) < 1 / (1 + np.exp(-z))).astype(np.float64)
    return X, y


@pytest.fixture(scope="module")
def fitted(training_rows: tuple[FloatArray, FloatArray]) -> LogisticModel:
    X, y = training_rows
    return fit_logistic(
        X,
        y,
        l2=RERANK_L2,
        learning_rate=RERANK_LEARNING_RATE,
        iterations=RERANK_ITERATIONS,
        seed=SEED,
        feature_names=RERANK_FEATURES,
    )


# --------------------------------------------------------------------------------------------
# Features
# --------------------------------------------------------------------------------------------


def _features(**overrides: object) -> FloatArray:
    args: dict[str, object] = {
        "bm25": np.array([7.5, 6.0, 2.0]),
        "cosine": np.array([0.8, 0.7, 0.1]),
        "question_identifiers": {"e-4107"},
        "chunk_identifiers": [{"e-4107"}, {"e-4170"}, set()],
        "question_terms": {"error", "e-4107", "pump"},
        "title_terms": [{"error", "codes"}, {"error", "pump", "codes"}, set()],
        "age_years": np.array([0.0, 1.5, 0.5]),
        "rank": np.array([1, 2, 3], dtype=np.int64),
    }
    args.update(overrides)
    return candidate_features(**args)  # type: ignore[arg-type]


def test_identifier_feature_penalises_the_neighbouring_code() -> None:
    """E-4107 asked: a chunk on E-4107 scores +1, one on E-4170 scores −1, one without codes 0.

    oracle: the definition worked by hand (Q = {e-4107}; Q ⊆ {e-4107}; Q ∩ {e-4170} = ∅ with a
    non-empty C; C = ∅).
    """
    F = _features()
    assert F.shape == (3, len(FEATURES))
    col = FEATURES.index("identifier_match")
    np.testing.assert_array_equal(F[:, col], [1.0, -1.0, 0.0])


@pytest.mark.parametrize(
    ("question", "chunk", "expected"),
    [
        (set(), {"e-4170"}, 0.0),  # no identifier asked: the feature is silent
        ({"e-4107", "ot-220b"}, {"e-4107"}, 0.0),  # partial match
        ({"e-4107", "ot-220b"}, {"ot-220b", "e-4107", "v3.2.1"}, 1.0),  # all asked, plus more
        ({"e-4107", "ot-220b"}, {"v3.2.1"}, -1.0),  # only other codes
    ],
)
def test_identifier_feature_cases(question: set[str], chunk: set[str], expected: float) -> None:
    """oracle: the three-way definition in the docstring, case by case by hand."""
    F = _features(
        question_identifiers=question,
        chunk_identifiers=[chunk],
        bm25=np.array([1.0]),
        cosine=np.array([0.5]),
        title_terms=[set()],
        age_years=np.array([0.0]),
        rank=np.array([1]),
    )
    assert F[0, FEATURES.index("identifier_match")] == expected


def test_other_feature_columns_by_hand() -> None:
    """oracle: hand computation.

    Question terms T = {error, e-4107, pump} (|T| = 3).
    Chunk 0 title/heading terms {error, codes}: |T ∩ H| = 1, share 1/3.
    Chunk 1 {error, pump, codes}: 2/3. Chunk 2 {}: 0.
    bm25, cosine and age pass through; position is the 1-based rank as a float.
    """
    F = _features()
    np.testing.assert_allclose(F[:, FEATURES.index("title_match")], [1 / 3, 2 / 3, 0.0])
    np.testing.assert_array_equal(F[:, FEATURES.index("bm25")], [7.5, 6.0, 2.0])
    np.testing.assert_array_equal(F[:, FEATURES.index("cosine")], [0.8, 0.7, 0.1])
    np.testing.assert_array_equal(F[:, FEATURES.index("page_age")], [0.0, 1.5, 0.5])
    np.testing.assert_array_equal(F[:, FEATURES.index("position")], [1.0, 2.0, 3.0])
    assert F.dtype == np.float64


def test_title_match_empty_question_is_zero() -> None:
    """oracle: the documented convention (no content terms: share 0, not 0/0)."""
    F = _features(question_terms=set())
    np.testing.assert_array_equal(F[:, FEATURES.index("title_match")], [0.0, 0.0, 0.0])


@pytest.mark.parametrize(
    "overrides",
    [
        {"cosine": np.array([0.1, 0.2])},  # wrong length
        {"age_years": np.array([0.0, -1.0, 0.0])},  # negative age
        {"rank": np.array([0, 1, 2])},  # 0-based rank
        {"rank": np.array([1.0, 2.0, 3.0])},  # float rank
        {"bm25": np.array([1.0, np.nan, 2.0])},  # non-finite
        {"chunk_identifiers": [set(), set()]},  # wrong length
        {"title_terms": [set()]},  # wrong length
    ],
)
def test_candidate_features_rejects_bad_input(overrides: dict[str, object]) -> None:
    """oracle: the validation contract (ValueError on every malformed argument)."""
    with pytest.raises(ValueError):
        _features(**overrides)


def test_page_age_years_by_hand() -> None:
    """oracle: hand computation.

    Newest date 2024-01-01. 2023-01-01 is 365 days older: 365/365.25 years. 2022-01-01 is 730 days
    older: 730/365.25. Dated ages (0, 365/365.25, 730/365.25) have median 365/365.25, which the
    undated page gets.
    """
    ages = page_age_years([date(2024, 1, 1), date(2023, 1, 1), None, date(2022, 1, 1)])
    one = 365 / DAYS_PER_YEAR
    np.testing.assert_allclose(ages, [0.0, one, one, 730 / DAYS_PER_YEAR])
    np.testing.assert_array_equal(page_age_years([None, None]), [0.0, 0.0])


# --------------------------------------------------------------------------------------------
# Standardiser
# --------------------------------------------------------------------------------------------


def test_standardiser_by_hand_and_constant_column() -> None:
    """oracle: hand computation. Column 0 = (1, 3): mean 2, std 1, so z = (−1, 1).

    Column 1 is constant 5: std 0 is replaced by 1, so it maps to (0, 0).
    """
    s = Standardiser.fit(np.array([[1.0, 5.0], [3.0, 5.0]]))
    np.testing.assert_array_equal(s.mean, [2.0, 5.0])
    np.testing.assert_array_equal(s.std, [1.0, 1.0])
    np.testing.assert_array_equal(
        s.transform(np.array([[1.0, 5.0], [3.0, 5.0]])), [[-1.0, 0.0], [1.0, 0.0]]
    )
    with pytest.raises(ValueError):
        s.transform(np.ones((2, 3)))


def test_standardiser_zero_mean_unit_std(training_rows: tuple[FloatArray, FloatArray]) -> None:
    """oracle: numpy's mean and population std of the transformed training rows."""
    X, _ = training_rows
    Z = Standardiser.fit(X).transform(X)
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(Z.std(axis=0), 1.0, rtol=1e-12)


# --------------------------------------------------------------------------------------------
# Logistic regression
# --------------------------------------------------------------------------------------------


def test_objective_at_zero_is_log_two() -> None:
    """oracle: hand computation. At w = 0, b = 0 every z is 0, so each term is log(1 + 1) − 0 and
    L = log 2; p = 1/2, so ∂L/∂b = mean(1/2 − y) = 1/2 − 1/4 = 1/4 for y = (1, 0, 0, 0)."""
    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    y = np.array([1.0, 0.0, 0.0, 0.0])
    loss, gw, gb = logistic_objective(X, y, np.zeros(1), 0.0, l2=0.5)
    assert loss == pytest.approx(np.log(2.0), abs=1e-15)
    # ∂L/∂w = (1/4) Σ (1/2 − y_i) x_i + l2 · 0 = (1/4)(−1/2 + 1 + 3/2 + 2) = (1/4) · 4 = 1.
    assert gw[0] == pytest.approx(1.0, abs=1e-15)
    assert gb == pytest.approx(0.25, abs=1e-15)


def test_gradient_matches_finite_differences(
    training_rows: tuple[FloatArray, FloatArray],
) -> None:
    """oracle: central finite differences of the loss, (L(θ + h e) − L(θ − h e)) / 2h."""
    X, y = training_rows
    Z = Standardiser.fit(X).transform(X)
    rng = np.random.default_rng(1)
    w: FloatArray = rng.normal(0.0, 0.7, size=(Z.shape[1],))
    b = -0.3
    _, gw, gb = logistic_objective(Z, y, w, b, l2=RERANK_L2)
    h = 1e-6
    numeric = np.empty_like(w)
    for j in range(w.size):
        e = np.zeros_like(w)
        e[j] = h
        plus = logistic_objective(Z, y, w + e, b, l2=RERANK_L2)[0]
        minus = logistic_objective(Z, y, w - e, b, l2=RERANK_L2)[0]
        numeric[j] = (plus - minus) / (2 * h)
    numeric_b = (
        logistic_objective(Z, y, w, b + h, l2=RERANK_L2)[0]
        - logistic_objective(Z, y, w, b - h, l2=RERANK_L2)[0]
    ) / (2 * h)
    np.testing.assert_allclose(gw, numeric, rtol=1e-6, atol=1e-8)
    assert gb == pytest.approx(numeric_b, rel=1e-6, abs=1e-8)


def test_objective_is_stable_for_huge_scores() -> None:
    """oracle: the asymptote log(1 + e^z) − y z → 0 for y = 1, z → +∞ (no overflow to inf/nan)."""
    loss, gw, gb = logistic_objective(np.array([[1e4]]), np.array([1.0]), np.ones(1), 0.0, l2=0.0)
    assert loss == 0.0
    assert gw[0] == 0.0 and gb == 0.0


def test_fit_matches_scikit_learn(
    training_rows: tuple[FloatArray, FloatArray], fitted: LogisticModel
) -> None:
    """Weights and bias agree with scikit-learn on the same standardised rows to 1e-3.

    oracle: scikit-learn's LogisticRegression (lbfgs). It minimises C Σ loss_i + ‖w‖²/2 with the
    intercept unpenalised; dividing by C m gives (1/m) Σ loss_i + ‖w‖²/(2 C m), our objective when
    C = 1/(m l2). The penalty is left at its default, which is L2 in every version (the
    ``penalty`` argument is deprecated from scikit-learn 1.8).
    """
    X, y = training_rows
    m = X.shape[0]
    Z = fitted.standardiser.transform(X)
    ref = LogisticRegression(C=1 / (m * RERANK_L2), solver="lbfgs", tol=1e-10, max_iter=10000)
    ref.fit(Z, y)
    assert fitted.converged
    np.testing.assert_allclose(fitted.weights, ref.coef_[0], atol=1e-3)
    assert fitted.bias == pytest.approx(float(ref.intercept_[0]), abs=1e-3)
    assert fitted.feature_names == FEATURES


def test_fit_reaches_a_stationary_point(
    training_rows: tuple[FloatArray, FloatArray], fitted: LogisticModel
) -> None:
    """oracle: first-order optimality, ‖∇L‖ below the 1e-8 tolerance, recomputed independently
    of the fit loop; the reported loss equals the objective at the returned weights."""
    X, y = training_rows
    Z = fitted.standardiser.transform(X)
    loss, gw, gb = logistic_objective(Z, y, fitted.weights, fitted.bias, l2=RERANK_L2)
    assert np.sqrt(gw @ gw + gb * gb) < 1e-8
    assert fitted.loss == pytest.approx(loss, rel=1e-12)
    assert 0 < fitted.iterations < 3000


def _plain_descent_steps(Z: FloatArray, y: FloatArray, w: FloatArray, b: float) -> int:
    """The steps plain gradient descent, w ← w − η ∂L/∂w, b ← b − η ∂L/∂b, takes from (w, b) to
    a gradient norm below 1e-8 (the reranker's fit before momentum)."""
    steps = 0
    while True:
        _, gw, gb = logistic_objective(Z, y, w, b, l2=RERANK_L2)
        if np.sqrt(gw @ gw + gb * gb) < 1e-8:
            return steps
        w = w - RERANK_LEARNING_RATE * gw
        b = b - RERANK_LEARNING_RATE * gb
        steps += 1


def test_fit_takes_exactly_the_documented_steps(
    training_rows: tuple[FloatArray, FloatArray],
) -> None:
    """oracle: the accelerated update rule of the docstring written out with logistic_objective,
    step by step from the seeded start: the same weights, bias and loss bit for bit (the fit
    loop skips the loss between steps, which must change nothing). 60 steps: past the first
    restart of the momentum on these rows."""
    X, y = training_rows
    steps = 60
    model = fit_logistic(
        X,
        y,
        iterations=steps,
        tolerance=0.0,
        l2=RERANK_L2,
        learning_rate=RERANK_LEARNING_RATE,
        seed=SEED,
        feature_names=RERANK_FEATURES,
    )
    assert model.iterations == steps
    Z = model.standardiser.transform(X)
    w = np.random.default_rng(SEED).normal(0.0, RERANK_INIT_SCALE, size=(X.shape[1],))
    b = float(np.log(y.sum() / (len(y) - y.sum())))
    x_w, x_b, j, restarts = w, b, 0, 0
    for _ in range(steps):
        _, gw, gb = logistic_objective(Z, y, w, b, l2=RERANK_L2)
        n_w = w - RERANK_LEARNING_RATE * gw
        n_b = b - RERANK_LEARNING_RATE * gb
        if float(gw @ (n_w - x_w)) + gb * (n_b - x_b) > 0.0:
            j, restarts = 0, restarts + 1
        j += 1
        w = n_w + (j - 1) / (j + 2) * (n_w - x_w)
        b = n_b + (j - 1) / (j + 2) * (n_b - x_b)
        x_w, x_b = n_w, n_b
    assert restarts >= 1
    loss, gw, gb = logistic_objective(Z, y, w, b, l2=RERANK_L2)
    assert model.weights.tobytes() == w.tobytes()
    assert model.bias == b
    assert model.loss == loss
    assert model.gradient_norm == float(np.sqrt(gw @ gw + gb * gb))


def test_fit_needs_a_fraction_of_plain_descents_steps(
    training_rows: tuple[FloatArray, FloatArray], fitted: LogisticModel
) -> None:
    """The accelerated fit reaches the same optimum, to the same gradient norm below 1e-8, in at
    most a third of the steps plain gradient descent at the same η takes from the same start
    (on these rows 91 against 387; on the handbook's default run 269 against 2,867).

    oracle: plain descent written out with logistic_objective, run here to the same tolerance;
    the optimum is scikit-learn's (:func:`test_fit_matches_scikit_learn`)."""
    X, y = training_rows
    Z = fitted.standardiser.transform(X)
    w = np.random.default_rng(SEED).normal(0.0, RERANK_INIT_SCALE, size=(X.shape[1],))
    b = float(np.log(y.sum() / (len(y) - y.sum())))
    plain = _plain_descent_steps(Z, y, w, b)
    assert fitted.converged
    assert 0 < 3 * fitted.iterations <= plain


def test_same_seed_gives_identical_weights(training_rows: tuple[FloatArray, FloatArray]) -> None:
    """oracle: determinism (bit-identical results for the same seed)."""
    X, y = training_rows
    a = fit_logistic(
        X,
        y,
        seed=3,
        iterations=50,
        l2=RERANK_L2,
        learning_rate=RERANK_LEARNING_RATE,
        feature_names=RERANK_FEATURES,
    )
    b = fit_logistic(
        X,
        y,
        seed=3,
        iterations=50,
        l2=RERANK_L2,
        learning_rate=RERANK_LEARNING_RATE,
        feature_names=RERANK_FEATURES,
    )
    np.testing.assert_array_equal(a.weights, b.weights)
    assert a.bias == b.bias
    # After only 50 steps the seeded start still shows, so a different seed is a different path.
    c = fit_logistic(
        X,
        y,
        seed=4,
        iterations=50,
        l2=RERANK_L2,
        learning_rate=RERANK_LEARNING_RATE,
        feature_names=RERANK_FEATURES,
    )
    assert not np.array_equal(a.weights, c.weights)


@pytest.mark.parametrize("seed", [1, 2, 12345])
def test_optimum_does_not_depend_on_seed(
    training_rows: tuple[FloatArray, FloatArray], fitted: LogisticModel, seed: int
) -> None:
    """oracle: strict convexity (l2 > 0 gives a unique optimum), so every seed ends at the same
    weights as the default seed."""
    X, y = training_rows
    other = fit_logistic(
        X,
        y,
        seed=seed,
        l2=RERANK_L2,
        learning_rate=RERANK_LEARNING_RATE,
        iterations=RERANK_ITERATIONS,
        feature_names=RERANK_FEATURES,
    )
    np.testing.assert_allclose(other.weights, fitted.weights, atol=1e-7)
    assert other.bias == pytest.approx(fitted.bias, abs=1e-7)


def test_fit_invariant_to_row_order(
    training_rows: tuple[FloatArray, FloatArray], fitted: LogisticModel
) -> None:
    """oracle: the objective is a mean over rows, so permuting the rows leaves the optimum."""
    X, y = training_rows
    perm = np.random.default_rng(11).permutation(X.shape[0])
    other = fit_logistic(
        X[perm],
        y[perm],
        l2=RERANK_L2,
        learning_rate=RERANK_LEARNING_RATE,
        iterations=RERANK_ITERATIONS,
        seed=SEED,
        feature_names=RERANK_FEATURES,
    )
    np.testing.assert_allclose(other.weights, fitted.weights, atol=1e-7)


def test_predict_proba_in_open_unit_interval(
    training_rows: tuple[FloatArray, FloatArray], fitted: LogisticModel
) -> None:
    """oracle: σ maps finite scores into (0, 1); the probabilities equal σ(w·z + b) computed by
    hand from the standardiser, and they rank the positives higher on average."""
    X, y = training_rows
    p = fitted.predict_proba(X)
    assert p.shape == (X.shape[0],)
    assert np.all((p > 0) & (p < 1))
    z = (X - fitted.standardiser.mean) / fitted.standardiser.std @ fitted.weights + fitted.bias
    np.testing.assert_allclose(p, 1 / (1 + np.exp(-z)), rtol=1e-12)
    assert p[y == 1].mean() > p[y == 0].mean()


@pytest.mark.parametrize(
    ("X", "y"),
    [
        (np.ones((4, 2)), np.array([0.0, 0.0, 0.0, 0.0])),  # one class only
        (np.ones((4, 2)), np.array([0.0, 1.0, 2.0, 0.0])),  # label outside {0, 1}
        (np.ones((4, 2)), np.array([0.0, 1.0, 0.0])),  # wrong length
        (np.ones(4), np.array([0.0, 1.0, 0.0, 1.0])),  # X not 2-d
    ],
)
def test_fit_rejects_bad_training_data(X: FloatArray, y: FloatArray) -> None:
    """oracle: the validation contract (ValueError)."""
    with pytest.raises(ValueError):
        fit_logistic(
            X,
            y,
            feature_names=("a", "b"),
            l2=RERANK_L2,
            learning_rate=RERANK_LEARNING_RATE,
            iterations=RERANK_ITERATIONS,
            seed=SEED,
        )


def test_fit_rejects_bad_options(training_rows: tuple[FloatArray, FloatArray]) -> None:
    """oracle: the validation contract (ValueError)."""
    X, y = training_rows
    good = {
        "l2": RERANK_L2,
        "learning_rate": RERANK_LEARNING_RATE,
        "iterations": RERANK_ITERATIONS,
        "seed": SEED,
        "feature_names": RERANK_FEATURES,
    }
    for kwargs in ({"l2": -1.0}, {"learning_rate": 0.0}, {"iterations": 0}):
        with pytest.raises(ValueError):
            fit_logistic(X, y, **{**good, **kwargs})  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        fit_logistic(
            X[:, :5],
            y,
            l2=RERANK_L2,
            learning_rate=RERANK_LEARNING_RATE,
            iterations=RERANK_ITERATIONS,
            seed=SEED,
            feature_names=RERANK_FEATURES,
        )  # six feature names for five columns


# --------------------------------------------------------------------------------------------
# MMR
# --------------------------------------------------------------------------------------------

# Three candidates: 0 and 1 are near-duplicates (an old and a new copy of one policy), 2 differs.
RELEVANCE = np.array([0.9, 0.85, 0.8])
SIMILARITY = np.array(
    [
        [1.0, 0.95, 0.1],
        [0.95, 1.0, 0.1],
        [0.1, 0.1, 1.0],
    ]
)


def test_mmr_drops_the_near_duplicate_when_lambda_is_low() -> None:
    """oracle: hand computation at λ = 0.5.

    First pick: candidate 0 (relevance 0.9). Then
      d = 1: 0.5 · 0.85 − 0.5 · 0.95 = 0.425 − 0.475 = −0.05
      d = 2: 0.5 · 0.80 − 0.5 · 0.10 = 0.400 − 0.050 = 0.35   -> pick 2
    then 1. The near-duplicate falls below the distinct, slightly less relevant candidate.
    """
    np.testing.assert_array_equal(mmr(RELEVANCE, SIMILARITY, lam=0.5, k=3), [0, 2, 1])


def test_mmr_keeps_the_duplicate_when_lambda_is_high() -> None:
    """oracle: hand computation at λ = 0.95.

    d = 1: 0.95 · 0.85 − 0.05 · 0.95 = 0.8075 − 0.0475 = 0.760
    d = 2: 0.95 · 0.80 − 0.05 · 0.10 = 0.7600 − 0.0050 = 0.755   -> pick 1 (by 0.005)
    """
    np.testing.assert_array_equal(mmr(RELEVANCE, SIMILARITY, lam=0.95, k=3), [0, 1, 2])


def test_mmr_lambda_one_is_relevance_order() -> None:
    """oracle: at λ = 1 the redundancy term vanishes, so the order is numpy's stable argsort of
    −relevance (ties to the lower index)."""
    rng = np.random.default_rng(5)
    rel = rng.choice([0.1, 0.4, 0.7, 0.9], 15)  # many ties
    S = rng.uniform(0, 1, (15, 15))
    expected = np.argsort(-rel, kind="stable")
    np.testing.assert_array_equal(mmr(rel, S, lam=1.0, k=15), expected)
    np.testing.assert_array_equal(mmr(rel, S, lam=1.0, k=4), expected)


def test_mmr_returns_all_candidates_rest_in_relevance_order() -> None:
    """oracle: the documented output. With k = 2 at λ = 0.5 the greedy picks are 0 then 2 (as
    worked above); the remaining candidate follows. With k = 1 only the first pick is greedy and
    the rest, (1, 2), come in relevance order."""
    np.testing.assert_array_equal(mmr(RELEVANCE, SIMILARITY, lam=0.5, k=2), [0, 2, 1])
    np.testing.assert_array_equal(mmr(RELEVANCE, SIMILARITY, lam=0.5, k=1), [0, 1, 2])
    np.testing.assert_array_equal(mmr(RELEVANCE, SIMILARITY, lam=0.5, k=0), [0, 1, 2])
    np.testing.assert_array_equal(mmr(RELEVANCE, SIMILARITY, lam=0.5, k=99), [0, 2, 1])


def test_mmr_first_pick_is_most_relevant_even_at_lambda_zero() -> None:
    """oracle: the definition (first pick = most relevant); after that λ = 0 picks the candidate
    least similar to the picked set: after 1, candidate 2 (sim 0.1) before 0 (sim 0.95)."""
    rel = np.array([0.85, 0.9, 0.8])
    np.testing.assert_array_equal(mmr(rel, SIMILARITY, lam=0.0, k=3), [1, 2, 0])


def test_mmr_ties_go_to_lower_index() -> None:
    """oracle: hand computation. All relevances equal and all similarities 0: every MMR score
    ties, so the order is 0, 1, 2, 3."""
    np.testing.assert_array_equal(
        mmr(np.full(4, 0.5), np.zeros((4, 4)), lam=0.3, k=4), [0, 1, 2, 3]
    )


def test_mmr_permutation_equivariant() -> None:
    """oracle: relabelling candidates relabels the output (no ties in random data)."""
    rng = np.random.default_rng(9)
    n = 12
    rel = rng.uniform(size=n)
    A = rng.uniform(size=(n, n))
    S = (A + A.T) / 2
    base = mmr(rel, S, lam=0.6, k=6)
    perm = rng.permutation(n)
    permuted = mmr(rel[perm], S[np.ix_(perm, perm)], lam=0.6, k=6)
    np.testing.assert_array_equal(perm[permuted], base)


@settings(max_examples=50, deadline=None)
@given(
    n=st.integers(min_value=0, max_value=12),
    lam=st.floats(min_value=0.0, max_value=1.0),
    k=st.integers(min_value=0, max_value=15),
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_mmr_is_a_permutation_led_by_the_most_relevant(
    n: int, lam: float, k: int, seed: int
) -> None:
    """oracle: the definition: every candidate appears once, the first is argmax relevance, and
    the tail after the k greedy picks is in non-increasing relevance."""
    rng = np.random.default_rng(seed)
    rel = rng.uniform(size=n)
    S = rng.uniform(size=(n, n))
    order = mmr(rel, S, lam=lam, k=k)
    assert sorted(order.tolist()) == list(range(n))
    if n:
        assert order[0] == int(np.argmax(rel))
    tail = rel[order[min(k, n) :]]
    assert np.all(np.diff(tail) <= 0)


@pytest.mark.parametrize(
    ("relevance", "similarity", "lam", "k"),
    [
        (RELEVANCE, SIMILARITY[:2, :2], 0.5, 3),  # shape mismatch
        (RELEVANCE, SIMILARITY, 1.5, 3),  # λ outside [0, 1]
        (RELEVANCE, SIMILARITY, 0.5, -1),  # negative k
        (np.array([0.1, np.nan, 0.2]), SIMILARITY, 0.5, 3),  # non-finite
    ],
)
def test_mmr_rejects_bad_input(
    relevance: FloatArray, similarity: FloatArray, lam: float, k: int
) -> None:
    """oracle: the validation contract (ValueError)."""
    with pytest.raises(ValueError):
        mmr(relevance, similarity, lam=lam, k=k)


def test_candidate_features_with_no_candidates() -> None:
    """oracle: shape bookkeeping: zero candidates give a (0, 6) matrix, not an error."""
    F = candidate_features(
        bm25=np.zeros(0),
        cosine=np.zeros(0),
        question_identifiers={"e-4107"},
        chunk_identifiers=[],
        question_terms={"pump"},
        title_terms=[],
        age_years=np.zeros(0),
        rank=np.zeros(0, dtype=np.int64),
    )
    assert F.shape == (0, len(FEATURES))
