"""Exhibit IV: BM25, LSA and their fusions, measured side by side on one split."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from raglab.pipeline.exhibits.fusion import fusion_settings, question_grid, three_lists
from raglab.pipeline.resolve import lab_tuning
from raglab.pipeline.retrieval import choose_weight, neural_unavailable, ranker_table
from raglab.run_settings import RetrievalSettings
from raglab.settings import NEURAL_RETRIEVERS
from raglab.web.encoding import describe
from raglab.web.state import State, find_question, plain

router = APIRouter(prefix="/fusion", tags=["IV. fusion"])

Weight = Annotated[
    float | None,
    Query(
        ge=0,
        le=1,
        allow_inf_nan=False,
        description="score-fusion weight of BM25 (omit: chosen on the training split)",
    ),
]
Method = Annotated[Literal["rrf", "score"], Query(description="the fusion to compare")]
Split = Annotated[Literal["train", "test"], Query(description="the questions to measure on")]


def _weight(state: State, weight: float | None) -> tuple[float, float]:
    chosen = float(state.compute(("chosen weight",), lambda: choose_weight(state.lab)))
    return chosen, chosen if weight is None else weight


@router.get("/table", summary="R@1, R@3, R@5, R@10, MRR and nDCG@10 of every ranker")
def get_table(state: State, weight: Weight = None, split: Split = "test") -> dict[str, Any]:
    """While the neural vectors are being encoded, the neural rows are in ``unavailable`` saying
    "encoding, n of N" and ``encoding`` has the progress: ask again once it is ready."""
    chosen, w = _weight(state, weight)
    state.encoding.start()
    missing = neural_unavailable(state.lab)
    progress = state.encoding.progress()
    neural = not missing and progress["ready"]
    if not missing and not neural:
        missing = dict.fromkeys(NEURAL_RETRIEVERS, describe(progress))
    rankers = state.compute(
        ("fusion table", split, w, neural),
        lambda: plain(ranker_table(state.lab, split=split, weight=w, neural=neural)),
    )
    neural_weight = None
    if neural:
        neural = RetrievalSettings("neural-score")
        neural_weight = float(
            state.compute(("chosen weight", "neural"), lambda: choose_weight(state.lab, neural))
        )
    # How far to trust each weight chosen on train (raglab.run_settings.tuning_note), as
    # `raglab fuse` and exhibit VI say it.
    tuning = lab_tuning(state.lab, {"weight": chosen})
    neural_tuning = (
        () if neural_weight is None else lab_tuning(state.lab, {"weight": neural_weight})
    )
    return {
        "split": split,
        "weight": w,
        "chosen_weight": chosen,
        "neural_weight": neural_weight,
        "tuning": [note.to_dict() for note in tuning],
        "neural_tuning": [note.to_dict() for note in neural_tuning],
        "questions": len(state.lab.split(split, answerable=True)),
        "rankers": rankers,
        "unavailable": missing,
        "encoding": progress,
    }


@router.get("/grid", summary="Each question's first answer rank under BM25, LSA and a fusion")
def get_grid(
    state: State, method: Method = "score", weight: Weight = None, split: Split = "test"
) -> dict[str, Any]:
    chosen, w = _weight(state, weight)
    settings = fusion_settings(method, w)
    data = state.compute(
        ("fusion grid", split, settings), lambda: question_grid(state.lab, settings, split=split)
    )
    return {"method": method, "weight": w, "chosen_weight": chosen, **plain(data)}


@router.get("/lists/{question_id}", summary="One question's lists under BM25, LSA and a fusion")
def get_lists(
    state: State,
    question_id: str,
    method: Method = "score",
    weight: Weight = None,
    top: Annotated[int, Query(ge=1, le=20, description="how many of each list")] = 5,
) -> dict[str, Any]:
    q = find_question(state.lab, question_id)
    _, w = _weight(state, weight)
    settings = fusion_settings(method, w)
    data = state.call(lambda: plain(three_lists(state.lab, q.id, settings, top=top)))
    return {"method": method, "weight": w, **data}
