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

Each value chosen gets a :class:`~raglab.run_settings.TuningNote`
(:func:`raglab.run_settings.tuning_note`): how many
training questions decided it, and a warning when they were fewer than MIN_TUNING_QUESTIONS (30)
or the value lies on an edge of its grid, where a choice made on too few questions tends to fall
(a threshold of 0 answers every out-of-corpus question). :func:`lab_tuning` makes those notes
for any values chosen on a lab's training split, so ``raglab fuse``, ``raglab rerank`` and the
report's reranker section say the same as a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from raglab.base.sentinels import TUNED
from raglab.pipeline.lab import Lab
from raglab.pipeline.reading import check_reader, read_split
from raglab.pipeline.reranking import Reranker, choose_lambda, train_reranker
from raglab.pipeline.retrieval import resolve
from raglab.reading import diagnosis
from raglab.run_settings import (
    TUNED_NAMES,
    ReadSettings,
    ResolvedRun,
    RunSettings,
    TuningNote,
    tuning_notes,
)
from raglab.settings import READER_THRESHOLDS

__all__ = [
    "choose_threshold",
    "lab_tuning",
    "resolve_read",
    "resolve_run",
    "run_reranker",
    "training_counts",
]


def training_counts(lab: Lab) -> dict[str, int]:
    """The training questions a chooser counts (``run_settings.TUNING_GRIDS`` says which):
    ``training``, all of them, and ``answerable``, those with an answer."""
    return {
        "training": len(lab.split("train")),
        "answerable": len(lab.split("train", answerable=True)),
    }


def lab_tuning(lab: Lab, values: Mapping[str, float]) -> tuple[TuningNote, ...]:
    """The :class:`~raglab.run_settings.TuningNote` of each value in ``values`` (setting name ->
    value chosen on ``lab``'s training split): each counts the training questions its chooser
    decided on (:func:`raglab.run_settings.tuning_notes`, :func:`training_counts`), so every
    face warns alike."""
    return tuning_notes(values, **training_counts(lab))


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
    tuning = tuning_notes({n: float(used[n]) for n in names}, **training_counts(lab))
    run = ResolvedRun(settings, read, threshold, names, tuning)
    return run, reranker
