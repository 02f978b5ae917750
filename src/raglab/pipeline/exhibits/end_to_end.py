"""Exhibit VI's views: the funnel, one base, risk and coverage, paired runs.

Exhibit VI: :func:`funnel`, :func:`one_base` (accuracy and bound counted on the same
questions), :func:`risk_coverage` (the reader's threshold swept), :func:`compare_runs` (the paired
exact McNemar test) and :func:`settings_summary`.
"""

from __future__ import annotations

from typing import Any

from raglab.metrics.stats import mcnemar_exact
from raglab.pipeline.end_to_end import RunResult, outcomes_vector, read_settings, threshold_sweep
from raglab.pipeline.lab import Lab
from raglab.pipeline.resolve import choose_threshold, run_reranker
from raglab.reading.diagnosis import DIAGNOSES
from raglab.run_settings import RunSettings
from raglab.settings import default


def funnel(result: RunResult) -> dict[str, Any]:
    """Where answerable questions drop out, stage by stage, and how out-of-corpus ones fare.

    Each answerable question has one outcome, so subtracting the losses of each stage in
    pipeline order leaves exactly the correct ones. A stage's ``answered`` counts the questions
    it lost that the reader answered anyway, with a wrong sentence (``false_answer``).

    ``kinds`` splits the same outcomes by question kind (the questions file's ``kind``), in the
    order the kinds first appear: each kind's ``n`` questions, how many are ``correct``, and
    ``lost`` by each diagnosis, so that where a kind's answers go (a paraphrase lost at the
    reader, say) can be read for each reader scoring.
    """
    counts = result.funnel
    stages = []
    left = result.answerable
    stages.append({"stage": "answerable", "count": left, "lost": 0, "loss": None, "answered": 0})
    for stage, loss in (
        ("whole in one chunk", "cut"),
        (f"in the first {default('fusion_depth')}", "not retrieved"),
        ("inside the budget", "past budget"),
        ("quoted correctly", "reader"),
    ):
        lost = counts.get(loss, 0)
        left -= lost
        answered = sum(o.outcome == loss and o.false_answer for o in result.outcomes)
        stages.append(
            {"stage": stage, "count": left, "lost": lost, "loss": loss, "answered": answered}
        )
    unanswerable = result.n - result.answerable
    kinds: dict[str, dict[str, Any]] = {}
    for o in result.outcomes:
        row = kinds.setdefault(
            o.kind, {"kind": o.kind, "n": 0, "correct": 0, "lost": dict.fromkeys(DIAGNOSES, 0)}
        )
        row["n"] += 1
        if o.outcome == "correct":
            row["correct"] += 1
        else:
            row["lost"][o.outcome] += 1
    return {
        "stages": stages,
        "kinds": list(kinds.values()),
        "unanswerable": unanswerable,
        "declined": unanswerable - counts.get("false answer", 0),
        "false_answers": counts.get("false answer", 0),
    }


def one_base(result: RunResult) -> dict[str, Any]:
    """Accuracy and bound counted on the same questions, twice over.

    On the answerable questions (A of them): ``correct`` quotes against ``bound``, the answerable
    questions whose answer chunk fits the budget (the bound of docs/design.md#bound, as a count).
    On every question (n): ``correct`` outcomes, quotes and declined out-of-corpus questions alike,
    against ``bound`` = fits + out-of-corpus questions, since an out-of-corpus question can always
    be right by declining. Either way correct ≤ bound.
    """
    answerable = [o for o in result.outcomes if o.answerable]
    fits = sum(o.rank is not None and o.rank <= o.k_budget for o in answerable)
    unanswerable = result.n - len(answerable)
    return {
        "answerable": {"n": len(answerable), "correct": result.answerable_correct, "bound": fits},
        "all": {"n": result.n, "correct": result.correct, "bound": fits + unanswerable},
    }


def risk_coverage(lab: Lab, result: RunResult) -> dict[str, Any]:
    """Abstention both ways: the run's reader at every threshold of the tuning grid.

    ``points`` are :func:`~raglab.pipeline.end_to_end.threshold_sweep`'s counts, one per
    threshold; ``threshold`` is the run's, ``chosen_on_train`` the one training accuracy picks at
    these settings (equal to the run's when the run left it tuned), and ``at_run`` / ``at_chosen``
    the points at those two thresholds.
    """
    points = threshold_sweep(lab, result)
    if "threshold" in result.chosen_on_train:
        chosen = result.threshold
    else:
        read = read_settings(result)
        chosen = choose_threshold(lab, read, run_reranker(lab, read))

    def at(t: float) -> dict[str, Any]:
        # A given threshold may lie off the grid: it is replayed on its own.
        for p in points:
            if abs(float(p["threshold"]) - t) < 1e-9:
                return p
        return threshold_sweep(lab, result, [t])[0]

    return {
        "points": points,
        "threshold": result.threshold,
        "chosen_on_train": chosen,
        "given": "threshold" not in result.chosen_on_train,
        "at_run": at(result.threshold),
        "at_chosen": at(chosen),
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
        "reader_scoring": s.reader_scoring,
    }
