"""Exhibit VI through the API: the reader's scoring on every face, accuracy and bound on one
base, the threshold swept, and the false answers a miss can carry.

Oracle: the library (``run_pipeline``, ``threshold_sweep``), computed on a lab of its own, and
for the sweep an independent computation: whole runs at a given threshold, counted one by one.
The command line is called in-process as ``raglab`` would be.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from raglab.cli.main import main
from raglab.pipeline.end_to_end import RunResult, run_pipeline, threshold_sweep
from raglab.pipeline.lab import Lab
from raglab.run_settings import RunSettings
from raglab.settings import setting

Cap = pytest.CaptureFixture[str]


def _numbers(correct: int, n: int, accuracy: float, outcomes: list[tuple[Any, ...]]) -> Any:
    return {"correct": correct, "n": n, "accuracy": accuracy, "outcomes": outcomes}


def _library(result: RunResult) -> Any:
    rows = [(o.id, o.outcome, o.coverage, o.quote, o.false_answer) for o in result.outcomes]
    return _numbers(result.correct, result.n, result.accuracy, rows)


def _face(data: dict[str, Any]) -> Any:
    rows = [
        (o["id"], o["outcome"], o["coverage"], o["quote"], o["false_answer"])
        for o in data["outcomes"]
    ]
    return _numbers(data["correct"], data["n"], data["accuracy"], rows)


@pytest.fixture(scope="module")
def idf_run(lab: Lab) -> RunResult:
    return run_pipeline(lab, RunSettings(reader_scoring="idf"))


def test_the_readers_scoring_is_the_same_on_every_face(
    capsys: Cap, api: Any, lab: Lab, idf_run: RunResult
) -> None:
    """The same IDF-weighted run from ``raglab run --reader-scoring idf``, ``POST /api/run`` and
    the library; and the scoring matters (some coverage differs from the plain reader's)."""
    capsys.readouterr()
    assert main(["run", "--reader-scoring", "idf", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    web = api.post("/api/run", {"reader_scoring": "idf"}).json()
    assert _face(cli) == _face(web) == _library(idf_run)
    assert cli["settings"]["reader_scoring"] == web["settings"]["reader_scoring"] == "idf"
    assert cli["threshold"] == web["threshold"] == idf_run.threshold
    plain = run_pipeline(lab, RunSettings())
    assert [o.coverage for o in plain.outcomes] != [o.coverage for o in idf_run.outcomes]
    refused = api.post("/api/run", {"reader_scoring": "bm25"})
    assert refused.status_code == 422


def test_meta_offers_the_readers_scoring_from_the_table(api: Any) -> None:
    """Oracle: the settings table's row, as /api/meta must pass it on to the page."""
    meta = api.get("/api/meta").json()
    row = next(s for s in meta["settings"] if s["name"] == "reader_scoring")
    assert row == setting("reader_scoring").to_json()
    assert row["default"] == "coverage" and row["choices"] == ["coverage", "idf", "cosine"]
    assert row["choice_labels"]["cosine"] == "neural cosine"


def test_the_run_requests_description_names_every_reader_scoring(api: Any) -> None:
    """Oracle: the settings table's choices and their labels; the API's description of a run
    request names each one (none left out as choices are added)."""
    schema = api.get("/openapi.json").json()["components"]["schemas"]["RunRequest"]
    row = setting("reader_scoring")
    assert row.choices is not None and row.choice_labels is not None
    for choice in row.choices:
        assert f"``{choice}`` ({row.choice_labels[choice]})" in schema["description"]


def test_accuracy_and_bound_on_one_base(api: Any, lab: Lab) -> None:
    """Oracle: the library run's outcomes, counted here: answers inside the budget against
    correct quotes on the answerable questions, and on all questions with the out-of-corpus
    ones added to the bound."""
    library = run_pipeline(lab, RunSettings())
    web = api.post("/api/run", {}).json()
    answerable = [o for o in library.outcomes if o.answerable]
    fits = sum(o.rank is not None and o.rank <= o.k_budget for o in answerable)
    out = library.n - len(answerable)
    assert web["bases"] == {
        "answerable": {"n": len(answerable), "correct": library.answerable_correct, "bound": fits},
        "all": {"n": library.n, "correct": library.correct, "bound": fits + out},
    }
    assert fits == round(library.bound * len(answerable))


def test_the_risk_coverage_view_is_the_librarys(api: Any, lab: Lab, idf_run: RunResult) -> None:
    """The route's sweep equals the library's; at the run's threshold it is the run itself, and
    at another threshold it is a whole run made there (an independent computation)."""
    web = api.post("/api/run", {"reader_scoring": "idf"}).json()
    rc = web["risk_coverage"]
    assert rc["points"] == threshold_sweep(lab, idf_run)
    assert rc["threshold"] == rc["chosen_on_train"] == idf_run.threshold and not rc["given"]
    at = rc["at_run"]
    assert at["correct"] == idf_run.correct
    assert at["answerable_correct"] == idf_run.answerable_correct
    assert at["unanswerable_false"] == idf_run.funnel["false answer"]
    other = run_pipeline(lab, RunSettings(reader_scoring="idf", threshold=0.7))
    point = next(p for p in rc["points"] if p["threshold"] == 0.7)
    assert point["correct"] == other.correct
    assert point["answerable_false"] == sum(o.false_answer and o.answerable for o in other.outcomes)
    assert point["unanswerable_false"] == other.funnel["false answer"]
    # A given threshold: the run is replayed there, and the train choice is still marked.
    given = api.post("/api/run", {"reader_scoring": "idf", "threshold": 0.7}).json()
    assert given["risk_coverage"]["given"] is True
    assert given["risk_coverage"]["chosen_on_train"] == idf_run.threshold
    assert given["risk_coverage"]["at_run"] == point


def test_every_false_answer_is_a_wrong_quote(api: Any) -> None:
    """Oracle: docs/design.md#reader's rule for a correct quote: a false answer has a quote whose
    relation to the answer is neither inside nor contains, and the funnel's counts of misses
    answered anyway are those flags counted."""
    web = api.post("/api/run", {}).json()
    for o in web["outcomes"]:
        assert o["false_answer"] == (o["quote"] is not None and o["outcome"] != "correct")
        if o["false_answer"]:
            assert o["quote_relation"] not in ("inside", "contains", "not found")
        if o["outcome"] == "correct" and o["answerable"]:
            assert o["quote_relation"] in ("inside", "contains")
    for stage in web["stages"]["stages"][1:]:
        flagged = [o for o in web["outcomes"] if o["outcome"] == stage["loss"]]
        assert stage["answered"] == sum(o["false_answer"] for o in flagged)
