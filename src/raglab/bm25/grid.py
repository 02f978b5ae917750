"""The (k1, b) grid sweep: every cell's exact BM25 top k for a batch of queries, scored at once.

One job: :func:`grid_top_k`, the exhibit's tuning grid without an index per cell. The postings of
every query are gathered once from the index's statistics and every cell is scored with the
grid form of :func:`raglab.bm25.scoring.cell_scores` (the saturation tabulated per distinct
(tf, document) pair and cell), so each cell equals
``index.with_params(k1=..., b=...).search(query, k=k)`` bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from raglab.base.ranking import IntArray
from raglab.bm25.batch import top_k_rows
from raglab.bm25.formula import check_k, check_params
from raglab.bm25.index import BM25Index
from raglab.bm25.scoring import cell_scores
from raglab.embedding.vectors import check_token_lists

__all__ = ["grid_top_k"]

# Largest (cells x queries x documents) score block grid_top_k holds in memory at once.
_GRID_BLOCK_ELEMENTS = 1 << 23


def grid_top_k(
    index: BM25Index,
    queries: Sequence[Sequence[str]],
    *,
    k1s: Sequence[float],
    bs: Sequence[float],
    k: int,
) -> IntArray:
    """Top-k document indices for every (k1, b) pair of a grid, all queries at once.

    Returns an int64 array of shape (len(k1s), len(bs), len(queries), min(k, n_docs)); entry
    ``[i, j, q]`` equals ``index.with_params(k1=k1s[i], b=bs[j]).search(queries[q], k=k).indices``
    exactly (same scores, same tie-breaking by ascending document index). The postings of every
    query are gathered once and all cells are scored with numpy; queries are processed in blocks
    so that at most about 8 million scores are held at a time.
    """
    check_k(k)
    check_token_lists(queries, what="queries")
    k1_arr = np.asarray(k1s, dtype=np.float64).reshape(-1)
    b_arr = np.asarray(bs, dtype=np.float64).reshape(-1)
    if k1_arr.size == 0 or b_arr.size == 0:
        raise ValueError("k1s and bs must not be empty")
    for k1 in k1_arr:
        for b in b_arr:
            check_params(float(k1), float(b))
    n_docs = index.n_docs
    k_eff = min(int(k), n_docs)
    n_cells = k1_arr.size * b_arr.size
    out = np.zeros((k1_arr.size, b_arr.size, len(queries), k_eff), dtype=np.int64)
    block = max(1, _GRID_BLOCK_ELEMENTS // (n_cells * n_docs))
    for start in range(0, len(queries), block):
        batch = queries[start : start + block]
        scores = cell_scores(
            index.stats.postings(batch),
            index.stats.columns.ratio,
            k1_arr,
            b_arr,
            len(batch),
            n_docs,
        )
        idx, _ = top_k_rows(scores.reshape(-1, n_docs), k_eff, overwrite=True)
        out[:, :, start : start + len(batch)] = idx.reshape(
            k1_arr.size, b_arr.size, len(batch), k_eff
        )
    return out
