"""Exhibit II: :func:`bm25_search` (a ranking with each term's share of every score),
:func:`example_queries`, :func:`bm25_recall` and :func:`grid_view` (the k1 x b tuning grid as
every face shows it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from raglab import _config as C
from raglab.pipeline.exhibits._shared import _snippet
from raglab.pipeline.lab import ChunkingKey, Lab
from raglab.pipeline.retrieval import (
    RetrievalSettings,
    bm25_grid,
    bm25_ranking,
    measure,
    ranked_chunks,
)
from raglab.questions import Question

# How many example queries exhibit II offers.
EXAMPLE_QUERIES = 5


def bm25_search(
    lab: Lab, query: str, *, k1: float = C.BM25_K1, b: float = C.BM25_B, top: int = 5
) -> dict[str, Any]:
    """BM25 over the heading chunks with each query term's share of every score.

    Chunks sharing no term with the query are not retrieved (as in
    :func:`~raglab.pipeline.retrieval.bm25_ranking`).
    """
    cs = lab.chunk_set()
    index = cs.bm25.with_params(k1=k1, b=b)
    tokens = lab.query_tokens(query)
    rows = ranked_chunks(lab, bm25_ranking(lab, query, k1=k1, b=b), k=top)
    for row in rows:
        chunk = cs.chunks[int(row["index"])]
        row["snippet"] = _snippet(chunk.text)
        row["words"] = chunk.n_words
        row["terms"] = [
            {
                "term": t.term,
                "tf": t.tf,
                "df": t.df,
                "idf": t.idf,
                "length_factor": t.length_factor,
                "contribution": t.contribution,
            }
            for t in index.explain(tokens, int(row["index"]))
        ]
    return {
        "query": query,
        "tokens": tokens,
        "k1": k1,
        "b": b,
        "chunks": len(cs),
        "avgdl": index.avgdl,
        "results": rows,
    }


def example_queries(lab: Lab) -> list[dict[str, str]]:
    """One training question of each kind (answerable ones), up to :data:`EXAMPLE_QUERIES`.

    Taken from the training split so that the test questions stay unseen while the reader tunes.
    """
    seen: dict[str, Question] = {}
    for q in lab.split("train", answerable=True):
        if q.kind not in seen:
            seen[q.kind] = q
    return [
        {"id": q.id, "kind": q.kind, "query": q.question}
        for q in list(seen.values())[:EXAMPLE_QUERIES]
    ]


def bm25_recall(lab: Lab, *, k1: float, b: float) -> dict[str, float]:
    """recall@5 of BM25 at (k1, b) on the training and test splits (heading chunks)."""
    settings = RetrievalSettings("bm25", k1=k1, b=b)
    key = f"recall@{C.GRID_RECALL_K}"
    return {
        "train": measure(lab, "train", settings)[key],
        "test": measure(lab, "test", settings)[key],
    }


@dataclass(frozen=True, slots=True)
class GridCell:
    """One (k1, b) of the grid view: recall@k on the split the grid is tuned on, and on the
    split it is measured on (None when the view measures no other split)."""

    k1: float
    b: float
    train_recall: float
    split_recall: float | None


@dataclass(frozen=True, slots=True)
class GridView:
    """The BM25 tuning grid as ``raglab bm25 grid``, the web lab's ``/api/bm25/grid`` and the
    report show it.

    ``recall[i][j]`` is recall@``k`` on ``tuned_on`` at k1 = ``k1s[i]``, b = ``bs[j]``; ``best`` is
    the cell the grid chooses (:func:`~raglab.pipeline.retrieval.bm25_grid`: ties go to the cell
    nearest the defaults) and ``default`` the library's defaults (k1 = ``BM25_K1``, b =
    ``BM25_B``, which need not lie on the grid). ``split`` is the split measured at those two
    cells, once, never tuned on (None: none measured, ``split_recall`` is then None).
    """

    tuned_on: str
    split: str | None
    k: int
    chunking: ChunkingKey
    k1s: tuple[float, ...]
    bs: tuple[float, ...]
    recall: tuple[tuple[float, ...], ...]
    best: GridCell
    default: GridCell


def grid_view(
    lab: Lab, *, split: str | None = "test", chunking: ChunkingKey | None = None
) -> GridView:
    """The k1 x b grid of training recall@5, its best cell and the defaults' cell, each also
    measured on ``split`` (default: test; None measures no other split).

    The one composition of the grid: the command line, the web lab and the report translate
    this view, so they show the same numbers.
    """
    key = chunking if chunking is not None else ChunkingKey()
    grid = bm25_grid(lab, chunking=chunking)
    name = f"recall@{grid.k}"

    def recall(k1: float, b: float, on: str) -> float:
        return measure(lab, on, RetrievalSettings("bm25", k1=k1, b=b, chunking=key))[name]

    def cell(k1: float, b: float, train: float | None = None) -> GridCell:
        return GridCell(
            k1=float(k1),
            b=float(b),
            train_recall=recall(k1, b, grid.split) if train is None else train,
            split_recall=recall(k1, b, split) if split is not None else None,
        )

    return GridView(
        tuned_on=grid.split,
        split=split,
        k=grid.k,
        chunking=key.resolved(),
        k1s=tuple(float(v) for v in grid.k1s),
        bs=tuple(float(v) for v in grid.bs),
        recall=tuple(tuple(float(v) for v in row) for row in grid.recall.tolist()),
        best=cell(grid.best_k1, grid.best_b, grid.best_recall),
        default=cell(C.BM25_K1, C.BM25_B),
    )
