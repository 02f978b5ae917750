"""Exhibit III's neural embedding beside LSA: paraphrase questions, near-twin identifiers, costs."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from raglab.pipeline.exhibits.neural import neural_view
from raglab.web.state import State, plain

router = APIRouter(prefix="/neural", tags=["III. LSA"])

Split = Annotated[Literal["train", "test"], Query(description="the questions to compare on")]


@router.get(
    "/view",
    summary="The neural model beside LSA: paraphrase questions' ranks, twin identifiers, costs",
)
def get_view(state: State, split: Split = "test") -> dict[str, Any]:
    """Without the model installed: ``available`` false and ``why`` (how to install it)."""
    view: dict[str, Any] = state.compute(
        ("neural view", split), lambda: plain(neural_view(state.lab, split=split))
    )
    return view
