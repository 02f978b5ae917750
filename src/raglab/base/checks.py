"""Validators the numeric stages share, so each refuses bad input in the same words.

One place says what a feature vector or a matrix must be.
"""

from __future__ import annotations

import numpy as np

from raglab.base.ranking import FloatArray

__all__ = ["as_float_matrix", "as_float_vector"]


def as_float_vector(name: str, values: FloatArray, m: int | None = None) -> FloatArray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array, got shape {arr.shape}")
    if m is not None and arr.shape[0] != m:
        raise ValueError(f"{name} has {arr.shape[0]} entries, expected {m} (one per candidate)")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr


def as_float_matrix(name: str, X: FloatArray, d: int | None = None) -> FloatArray:
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-d array (rows, features), got shape {arr.shape}")
    if d is not None and arr.shape[1] != d:
        raise ValueError(f"{name} has {arr.shape[1]} columns, expected {d}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr
