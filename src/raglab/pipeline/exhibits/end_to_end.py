"""Exhibit VI: :func:`funnel`, :func:`compare_runs` (the paired exact McNemar test) and
:func:`settings_summary`.
"""

from __future__ import annotations

from typing import Any

from raglab import _config as C
from raglab.pipeline.end_to_end import RunResult, RunSettings, outcomes_vector
from raglab.stats import mcnemar_exact


def funnel(result: RunResult) -> dict[str, Any]:
    """Where answerable questions drop out, stage by stage, and how out-of-corpus ones fare.

    Each answerable question has one outcome, so subtracting the losses of each stage in
    pipeline order leaves exactly the correct ones.
    """
    counts = result.funnel
    stages = []
    left = result.answerable
    stages.append({"stage": "answerable", "count": left, "lost": 0, "loss": None})
    for stage, loss in (
        ("whole in one chunk", "cut"),
        (f"in the first {C.FUSION_DEPTH}", "not retrieved"),
        ("inside the budget", "past budget"),
        ("quoted correctly", "reader"),
    ):
        lost = counts.get(loss, 0)
        left -= lost
        stages.append({"stage": stage, "count": left, "lost": lost, "loss": loss})
    unanswerable = result.n - result.answerable
    return {
        "stages": stages,
        "unanswerable": unanswerable,
        "declined": unanswerable - counts.get("false answer", 0),
        "false_answers": counts.get("false answer", 0),
    }


def compare_runs(a: RunResult, b: RunResult) -> dict[str, Any]:
    """The paired exact McNemar test of two runs and the questions whose outcome changed."""
    if a.split != b.split or [o.id for o in a.outcomes] != [o.id for o in b.outcomes]:
        raise ValueError("the two runs must score the same questions (same split and data)")
    test = mcnemar_exact(outcomes_vector(a), outcomes_vector(b))
    changed = [
        {
            "id": x.id,
            "question": x.question,
            "a": x.outcome,
            "b": y.outcome,
            "better": "b" if y.outcome == "correct" else "a",
        }
        for x, y in zip(a.outcomes, b.outcomes, strict=True)
        if (x.outcome == "correct") != (y.outcome == "correct")
    ]
    return {
        "n": test.n,
        "both_right": test.both_right,
        "only_a": test.only_a,
        "only_b": test.only_b,
        "both_wrong": test.both_wrong,
        "p_value": test.p_value,
        "changed": changed,
    }


def settings_summary(s: RunSettings) -> dict[str, Any]:
    """A run's settings as plain values (for display and for the runs table)."""
    return {
        "chunker": s.chunker,
        "size": s.chunking.size,
        "overlap": s.chunking.overlap,
        "retriever": s.retriever,
        "k1": s.k1,
        "b": s.b,
        "weight": s.weight,
        "rerank": s.rerank,
        "mmr": s.mmr,
        "mmr_lambda": s.mmr_lambda,
        "budget": s.budget,
        "threshold": s.threshold,
    }
