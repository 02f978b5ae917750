"""Exhibit II: BM25 search with each term's share of the score, and the k1 x b grid."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from raglab.pipeline.exhibits.bm25 import (
    GridCell,
    bm25_recall,
    bm25_search,
    example_queries,
    grid_view,
    stemming_effect,
)
from raglab.pipeline.lab import Lab
from raglab.settings import or_default, setting
from raglab.web.models import setting_query
from raglab.web.state import State, WebState, plain

router = APIRouter(prefix="/bm25", tags=["II. BM25"])

# Absent: the table's default, resolved here at the face's edge (or_default), not in the signature.
K1 = Annotated[float | None, setting_query("k1")]
B = Annotated[float | None, setting_query("b")]
Top = Annotated[int, Query(ge=1, le=50, description="how many results")]
Stem = Annotated[
    bool | None,
    Query(
        title=setting("stem").label,
        description=f"{setting('stem').help}: true or false. Absent or null: the served lab's "
        "own (/api/meta's stem).",
    ),
]


def _lab(state: WebState, stem: bool | None) -> Lab:
    """The served lab, or its sibling with the other stemming (call under the lab's lock)."""
    return state.lab if stem is None else state.lab.with_stem(stem)


def _stem(state: WebState, stem: bool | None) -> bool:
    return state.lab.stem if stem is None else stem


def _query(q: str) -> str:
    text = q.strip()
    if not text:
        raise ValueError("q: type some words to search for")
    return text


@router.get(
    "/search",
    summary="Rank the heading chunks by BM25 and explain every score",
    response_model=dict[str, Any],
)
async def get_search(
    state: State,
    q: Annotated[str, Query(min_length=1, max_length=500, pattern=r"\S", description="the query")],
    k1: K1 = None,
    b: B = None,
    top: Top = 5,
    stem: Stem = None,
) -> Response:
    # Asked at every keystroke: answered from the event loop once cached (WebState.json).
    k1, b = or_default("k1", k1), or_default("b", b)
    query = _query(q)
    on = _stem(state, stem)
    return await state.json(
        ("bm25", query, k1, b, top, on),
        lambda: plain(bm25_search(_lab(state, on), query, k1=k1, b=b, top=top)),
    )


@router.get("/examples", summary="Example queries: one training question of each kind")
def get_examples(state: State) -> dict[str, Any]:
    return {"examples": state.call(lambda: example_queries(state.lab))}


def _cell(cell: GridCell) -> dict[str, Any]:
    return {
        "k1": cell.k1,
        "b": cell.b,
        "recall": cell.train_recall,
        "hits": cell.train_hits,
        "at": list(cell.at),
    }


@router.get(
    "/grid",
    summary="Training recall@5 for every k1 and b on the grid, with the counts behind it, the "
    "cells tied with the best and the rule that chooses it",
)
def get_grid(state: State, stem: Stem = None) -> dict[str, Any]:
    on = _stem(state, stem)

    def build() -> dict[str, Any]:
        # The grid alone (no other split measured): the exhibit asks /test for a test number,
        # once, for the setting the learner commits to.
        view = grid_view(_lab(state, on), split=None)
        return {
            "split": view.tuned_on,
            "k": view.k,
            "stem": view.stem,
            "k1s": list(view.k1s),
            "bs": list(view.bs),
            "recall": plain(view.recall),
            "hits": plain(view.hits),
            "questions": view.questions,
            "cells": len(view.k1s) * len(view.bs),
            "tied": plain(view.tied),
            "rule": view.rule,
            "best": _cell(view.best),
            "default": _cell(view.default),
        }

    result: dict[str, Any] = state.compute(("bm25 grid", on), build)
    return result


@router.get(
    "/recall",
    summary="Training recall@5 of BM25 at one k1 and b (the share and its count), and the "
    "training questions stemming fixes and breaks there",
)
def get_recall(state: State, k1: K1 = None, b: B = None, stem: Stem = None) -> dict[str, Any]:
    k1, b = or_default("k1", k1), or_default("b", b)
    on = _stem(state, stem)

    def work() -> dict[str, Any]:
        found = bm25_recall(_lab(state, on), k1=k1, b=b, split="train")
        return {**found, "stemming": stemming_effect(state.lab, k1=k1, b=b)}

    values = state.call(work)
    return {"k1": k1, "b": b, "stem": on, **plain(values)}


@router.get(
    "/test",
    summary="Test recall@5 of BM25 at one k1 and b (the share and its count): measured once, "
    "for the setting the learner commits to, never tuned on",
)
def get_test(state: State, k1: K1 = None, b: B = None, stem: Stem = None) -> dict[str, Any]:
    k1, b = or_default("k1", k1), or_default("b", b)
    on = _stem(state, stem)
    values = state.call(lambda: bm25_recall(_lab(state, on), k1=k1, b=b, split="test"))
    return {"k1": k1, "b": b, "stem": on, **plain(values)}
