"""A run's settings resolved once: every value chosen on the training split made concrete.

One job: :func:`resolve_run` turns the settings a user gave (:class:`~raglab.run_settings.
RunSettings`) into a frozen :class:`~raglab.run_settings.ResolvedRun` and the run's trained
reranker, in one forward pass in pipeline order: the fusion weight (score fusion only,
:func:`raglab.pipeline.retrieval.choose_weight`), the reranker fitted on the training split with
that weight fixed (with the reranker only, :func:`raglab.pipeline.reranking.train_reranker`),
then MMR's lambda with both fixed (with MMR only, :func:`raglab.pipeline.reranking.
choose_lambda`), then the reader's threshold with all of them fixed (:func:`choose_threshold`).
A value that was given is kept; a value the run does not use stays unchosen. Every stage of the
run then takes the resolved values and never chooses or trains anything itself.

Each value chosen gets a :class:`~raglab.run_settings.TuningNote` (:func:`tuning_note`): how many
training questions decided it, and a warning when they were fewer than MIN_TUNING_QUESTIONS (30)
or the value lies on an edge of its grid, where a choice made on too few questions tends to fall
(a threshold of 0 answers every out-of-corpus question).
"""

from __future__ import annotations

from typing import Any

from raglab.base.sentinels import TUNED
from raglab.pipeline.lab import Lab
from raglab.pipeline.reading import check_reader, read_split
from raglab.pipeline.reranking import Reranker, choose_lambda, train_reranker
from raglab.pipeline.retrieval import resolve
from raglab.reading import diagnosis
from raglab.run_settings import TUNED_NAMES, ReadSettings, ResolvedRun, RunSettings, TuningNote
from raglab.settings import (
    FUSION_WEIGHTS,
    MIN_TUNING_QUESTIONS,
    MMR_LAMBDAS,
    READER_THRESHOLDS,
    setting,
)

__all__ = [
    "choose_threshold",
    "resolve_read",
    "resolve_run",
    "run_reranker",
    "tuning_note",
    "tuning_notes",
]

#: Each tuned value's grid, and whether its chooser counts only the answerable training
#: questions: the weight (:func:`~raglab.pipeline.retrieval.choose_weight`, by R@5 and MRR) and
#: lambda (:func:`~raglab.pipeline.reranking.choose_lambda`, by R@5) measure rankings, which only
#: a question with an answer has; the threshold (:func:`choose_threshold`) counts every training
#: question read right, declined out-of-corpus ones included.
_GRIDS: dict[str, tuple[tuple[float, ...], bool]] = {
    "weight": (FUSION_WEIGHTS, True),
    "mmr_lambda": (MMR_LAMBDAS, True),
    "threshold": (READER_THRESHOLDS, False),
}


def run_reranker(lab: Lab, read: ReadSettings) -> Reranker | None:
    """The reranker a reading under ``read`` reorders with, fitted on the training split
    (:func:`raglab.pipeline.reranking.train_reranker`, cached); None without the reranker."""
    return train_reranker(lab, read.first_stage) if read.rerank else None


def resolve_read(lab: Lab, settings: RunSettings) -> ReadSettings:
    """What a reading under ``settings`` depends on, resolved: the first stage with its fusion
    weight (given, or chosen on train), then MMR's lambda (None without MMR; given, or chosen on
    train with the weight fixed). A reader scoring whose model is missing stops it first, before
    anything is tuned (:func:`~raglab.pipeline.reading.check_reader`)."""
    check_reader(lab, settings.reader_scoring)
    first_stage = resolve(lab, settings.retrieval)
    lam = None
    if settings.uses_mmr:
        if settings.mmr_lambda is TUNED:
            lam = choose_lambda(lab, train_reranker(lab, first_stage))
        else:
            lam = float(settings.mmr_lambda)
    return ReadSettings(first_stage, settings.rerank, lam, settings.budget, settings.reader_scoring)


def choose_threshold(lab: Lab, read: ReadSettings, reranker: Reranker | None) -> float:
    """The reader threshold in READER_THRESHOLDS maximising training accuracy under ``read`` with
    the run's ``reranker``; ties go to the smallest threshold
    (:func:`raglab.reading.diagnosis.choose_threshold`)."""
    lab.require(
        "train", "choosing the reader's threshold (or give one: --threshold)", answerable=False
    )
    return diagnosis.choose_threshold(read_split(lab, read, "train", reranker), READER_THRESHOLDS)


def tuning_note(
    name: str, value: float, grid: tuple[float, ...], questions: int, *, answerable: bool
) -> TuningNote:
    """The note on ``value`` of setting ``name``, chosen on ``grid`` by ``questions`` training
    questions (``answerable``: only those with an answer): warned when ``questions`` <
    MIN_TUNING_QUESTIONS (30) and when ``value`` is the grid's smallest or largest, in one
    sentence, e.g. "Reader threshold 0.00 was chosen on 12 training questions, fewer than 30, at
    the low edge of its grid 0.00–1.00: treat it with caution."."""
    lo, hi = float(min(grid)), float(max(grid))
    warnings = []
    if questions < MIN_TUNING_QUESTIONS:
        warnings.append("few questions")
    if value <= lo + 1e-12:
        warnings.append("low edge")
    elif value >= hi - 1e-12:
        warnings.append("high edge")
    sentence = None
    if warnings:
        which = "answerable training" if answerable else "training"
        plural = "" if questions == 1 else "s"
        reasons = [f"fewer than {MIN_TUNING_QUESTIONS}"] if "few questions" in warnings else []
        for edge in ("low", "high"):
            if f"{edge} edge" in warnings:
                reasons.append(f"at the {edge} edge of its grid {lo:.2f}–{hi:.2f}")
        sentence = (
            f"{setting(name).label} {value:.2f} was chosen on {questions} {which} "
            f"question{plural}, {', '.join(reasons)}: treat it with caution."
        )
    return TuningNote(name, float(value), (lo, hi), questions, tuple(warnings), sentence)


def tuning_notes(lab: Lab, values: dict[str, float]) -> tuple[TuningNote, ...]:
    """A :func:`tuning_note` for each value chosen on the training split (by setting name, in
    TUNED_NAMES order), counting the training questions its chooser decided it on."""
    notes = []
    for name in TUNED_NAMES:
        if name in values:
            grid, answerable = _GRIDS[name]
            n = len(lab.split("train", answerable=True if answerable else None))
            notes.append(tuning_note(name, values[name], grid, n, answerable=answerable))
    return tuple(notes)


def resolve_run(lab: Lab, settings: RunSettings) -> tuple[ResolvedRun, Reranker | None]:
    """``settings`` with every value chosen on the training split made concrete, in pipeline
    order: the fusion weight, the reranker, MMR's lambda (:func:`resolve_read`,
    :func:`run_reranker`), the reader's threshold (:func:`choose_threshold`), each chosen with
    the ones before it fixed; with the trained reranker (None without one). A reader scoring
    whose model is missing stops the run before anything is tuned (:func:`resolve_read`)."""
    read = resolve_read(lab, settings)
    given = settings.threshold is not TUNED
    if not given:
        lab.require(
            "train", "choosing the reader's threshold (or give one: --threshold)", answerable=False
        )
    reranker = run_reranker(lab, read)
    threshold = float(settings.threshold) if given else choose_threshold(lab, read, reranker)
    chosen = {
        "weight": read.first_stage.weighted and settings.weight is TUNED,
        "mmr_lambda": read.mmr_lambda is not None and settings.mmr_lambda is TUNED,
        "threshold": not given,
    }
    names = tuple(n for n in TUNED_NAMES if chosen[n])
    used: dict[str, Any] = {
        "weight": read.first_stage.weight,
        "mmr_lambda": read.mmr_lambda,
        "threshold": threshold,
    }
    tuning = tuning_notes(lab, {n: float(used[n]) for n in names})
    run = ResolvedRun(settings, read, threshold, names, tuning)
    return run, reranker
