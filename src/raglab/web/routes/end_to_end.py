"""Exhibit VI: the whole pipeline on one split, and two runs compared question by question.

``POST /api/run`` answers the run (``RunResult.to_dict``) with the funnel (``stages``), accuracy
and bound counted on the same questions (``bases``) and the reader's threshold swept
(``risk_coverage``), all from :mod:`raglab.pipeline.exhibits.end_to_end`.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from raglab.pipeline.end_to_end import RunResult, run_pipeline
from raglab.pipeline.exhibits.end_to_end import compare_runs, funnel, one_base, risk_coverage
from raglab.run_settings import RUN_SETTING_NAMES, ChunkingKey, RunSettings
from raglab.settings import CHUNK_SIZES, NEURAL_RETRIEVERS, setting
from raglab.web.errors import ENCODING_RESPONSE
from raglab.web.models import settings_model
from raglab.web.state import State, WebState, plain

router = APIRouter(prefix="/run", tags=["VI. end to end"])

Split = Literal["train", "test"]


# The fields come from the settings table, so the base class is built at import time.
_RunFields = settings_model(
    "RunSettingsFields",
    RUN_SETTING_NAMES,
    split=(Split, Field(default="test", description="the questions to run on")),
)


# The rules between fields that JSON Schema can state, in the schema itself: a client that
# generates requests from the document never sends one the server then refuses with 422.
_MMR_NEEDS_RERANK: dict[str, Any] = {
    "not": {
        "required": ["mmr", "rerank"],
        "properties": {"mmr": {"const": True}, "rerank": {"const": False}},
    }
}
_OVERLAP_NEEDS_FIXED: dict[str, Any] = {
    "if": {"required": ["overlap"], "properties": {"overlap": {"type": "number", "minimum": 1}}},
    "then": {"required": ["chunker"], "properties": {"chunker": {"const": "fixed"}}},
}
#: The rule JSON Schema cannot state (it compares two numbers), in the operation's description.
OVERLAP_RULE = (
    "An overlap (other than 0) belongs to the fixed chunker, and must be smaller than its size "
    f"(size absent: the fixed chunker's own, {CHUNK_SIZES['fixed']} words); a request breaking "
    "this is answered 422."
)
RUN_RULES = (
    "Rules between fields: mmr true needs rerank true (the schema says so; with rerank false and "
    f"mmr left out, MMR is off too). {OVERLAP_RULE} A neural retriever whose vectors are still "
    "being encoded gets 202 with the progress: ask again after Retry-After seconds."
)
COMPARE_RULES = (
    "Rules between fields: a and b must name the same split (the schema says so), and each "
    f"follows the rules of POST /api/run. {OVERLAP_RULE}"
)


class RunRequest(_RunFields):  # type: ignore[misc,valid-type]
    """One end-to-end run's settings (:data:`raglab.settings.SETTINGS`). ``null`` for
    ``weight``, ``mmr_lambda`` or ``threshold`` means "chosen on the training split"; with
    ``rerank`` false and ``mmr`` left out, MMR is off too. ``reader_scoring`` is one of the
    setting's choices, listed below from the settings table. MMR needs the reranker; an overlap
    needs the fixed chunker and a size above it."""

    model_config = ConfigDict(
        json_schema_extra={"allOf": [_MMR_NEEDS_RERANK, _OVERLAP_NEEDS_FIXED]}
    )


def _choices_line(name: str) -> str:
    """The setting's choices with their labels, as a sentence: ```a`` (label a) or ...`."""
    s = setting(name)
    labels = s.choice_labels or {}
    named = [f"``{c}`` ({labels[c]})" if c in labels else f"``{c}``" for c in s.choices or ()]
    return ", ".join(named[:-1]) + f" or {named[-1]}" if len(named) > 1 else "".join(named)


# The description the API gives of a run request names each reader scoring the settings table
# offers, so that a scoring added there is never missing here.
RunRequest.__doc__ = (
    f"{RunRequest.__doc__}\n\n    ``reader_scoring``: {_choices_line('reader_scoring')}."
)


def _one_split(split: str) -> dict[str, Any]:
    # "test" is the default, so a run naming no split is on test.
    run: dict[str, Any] = {"properties": {"split": {"const": split}}}
    if split != "test":
        run["required"] = ["split"]
    return {"properties": {"a": run, "b": run}}


class CompareRequest(BaseModel):
    """Two runs to compare on the same questions: ``a`` and ``b`` must name the same split
    (422 otherwise)."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"anyOf": [_one_split("test"), _one_split("train")]}
    )

    a: RunRequest
    b: RunRequest


def _settings(r: RunRequest) -> RunSettings:
    # Only what the request gave, so that RunSettings.from_given applies its defaults and rules.
    return RunSettings.from_given(r.model_dump(exclude_unset=True, exclude={"split"}))


def _needs(settings: RunSettings) -> list[ChunkingKey | None]:
    """The chunkings whose neural vectors ``settings`` needs (none without a neural retriever)."""
    retrieval = settings.retrieval
    return [retrieval.chunking] if retrieval.retriever in NEURAL_RETRIEVERS else []


def _run(state: WebState, r: RunRequest) -> RunResult:
    # On the runner's lab, under its own lock: an exhibit's request never waits behind a run.
    settings = _settings(r)
    value = state.compute(
        ("run", settings, r.split),
        lambda: run_pipeline(state.runner, settings, split=r.split),
        run=True,
    )
    return value


def warm_run(state: WebState) -> RunResult:
    """The default run on the test split (what ``POST /api/run`` with ``{}`` answers), computed
    on the runs' lab and cached for that request."""
    return _run(state, RunRequest())


@router.post(
    "",
    summary="Run the whole pipeline and diagnose every miss",
    description=RUN_RULES,
    responses=ENCODING_RESPONSE,
)
def post_run(state: State, request: RunRequest) -> dict[str, Any]:
    state.encoding.need(_needs(_settings(request)))
    result = _run(state, request)
    # "settings" are the resolved ones: every value chosen on train filled in ("chosen_on_train").
    data: dict[str, Any] = plain(result.to_dict())
    data["request"] = request.model_dump()
    data["stages"] = funnel(result)
    data["bases"] = one_base(result)
    # The sweep reuses the run's cached readings; choosing the train threshold for a run that was
    # given one reads the training split once, under the lab's lock like every computation.
    data["risk_coverage"] = plain(state.call(lambda: risk_coverage(state.runner, result), run=True))
    return data


@router.post(
    "/compare",
    summary="Compare two runs with the paired exact McNemar test",
    description=COMPARE_RULES,
    responses=ENCODING_RESPONSE,
)
def post_compare(state: State, request: CompareRequest) -> dict[str, Any]:
    state.encoding.need(_needs(_settings(request.a)) + _needs(_settings(request.b)))
    a = _run(state, request.a)
    b = _run(state, request.b)
    return {
        "a": {"correct": a.correct, "n": a.n, "accuracy": a.accuracy},
        "b": {"correct": b.correct, "n": b.n, "accuracy": b.accuracy},
        **plain(compare_runs(a, b)),
    }
