"""Tests for raglab.embedding.neural.compiled: numba's GELU, softmax, LayerNorm and exp against float64 formulas.

numba is in the test extra, so the compiled kernels are what these tests run; the numpy twins
(``NUMPY_KERNELS``) are checked against the same oracles, and both whole passes against the
sentence-transformers reference in test_encoder.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from raglab.embedding.neural import compiled
from raglab.embedding.neural.compiled import Kernels
from raglab.embedding.neural.encoder import NUMPY_KERNELS, load_kernels

KERNELS = {"numba": compiled.kernels, "numpy": lambda: NUMPY_KERNELS}


@pytest.fixture(params=sorted(KERNELS))
def kernels(request: pytest.FixtureRequest) -> Kernels:
    made: Kernels = KERNELS[request.param]()
    return made


def _gelu64(x: np.ndarray) -> np.ndarray:
    return np.array([v / 2 * (1 + math.erf(v / math.sqrt(2))) for v in x.ravel().tolist()]).reshape(
        x.shape
    )


def test_numba_is_what_the_pass_runs_here() -> None:
    """oracle: numba is in the test extra, so load_kernels() gives the compiled set."""
    assert compiled.available()
    assert load_kernels() is compiled.kernels()
    assert load_kernels(compiled=False) is NUMPY_KERNELS


def test_exp_matches_math_exp() -> None:
    """oracle: math.exp in float64; Cephes' expf is within 2 float32 units (relative 2.4e-7) down
    to float32's smallest normal, and stays there (about 1.18e-38) below -87.34."""
    compiled.kernels()
    y = np.concatenate([np.linspace(-87.3, 0, 300_001), [-88.0, -100.0, -1e4]]).astype(np.float32)
    out = np.empty_like(y)
    compiled._exp(y, out, np.empty(y.size, dtype=np.int32))
    expected = np.array([math.exp(v) for v in y.astype(float).tolist()])
    normal = y > -87.3
    assert np.abs(out[normal] - expected[normal]).max() <= 2.4e-7 * expected[normal].max()
    assert (np.abs(out[normal] / expected[normal] - 1) <= 2.4e-7).all()
    assert (np.abs(out[~normal] / np.finfo(np.float32).tiny - 1) <= 0.04).all()


def test_gelu_bias_is_the_erf_form(kernels: Kernels) -> None:
    """oracle: (x + b)/2 (1 + erf((x + b) / sqrt 2)) with math.erf in float64, x on [-8, 8]."""
    x = np.linspace(-8, 8, 2001, dtype=np.float32).reshape(3, 667)
    bias = np.linspace(-0.5, 0.5, 667, dtype=np.float32)
    expected = _gelu64(x.astype(np.float64) + bias.astype(np.float64))
    got = x.copy()
    kernels.gelu_bias(got, bias)
    assert got.dtype == np.float32
    assert np.abs(got - expected).max() <= 1e-6


def test_softmax_rows_matches_the_formula(kernels: Kernels) -> None:
    """oracle: exp(k s - max) / sum, written out in float64."""
    rng = np.random.default_rng(1)
    s = (rng.standard_normal((40, 97)) * 6).astype(np.float32)
    scaled = s.astype(np.float64) * (1 / math.sqrt(32))
    e = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    expected = e / e.sum(axis=1, keepdims=True)
    got = s.copy()
    kernels.softmax_rows(got, 1 / math.sqrt(32))
    assert np.abs(got - expected).max() <= 1e-7
    assert np.abs(got.sum(axis=1) - 1).max() <= 1e-6


def test_add_layer_norm_matches_the_formula(kernels: Kernels) -> None:
    """oracle: LayerNorm(x + residual + b) written out in float64 (biased variance)."""
    rng = np.random.default_rng(2)
    x, residual = (rng.standard_normal((2, 9, 384)) * 3 + 1).astype(np.float32)
    bias, gamma, beta = rng.standard_normal((3, 384)).astype(np.float32)
    z = x.astype(np.float64) + residual + bias
    mean = z.mean(axis=1, keepdims=True)
    var = ((z - mean) ** 2).mean(axis=1, keepdims=True)
    expected = (z - mean) / np.sqrt(var + 1e-12) * gamma + beta
    got = x.copy()
    kernels.add_layer_norm(got, residual, bias, gamma, beta, 1e-12)
    assert np.abs(got - expected).max() <= 1e-5


def test_compiled_and_numpy_gelu_agree() -> None:
    """oracle: the numpy twin (same formula, numpy's exp): within 3 float32 units of each other
    on GELU values up to 8."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((64, 1536)) * 3).astype(np.float32)
    bias = rng.standard_normal(1536).astype(np.float32)
    a, b = x.copy(), x.copy()
    compiled.kernels().gelu_bias(a, bias)
    NUMPY_KERNELS.gelu_bias(b, bias)
    assert np.abs(a - b).max() <= 3 * np.spacing(np.float32(8))


def _expf32(y: np.ndarray) -> np.ndarray:
    """Cephes' expf step by step in numpy float32 (each operation rounded to float32, none fused)."""
    f = np.float32
    v = np.maximum(y, f(-87.33654))
    n = np.floor(v * f(1.44269504088896341) + f(0.5))
    r = v - n * f(0.693359375) - n * f(-2.12194440e-4)
    p = f(1.9875691500e-4)
    for c in (1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1):
        p = p * r + f(c)
    out = p * r * r + r + f(1.0)
    return out * ((n.astype(np.int32) + 127) << 23).view(np.float32)


def test_exp_is_cephes_expf_in_float32_throughout() -> None:
    """oracle: Cephes' expf written out in numpy float32 (``_expf32``), bit for bit on 200,001
    arguments in [-90, 0]: the range reduction and the polynomial run in float32, not widened to
    float64 (half the vector width) on the way."""
    compiled.kernels()
    y = np.linspace(-90, 0, 200_001).astype(np.float32)
    out = np.empty_like(y)
    compiled._exp(y, out, np.empty(y.size, dtype=np.int32))
    expected = _expf32(y)
    assert expected.dtype == np.float32
    assert np.array_equal(out, expected)
