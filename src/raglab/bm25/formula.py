"""The BM25 formula, written once: Lucene's IDF, the saturation and their checks.

BM25 (Robertson and Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and Beyond",
Foundations and Trends in IR 3(4)) as Lucene's ``BM25Similarity`` computes it. For a query q and
a document d of |d| tokens, in a collection of N documents of mean length avgdl::

    score(q, d)  = sum over q's distinct terms t of  weight(t) * saturation(f, |d|)
    weight(t)    = IDF(t) * (count of t in q)
    IDF(t)       = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))                   (Lucene; always > 0)
    saturation   = f (k1 + 1) / (f + k1 (1 - b + b |d| / avgdl))

with f the frequency of t in d and n_t the number of documents holding t; k1 >= 0 (0 scores the
mere presence of a term) and b in [0, 1] (0 ignores document length). The caller gives k1 and b:
nothing here has a default.

The saturation is split in two so that its document part can be computed once per document and
reused by every posting (the indexes keep it): the *length term* ``k1 ((1 - b) + b ratio)``, with
``ratio = |d| / avgdl``, and the *impact* ``f (k1 + 1) / (f + length term)``. :func:`saturation`
is exactly ``impact(f, length_term(ratio, k1, b), k1)``: the same float64 operations in the same
order, so every path (exhaustive scoring, MaxScore, the numpy batch, the compiled kernel, the
Dask shard) computes bitwise the same value from the same inputs. The functions take numpy arrays
(elementwise) or scalars; the compiled kernel compiles :func:`impact` itself with numba (its
scalar form), so the expression is not written a second time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from raglab.base.ranking import FloatArray, IntArray

__all__ = [
    "check_k",
    "check_params",
    "check_query",
    "impact",
    "length_factor",
    "length_term",
    "lucene_idf",
    "saturation",
]

# k1 or b: one value, or (grid_top_k's cells) a float64 array broadcast against the postings.
Param = float | FloatArray


def lucene_idf(df: IntArray | int, n_docs: int) -> FloatArray:
    """Lucene's IDF, ``ln(1 + (N - n_t + 0.5) / (n_t + 0.5))``, elementwise: ``df`` (V,) or a
    scalar n_t, ``n_docs`` N; float64 of df's shape. ``log1p`` keeps it exact for rare terms."""
    n_t = np.asarray(df, dtype=np.float64)
    out: FloatArray = np.log1p((n_docs - n_t + 0.5) / (n_t + 0.5))
    return out


def length_factor(ratio: FloatArray, b: Param) -> FloatArray:
    """Document length normalisation, ``(1 - b) + b ratio`` with ``ratio = |d| / avgdl``,
    elementwise (broadcast); 1 for a document of mean length, whatever b."""
    out: FloatArray = (1.0 - b) + b * ratio
    return out


def length_term(ratio: FloatArray, k1: Param, b: Param) -> FloatArray:
    """The saturation's document part, ``k1 ((1 - b) + b ratio)`` (k1 times
    :func:`length_factor`), elementwise (broadcast): (N,) for every document at one (k1, b), for
    instance."""
    out: FloatArray = k1 * length_factor(ratio, b)
    return out


def impact(tf: Any, length: Any, k1: Param) -> Any:
    """The saturation from its precomputed document part: ``tf (k1 + 1) / (tf + length)``, with
    ``length`` = :func:`length_term` of the posting's document. Elementwise over arrays of one
    shape (tf of any unsigned or float type; the result is float64), or on scalars (the compiled
    kernel's form)."""
    return (tf * (k1 + 1.0)) / (tf + length)


def saturation(tf: np.ndarray, ratio: FloatArray, k1: Param, b: Param) -> FloatArray:
    """``tf (k1 + 1) / (tf + k1 ((1 - b) + b ratio))`` elementwise (arrays of one shape, float64
    result): :func:`impact` of :func:`length_term`, the one order of operations every path uses."""
    out: FloatArray = impact(tf, length_term(ratio, k1, b), k1)
    return out


def check_params(k1: float, b: float) -> None:
    """Refuse a k1 that is not a finite number >= 0, or a b outside [0, 1]."""
    if not (math.isfinite(k1) and k1 >= 0):
        raise ValueError(f"k1 must be a finite number >= 0, got {k1}")
    if not (math.isfinite(b) and 0 <= b <= 1):
        raise ValueError(f"b must lie in [0, 1], got {b}")


def check_k(k: int) -> None:
    """Refuse a depth k that is not a positive integer (bools refused)."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def check_query(query_tokens: Sequence[str]) -> None:
    """Refuse a query given as a string instead of a list of tokens."""
    if isinstance(query_tokens, str | bytes):
        raise ValueError("query_tokens must be a list of tokens, not a string")
