"""Exhibit III's neural embedding beside LSA: paraphrase questions, near-twin identifiers, costs."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from starlette.concurrency import run_in_threadpool

from raglab.pipeline.dense import unavailable
from raglab.pipeline.exhibits.neural import neural_search, neural_view
from raglab.web.errors import ENCODING_RESPONSE, EncodingProgress
from raglab.web.state import State, plain

router = APIRouter(prefix="/neural", tags=["III. LSA"])

Split = Annotated[Literal["train", "test"], Query(description="the questions to compare on")]


@router.get(
    "/view",
    summary="The neural model beside LSA: paraphrase questions' ranks, twin identifiers, costs",
    responses=ENCODING_RESPONSE,
)
def get_view(state: State, split: Split = "test") -> dict[str, Any]:
    """Without the model installed: ``available`` false and ``why`` (how to install it). While
    the chunks and questions are being encoded: 202 with the progress (``encoding``)."""
    state.encoding.need()
    view: dict[str, Any] = state.compute(
        ("neural view", split), lambda: plain(neural_view(state.lab, split=split))
    )
    return view


@router.get(
    "/search",
    summary="Rank the heading chunks by the neural cosine of a typed question",
    responses=ENCODING_RESPONSE,
)
def get_search(
    state: State,
    q: Annotated[str, Query(min_length=1, max_length=500, pattern=r"\S", description="the query")],
    top: Annotated[int, Query(ge=1, le=50, description="how many results")] = 5,
) -> dict[str, Any]:
    """The question is encoded alone (kept on disk like the labelled ones); 422 without the
    model, saying how to install it."""
    query = q.strip()
    why = unavailable(state.lab.model)
    if why is not None:
        raise ValueError(f"the neural search {why}")
    state.encoding.need()
    result: dict[str, Any] = state.compute(
        ("neural search", query, top), lambda: plain(neural_search(state.lab, query, top=top))
    )
    return result


@router.get(
    "/encoding",
    summary="How far the background encoding of the neural vectors is: ready, or n of N",
    response_model=EncodingProgress,
)
async def get_encoding(state: State) -> dict[str, Any]:
    """Answered on the event loop from a counter: the page asks it every second while a neural
    number waits (the encoding itself started with the server)."""
    if not state.encoding.started:
        await run_in_threadpool(state.encoding.start)
    return state.encoding.progress()
