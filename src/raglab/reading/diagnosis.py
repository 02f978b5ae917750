"""The diagnosis of a miss: where in the pipeline a question's answer was lost.

One job: :func:`diagnose` gives one reading, under one threshold, its outcome, checked in
pipeline order (docs/design.md#diagnosis): ``correct``; ``cut`` (no chunk holds the whole
answer); ``not retrieved`` (no answer chunk in the final list, which the run cut at its own depth:
the reranker's first 20, or the first stage's ``depth`` without the reranker); ``past budget``
(an answer chunk ranked, but past the k_budget chunks the context holds); ``reader`` (the answer
was in the context but the reader quoted another sentence or none); and, for an out-of-corpus
question answered anyway, ``false answer``. :func:`choose_threshold` picks the threshold that
makes the most training readings correct.
"""

from __future__ import annotations

from collections.abc import Sequence

from raglab.reading.readings import Reading

__all__ = ["DIAGNOSES", "OUTCOMES", "choose_threshold", "diagnose"]

DIAGNOSES = ("cut", "not retrieved", "past budget", "reader", "false answer")
OUTCOMES = ("correct", *DIAGNOSES)


def diagnose(r: Reading, threshold: float) -> str:
    """The outcome of reading ``r`` at ``threshold``: "correct" or one of :data:`DIAGNOSES`.

    An answer chunk at rank ``r.rank`` was retrieved when ``r.rank <= r.depth`` (the depth the
    run's final list was cut at), whatever the budget; within the budget, ``r.rank <=
    r.k_budget``, it reached the reader."""
    found = r.found(threshold)
    if not r.q.answerable:
        return "correct" if not found else "false answer"
    if found and r.quote_correct:
        return "correct"
    if r.cut:
        return "cut"
    if r.rank is None or r.rank > r.depth:
        return "not retrieved"
    if r.rank > r.k_budget:
        return "past budget"
    return "reader"


def choose_threshold(readings: Sequence[Reading], thresholds: Sequence[float]) -> float:
    """The threshold of ``thresholds`` under which the most of ``readings`` (the training
    split's) come out correct; ties go to the smallest threshold."""
    best = max(
        thresholds,
        key=lambda t: (sum(diagnose(r, t) == "correct" for r in readings), -t),
    )
    return float(best)
