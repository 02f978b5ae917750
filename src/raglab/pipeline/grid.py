"""Exhibit II's grid: BM25's training recall@k for every (k1, b), and the cell a run uses.

The best cell maximises recall@k on the training split (never the test split: the numbers a
learner reports are measured once, after choosing); :func:`grid_rule` states the tie-break in the
words every face shows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from raglab import _config as C
from raglab._types import FloatArray, IntArray
from raglab.bm25 import grid_top_k
from raglab.pipeline.lab import ChunkingKey, Lab

__all__ = ["GRID_B_STEP", "GRID_K1_STEP", "Grid", "bm25_grid", "grid_rule"]


@dataclass(frozen=True, slots=True)
class Grid:
    """Training recall@k of BM25 for every (k1, b) on the grid, and the chosen cell.

    ``hits[i, j]`` counts the questions of ``split`` whose answer is among the first ``k`` at
    k1 = ``k1s[i]``, b = ``bs[j]``, out of ``questions`` (``recall`` is their share); ``tied``
    lists every cell, as (i, j) in row order, whose hits equal the best cell's.
    """

    k1s: tuple[float, ...]
    bs: tuple[float, ...]
    recall: FloatArray  # shape (len(k1s), len(bs))
    best_k1: float
    best_b: float
    best_recall: float
    split: str
    k: int
    hits: IntArray  # shape (len(k1s), len(bs))
    questions: int
    tied: tuple[tuple[int, int], ...]


#: The grid's steps, the units the tie-break's distance is counted in.
GRID_K1_STEP = 0.2
GRID_B_STEP = 0.1


def grid_rule(k: int = C.GRID_RECALL_K, split: str = "train") -> str:
    """How :func:`bm25_grid` chooses its best cell, in the words every face shows."""
    where = "training" if split == "train" else split
    return (
        f"The best cell has the highest {where} recall@{k}. Where cells tie, it is the tied cell "
        f"nearest the defaults (k1 = {C.BM25_K1}, b = {C.BM25_B}), distance counted in grid "
        f"steps ({GRID_K1_STEP} in k1, {GRID_B_STEP} in b; equally near: the smaller k1, then "
        "the smaller b), so a flat stretch of the grid does not move the parameters for nothing."
    )


def bm25_grid(
    lab: Lab, *, split: str = "train", k: int = C.GRID_RECALL_K, chunking: ChunkingKey | None = None
) -> Grid:
    """recall@k for k1 in GRID_K1 and b in GRID_B, on ``split`` (tune on train only).

    The best cell maximises recall@k; ties go to the cell nearest the defaults (k1 = 1.2,
    b = 0.75) in units of the grid steps, so a flat region does not move the parameters for
    nothing (:func:`grid_rule` says so in words).
    """
    key = ("grid", split, k, chunking)

    def build() -> Grid:
        cs = lab.chunk_set(chunking)
        qs = lab.require(split, "the BM25 grid")
        tops = grid_top_k(
            cs.bm25, [lab.query_tokens(q) for q in qs], k1s=C.GRID_K1, bs=C.GRID_B, k=k
        )
        # hit[q, d]: chunk d holds q's answer and shares a term with q (a chunk scoring 0 is
        # not retrieved, as in bm25_ranking); then any hit among each cell's top k.
        hit = np.zeros((len(qs), len(cs)), dtype=bool)
        for i, q in enumerate(qs):
            hit[i, list(cs.relevance(q))] = True
            hit[i] &= cs.bm25.scores(lab.query_tokens(q)) > 0
        rows = np.arange(len(qs))[None, None, :, None]
        found = hit[rows, tops].any(axis=3)
        shape = (len(C.GRID_K1), len(C.GRID_B))
        recall = found.mean(axis=2) if qs else np.zeros(shape)
        hits = found.sum(axis=2).astype(np.int64) if qs else np.zeros(shape, dtype=np.int64)
        k1s = np.asarray(C.GRID_K1)
        bs = np.asarray(C.GRID_B)
        distance = ((k1s[:, None] - C.BM25_K1) / GRID_K1_STEP) ** 2 + (
            (bs[None, :] - C.BM25_B) / GRID_B_STEP
        ) ** 2
        order = np.lexsort((distance.ravel(), -recall.ravel()))
        i, j = np.unravel_index(order[0], recall.shape)
        tied = tuple((int(a), int(c)) for a, c in zip(*np.nonzero(hits == hits[i, j]), strict=True))
        return Grid(
            C.GRID_K1,
            C.GRID_B,
            recall,
            float(k1s[i]),
            float(bs[j]),
            float(recall[i, j]),
            split,
            k,
            hits=hits,
            questions=len(qs),
            tied=tied,
        )

    value = lab.cache.get(key, build)
    assert isinstance(value, Grid)
    return value
