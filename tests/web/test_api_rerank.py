"""Exhibit V's λ sweep: MMR at every λ of the grid on both splits, and the rule that picks λ.

Oracle: the library on a lab of its own (the ``lab`` fixture): the reranker trained there,
``measure_order`` at each λ, and the rule worked out here from those numbers (the smallest λ
whose training recall@5 is no lower than the reranked order's without MMR).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from raglab.pipeline.lab import Lab
from raglab.pipeline.reranking import ORDERS, choose_lambda, measure_order, train_reranker
from raglab.run_settings import RetrievalSettings
from raglab.settings import MMR_LAMBDAS
from raglab.web.app import create_app
from tests.pipeline.small_corpus import write_small_lab
from tests.web.client import Api


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


def test_the_chosen_lambda_says_how_many_questions_chose_it(api: Any, tmp_path: Path) -> None:
    """Issue #30. Oracle: counted by hand: the handbook holds 45 answerable training questions
    (tests/pipeline/test_resolve.py), the small corpus of tests/pipeline/small_corpus.py 2 (t1,
    t2). With score fusion as the first stage its weight, chosen on train too, is noted as well."""
    model = api.post("/api/rerank/train").json()
    assert [(n["name"], n["value"], n["questions"]) for n in model["tuning"]] == [
        ("mmr_lambda", model["chosen_lambda"], 45)
    ]
    assert model["tuning"][0]["sentence"] is None
    small = Api(create_app(write_small_lab(tmp_path)))
    for answer in (
        small.post("/api/rerank/train?retriever=score").json(),
        small.get("/api/rerank/table", retriever="score").json(),
    ):
        notes = {n["name"]: n for n in answer["tuning"]}
        assert list(notes) == ["weight", "mmr_lambda"]
        assert all(
            n["questions"] == 2 and "few questions" in n["warnings"] for n in answer["tuning"]
        )
        assert "MMR λ" in notes["mmr_lambda"]["sentence"]
        assert (
            "on 2 answerable training questions, fewer than 30" in notes["mmr_lambda"]["sentence"]
        )
