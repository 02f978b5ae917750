"""Exhibit V's λ sweep: MMR at every λ of the grid on both splits, and the rule that picks λ.

Oracle: the library on a lab of its own (the ``lab`` fixture): the reranker trained there,
``measure_order`` at each λ, and the rule worked out here from those numbers (the smallest λ
whose training recall@5 is no lower than the reranked order's without MMR).
"""

from __future__ import annotations

from typing import Any

from raglab.pipeline.lab import Lab
from raglab.pipeline.reranking import ORDERS, choose_lambda, measure_order, train_reranker
from raglab.run_settings import RetrievalSettings
from raglab.settings import MMR_LAMBDAS


def test_the_sweep_measures_every_lambda_on_both_splits_and_marks_the_rules_choice(
    api: Any, lab: Lab
) -> None:
    reranker = train_reranker(lab, RetrievalSettings())
    sweep = api.timed_get("reranker: the lambda sweep", "/api/rerank/sweep").json()
    expected = [
        {"lambda": lam, "split": split, **measure_order(lab, split, reranker, ORDERS[2], lam)}
        for split in ("train", "test")
        for lam in MMR_LAMBDAS
    ]
    assert sweep["points"] == expected
    plain = {split: measure_order(lab, split, reranker, ORDERS[1], 1.0) for split in ("train",)}
    assert sweep["reference"]["train"] == plain["train"]
    assert sweep["rule_metric"] == "recall@5"
    # The rule, worked out from the points: the smallest λ that costs no training recall@5.
    bar = plain["train"]["recall@5"]
    train = [p for p in expected if p["split"] == "train"]
    by_rule = min((p["lambda"] for p in train if p["recall@5"] >= bar - 1e-12), default=1.0)
    assert sweep["chosen_lambda"] == by_rule == choose_lambda(lab, reranker)
    assert api.get("/api/rerank/train").status_code == 405
    assert api.get("/api/rerank/sweep", retriever="nonsense").status_code == 422
