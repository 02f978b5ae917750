"""The reranker: a second look at the first stage's top candidates.

The first stage (BM25, the LSA embedding or their fusion) hands over its top
:data:`~raglab._config.RERANK_DEPTH` chunks per question. The reranker describes every candidate by
six features the first stage could not combine (:data:`FEATURES`), standardises them on the
training rows and scores them by an L2-penalised logistic regression fitted by full-batch gradient
descent. Maximal marginal relevance (Carbonell and Goldstein 1998) then reorders the scored
candidates so that near-duplicates (an old and a new version of one policy) do not crowd the top.

Public API: :func:`candidate_features`, :func:`page_age_years`, :class:`Standardiser`,
:func:`logistic_objective`, :func:`fit_logistic`, :class:`LogisticModel`, :func:`mmr`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

import numpy as np

from raglab._config import (
    MMR_DEPTH,
    RERANK_ITERATIONS,
    RERANK_L2,
    RERANK_LEARNING_RATE,
    SEED,
)
from raglab._topk import top_k
from raglab._types import FloatArray, IntArray

FEATURES = ("bm25", "cosine", "identifier_match", "title_match", "page_age", "position")

# New defaults of this module (not in raglab._config).
# Gradient descent stops once the Euclidean norm of the full gradient (weights and bias) falls
# below this: at that point the weights agree with the exact optimum far beyond display precision.
RERANK_TOLERANCE = 1e-8
# Standard deviation of the seeded initial weights: small, so the start is near the w = 0 model.
RERANK_INIT_SCALE = 0.01
# Days per year for page ages (the mean Gregorian year, so leap years do not bias ages).
DAYS_PER_YEAR = 365.25


# --------------------------------------------------------------------------------------------
# Features
# --------------------------------------------------------------------------------------------


def _as_float_vector(name: str, values: FloatArray, m: int | None = None) -> FloatArray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array, got shape {arr.shape}")
    if m is not None and arr.shape[0] != m:
        raise ValueError(f"{name} has {arr.shape[0]} entries, expected {m} (one per candidate)")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr


def _identifier_match(question: set[str], chunks: Sequence[set[str]]) -> FloatArray:
    out = np.zeros(len(chunks), dtype=np.float64)
    if not question:
        return out
    for i, ids in enumerate(chunks):
        if question <= ids:
            out[i] = 1.0
        elif ids and not (question & ids):
            # The chunk is about some other code (E-4170 for a question on E-4107): a near miss
            # that both BM25 (shared words) and the embedding (shared context) tend to reward.
            out[i] = -1.0
    return out


def _term_share(question: set[str], fields: Sequence[set[str]]) -> FloatArray:
    if not question:
        return np.zeros(len(fields), dtype=np.float64)
    n = len(question)
    return np.array([len(question & f) / n for f in fields], dtype=np.float64)


def candidate_features(
    *,
    bm25: FloatArray,
    cosine: FloatArray,
    question_identifiers: set[str],
    chunk_identifiers: Sequence[set[str]],
    question_terms: set[str],
    title_terms: Sequence[set[str]],
    age_years: FloatArray,
    rank: IntArray,
) -> FloatArray:
    """The feature matrix of one question's ``m`` candidates, shape (m, 6), columns :data:`FEATURES`.

    - ``bm25``: the candidate's BM25 score for the question (shape (m,)).
    - ``cosine``: the LSA cosine between the folded-in question and chunk (shape (m,)).
    - ``identifier_match``: with Q the identifiers the question names (``E-4107``, ``v3.2.1``,
      as retrieval tokens) and C those in the chunk,

      ``+1`` when Q is non-empty and Q ⊆ C (the chunk names every identifier asked about);
      ``-1`` when Q is non-empty, Q ∩ C = ∅ and C is non-empty (the chunk is about another code:
      E-4170 against a question on E-4107);
      ``0`` otherwise (no identifier asked, a chunk naming no identifier, or a partial match).
    - ``title_match``: |T ∩ H| / |T|, the share of the question's content terms T found in the
      chunk's page title and heading path H (``title_terms[i]``, combined by the caller); 0 when T
      is empty.
    - ``page_age``: the page's age in years relative to the newest page of the corpus (the caller
      computes it, for instance with :func:`page_age_years`, which gives undated pages the corpus
      median).
    - ``position``: the candidate's 1-based rank in the first-stage list.

    All inputs are per candidate in the same order; a length mismatch, a non-finite value, a
    negative age or a rank below 1 raises ``ValueError``.
    """
    bm = _as_float_vector("bm25", bm25)
    m = bm.shape[0]
    cos = _as_float_vector("cosine", cosine, m)
    age = _as_float_vector("age_years", age_years, m)
    if np.any(age < 0):
        raise ValueError("age_years must be non-negative (years before the newest page)")
    pos = np.asarray(rank)
    if pos.ndim != 1 or pos.shape[0] != m:
        raise ValueError(f"rank must be a 1-d array of {m} entries, got shape {pos.shape}")
    if pos.size and not np.issubdtype(pos.dtype, np.integer):
        raise ValueError("rank must hold integers (1-based first-stage ranks)")
    if np.any(pos < 1):
        raise ValueError("rank is 1-based: every entry must be at least 1")
    if len(chunk_identifiers) != m:
        raise ValueError(f"chunk_identifiers has {len(chunk_identifiers)} entries, expected {m}")
    if len(title_terms) != m:
        raise ValueError(f"title_terms has {len(title_terms)} entries, expected {m}")
    q_ids = set(question_identifiers)
    q_terms = set(question_terms)
    return np.column_stack(
        [
            bm,
            cos,
            _identifier_match(q_ids, [set(c) for c in chunk_identifiers]),
            _term_share(q_terms, [set(t) for t in title_terms]),
            age,
            pos.astype(np.float64),
        ]
    ).reshape(m, len(FEATURES))


def page_age_years(updated: Sequence[date | None]) -> FloatArray:
    """Each page's age in years before the newest dated page, shape (n_pages,).

    age_i = (max_j d_j − d_i) / 365.25 days. A page with no date gets the median age of the dated
    pages (a neutral value: the reranker should neither favour nor punish a missing date); when no
    page is dated every age is 0.
    """
    days = [d.toordinal() if d is not None else None for d in updated]
    known = np.array([d for d in days if d is not None], dtype=np.float64)
    if known.size == 0:
        return np.zeros(len(days), dtype=np.float64)
    ages_known = (known.max() - known) / DAYS_PER_YEAR
    fill = float(np.median(ages_known))
    newest = float(known.max())
    return np.array(
        [fill if d is None else (newest - d) / DAYS_PER_YEAR for d in days], dtype=np.float64
    )


# --------------------------------------------------------------------------------------------
# Standardisation
# --------------------------------------------------------------------------------------------


def _as_matrix(name: str, X: FloatArray, d: int | None = None) -> FloatArray:
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-d array (rows, features), got shape {arr.shape}")
    if d is not None and arr.shape[1] != d:
        raise ValueError(f"{name} has {arr.shape[1]} columns, expected {d}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr


@dataclass(frozen=True, slots=True)
class Standardiser:
    """Column-wise z-scores: (x − mean) / std, fitted on the training rows only.

    ``mean`` and ``std`` have shape (d,); ``std`` is the population standard deviation (ddof 0),
    replaced by 1 for a constant column so that column maps to 0 instead of dividing by zero.
    """

    mean: FloatArray
    std: FloatArray

    @classmethod
    def fit(cls, X: FloatArray) -> Standardiser:
        """Fit on ``X`` of shape (m, d), m ≥ 1."""
        arr = _as_matrix("X", X)
        if arr.shape[0] == 0:
            raise ValueError("cannot standardise with no rows")
        std = arr.std(axis=0)
        return cls(arr.mean(axis=0), np.where(std > 0, std, 1.0))

    def transform(self, X: FloatArray) -> FloatArray:
        """Standardise ``X`` of shape (n, d) with the fitted mean and std."""
        arr = _as_matrix("X", X, self.mean.shape[0])
        out: FloatArray = (arr - self.mean) / self.std
        return out


# --------------------------------------------------------------------------------------------
# Logistic regression
# --------------------------------------------------------------------------------------------


def _sigmoid(z: FloatArray) -> FloatArray:
    # σ(z) = exp(−log(1 + e^(−z))): never overflows and keeps full precision for large |z|.
    p: FloatArray = np.exp(-np.logaddexp(0.0, -z))
    return p


def _loss(z: FloatArray, y: FloatArray, w: FloatArray, l2: float) -> float:
    # log(1 + e^z) by logaddexp(0, z): exact for large |z|, no overflow.
    return float(np.mean(np.logaddexp(0.0, z) - y * z) + 0.5 * l2 * float(w @ w))


def _gradient(
    Z: FloatArray, y: FloatArray, z: FloatArray, w: FloatArray, l2: float
) -> tuple[FloatArray, float]:
    m = Z.shape[0]
    residual = _sigmoid(z) - y
    grad_w: FloatArray = Z.T @ residual / m + l2 * w
    # The mean as its sum over m: the very division np.mean performs, without its Python-level
    # overhead, which counts at thousands of steps.
    return grad_w, float(np.add.reduce(residual)) / m


def _objective(
    Z: FloatArray, y: FloatArray, w: FloatArray, b: float, l2: float
) -> tuple[float, FloatArray, float]:
    z = Z @ w + b
    grad_w, grad_b = _gradient(Z, y, z, w, l2)
    return _loss(z, y, w, l2), grad_w, grad_b


def _validate_labels(y: FloatArray, m: int) -> FloatArray:
    arr = np.asarray(y, dtype=np.float64)
    if arr.shape != (m,):
        raise ValueError(f"y must have shape ({m},), got {arr.shape}")
    if not np.all((arr == 0.0) | (arr == 1.0)):
        raise ValueError("labels must be 0 or 1")
    return arr


def logistic_objective(
    X: FloatArray, y: FloatArray, weights: FloatArray, bias: float, *, l2: float = RERANK_L2
) -> tuple[float, FloatArray, float]:
    """The penalised log loss and its gradient at (``weights``, ``bias``).

    With z_i = w · x_i + b and p_i = σ(z_i) = 1 / (1 + e^(−z_i)), for X of shape (m, d):

        L = (1/m) Σ_i [log(1 + e^(z_i)) − y_i z_i] + (l2/2) ‖w‖²
        ∂L/∂w = (1/m) Σ_i (p_i − y_i) x_i + l2 w,     ∂L/∂b = (1/m) Σ_i (p_i − y_i)

    (the bias is not penalised). ``X`` is used as given (standardise first). Returns
    ``(L, ∂L/∂w of shape (d,), ∂L/∂b)``.
    """
    Z = _as_matrix("X", X)
    if Z.shape[0] == 0:
        raise ValueError("the objective needs at least one row")
    w = _as_float_vector("weights", weights, Z.shape[1])
    if l2 < 0:
        raise ValueError("l2 must be non-negative")
    return _objective(Z, _validate_labels(y, Z.shape[0]), w, float(bias), float(l2))


@dataclass(frozen=True, slots=True)
class LogisticModel:
    """A fitted reranker: p = σ(w · standardise(x) + b).

    ``weights`` has shape (d,) and lives in the standardised feature space (one unit = one
    training standard deviation), so weights of different features compare directly.
    ``loss`` is the penalised training loss at the returned weights, ``iterations`` the gradient
    steps taken, ``gradient_norm`` the final ‖(∂L/∂w, ∂L/∂b)‖ and ``converged`` whether it fell
    below the tolerance before the iteration cap.
    """

    weights: FloatArray
    bias: float
    feature_names: tuple[str, ...]
    standardiser: Standardiser
    loss: float
    iterations: int
    gradient_norm: float
    converged: bool

    def decision_function(self, X_raw: FloatArray) -> FloatArray:
        """z = w · standardise(x) + b for raw feature rows of shape (n, d); shape (n,)."""
        z: FloatArray = self.standardiser.transform(X_raw) @ self.weights + self.bias
        return z

    def predict_proba(self, X_raw: FloatArray) -> FloatArray:
        """The probability that each raw feature row is relevant, shape (n,).

        Values lie in (0, 1) (in float64 they round to 1 only when z > 36.7, to 0 below −745).
        """
        return _sigmoid(self.decision_function(X_raw))


def fit_logistic(
    X: FloatArray,
    y: FloatArray,
    *,
    l2: float = RERANK_L2,
    learning_rate: float = RERANK_LEARNING_RATE,
    iterations: int = RERANK_ITERATIONS,
    seed: int = SEED,
    tolerance: float = RERANK_TOLERANCE,
    feature_names: Sequence[str] = FEATURES,
) -> LogisticModel:
    """Fit the L2-penalised logistic regression by full-batch gradient descent.

    ``X`` has shape (m, d) (raw features, one row per training candidate), ``y`` shape (m,) with
    labels in {0, 1}, both present. The columns are standardised on these rows
    (:class:`Standardiser`); then, from seeded small random weights w₀ ~ N(0, 0.01²) and the bias at
    the log-odds of the base rate (the optimum of the w = 0 model), every step is

        w ← w − η (∂L/∂w),   b ← b − η (∂L/∂b)

    with the objective and gradient of :func:`logistic_objective` (η = ``learning_rate``). It stops
    when the gradient norm drops below ``tolerance`` or after ``iterations`` steps. With l2 > 0
    the objective is strictly convex, so the optimum is unique and the seed only changes the path,
    not where it ends. On standardised features the curvature is at most about (d + 1)/4 + l2, so
    the default η = 0.5 is a stable step for the six features.
    """
    Xr = _as_matrix("X", X)
    m, d = Xr.shape
    names = tuple(feature_names)
    if len(names) != d:
        raise ValueError(f"{len(names)} feature names for {d} columns")
    target = _validate_labels(y, m)
    n_pos = int(target.sum())
    if n_pos == 0 or n_pos == m:
        raise ValueError("training labels must contain both classes (0 and 1)")
    if l2 < 0:
        raise ValueError("l2 must be non-negative")
    if learning_rate <= 0:
        raise ValueError("learning_rate must be positive")
    if iterations < 1:
        raise ValueError("iterations must be at least 1")
    if tolerance < 0:
        raise ValueError("tolerance must be non-negative")

    standardiser = Standardiser.fit(Xr)
    Z = standardiser.transform(Xr)
    rng = np.random.default_rng(seed)
    w: FloatArray = rng.normal(0.0, RERANK_INIT_SCALE, size=(d,))
    b = float(np.log(n_pos / (m - n_pos)))
    gw, gb = _gradient(Z, target, Z @ w + b, w, l2)
    grad_norm = math.sqrt(gw @ gw + gb * gb)
    steps = 0
    # A step needs only the gradient. The loss, which no step reads, is computed once, at the
    # weights returned: the value computing it at every step would have left, without a second
    # pass of logaddexp over every row per step.
    while steps < iterations and grad_norm >= tolerance:
        w = w - learning_rate * gw
        b = b - learning_rate * gb
        steps += 1
        gw, gb = _gradient(Z, target, Z @ w + b, w, l2)
        grad_norm = math.sqrt(gw @ gw + gb * gb)
    return LogisticModel(
        weights=w,
        bias=b,
        feature_names=names,
        standardiser=standardiser,
        loss=_loss(Z @ w + b, target, w, l2),
        iterations=steps,
        gradient_norm=grad_norm,
        converged=grad_norm < tolerance,
    )


# --------------------------------------------------------------------------------------------
# Maximal marginal relevance
# --------------------------------------------------------------------------------------------


def _relevance_order(relevance: FloatArray) -> IntArray:
    # Every candidate by relevance, equal relevance keeping the lower index first (top_k's order).
    return top_k(relevance)


def _mmr_kernel(relevance: FloatArray, similarity: FloatArray, lam: float, k: int) -> IntArray:
    n = relevance.shape[0]
    picked: list[int] = []
    available = np.ones(n, dtype=bool)
    # max over the picked set of sim(d, s), updated with one column per pick.
    max_sim = np.full(n, -np.inf)
    for step in range(min(k, n)):
        # The first pick is the most relevant: the redundancy term of an empty set is not defined.
        score = relevance.copy() if step == 0 else lam * relevance - (1.0 - lam) * max_sim
        score[~available] = -np.inf
        nxt = int(np.argmax(score))  # first maximum: ties go to the lower index
        picked.append(nxt)
        available[nxt] = False
        max_sim = np.maximum(max_sim, similarity[:, nxt])
    rest = [i for i in _relevance_order(relevance).tolist() if available[i]]
    return np.array(picked + rest, dtype=np.int64)


def mmr(
    relevance: FloatArray, similarity: FloatArray, *, lam: float, k: int = MMR_DEPTH
) -> IntArray:
    """Maximal marginal relevance order (Carbonell and Goldstein 1998), shape (n,).

    ``relevance`` has shape (n,) (the reranker's probabilities), ``similarity`` shape (n, n)
    (``similarity[d, s]`` = sim(d, s), the TF-IDF cosine between chunks; the diagonal is unused).
    The first pick is the most relevant candidate; each later pick is

        next = argmax_{d not picked} λ · relevance(d) − (1 − λ) · max_{s picked} sim(d, s)

    for the first ``min(k, n)`` positions. Returns the order of **all** n candidates: the k
    greedy MMR picks, then the remaining candidates in relevance order. Ties go to the lower
    candidate index everywhere. λ = 1 gives the plain relevance order; λ = 0 picks for diversity
    alone after the first.
    """
    rel = _as_float_vector("relevance", relevance)
    n = rel.shape[0]
    sim = np.asarray(similarity, dtype=np.float64)
    if sim.shape != (n, n):
        raise ValueError(f"similarity must have shape ({n}, {n}), got {sim.shape}")
    if not np.all(np.isfinite(sim)):
        raise ValueError("similarity must be finite")
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must lie in [0, 1], got {lam}")
    if k < 0:
        raise ValueError("k must be non-negative")
    return _mmr_kernel(rel, sim, float(lam), int(k))
