"""Compiled GELU, softmax and LayerNorm steps of the BERT pass, used when numba is installed.

Each kernel computes what its numpy twin in :mod:`raglab.embedding.neural.encoder` computes, in
float32, one row at a time so that a row stays in the first-level cache, in place:

- :func:`gelu_bias` ``x <- GELU(x + b)`` with erf as Abramowitz and Stegun 7.1.26 (absolute error
  under 1.5e-7), the form torch's CPU kernel evaluates:
  ``erf(|z|) = 1 - t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) exp(-z^2)``, ``t = 1 / (1 + p |z|)``;
- :func:`softmax_rows` ``s <- softmax(scale * s)`` along the last axis;
- :func:`add_layer_norm` ``x <- LayerNorm(x + residual + b)`` (biased variance, two passes, sums
  in float64).

exp is Cephes' ``expf`` (range reduction by ln 2 in two parts, a degree-5 polynomial, the power of
two built from its exponent bits), in float32 throughout, written out so that LLVM turns each
row loop into vector instructions: numba's own ``exp`` is a call per element that no loop
vectorises. numba fuses no multiply and add without fast-math, which is asked for nowhere; only
the row sums (softmax's, LayerNorm's mean and variance) may be reassociated, summed by vector
lanes (:func:`_row_sum`).

numba is optional: :func:`available` says whether it imports; :func:`kernels` compiles the three
on first use (cached on disk by numba where it can write).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "ERF_A",
    "ERF_P",
    "Kernels",
    "add_layer_norm",
    "available",
    "gelu_bias",
    "kernels",
    "softmax_rows",
]

# Abramowitz and Stegun 7.1.26: p and a1..a5 (a5 first, for Horner's rule).
ERF_P = np.float32(0.3275911)
ERF_A = np.array(
    [1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592], dtype=np.float32
)
_A5, _A4, _A3, _A2, _A1 = (np.float32(a) for a in ERF_A)
_INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))
_HALF = np.float32(0.5)
_ONE = np.float32(1.0)
# Cephes expf: log2(e), ln 2 as 0.693359375 - 2.12194440e-4, the polynomial p0..p5, and the
# smallest argument whose exp is a normal float32 (arguments below it are raised to it).
_LOG2E = np.float32(1.44269504088896341)
_LN2_HI = np.float32(0.693359375)
_LN2_LO = np.float32(-2.12194440e-4)
_EXP_P = tuple(
    np.float32(c)
    for c in (
        1.9875691500e-4,
        1.3981999507e-3,
        8.3334519073e-3,
        4.1665795894e-2,
        1.6666665459e-1,
        5.0000001201e-1,
    )
)
_EXP_MIN = np.float32(-87.33654)


def _exp_into(y: Any, out: Any, bits: Any) -> None:
    """out[j] = exp(y[j]) for y <= 0 (float32, 1-D, same length), exp(-87.34) (float32's
    smallest normal) for anything lower; ``bits`` int32 scratch of that length. Two loops, each
    free of calls, so that both vectorise."""
    p0, p1, p2, p3, p4, p5 = _EXP_P
    for j in range(y.shape[0]):
        v = max(y[j], _EXP_MIN)
        # floor gives an int64: back to float32 at once, or n * ln 2 and the polynomial after it
        # would run in float64, at half the vector width and with conversions (3x slower).
        n = np.float32(math.floor(v * _LOG2E + _HALF))
        r = v - n * _LN2_HI - n * _LN2_LO
        p = ((((p0 * r + p1) * r + p2) * r + p3) * r + p4) * r + p5
        out[j] = p * r * r + r + _ONE
        bits[j] = (np.int32(n) + np.int32(127)) << np.int32(23)
    scale = bits.view(np.float32)
    for j in range(y.shape[0]):
        out[j] *= scale[j]


def _row_sum(z: Any) -> Any:
    """The sum of z (float32, 1-D) in float32. Compiled with reassociation allowed (it and the
    two sums below only), so that LLVM keeps one partial sum per vector lane: summed in order,
    each addition waits on the one before, and the sum cost a softmax row more than its exp
    (LayerNorm's two float64 sums, three quarters of its time)."""
    total = np.float32(0.0)
    for j in range(z.shape[0]):
        total += z[j]
    return total


def _sum64(z: Any) -> float:
    """The sum of z (float32, 1-D) in float64, reassociated when compiled (see :func:`_row_sum`)."""
    total = 0.0
    for j in range(z.shape[0]):
        total += z[j]
    return total


def _centred_squares(z: Any, mean: Any) -> float:
    """sum_j (z_j - mean)^2 of z (float32, 1-D), each square in float32, summed in float64,
    reassociated when compiled (see :func:`_row_sum`)."""
    spread = 0.0
    for j in range(z.shape[0]):
        c = z[j] - mean
        spread += c * c
    return spread


# The kernels call these names: the Python functions until kernels() publishes compiled twins.
_exp: Callable[[Any, Any, Any], None] = _exp_into
_sum: Callable[[Any], Any] = _row_sum
_mean_sum: Callable[[Any], float] = _sum64
_spread: Callable[[Any, Any], float] = _centred_squares


def _gelu_bias(x: Any, bias: Any) -> None:
    """x (n, i) float32 <- GELU(x + bias), bias (i,)."""
    width = x.shape[1]
    neg_sq = np.empty(width, np.float32)
    rt = np.empty(width, np.float32)
    e = np.empty(width, np.float32)
    bits = np.empty(width, np.int32)
    for row in range(x.shape[0]):
        z = x[row]
        for j in range(width):
            v = z[j] + bias[j]
            z[j] = v
            a = abs(v) * _INV_SQRT2
            t = _ONE / (_ONE + ERF_P * a)
            rt[j] = ((((_A5 * t + _A4) * t + _A3) * t + _A2) * t + _A1) * t
            neg_sq[j] = -(a * a)
        _exp(neg_sq, e, bits)
        for j in range(width):
            # 1 - Phi(|v|) = (1 - erf(|v| / sqrt 2)) / 2; Phi(v) = 1/2 + sign(v) (1/2 - that).
            tail = _HALF * rt[j] * e[j]
            z[j] = z[j] * (_HALF + math.copysign(_HALF - tail, z[j]))


def _softmax_rows(s: Any, scale: float) -> None:
    """s (m, t) float32 <- softmax(scale * s) of each row."""
    width = s.shape[1]
    k = np.float32(scale)
    shifted = np.empty(width, np.float32)
    bits = np.empty(width, np.int32)
    for row in range(s.shape[0]):
        z = s[row]
        top = z[0]
        for j in range(1, width):
            top = max(top, z[j])
        for j in range(width):
            shifted[j] = (z[j] - top) * k
        _exp(shifted, z, bits)
        inv = _ONE / _sum(z)
        for j in range(width):
            z[j] *= inv


def _add_layer_norm(x: Any, residual: Any, bias: Any, gamma: Any, beta: Any, eps: float) -> None:
    """x (n, h) float32 <- LayerNorm(x + residual + bias) with gamma, beta (h,)."""
    width = x.shape[1]
    for row in range(x.shape[0]):
        z = x[row]
        res = residual[row]
        for j in range(width):
            z[j] = z[j] + res[j] + bias[j]
        mean = np.float32(_mean_sum(z) / width)
        inv = np.float32(1.0 / math.sqrt(_spread(z, mean) / width + eps))
        for j in range(width):
            z[j] = (z[j] - mean) * inv * gamma[j] + beta[j]


class Kernels(NamedTuple):
    """The compiled steps: ``gelu_bias(x, b)``, ``softmax_rows(s, scale)``,
    ``add_layer_norm(x, residual, b, gamma, beta, eps)``, each in place on float32 C-order arrays."""

    gelu_bias: Callable[[Any, Any], None]
    softmax_rows: Callable[[Any, float], None]
    add_layer_norm: Callable[[Any, Any, Any, Any, Any, float], None]


@cache
def available() -> bool:
    """Whether numba can be imported here."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


@cache
def kernels() -> Kernels:
    """The three kernels compiled by numba (ImportError without it), each compiled once and
    called once on a tiny array so that a timed call never pays for compiling."""
    import numba

    global _exp, _sum, _mean_sum, _spread
    jit = numba.njit(cache=True, nogil=True, error_model="numpy")
    lanes = numba.njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc"})
    _exp = jit(_exp_into)
    _sum, _mean_sum, _spread = lanes(_row_sum), lanes(_sum64), lanes(_centred_squares)
    built = Kernels(jit(_gelu_bias), jit(_softmax_rows), jit(_add_layer_norm))
    one = np.ones((1, 4), np.float32)
    vec = np.ones(4, np.float32)
    built.gelu_bias(one.copy(), vec)
    built.softmax_rows(one.copy(), 1.0)
    built.add_layer_norm(one.copy(), one, vec, vec, vec, 1e-12)
    return built


# Pure-Python references of the kernels (slow; what numba compiles), for reading and testing.
gelu_bias = _gelu_bias
softmax_rows = _softmax_rows
add_layer_norm = _add_layer_norm
