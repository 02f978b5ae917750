"""One number on every face: the same settings give the same numbers on the command line, the
API and the library, for every retriever.

Oracle: the library (``measure`` and ``run``), computed on a lab of its own; the command line is
called in-process as ``raglab`` would be, and the API through the app the server runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from raglab.cli.main import main
from raglab.labels import RETRIEVER_LABELS, TEST_FIGURE_LABELS
from raglab.pipeline.end_to_end import RunResult, run_pipeline
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import choose_weight, measure
from raglab.run_settings import RetrievalSettings, RunSettings
from raglab.settings import RETRIEVERS, SCORE_FUSIONS, SETTINGS

Cap = pytest.CaptureFixture[str]


def cli_json(capsys: Cap, *argv: str) -> Any:
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_every_retriever_measures_the_same_on_every_face(capsys: Cap, api: Any, lab: Lab) -> None:
    cli = cli_json(capsys, "fuse")
    web = api.get("/api/fusion/table").json()
    chosen = choose_weight(lab)
    assert cli["weight"] == web["weight"] == web["chosen_weight"] == chosen
    assert cli["settings"]["weight"] == chosen
    assert set(cli["rankers"]) == set(web["rankers"]) == set(RETRIEVERS)
    for name in RETRIEVERS:
        library = measure(lab, "test", RetrievalSettings(name))
        assert cli["rankers"][name] == web["rankers"][name] == library, name


def test_a_given_fusion_weight_is_the_same_on_every_face(capsys: Cap, api: Any, lab: Lab) -> None:
    cli = cli_json(capsys, "fuse", "--weight", "0.35")
    web = api.get("/api/fusion/table", weight=0.35).json()
    library = measure(lab, "test", RetrievalSettings("score", weight=0.35))
    assert cli["weight"] == web["weight"] == 0.35
    assert cli["rankers"]["score"] == web["rankers"]["score"] == library
    assert library != measure(lab, "test", RetrievalSettings("score"))  # the weight mattered


def _summary(result: RunResult) -> dict[str, Any]:
    return {
        "correct": result.correct,
        "n": result.n,
        "accuracy": result.accuracy,
        "interval": list(result.interval),
        "bound": result.bound,
        "answerable_correct": result.answerable_correct,
        "outcomes": [(o.id, o.outcome, o.rank, o.quote) for o in result.outcomes],
    }


def _face(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "correct": data["correct"],
        "n": data["n"],
        "accuracy": data["accuracy"],
        "interval": data["interval"],
        "bound": data["bound"],
        "answerable_correct": data["answerable_correct"],
        "outcomes": [(o["id"], o["outcome"], o["rank"], o["quote"]) for o in data["outcomes"]],
    }


@pytest.mark.parametrize("retriever", RETRIEVERS)
def test_every_retriever_runs_the_same_on_every_face(
    capsys: Cap, api: Any, lab: Lab, retriever: str
) -> None:
    """The whole run, values chosen on train included (score fusion's weight among them)."""
    cli = cli_json(capsys, "run", "--retriever", retriever)
    web = api.post("/api/run", {"retriever": retriever}).json()
    library = run_pipeline(lab, RunSettings(retriever=retriever))
    assert _face(cli) == _face(web) == _summary(library)
    assert cli["settings"] == web["settings"]
    assert cli["chosen_on_train"] == web["chosen_on_train"] == list(library.chosen_on_train)
    resolved = library.resolved
    for name in ("weight", "mmr_lambda", "threshold"):
        value = getattr(resolved, name)
        assert web["settings"][name] == (
            None if name == "weight" and retriever not in SCORE_FUSIONS else value
        )
    if retriever in SCORE_FUSIONS:
        chosen = choose_weight(lab, RetrievalSettings(retriever))
        assert web["settings"]["weight"] == chosen and "weight" in cli["chosen_on_train"]


def test_given_run_settings_are_the_same_on_every_face(capsys: Cap, api: Any, lab: Lab) -> None:
    given = {
        "chunker": "fixed",
        "size": 120,
        "overlap": 20,
        "retriever": "score",
        "weight": 0.4,
        "rerank": False,
        "budget": 300,
        "threshold": 0.4,
    }
    argv = [
        "run",
        "--chunker",
        "fixed",
        "--size",
        "120",
        "--overlap",
        "20",
        "--retriever",
        "score",
        "--weight",
        "0.4",
        "--no-rerank",
        "--budget",
        "300",
        "--threshold",
        "0.4",
    ]
    cli = cli_json(capsys, *argv)
    web = api.post("/api/run", given).json()
    library = run_pipeline(lab, RunSettings.from_given(given))
    assert _face(cli) == _face(web) == _summary(library)
    assert cli["settings"] == web["settings"]
    assert web["settings"]["mmr"] is False and web["settings"]["weight"] == 0.4


@pytest.mark.parametrize("chunker", ["sentence", "heading"])
def test_an_overlap_without_the_fixed_chunker_is_refused_on_every_face(
    capsys: Cap, api: Any, chunker: str, tmp_path: Path
) -> None:
    needle = "overlap applies only to the fixed chunker"
    for command in ("run", "fuse"):
        capsys.readouterr()
        assert main([command, "--chunker", chunker, "--overlap", "10", "--json"]) == 2
        err = capsys.readouterr().err
        assert needle in err and "Traceback" not in err, command
    out = tmp_path / "run.txt"
    assert main(["trec", "export", "--chunker", chunker, "--overlap", "10", "--run", str(out)]) == 2
    assert needle in capsys.readouterr().err and not out.exists()
    response = api.post("/api/run", {"chunker": chunker, "overlap": 10})
    assert response.status_code == 422 and needle in response.text
    response = api.get("/api/chunking", method=chunker, overlap=10)
    assert response.status_code == 422 and needle in response.text
    with pytest.raises(ValueError, match=needle):
        RunSettings(chunker=chunker, overlap=10)


def test_meta_lists_every_setting_and_label_from_the_table(api: Any) -> None:
    meta = api.get("/api/meta").json()
    assert meta["settings"] == [s.to_json() for s in SETTINGS]
    assert meta["labels"]["retrievers"] == dict(RETRIEVER_LABELS)
    assert "root" not in meta["corpus"] and meta["corpus"]["name"] == "handbook"


def test_the_cosine_reader_runs_the_same_on_every_face(capsys: Cap, api: Any, lab: Lab) -> None:
    """The neural reader, BM25 + neural retrieval: ``raglab run --reader-scoring cosine``,
    ``POST /api/run`` and the library give the same outcomes, quotes and cosines, with the
    threshold chosen on train; /api/meta offers the choice under its label."""
    argv = ["run", "--retriever", "neural-rrf", "--reader-scoring", "cosine"]
    cli = cli_json(capsys, *argv)
    web = api.post("/api/run", {"retriever": "neural-rrf", "reader_scoring": "cosine"}).json()
    library = run_pipeline(lab, RunSettings(retriever="neural-rrf", reader_scoring="cosine"))
    assert _face(cli) == _face(web) == _summary(library)
    scores = [o.coverage for o in library.outcomes]
    assert [o["coverage"] for o in cli["outcomes"]] == [o["coverage"] for o in web["outcomes"]]
    assert [o["coverage"] for o in web["outcomes"]] == scores
    assert cli["settings"] == web["settings"] and web["settings"]["reader_scoring"] == "cosine"
    assert cli["threshold"] == web["threshold"] == library.threshold
    assert "threshold" in cli["chosen_on_train"] and "threshold" in web["chosen_on_train"]
    assert web["stages"]["stages"][-1]["count"] == library.answerable_correct
    row = next(s for s in api.get("/api/meta").json()["settings"] if s["name"] == "reader_scoring")
    assert "cosine" in row["choices"] and row["choice_labels"]["cosine"] == "neural cosine"


def test_the_lambda_sweep_is_the_same_on_every_face(capsys: Cap, api: Any, lab: Lab) -> None:
    """Exhibit V's sweep: ``raglab rerank --sweep``, ``GET /api/rerank/sweep`` and the library's
    :func:`~raglab.pipeline.exhibits.rerank.lambda_sweep` give the same points and chosen lambda."""
    from raglab.pipeline.exhibits.rerank import fitted_reranker, lambda_sweep

    cli = cli_json(capsys, "rerank", "--sweep")["sweep"]
    web = api.get("/api/rerank/sweep").json()
    reranker, chosen = fitted_reranker(lab, RetrievalSettings())
    library = json.loads(json.dumps(lambda_sweep(lab, reranker)))
    assert cli["chosen_lambda"] == web["chosen_lambda"] == library["chosen_lambda"] == chosen
    assert cli["points"] == web["points"] == library["points"]
    assert len(cli["points"]) == 2 * len({p["lambda"] for p in cli["points"]})


def test_the_sweep_table_labels_test_figures_not_chosen_on_train(capsys: Cap) -> None:
    """The command line's sweep table marks the one row chosen on train (oracle: the JSON's
    chosen lambda); every other row's test figures say they were not chosen on train."""
    from raglab.cli.rerank import _sweep_table

    sweep = cli_json(capsys, "rerank", "--sweep")["sweep"]
    table = _sweep_table(sweep)
    lambdas = [str(c) for c in table.columns[0]._cells]
    labels = [str(c) for c in table.columns[-1]._cells]
    assert labels.count(TEST_FIGURE_LABELS[True]) == 1
    assert lambdas[labels.index(TEST_FIGURE_LABELS[True])] == f"{sweep['chosen_lambda']:.2f}"
    assert labels.count(TEST_FIGURE_LABELS[False]) == len(labels) - 1 >= 20
