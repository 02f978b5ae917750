"""Exhibit II: BM25 search with each term's share of the score, and the k1 x b grid."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from raglab import _config as C
from raglab.pipeline.exhibits import bm25_recall, bm25_search, example_queries, grid_view
from raglab.web.models import setting_query
from raglab.web.state import State, plain

router = APIRouter(prefix="/bm25", tags=["II. BM25"])

K1 = Annotated[float, setting_query("k1")]
B = Annotated[float, setting_query("b")]
Top = Annotated[int, Query(ge=1, le=50, description="how many results")]


def _query(q: str) -> str:
    text = q.strip()
    if not text:
        raise ValueError("q: type some words to search for")
    return text


@router.get("/search", summary="Rank the heading chunks by BM25 and explain every score")
def get_search(
    state: State,
    q: Annotated[str, Query(min_length=1, max_length=500, pattern=r"\S", description="the query")],
    k1: K1 = C.BM25_K1,
    b: B = C.BM25_B,
    top: Top = 5,
) -> dict[str, Any]:
    query = _query(q)
    result: dict[str, Any] = state.compute(
        ("bm25", query, k1, b, top),
        lambda: plain(bm25_search(state.lab, query, k1=k1, b=b, top=top)),
    )
    return result


@router.get("/examples", summary="Example queries: one training question of each kind")
def get_examples(state: State) -> dict[str, Any]:
    return {"examples": state.call(lambda: example_queries(state.lab))}


@router.get("/grid", summary="Training recall@5 for every k1 and b on the grid")
def get_grid(state: State) -> dict[str, Any]:
    def build() -> dict[str, Any]:
        # The grid alone (no other split measured): the exhibit asks /recall for test numbers.
        view = grid_view(state.lab, split=None)
        return {
            "split": view.tuned_on,
            "k": view.k,
            "k1s": list(view.k1s),
            "bs": list(view.bs),
            "recall": plain(view.recall),
            "best": {"k1": view.best.k1, "b": view.best.b, "recall": view.best.train_recall},
            "default": {
                "k1": view.default.k1,
                "b": view.default.b,
                "recall": view.default.train_recall,
            },
        }

    result: dict[str, Any] = state.compute(("bm25 grid",), build)
    return result


@router.get("/recall", summary="recall@5 of BM25 at one k1 and b, on train and on test")
def get_recall(state: State, k1: K1 = C.BM25_K1, b: B = C.BM25_B) -> dict[str, Any]:
    values = state.call(lambda: bm25_recall(state.lab, k1=k1, b=b))
    return {"k1": k1, "b": b, "k": C.GRID_RECALL_K, **plain(values)}
