"""Exhibit VI: the whole pipeline, from the cut to the quoted sentence, with a diagnosis per miss.

One job: compose a run. :func:`run_pipeline` resolves the settings once
(:func:`raglab.pipeline.resolve.resolve_run`: the fusion weight, the reranker, MMR's lambda and
the reader's threshold chosen or fitted on the training split where they were left to it), then
takes the split's questions forward through the stages, each entered once over them all: rank,
rerank, pack and read (:func:`raglab.pipeline.reading.read_split`), diagnose
(:func:`raglab.reading.diagnosis.diagnose`).

For each question: rank the chunks, pack them in rank order into a budget of W words (k_budget is
how many fit), take the page sentences lying whole inside the packed chunks, and let the reader
quote the one covering the largest share of the question's stemmed content terms (below the
threshold it says "not found"). The share is plain coverage or, with ``reader_scoring="idf"``,
IDF-weighted coverage, the IDF taken over the run's chunks; with ``reader_scoring="cosine"`` the
reader scores each sentence by the cosine of its neural vector with the question's instead, and
the threshold applies to that cosine (docs/design.md#reader).

Every miss gets one diagnosis (:mod:`raglab.reading.diagnosis`; docs/design.md#diagnosis):
``cut``, ``not retrieved`` (no answer chunk within the depth the run's final list was cut at),
``past budget``, ``reader``, or ``false answer`` for an out-of-corpus question answered anyway.
Besides its diagnosis, every miss says whether the reader quoted a wrong sentence anyway
(``QuestionOutcome.false_answer``), so a lost answer that was declined is told from one that was
answered falsely. :func:`threshold_sweep` replays the reader at every threshold of the grid.
Accuracy carries a Wilson 95% interval; the bound is the share of answerable questions whose answer
chunk fits the budget, which caps the accuracy on answerable questions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from raglab.base.sentinels import TUNED
from raglab.metrics.stats import wilson_interval
from raglab.pipeline.lab import Lab
from raglab.pipeline.reading import read_split
from raglab.pipeline.resolve import resolve_run, run_reranker
from raglab.reading.diagnosis import OUTCOMES, diagnose
from raglab.reading.readings import Reading
from raglab.run_settings import ReadSettings, RunSettings, TuningNote
from raglab.settings import READER_THRESHOLDS, WILSON_Z

__all__ = [
    "QuestionOutcome",
    "RunResult",
    "check_runnable",
    "outcomes_vector",
    "plain_settings",
    "read_settings",
    "run_pipeline",
    "threshold_sweep",
]


@dataclass(frozen=True, slots=True)
class QuestionOutcome:
    id: str
    question: str
    kind: str
    answerable: bool
    outcome: str  # "correct" or a diagnosis
    rank: int | None  # rank of the first answer chunk in the final list
    k_budget: int
    quote: str | None
    quote_chunk: str | None
    coverage: float  # the best sentence's score: its coverage, or its cosine
    answer: str | None  # the labelled answer passage (None out of corpus)
    # Where the quote lies against the answer (raglab.reading.reader.QUOTE_RELATIONS; "not found").
    quote_relation: str
    false_answer: bool  # a sentence was quoted and it is not a correct answer


@dataclass(frozen=True, slots=True)
class RunResult:
    """One run's outcome. ``settings`` are the settings as given; ``resolved`` the same with
    every value chosen on the training split filled in (``chosen_on_train`` names those, and
    ``tuning`` says for each how many training questions chose it and whether to treat it with
    caution: :func:`raglab.run_settings.tuning_note`)."""

    settings: RunSettings
    resolved: RunSettings
    chosen_on_train: tuple[str, ...]
    split: str
    threshold: float
    mmr_lambda: float | None
    outcomes: tuple[QuestionOutcome, ...]
    correct: int
    n: int
    accuracy: float
    interval: tuple[float, float]
    answerable: int
    answerable_correct: int
    bound: float
    funnel: dict[str, int] = field(default_factory=dict)
    tuning: tuple[TuningNote, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain values: ``settings`` are the resolved ones (a setting the run does not use, such
        as the weight of a retriever other than score fusion, is None)."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["settings"] = plain_settings(self.resolved.values())
        del data["resolved"]
        data["chosen_on_train"] = list(self.chosen_on_train)
        data["outcomes"] = [dataclasses.asdict(o) for o in self.outcomes]
        data["interval"] = list(self.interval)
        data["tuning"] = [note.to_dict() for note in self.tuning]
        return data


def plain_settings(values: Mapping[str, Any]) -> dict[str, Any]:
    """Settings as JSON values: TUNED (a value not chosen, because not used) becomes None."""
    return {k: (None if v is TUNED else v) for k, v in values.items()}


def _outcome(r: Reading, threshold: float) -> QuestionOutcome:
    found = r.found(threshold)
    return QuestionOutcome(
        id=r.q.id,
        question=r.q.question,
        kind=r.q.kind,
        answerable=r.q.answerable,
        outcome=diagnose(r, threshold),
        rank=r.rank,
        k_budget=r.k_budget,
        quote=r.best_text if found else None,
        quote_chunk=r.best_chunk if found else None,
        coverage=r.coverage,
        answer=r.q.answer if r.q.answerable else None,
        quote_relation=r.relation if found else "not found",
        false_answer=found and not r.quote_correct,
    )


def check_runnable(lab: Lab, split: str) -> None:
    """Raise ValueError when the end-to-end run cannot run on ``lab``'s ``split``: questions
    labelled by pages (no answer passage to read), or no question in the split. Checked before
    any tuning, so such a file stops at once, not after the work."""
    if any(q.labels == "pages" for q in lab.questions):
        raise ValueError(
            "the end-to-end run needs answer passages: these questions are labelled by relevant "
            "pages, which say where an answer is but not which sentence states it"
        )
    lab.require(split, "the end-to-end run", answerable=False)


def run_pipeline(lab: Lab, s: RunSettings, *, split: str = "test") -> RunResult:
    """Run the whole pipeline on a split and diagnose every miss.

    Every value chosen on the training split is resolved first, once (:func:`resolve_run`);
    then the split flows forward: rank, rerank, pack, read (:func:`read_split`), diagnose.
    """
    check_runnable(lab, split)
    run, reranker = resolve_run(lab, s)
    readings = read_split(lab, run.read, split, reranker)
    outcomes = tuple(_outcome(r, run.threshold) for r in readings)
    n = len(outcomes)
    correct = sum(o.outcome == "correct" for o in outcomes)
    answerable = [o for o in outcomes if o.answerable]
    fits = sum(o.rank is not None and o.rank <= o.k_budget for o in answerable)
    return RunResult(
        settings=s,
        resolved=run.settings,
        chosen_on_train=run.chosen_on_train,
        split=split,
        threshold=run.threshold,
        mmr_lambda=run.read.mmr_lambda,
        outcomes=outcomes,
        correct=correct,
        n=n,
        accuracy=correct / n if n else 0.0,
        interval=wilson_interval(correct, n, z=WILSON_Z) if n else (0.0, 0.0),
        answerable=len(answerable),
        answerable_correct=sum(o.outcome == "correct" for o in answerable),
        bound=fits / len(answerable) if answerable else 0.0,
        funnel={name: sum(o.outcome == name for o in outcomes) for name in OUTCOMES},
        tuning=run.tuning,
    )


def read_settings(result: RunResult) -> ReadSettings:
    """What the readings of ``result`` depend on (its resolved first stage, reranker, MMR's
    lambda, budget and reader scoring): everything but the threshold."""
    r = result.resolved
    return ReadSettings(r.retrieval, r.rerank, result.mmr_lambda, r.budget, r.reader_scoring)


def outcomes_vector(result: RunResult) -> list[bool]:
    """Right or wrong per question, in question order, for a paired comparison."""
    return [o.outcome == "correct" for o in result.outcomes]


def threshold_sweep(
    lab: Lab, result: RunResult, thresholds: Sequence[float] | None = None
) -> list[dict[str, float | int]]:
    """The run's reader replayed at each threshold (None: the grid READER_THRESHOLDS, 0 to 1
    in steps of 0.05), everything before the reader kept.

    For each threshold t: ``answered`` (questions given a quote), ``answerable_correct`` (of the
    ``answerable`` questions, quoted correctly), ``answerable_false`` (answerable, but quoted
    wrongly), ``unanswerable_false`` (out-of-corpus questions answered anyway, of
    ``unanswerable``) and ``correct`` (every right outcome: correct quotes plus declined
    out-of-corpus questions). At the run's own threshold these equal the run's counts.
    """
    read = read_settings(result)
    readings = read_split(lab, read, result.split, run_reranker(lab, read))
    answerable = sum(r.q.answerable for r in readings)
    points: list[dict[str, float | int]] = []
    for t in READER_THRESHOLDS if thresholds is None else thresholds:
        found = [r for r in readings if r.found(float(t))]
        right = sum(r.q.answerable and r.quote_correct for r in found)
        false_out = sum(not r.q.answerable for r in found)
        points.append(
            {
                "threshold": float(t),
                "answered": len(found),
                "answerable": answerable,
                "answerable_correct": right,
                "answerable_false": len(found) - right - false_out,
                "unanswerable": len(readings) - answerable,
                "unanswerable_false": false_out,
                "correct": right + (len(readings) - answerable - false_out),
            }
        )
    return points
