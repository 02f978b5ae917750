"""The BM25 formula over flattened postings: Lucene's IDF, and scores at one or many (k1, b).

One job: turn postings (query, document, tf, idf x query count) into BM25 scores, for one query at
one (k1, b) (:func:`query_scores`) or for a batch of queries over a whole (k1, b) grid
(:func:`cell_scores`), the two summing the same products in the same order so that they agree bit
for bit; plus the checks of k1, b, k and a query. Private: :mod:`raglab.bm25` is the public face
(see its docstring for the formula and the tie-breaking).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp  # type: ignore[import-untyped]

from raglab._bm25_topk import saturation
from raglab._types import FloatArray, IntArray


def lucene_idf(df: IntArray | int, n_docs: int) -> FloatArray:
    """Lucene's IDF, ln(1 + (N - n_t + 0.5) / (n_t + 0.5)), elementwise."""
    n_t = np.asarray(df, dtype=np.float64)
    out: FloatArray = np.log1p((n_docs - n_t + 0.5) / (n_t + 0.5))
    return out


@dataclass(frozen=True, slots=True)
class Postings:
    """Flattened postings of a batch of queries: one entry per (query, query term, document)."""

    query: IntArray  # (P,) position of the query in the batch
    doc: IntArray  # (P,) document index
    tf: FloatArray  # (P,) frequency of the term in the document
    weight: FloatArray  # (P,) idf(t) * query count of t


def check_params(k1: float, b: float) -> None:
    if not (math.isfinite(k1) and k1 >= 0):
        raise ValueError(f"k1 must be a finite number >= 0, got {k1}")
    if not (math.isfinite(b) and 0 <= b <= 1):
        raise ValueError(f"b must lie in [0, 1], got {b}")


def check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def check_query(query_tokens: Sequence[str]) -> None:
    if isinstance(query_tokens, str | bytes):
        raise ValueError("query_tokens must be a list of tokens, not a string")


def cell_scores(
    postings: Postings,
    length_ratio: FloatArray,
    k1s: FloatArray,
    bs: FloatArray,
    n_queries: int,
    n_docs: int,
) -> FloatArray:
    """Scores of every (k1, b) cell for a batch of queries: shape (len(k1s), len(bs), Q, N).

    The saturation ``tf (k1 + 1) / (tf + k1 (1 - b + b |d| / avgdl))`` depends on the posting
    only through the pair (tf, d), so it is tabulated once per distinct pair and cell (G, pairs x
    cells); a sparse matrix M (query-document x pairs) holds the idf weights times query counts,
    and the scores are M G, one cell at a time. Single queries take :func:`query_scores`, which
    forms the same products and sums them in the same order, so ``scores``, ``search`` and
    ``grid_top_k`` agree bitwise.
    """
    n_cells = len(k1s) * len(bs)
    if postings.doc.size == 0:
        return np.zeros((len(k1s), len(bs), n_queries, n_docs), dtype=np.float64)
    # Distinct (tf, document) pairs; tf values are small integers, so the key is exact.
    pair_key = postings.tf.astype(np.int64) * n_docs + postings.doc
    pairs, pair_of = np.unique(pair_key, return_inverse=True)
    tf = (pairs // n_docs).astype(np.float64)[None, :]
    ratio = length_ratio[pairs % n_docs][None, :]
    k1 = np.repeat(k1s, len(bs))[:, None]
    b = np.tile(bs, len(k1s))[:, None]
    length_factor = (1.0 - b) + b * ratio
    table = (tf * (k1 + 1.0)) / (tf + k1 * length_factor)  # (cells, pairs)
    # Rows of M in query-document order, each row's entries in ascending term order (postings
    # arrive term by term and the sort is stable). Built directly, not through COO, which would
    # merge and reorder entries: every score is then summed term by term, so two documents with
    # the same per-term contributions tie exactly.
    rows = postings.query * n_docs + postings.doc
    order = np.argsort(rows, kind="stable")
    indptr = np.zeros(n_queries * n_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_queries * n_docs), out=indptr[1:])
    weights = sp.csr_matrix(
        (postings.weight[order], pair_of.reshape(-1)[order].astype(np.int64), indptr),
        shape=(n_queries * n_docs, pairs.size),
    )
    out = np.empty((n_cells, n_queries * n_docs), dtype=np.float64)
    # One sparse mat-vec per cell writes a contiguous row: no transpose of the result needed.
    for cell in range(n_cells):
        out[cell] = weights @ table[cell]
    scores: FloatArray = out.reshape(len(k1s), len(bs), n_queries, n_docs)
    return scores


def query_scores(
    postings: Postings, length_ratio: FloatArray, k1: float, b: float, n_docs: int
) -> FloatArray:
    """Scores of one query at one (k1, b), shape (n_docs,): the one-cell case of
    :func:`cell_scores`, without its pair table and sparse product.

    Each posting's saturation is computed with the same expression as the table, and
    ``bincount`` adds the weighted saturations into each document's score in posting order, which
    is ascending term order: the same products summed in the same order as a row of M G, so both
    paths give bitwise the same scores (``grid_top_k`` relies on it).
    """
    if postings.doc.size == 0:
        return np.zeros(n_docs, dtype=np.float64)
    sat = saturation(postings.tf, length_ratio[postings.doc], k1, b)
    # With float weights bincount returns float64 (the cast only informs the type checker).
    out: FloatArray = np.bincount(
        postings.doc, weights=postings.weight * sat, minlength=n_docs
    ).astype(np.float64, copy=False)
    return out


__all__ = [
    "Postings",
    "cell_scores",
    "check_k",
    "check_params",
    "check_query",
    "lucene_idf",
    "query_scores",
]
