"""Exhibit II's grid: BM25's training recall@k for every (k1, b), and the cell a run uses.

The best cell maximises recall@k on the training split (never the test split: the numbers a
learner reports are measured once, after choosing); :func:`grid_rule` states the tie-break in the
words every face shows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from raglab.base.ranking import FloatArray, IntArray
from raglab.bm25.grid import grid_top_k
from raglab.pipeline.cache import CacheKind
from raglab.pipeline.lab import Lab
from raglab.run_settings import ChunkingKey
from raglab.settings import CACHE_SIZE, GRID_B, GRID_K1, default

__all__ = [
    "GRID_B_STEP",
    "GRID_K1_STEP",
    "Grid",
    "GridCells",
    "bm25_grid",
    "grid_rule",
    "local_cells",
]

#: ``cells(queries, k1s, bs, k)``: every grid cell's top k and whether each of those chunks
#: shares a term with its query (scores above 0), ``(tops, positive)``, both shaped
#: (len(k1s), len(bs), len(queries), min(k, N)), ties by ascending chunk index.
GridCells = Callable[
    [list[list[str]], Sequence[float], Sequence[float], int],
    tuple[IntArray, npt.NDArray[np.bool_]],
]


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


#: Grids by (split, k, chunking).
GRIDS: CacheKind[tuple[str, int, ChunkingKey | None], Grid] = CacheKind("BM25 grids", CACHE_SIZE)

#: The grid's steps, the units the tie-break's distance is counted in.
GRID_K1_STEP = 0.2
GRID_B_STEP = 0.1


def grid_rule(k: int, split: str = "train") -> str:
    """How :func:`bm25_grid` chooses its best cell, in the words every face shows."""
    where = "training" if split == "train" else split
    return (
        f"The best cell has the highest {where} recall@{k}. Where cells tie, it is the tied cell "
        f"nearest the defaults (k1 = {default('k1')}, b = {default('b')}), distance counted in grid "
        f"steps ({GRID_K1_STEP} in k1, {GRID_B_STEP} in b; equally near: the smaller k1, then "
        "the smaller b), so a flat stretch of the grid does not move the parameters for nothing."
    )


def local_cells(lab: Lab, chunking: ChunkingKey | None = None) -> GridCells:
    """:data:`GridCells` from the lab's own BM25 index (:func:`raglab.bm25.grid.grid_top_k`)."""
    index = lab.indexes.chunk_set(chunking).bm25

    def cells(
        queries: list[list[str]], k1s: Sequence[float], bs: Sequence[float], k: int
    ) -> tuple[IntArray, npt.NDArray[np.bool_]]:
        tops = grid_top_k(index, queries, k1s=k1s, bs=bs, k=k)
        # Whether a chunk shares a term with the query does not depend on k1 or b.
        shares = np.stack([index.scores(q) > 0 for q in queries]) if queries else None
        if shares is None:
            return tops, np.zeros(tops.shape, dtype=bool)
        rows = np.arange(len(queries))[None, None, :, None]
        return tops, shares[rows, tops]

    return cells


def bm25_grid(
    lab: Lab,
    *,
    split: str = "train",
    k: int,
    chunking: ChunkingKey | None = None,
    cells: GridCells | None = None,
) -> Grid:
    """recall@k for k1 in GRID_K1 and b in GRID_B, on ``split`` (tune on train only).

    The best cell maximises recall@k; ties go to the cell nearest the defaults (k1 = 1.2,
    b = 0.75) in units of the grid steps, so a flat region does not move the parameters for
    nothing (:func:`grid_rule` says so in words). ``cells`` searches every cell (None: the
    lab's own index, :func:`local_cells`; a Dask cluster's shards give the same, bit for bit).
    """
    key = (split, k, chunking)

    def build() -> Grid:
        cs = lab.indexes.chunk_set(chunking)
        qs = lab.require(split, "the BM25 grid")
        search = local_cells(lab, chunking) if cells is None else cells
        tops, positive = search([lab.indexes.query_tokens(q) for q in qs], GRID_K1, GRID_B, k)
        # A cell finds a question when one of its top k holds the answer and shares a term with
        # the question (a chunk scoring 0 is not retrieved, as in bm25_ranking).
        relevant = np.zeros((len(qs), len(cs)), dtype=bool)
        for i, q in enumerate(qs):
            relevant[i, list(cs.relevance(q))] = True
        rows = np.arange(len(qs))[None, None, :, None]
        found = (relevant[rows, tops] & positive).any(axis=3)
        shape = (len(GRID_K1), len(GRID_B))
        recall = found.mean(axis=2) if qs else np.zeros(shape)
        hits = found.sum(axis=2).astype(np.int64) if qs else np.zeros(shape, dtype=np.int64)
        k1s = np.asarray(GRID_K1)
        bs = np.asarray(GRID_B)
        distance = ((k1s[:, None] - default("k1")) / GRID_K1_STEP) ** 2 + (
            (bs[None, :] - default("b")) / GRID_B_STEP
        ) ** 2
        order = np.lexsort((distance.ravel(), -recall.ravel()))
        i, j = np.unravel_index(order[0], recall.shape)
        tied = tuple((int(a), int(c)) for a, c in zip(*np.nonzero(hits == hits[i, j]), strict=True))
        return Grid(
            GRID_K1,
            GRID_B,
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

    return lab.caches.of(GRIDS).get(key, build)
