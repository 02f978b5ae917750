"""Exhibit VI: the whole pipeline on one split, and two runs compared question by question."""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from raglab import _config as C
from raglab.pipeline.end_to_end import RunResult, RunSettings, run
from raglab.pipeline.exhibits import compare_runs, funnel, settings_summary
from raglab.pipeline.retrieval import choose_weight
from raglab.web.state import State, WebState, chunking_key, plain

router = APIRouter(prefix="/run", tags=["VI. end to end"])

Chunker = Literal["fixed", "sentence", "heading"]
Retriever = Literal["bm25", "lsa", "rrf", "score"]
Unit = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]


class RunRequest(BaseModel):
    """One end-to-end run's settings. ``null`` for ``weight``, ``mmr_lambda`` or ``threshold``
    means "chosen on the training split"."""

    model_config = ConfigDict(extra="forbid")

    chunker: Chunker = cast(Chunker, C.RETRIEVAL_CHUNKER)
    size: Annotated[int | None, Field(ge=1, le=5000)] = None
    overlap: Annotated[int | None, Field(ge=0, le=4999)] = None
    retriever: Retriever = cast(Retriever, C.DEFAULT_RETRIEVER)
    k1: Annotated[float, Field(ge=0, le=10, allow_inf_nan=False)] = C.BM25_K1
    b: Unit = C.BM25_B
    weight: Unit | None = None
    rerank: bool = True
    mmr: bool = True
    mmr_lambda: Unit | None = None
    budget: Annotated[int, Field(ge=1, le=100_000)] = C.BUDGET_WORDS
    threshold: Unit | None = None
    split: Literal["train", "test"] = "test"


class CompareRequest(BaseModel):
    """Two runs to compare on the same questions."""

    model_config = ConfigDict(extra="forbid")

    a: RunRequest
    b: RunRequest


def _settings(state: WebState, r: RunRequest) -> RunSettings:
    key = chunking_key(r.chunker, r.size, r.overlap)
    weight = 0.5  # RunSettings' default; only score fusion reads it
    if r.retriever == "score":
        weight = (
            float(
                state.compute(
                    ("chosen weight", key), lambda: choose_weight(state.lab, chunking=key)
                )
            )
            if r.weight is None
            else r.weight
        )
    return RunSettings(
        chunker=r.chunker,
        size=r.size,
        overlap=r.overlap,
        retriever=r.retriever,
        k1=r.k1,
        b=r.b,
        weight=weight,
        rerank=r.rerank,
        mmr=r.mmr and r.rerank,
        mmr_lambda=r.mmr_lambda,
        budget=r.budget,
        threshold=r.threshold,
    )


def _run(state: WebState, r: RunRequest) -> RunResult:
    settings = _settings(state, r)
    value = state.compute(
        ("run", settings, r.split), lambda: run(state.lab, settings, split=r.split)
    )
    assert isinstance(value, RunResult)
    return value


@router.post("", summary="Run the whole pipeline and diagnose every miss")
def post_run(state: State, request: RunRequest) -> dict[str, Any]:
    result = _run(state, request)
    data: dict[str, Any] = plain(result.to_dict())
    data["settings"] = settings_summary(result.settings)
    data["request"] = request.model_dump()
    data["stages"] = funnel(result)
    return data


@router.post("/compare", summary="Compare two runs with the paired exact McNemar test")
def post_compare(state: State, request: CompareRequest) -> dict[str, Any]:
    a = _run(state, request.a)
    b = _run(state, request.b)
    return {
        "a": {"correct": a.correct, "n": a.n, "accuracy": a.accuracy},
        "b": {"correct": b.correct, "n": b.n, "accuracy": b.accuracy},
        **plain(compare_runs(a, b)),
    }
