"""Exhibit II's views: BM25 search explained, recall, stemming and the k1 x b grid.

Exhibit II: :func:`bm25_search` (a ranking with each term's share of every score),
:func:`example_queries`, :func:`bm25_recall` (a share with its count), :func:`stemming_effect`
(what stemming fixes and breaks) and :func:`grid_view` (the k1 x b tuning grid as every face
shows it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from raglab.corpus.questions import Question
from raglab.pipeline.exhibits._shared import _snippet
from raglab.pipeline.grid import bm25_grid, grid_rule
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import first_ranks, measure, rank, ranked_chunks
from raglab.run_settings import ChunkingKey, RetrievalSettings
from raglab.settings import GRID_RECALL_K, default
from raglab.text.tokens import tokenize

# How many example queries exhibit II offers.
EXAMPLE_QUERIES = 5


def bm25_search(lab: Lab, query: str, *, k1: float, b: float, top: int = 5) -> dict[str, Any]:
    """BM25 over the heading chunks with each query term's share of every score.

    Chunks sharing no term with the query are not retrieved (as in
    :func:`~raglab.pipeline.retrieval.bm25_ranking`). Each term's ``share`` is its contribution
    divided by the chunk's score. Stemming is the lab's; ``stemmed`` pairs each query word
    stemming changed with its stem.
    """
    cs = lab.indexes.chunk_set()
    index = cs.bm25.with_params(k1=k1, b=b)
    tokens = lab.indexes.query_tokens(query)
    rows = ranked_chunks(lab, rank(lab, query, RetrievalSettings("bm25", k1, b)), k=top)
    for row in rows:
        chunk = cs.chunks[int(row["index"])]
        row["snippet"] = _snippet(chunk.text)
        row["words"] = chunk.n_words
        score = float(row["score"])
        row["terms"] = [
            {
                "term": t.term,
                "tf": t.tf,
                "df": t.df,
                "idf": t.idf,
                "length_factor": t.length_factor,
                "contribution": t.contribution,
                # The term's part of the chunk's score (a retrieved chunk scores above 0).
                "share": t.contribution / score if score > 0 else 0.0,
            }
            for t in index.explain(tokens, int(row["index"]))
        ]
    # Each word stemming changed, beside its stem (none when the lab does not stem).
    words = tokenize(query, stem=False, analyzer=lab.analyzer)
    stemmed = (
        [{"word": w, "stem": t} for w, t in zip(words, tokens, strict=True) if w != t]
        if lab.stem and len(words) == len(tokens)
        else []
    )
    return {
        "query": query,
        "tokens": tokens,
        "stem": lab.stem,
        "stemmed": stemmed,
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


def bm25_recall(lab: Lab, *, k1: float, b: float, split: str = "train") -> dict[str, Any]:
    """recall@5 of BM25 at (k1, b) on ``split`` (heading chunks): the share, and the count it is
    the share of (``hits`` of ``questions``, the split's answerable questions).

    Exhibit II asks for the training split on every move of its sliders, and for the test split
    once, for the setting the learner commits to.
    """
    settings = RetrievalSettings("bm25", k1=k1, b=b)
    k = GRID_RECALL_K
    ranks = first_ranks(lab, split, settings)
    return {
        "split": split,
        "k": k,
        "hits": sum(r is not None and r <= k for r in ranks),
        "questions": len(ranks),
        "recall": measure(lab, split, settings)[f"recall@{k}"],
    }


def stemming_effect(lab: Lab, *, k1: float, b: float) -> dict[str, Any]:
    """What stemming changes for BM25 at (k1, b) on the training questions: those whose answer
    is among the first five only with stemming (``fixes``) and only without it (``breaks``).

    The two sides are :meth:`Lab.with_stem` of ``lab``, so the analyzer stays the lab's (the
    Lucene analyzer stems either way, and then nothing changes).
    """
    settings = RetrievalSettings("bm25", k1=k1, b=b)
    k = GRID_RECALL_K
    plain, stemmed = (first_ranks(lab.with_stem(on), "train", settings) for on in (False, True))
    rows: dict[str, list[dict[str, str]]] = {"fixes": [], "breaks": []}
    for q, off, on in zip(lab.split("train", answerable=True), plain, stemmed, strict=True):
        before, after = off is not None and off <= k, on is not None and on <= k
        if before != after:
            rows["fixes" if after else "breaks"].append({"id": q.id, "question": q.question})
    return {"split": "train", "k": k, "questions": len(plain), **rows}


@dataclass(frozen=True, slots=True)
class GridCell:
    """One (k1, b) of the grid view: recall@k on the split the grid is tuned on, and on the
    split it is measured on (None when the view measures no other split), each also as the
    count of questions it is the share of.

    ``at`` is the cell's place on the grid as (row, column) indices, between two of them where
    the value lies between two grid values (the default b = 0.75 lies halfway between the
    columns of 0.7 and 0.8: column 7.5).
    """

    k1: float
    b: float
    train_recall: float
    split_recall: float | None
    train_hits: int
    split_hits: int | None
    at: tuple[float, float]


@dataclass(frozen=True, slots=True)
class GridView:
    """The BM25 tuning grid as ``raglab bm25 grid``, the web lab's ``/api/bm25/grid`` and the
    report show it.

    ``recall[i][j]`` is recall@``k`` on ``tuned_on`` at k1 = ``k1s[i]``, b = ``bs[j]``, and
    ``hits[i][j]`` the number of the ``questions`` answerable questions of ``tuned_on`` it is the
    share of. ``best`` is the cell the grid chooses by ``rule``
    (:func:`~raglab.pipeline.retrieval.bm25_grid`: ties go to the cell nearest the defaults),
    ``tied`` every cell, as (i, j), with as many hits as the best (the best among them), and
    ``default`` the library's defaults (k1 = ``BM25_K1``, b = ``BM25_B``, which need not lie on
    the grid). ``split`` is the split measured at those two cells, once, never tuned on (None:
    none measured; ``split_recall`` and ``split_hits`` are then None, as is
    ``split_questions``). ``stem``: whether the lab's retrieval tokens are stemmed.
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
    hits: tuple[tuple[int, ...], ...]
    questions: int
    split_questions: int | None
    tied: tuple[tuple[int, int], ...]
    rule: str
    stem: bool


def grid_view(
    lab: Lab, *, split: str | None = "test", chunking: ChunkingKey | None = None
) -> GridView:
    """The k1 x b grid of training recall@5 (with the counts behind it and the cells tied with
    the best), its best cell and the defaults' cell, each also measured on ``split`` (default:
    test; None measures no other split).

    The one composition of the grid: the command line, the web lab and the report translate
    this view, so they show the same numbers. Stemming is the lab's (:meth:`Lab.with_stem`
    gives the lab the other way).
    """
    key = chunking if chunking is not None else ChunkingKey()
    grid = bm25_grid(lab, k=GRID_RECALL_K, chunking=chunking)
    name = f"recall@{grid.k}"
    k1s = tuple(float(v) for v in grid.k1s)
    bs = tuple(float(v) for v in grid.bs)

    def recall(k1: float, b: float, on: str) -> tuple[float, int, int]:
        settings = RetrievalSettings("bm25", k1=k1, b=b, chunking=key)
        ranks = first_ranks(lab, on, settings)
        hits = sum(r is not None and r <= grid.k for r in ranks)
        return measure(lab, on, settings)[name], hits, len(ranks)

    def place(value: float, values: tuple[float, ...]) -> float:
        return float(np.interp(value, values, np.arange(len(values))))

    def cell(k1: float, b: float, train: tuple[float, int] | None = None) -> GridCell:
        on_train = recall(k1, b, grid.split)[:2] if train is None else train
        measured = recall(k1, b, split) if split is not None else None
        return GridCell(
            k1=float(k1),
            b=float(b),
            train_recall=on_train[0],
            split_recall=measured[0] if measured else None,
            train_hits=on_train[1],
            split_hits=measured[1] if measured else None,
            at=(place(k1, k1s), place(b, bs)),
        )

    i, j = k1s.index(grid.best_k1), bs.index(grid.best_b)
    best = cell(grid.best_k1, grid.best_b, (grid.best_recall, int(grid.hits[i, j])))
    return GridView(
        tuned_on=grid.split,
        split=split,
        k=grid.k,
        chunking=key.resolved(),
        k1s=k1s,
        bs=bs,
        recall=tuple(tuple(float(v) for v in row) for row in grid.recall.tolist()),
        best=best,
        default=cell(default("k1"), default("b")),
        hits=tuple(tuple(int(v) for v in row) for row in grid.hits.tolist()),
        questions=grid.questions,
        split_questions=(len(lab.split(split, answerable=True)) if split is not None else None),
        tied=grid.tied,
        rule=grid_rule(grid.k, grid.split),
        stem=lab.stem,
    )
