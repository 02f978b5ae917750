"""Exhaustive BM25 scoring: every posting of a query scored, for one (k1, b) or a whole grid.

One job: turn flattened postings (query, document, tf, idf x query count; see
:class:`raglab.bm25.postings.Postings`) into dense BM25 scores, for one query at one (k1, b)
(:func:`query_scores`) or for a batch of queries over a whole (k1, b) grid (:func:`cell_scores`).
Both take the saturation from :mod:`raglab.bm25.formula` and sum the same products in the same
order, so they agree bit for bit.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp  # type: ignore[import-untyped]

from raglab.base.ranking import FloatArray
from raglab.bm25.formula import saturation
from raglab.bm25.postings import Postings

__all__ = ["cell_scores", "query_scores"]


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
    table = saturation(tf, ratio, k1, b)  # (cells, pairs)
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
