"""Exhibit V: the learned reranker over the first stage's top RERANK_DEPTH, and MMR."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from raglab.pipeline.exhibits.rerank import (
    fitted_reranker,
    lambda_sweep,
    rerank_rows,
    reranker_summary,
    version_demo,
)
from raglab.pipeline.reranking import Reranker
from raglab.pipeline.resolve import lab_tuning
from raglab.run_settings import RetrievalSettings
from raglab.settings import NEURAL_RETRIEVERS, RERANK_DEPTH, RETRIEVERS, default, or_default
from raglab.web.errors import ENCODING_RESPONSE
from raglab.web.state import State, find_question, plain

router = APIRouter(prefix="/rerank", tags=["V. reranker"])

Lambda = Annotated[
    float | None,
    Query(
        ge=0,
        le=1,
        allow_inf_nan=False,
        description="MMR trade-off: 1 is pure relevance (omit: chosen on the training split)",
    ),
]


FirstStage = Annotated[
    Literal[RETRIEVERS] | None,  # type: ignore[valid-type]
    Query(
        description=f"the first stage whose top {RERANK_DEPTH} the reranker reorders (absent: "
        "the retriever setting's default)"
    ),
]


def _model(state: State, retriever: str) -> tuple[Reranker, float]:
    if retriever in NEURAL_RETRIEVERS:
        state.encoding.need()  # 202 while the neural vectors are being encoded
    # The default first stage keeps the key the warm-up fills, so the first page finds it ready.
    key = ("reranker",) if retriever == default("retriever") else ("reranker", retriever)
    value = state.compute(key, lambda: fitted_reranker(state.lab, RetrievalSettings(retriever)))
    return value


def _tuning(state: State, reranker: Reranker, chosen: float) -> list[dict[str, Any]]:
    """How far to trust each value chosen on train here (:func:`raglab.run_settings.
    tuning_note`): MMR's lambda, and a score fusion first stage's weight."""
    values = {"mmr_lambda": chosen}
    if reranker.first_stage.weighted:
        values["weight"] = float(reranker.first_stage.weight)
    return [note.to_dict() for note in lab_tuning(state.lab, values)]


@router.post(
    "/train",
    summary="Train the reranker on the training split (cached)",
    responses=ENCODING_RESPONSE,
)
def post_train(state: State, retriever: FirstStage = None) -> dict[str, Any]:
    reranker, chosen = _model(state, or_default("retriever", retriever))
    summary: dict[str, Any] = plain(reranker_summary(reranker, chosen))
    return {**summary, "tuning": _tuning(state, reranker, chosen)}


@router.get(
    "/table",
    summary="Top-1, P@3, R@5 and MRR of each order, on train and test",
    responses=ENCODING_RESPONSE,
)
def get_table(state: State, lam: Lambda = None, retriever: FirstStage = None) -> dict[str, Any]:
    retriever = or_default("retriever", retriever)
    reranker, chosen = _model(state, retriever)
    value = chosen if lam is None else lam
    key = (
        ("rerank table", value)
        if retriever == default("retriever")
        else ("rerank table", value, retriever)
    )
    rows = state.compute(key, lambda: plain(rerank_rows(state.lab, reranker, value)))
    return {
        "lambda": value,
        "chosen_lambda": chosen,
        "retriever": retriever,
        "rows": rows,
        "tuning": _tuning(state, reranker, chosen),
    }


@router.get(
    "/sweep",
    summary="MMR at every lambda of the grid, on train and test",
    responses=ENCODING_RESPONSE,
)
def get_sweep(state: State, retriever: FirstStage = None) -> dict[str, Any]:
    retriever = or_default("retriever", retriever)
    reranker, _ = _model(state, retriever)
    key = ("rerank sweep",) if retriever == default("retriever") else ("rerank sweep", retriever)
    data = state.compute(key, lambda: plain(lambda_sweep(state.lab, reranker)))
    return {"retriever": retriever, **data}


@router.get(
    "/version",
    summary="A question whose outdated copy MMR pushes out of the top 3",
    responses=ENCODING_RESPONSE,
)
def get_version(
    state: State,
    lam: Lambda = None,
    question_id: Annotated[str | None, Query(max_length=200)] = None,
    retriever: FirstStage = None,
) -> dict[str, Any]:
    reranker, chosen = _model(state, or_default("retriever", retriever))
    value = chosen if lam is None else lam
    qid = find_question(state.lab, question_id).id if question_id is not None else None
    data = state.call(lambda: plain(version_demo(state.lab, reranker, value, qid)))
    return {"chosen_lambda": chosen, **data}
