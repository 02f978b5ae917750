"""Exhibit I: cut the corpus, count the chunks and check which answers survive whole."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from raglab.pipeline.chunking_report import chunking_report
from raglab.pipeline.exhibits.chunking import answer_view, intact_curve
from raglab.settings import CHUNK_SIZES, chunk_overlap
from raglab.web.models import setting_query
from raglab.web.state import State, chunking_key, find_question, plain

router = APIRouter(prefix="/chunking", tags=["I. chunking"])

Method = Annotated[
    Literal["fixed", "sentence", "heading"], Query(description="how to cut the pages")
]
# Ranges and help from the settings table, as on every other face.
Size = Annotated[int | None, setting_query("size")]
Overlap = Annotated[int | None, setting_query("overlap")]
Split = Annotated[Literal["train", "test", "all"], Query(description="answers to check")]
#: The rule between parameters the schema cannot state (it compares two of them).
OVERLAP_RULE = (
    "Rule between parameters: an overlap (other than 0) belongs to the fixed chunker, and must "
    f"be smaller than its size (size absent: the fixed chunker's own, {CHUNK_SIZES['fixed']} "
    "words); a request breaking it is answered 422."
)


@router.get("", summary="Chunk the corpus and check every answer passage", description=OVERLAP_RULE)
def get_report(
    state: State,
    method: Method = "fixed",
    size: Size = None,
    overlap: Overlap = None,
    split: Split = "test",
) -> dict[str, Any]:
    key = chunking_key(method, size, overlap)

    def build() -> dict[str, Any]:
        report = chunking_report(state.lab, key, split=split)
        data: dict[str, Any] = plain(report)
        data["intact_rate"] = report.intact_rate
        return data

    result: dict[str, Any] = state.compute(("chunking", key, split), build)
    return result


@router.get("/curve", summary="Answer-intact rate of fixed chunks against their size")
def get_curve(
    state: State,
    overlap: Annotated[
        int | None,
        Query(ge=0, le=399, description="overlap in words; absent: the fixed chunker's own"),
    ] = None,
    split: Split = "test",
) -> dict[str, Any]:
    words = chunk_overlap("fixed", overlap)
    assert words is not None  # the fixed chunker always has one
    result: dict[str, Any] = state.call(
        lambda: plain(intact_curve(state.lab, overlap=words, split=split))
    )
    return result


@router.get(
    "/answer/{question_id}",
    summary="An answer passage with the chunk boundaries around it",
    description=OVERLAP_RULE,
)
def get_answer(
    state: State,
    question_id: str,
    method: Method = "fixed",
    size: Size = None,
    overlap: Overlap = None,
) -> dict[str, Any]:
    q = find_question(state.lab, question_id)
    key = chunking_key(method, size, overlap)
    view = state.call(lambda: answer_view(state.lab, q.id, key))
    return {
        "id": q.id,
        "question": q.question,
        "labels": q.labels,
        "key": plain(key),
        "view": plain(view),
    }
