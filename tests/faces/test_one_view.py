"""One composition per view: the BM25 grid and the reranker's rows come from one pipeline
function each, and the command line and the API show the same numbers from it.

Oracle: :func:`~raglab.pipeline.exhibits.grid_view`, :func:`fitted_reranker`,
:func:`reranker_summary` and :func:`rerank_rows`, computed on a lab of their own; the command
line is called in-process as ``raglab`` would be, the API through the app the server runs. The
external-run evaluation is checked the same way against
:func:`~raglab.pipeline.external_eval.evaluate_run`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from raglab.cli.main import main
from raglab.pipeline.exhibits.bm25 import grid_view
from raglab.pipeline.exhibits.rerank import fitted_reranker, rerank_rows, reranker_summary
from raglab.pipeline.external_eval import evaluate_run
from raglab.pipeline.grid import bm25_grid
from raglab.pipeline.lab import Lab
from raglab.pipeline.metric_table import METRICS, ORDER_METRICS
from raglab.pipeline.resolve import lab_tuning
from raglab.pipeline.retrieval import measure
from raglab.run_settings import RetrievalSettings
from raglab.settings import GRID_B, GRID_K1, default

Cap = pytest.CaptureFixture[str]


def cli_json(capsys: Cap, *argv: str) -> Any:
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_grid_is_the_same_on_the_command_line_and_the_api(
    capsys: Cap, api: Any, lab: Lab
) -> None:
    view = grid_view(lab)
    cli = cli_json(capsys, "bm25", "grid")
    web = api.get("/api/bm25/grid").json()
    recall = [list(row) for row in view.recall]
    assert cli["train_recall@5"] == web["recall"] == recall == bm25_grid(lab, k=5).recall.tolist()
    assert cli["k1"] == web["k1s"] == list(view.k1s) == list(GRID_K1)
    assert cli["b"] == web["bs"] == list(view.bs) == list(GRID_B)
    assert (cli["best"]["k1"], cli["best"]["b"]) == (web["best"]["k1"], web["best"]["b"])
    assert (web["best"]["k1"], web["best"]["b"]) == (view.best.k1, view.best.b)
    assert cli["best"]["train_recall@5"] == web["best"]["recall"] == view.best.train_recall
    assert cli["default_train_recall@5"] == web["default"]["recall"] == view.default.train_recall
    assert (web["default"]["k1"], web["default"]["b"]) == (default("k1"), default("b"))
    assert web["split"] == view.tuned_on == "train" and web["k"] == view.k == 5
    best = RetrievalSettings("bm25", k1=view.best.k1, b=view.best.b)
    assert cli["test_recall@5_at_best"] == view.best.split_recall
    assert view.best.split_recall == measure(lab, "test", best)["recall@5"]
    # The web lab asks for the grid alone: no other split measured, the same grid.
    alone = grid_view(lab, split=None)
    assert alone.split is None and alone.best.split_recall is None
    assert alone.recall == view.recall and alone.default.train_recall == view.default.train_recall


def test_the_reranker_is_the_same_on_the_command_line_and_the_api(
    capsys: Cap, api: Any, lab: Lab
) -> None:
    reranker, chosen = fitted_reranker(lab, first_stage=RetrievalSettings())
    summary = reranker_summary(reranker, chosen)
    cli = cli_json(capsys, "rerank")
    web = api.post("/api/rerank/train").json()
    # The summary, and how far to trust the λ chosen on train (issue #30).
    tuning = web.pop("tuning")
    assert web == json.loads(json.dumps(summary))
    assert tuning == [note.to_dict() for note in lab_tuning(lab, {"mmr_lambda": chosen})]
    assert cli["tuning"] == tuning == api.get("/api/rerank/table").json()["tuning"]
    assert cli["weights"] == web["weights"] == summary["weights"] == reranker.weights
    assert cli["bias"] == web["bias"] == summary["bias"]
    assert cli["training_rows"] == web["rows"] == reranker.rows
    assert cli["positives"] == web["positives"] == reranker.positives
    assert cli["train_chosen_lambda"] == web["chosen_lambda"] == chosen
    table = api.get("/api/rerank/table").json()
    assert cli["lambda"] == table["lambda"] == chosen
    assert cli["rows"] == table["rows"] == rerank_rows(lab, reranker, chosen)
    at = cli_json(capsys, "rerank", "--lambda", "0.4")
    assert at["rows"] == api.get("/api/rerank/table", lam=0.4).json()["rows"]
    assert at["rows"] == rerank_rows(lab, reranker, 0.4)
    assert {key for key, _ in ORDER_METRICS} <= set(at["rows"][0])


def test_the_tuning_notes_are_the_same_on_the_command_line_and_the_api(
    capsys: Cap, api: Any
) -> None:
    """How far to trust a value chosen on train (issue #30) reads the same on both faces."""
    cli = cli_json(capsys, "fuse")
    web = api.get("/api/fusion/table").json()
    assert cli["tuning"] == web["tuning"] and cli["neural_tuning"] == web["neural_tuning"]
    assert [note["questions"] for note in web["tuning"]] == [45] * len(web["tuning"])


def test_trec_eval_prints_the_pipeline_evaluation(
    tmp_path: Path, capsys: Cap, handbook_lab: Lab
) -> None:
    run_file = tmp_path / "bm25.txt"
    assert main(["trec", "export", "--retriever", "bm25", "--run", str(run_file)]) == 0
    cli = cli_json(capsys, "trec", "eval", str(run_file), "--name", "mine")
    found = evaluate_run(handbook_lab, run_file, name="mine", budget=default("budget"))
    assert cli == json.loads(json.dumps(found.to_dict()))
    assert list(found.rankers) == ["mine", "BM25", "LSA", "RRF", "RRF + mine"]
    assert found.retriever == "run:mine" and found.supported and found.end_to_end is not None
    assert {key for key, _ in METRICS} <= set(found.rankers["mine"])
    capsys.readouterr()
    assert main(["trec", "eval", str(run_file), "--name", "mine"]) == 0
    out = capsys.readouterr().out
    assert all(label in out for _, label in METRICS) and "End to end with mine" in out
