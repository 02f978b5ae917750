"""L2-penalised logistic regression fitted by accelerated full-batch gradient descent.

The reranker's model (:mod:`raglab.rerank.features` describes its features). For rows x_i (standardised
by :class:`Standardiser`, fitted on the training rows only) with labels y_i in {0, 1}:

    p_i = σ(w · x_i + c),     J(w, c) = −(1/m) Σ [y_i log p_i + (1 − y_i) log(1 − p_i)] + (λ/2) ‖w‖²

(the bias c is not penalised), minimised by Nesterov's accelerated gradient descent with adaptive
restart from small seeded weights until the gradient's norm falls below :data:`RERANK_TOLERANCE` or
the iterations run out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from raglab.base.checks import as_float_matrix, as_float_vector
from raglab.base.ranking import FloatArray

__all__ = [
    "RERANK_INIT_SCALE",
    "RERANK_TOLERANCE",
    "LogisticModel",
    "Standardiser",
    "fit_logistic",
    "logistic_objective",
]

# Gradient descent stops once the Euclidean norm of the full gradient (weights and bias) falls
# below this: at that point the weights agree with the exact optimum far beyond display precision.
RERANK_TOLERANCE = 1e-8
# Standard deviation of the seeded initial weights: small, so the start is near the w = 0 model.
RERANK_INIT_SCALE = 0.01

# --------------------------------------------------------------------------------------------
# Standardisation
# --------------------------------------------------------------------------------------------


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
        arr = as_float_matrix("X", X)
        if arr.shape[0] == 0:
            raise ValueError("cannot standardise with no rows")
        std = arr.std(axis=0)
        return cls(arr.mean(axis=0), np.where(std > 0, std, 1.0))

    def transform(self, X: FloatArray) -> FloatArray:
        """Standardise ``X`` of shape (n, d) with the fitted mean and std."""
        arr = as_float_matrix("X", X, self.mean.shape[0])
        out: FloatArray = (arr - self.mean) / self.std
        return out


# --------------------------------------------------------------------------------------------
# Logistic regression
# --------------------------------------------------------------------------------------------


def _sigmoid(z: FloatArray) -> FloatArray:
    # σ(z) = 1 / (1 + e^(−z)) for z ≥ 0 and e^z / (1 + e^z) below: e^(−|z|) never overflows,
    # each branch keeps full precision for large |z|, and one exp a row (not logaddexp's exp
    # and log1p) halves the cost of each of the hundreds of gradient steps.
    e = np.exp(-np.abs(z))
    p: FloatArray = np.where(z >= 0, 1.0, e)
    p /= 1.0 + e
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
    X: FloatArray, y: FloatArray, weights: FloatArray, bias: float, *, l2: float
) -> tuple[float, FloatArray, float]:
    """The penalised log loss and its gradient at (``weights``, ``bias``).

    With z_i = w · x_i + b and p_i = σ(z_i) = 1 / (1 + e^(−z_i)), for X of shape (m, d):

        L = (1/m) Σ_i [log(1 + e^(z_i)) − y_i z_i] + (l2/2) ‖w‖²
        ∂L/∂w = (1/m) Σ_i (p_i − y_i) x_i + l2 w,     ∂L/∂b = (1/m) Σ_i (p_i − y_i)

    (the bias is not penalised). ``X`` is used as given (standardise first). Returns
    ``(L, ∂L/∂w of shape (d,), ∂L/∂b)``.
    """
    Z = as_float_matrix("X", X)
    if Z.shape[0] == 0:
        raise ValueError("the objective needs at least one row")
    w = as_float_vector("weights", weights, Z.shape[1])
    if l2 < 0:
        raise ValueError("l2 must be non-negative")
    return _objective(Z, _validate_labels(y, Z.shape[0]), w, float(bias), float(l2))


@dataclass(frozen=True, slots=True)
class LogisticModel:
    """A fitted reranker: p = σ(w · standardise(x) + b).

    ``weights`` has shape (d,) and lives in the standardised feature space (one unit = one
    training standard deviation), so weights of different features compare directly.
    ``loss`` is the penalised training loss at the returned weights, ``iterations`` the gradient
    steps taken (each one gradient over every row), ``gradient_norm`` the final ‖(∂L/∂w, ∂L/∂b)‖ and ``converged`` whether it fell
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
    l2: float,
    learning_rate: float,
    iterations: int,
    seed: int,
    tolerance: float = RERANK_TOLERANCE,
    feature_names: Sequence[str],
) -> LogisticModel:
    """Fit the L2-penalised logistic regression by accelerated full-batch gradient descent.

    ``X`` has shape (m, d) (raw features, one row per training candidate), ``y`` shape (m,) with
    labels in {0, 1}, both present. The columns are standardised on these rows
    (:class:`Standardiser`). From seeded small random weights θ₀ = (w₀, b₀), w₀ ~ N(0, 0.01²) and
    the bias b₀ at the log-odds of the base rate (the optimum of the w = 0 model), with x₀ = θ₀,
    step k = 1, 2, … is Nesterov's accelerated gradient with adaptive restart:

        x_k = θ_{k−1} − η ∇L(θ_{k−1})                       (a gradient step from θ)
        j ← 0  if  ∇L(θ_{k−1}) · (x_k − x_{k−1}) > 0,  then  j ← j + 1
        θ_k = x_k + ((j − 1)/(j + 2)) (x_k − x_{k−1})           (momentum)

    with the objective and gradient of :func:`logistic_objective` (η = ``learning_rate``, the
    gradient over every row each step). j counts the steps since the last restart (momentum 0
    at the first step and after a restart): the momentum (j − 1)/(j + 2) is Nesterov's (1983,
    "A method for solving the convex programming problem with convergence rate O(1/k²)"); it is
    reset when the gradient makes an acute angle with the last move, the gradient scheme of
    O'Donoghue & Candès (2015, "Adaptive restart for accelerated gradient schemes"), which keeps
    the fast rate near a strongly convex optimum where plain momentum overshoots and oscillates.
    (FISTA's t-sequence, Beck & Teboulle 2009, with the same restart takes as many steps on the
    handbook's runs.) The weights returned are the θ_k at which the gradient was last computed:
    it stops when that gradient's norm drops below ``tolerance`` or after ``iterations`` steps.
    With l2 > 0 the objective is strictly convex, so the optimum is unique and the seed and the
    method change only the path, not where it ends. On standardised features the curvature is
    at most about (d + 1)/4 + l2, so the default η = 0.5 is a stable step for the six features;
    on the handbook's runs the fit takes 200 to 280 steps where plain descent took 2,850 to 4,480.
    """
    Xr = as_float_matrix("X", X)
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
    # (w, b) is θ, where the gradient is taken; (xw, xb) the last gradient step's point x.
    xw, xb = w, b
    steps = since_restart = 0
    # A step needs only the gradient. The loss, which no step reads, is computed once, at the
    # weights returned: the value computing it at every step would have left, without a second
    # pass of logaddexp over every row per step.
    while steps < iterations and grad_norm >= tolerance:
        nw = w - learning_rate * gw
        nb = b - learning_rate * gb
        steps += 1
        # The gradient at θ still points along the move from x_{k−1} to x_k: the momentum has
        # carried past the optimum along it, so it restarts from 0.
        if float(gw @ (nw - xw)) + gb * (nb - xb) > 0.0:
            since_restart = 0
        since_restart += 1
        beta = (since_restart - 1) / (since_restart + 2)
        w = nw + beta * (nw - xw)
        b = nb + beta * (nb - xb)
        xw, xb = nw, nb
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
