"""Exhibit III's routes: the LSA embedding, its spectrum, words, search and pairs.

Nearest words are flagged when all the embedding saw of them is one passage; identifier pairs
are those it blurs or keeps apart.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from raglab.embedding.lsa import power_iterations_for, window_count, window_rule
from raglab.pipeline.exhibits.lsa import (
    identifier_pairs,
    identifier_twins,
    lsa_search,
    lsa_spectrum,
    nearest_words,
)
from raglab.pipeline.lab import Lab
from raglab.settings import LSA_WINDOW_WORDS
from raglab.web.state import State, plain

router = APIRouter(prefix="/lsa", tags=["III. LSA"])

# pattern: at least one non-space character (whitespace alone is refused, as the schema says).
Text = Annotated[str, Query(min_length=1, max_length=500, pattern=r"\S")]
_PAIR = "{} identifier; give both a and b, or neither to let the lab choose a pair"
Top = Annotated[int, Query(ge=1, le=50, description="how many results")]


def _text(name: str, value: str) -> str:
    text = value.strip()
    if not text:
        raise ValueError(f"{name}: type a word")
    return text


def _windows(lab: Lab) -> dict[str, Any]:
    """The windows the embedding was fitted on: how many, how long, and the rule (or setting)
    that chose the count, in one sentence; and the power passes the solver made on them."""
    count = len(lab.indexes.lsa_windows)
    words = lab.corpus.n_words
    by_rule = window_count(words)
    if lab.windows is not None:
        rule = window_rule()
        why = (
            f"This lab is set to {count:,} windows, where the rule would give {by_rule:,}: "
            f"{rule[0].lower()}{rule[1:]}."
        )
    elif words <= LSA_WINDOW_WORDS:
        why = f"{window_rule()}; these {words:,} words fit in one window, which holds them all."
    else:
        why = f"{window_rule()}: {words:,} words give {count:,} windows."
    return {
        "windows": count,
        "window_words": LSA_WINDOW_WORDS,
        "windows_by_rule": by_rule,
        "windows_set": lab.windows is not None,
        "windows_rule": why,
        "power_iterations": power_iterations_for(count),
    }


@router.get("", summary="Fit (once) and describe the embedding: singular values and shares")
def get_spectrum(state: State) -> dict[str, Any]:
    result: dict[str, Any] = state.compute(
        ("lsa",), lambda: {**plain(lsa_spectrum(state.lab)), **_windows(state.lab)}
    )
    return result


@router.get("/neighbours", summary="The words nearest to a word in the embedding")
def get_neighbours(state: State, word: Text, top: Top = 10) -> dict[str, Any]:
    w = _text("word", word)
    result: dict[str, Any] = state.call(lambda: plain(nearest_words(state.lab, w, k=top)))
    return result


@router.get("/search", summary="Rank the heading chunks by cosine in the embedding")
def get_search(state: State, q: Text, top: Top = 5) -> dict[str, Any]:
    query = _text("q", q)
    result: dict[str, Any] = state.compute(
        ("lsa search", query, top), lambda: plain(lsa_search(state.lab, query, top=top))
    )
    return result


@router.get(
    "/twins",
    summary="Two identifiers the embedding cannot tell apart",
    description="Rule between parameters: give both a and b, or neither (the lab then chooses "
    "a pair); one alone is answered 422.",
)
def get_twins(
    state: State,
    a: Annotated[
        str | None, Query(max_length=100, pattern=r"\S", description=_PAIR.format("first"))
    ] = None,
    b: Annotated[
        str | None, Query(max_length=100, pattern=r"\S", description=_PAIR.format("second"))
    ] = None,
) -> dict[str, Any]:
    first = _text("a", a) if a is not None else None
    second = _text("b", b) if b is not None else None
    result: dict[str, Any] = state.compute(
        ("twins", first, second), lambda: plain(identifier_twins(state.lab, first, second))
    )
    return result


@router.get("/pairs", summary="The example identifier pair and the clearest blurred pair, with why")
def get_pairs(state: State) -> dict[str, Any]:
    result: dict[str, Any] = state.compute(
        ("lsa pairs",), lambda: plain(identifier_pairs(state.lab))
    )
    return result
