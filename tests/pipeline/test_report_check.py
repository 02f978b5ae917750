"""Reading a report back: the published schema, the invariants, and the bounds on what is read.

Oracles: the JSON Schema validator of the ``jsonschema`` library run directly on the shipped
schema file (the report writer's output must pass it), the settings table
(:data:`raglab.settings.SETTINGS`) for the schema's settings, and counts worked by hand for each
tampered report.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from raglab.pipeline.lab import Lab
from raglab.pipeline.record import CHOSEN_SETTINGS
from raglab.pipeline.report import build_report
from raglab.pipeline.report_check import (
    MAX_REPORT_DEPTH,
    invariants,
    nesting_problem,
    report_schema,
    validate_report,
)
from raglab.reading.diagnosis import OUTCOMES
from raglab.run_settings import RunSettings
from raglab.settings import RETRIEVERS, SETTINGS
from tests.pipeline.test_report import write_page_labelled

Report = dict[str, Any]


@pytest.fixture(scope="module")
def report(handbook_lab: Lab) -> Report:
    return build_report(handbook_lab, RunSettings())


def _shipped_schema() -> dict[str, Any]:
    text = resources.files("raglab.pipeline").joinpath("report.schema.json").read_text("utf-8")
    value: dict[str, Any] = json.loads(text)
    return value


def test_the_report_writers_output_passes_the_published_schema(
    report: Report, tmp_path: Path
) -> None:
    """Oracle: jsonschema's Draft 2020-12 validator on the shipped file, for the handbook's
    report and a page-labelled one (no end-to-end run, no chunking measure)."""
    schema = _shipped_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    pages = build_report(write_page_labelled(tmp_path), RunSettings())
    assert pages["end_to_end"]["supported"] is False
    for one in (report, pages):
        written = json.loads(json.dumps(one, allow_nan=False))  # as the file holds it
        assert [e.message for e in validator.iter_errors(written)] == []
        assert validate_report(written) == []
        assert invariants(written) == []
    assert report_schema() == schema


def test_the_schemas_words_are_the_packages() -> None:
    """Oracle: the settings table, the outcomes and the retrievers: every setting a field of
    ``settings`` with its type, bounds and choices; nothing else there but the split and the
    settings chosen on train."""
    schema = _shipped_schema()
    fields = schema["properties"]["settings"]["properties"]
    assert set(fields) == {s.name for s in SETTINGS} | {"split", "chosen_on_train"}
    types = {bool: "boolean", int: "integer", float: "number", str: "string"}
    for s in SETTINGS:
        field = fields[s.name]
        if s.choices is not None:
            assert field["enum"] == list(s.choices), s.name
            continue
        nullable = s.none is not None or s.tuned
        expected = [types[s.kind], "null"] if nullable else types[s.kind]
        assert field["type"] == expected, s.name
        assert (field.get("minimum"), field.get("maximum")) == (s.minimum, s.maximum), s.name
    assert fields["chosen_on_train"]["items"]["enum"] == list(CHOSEN_SETTINGS)
    assert schema["$defs"]["outcome"]["enum"] == list(OUTCOMES)
    assert schema["$defs"]["ranker"]["enum"] == list(RETRIEVERS)


def _row(report: Report, answerable: bool) -> int:
    return next(
        i for i, r in enumerate(report["rankers"]["questions"]) if r["answerable"] is answerable
    )


def _outcome(report: Report, outcome: str) -> int:
    return next(
        i for i, o in enumerate(report["end_to_end"]["outcomes"]) if o["outcome"] == outcome
    )


def _set(path: str, value: Any) -> Callable[[Report], str]:
    """A tampering that sets the field at ``path`` (dots and [i]) and returns that path."""

    def tamper(report: Report) -> str:
        *parents, last = path.replace("[", ".").replace("]", "").split(".")
        node: Any = report
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        node[int(last) if last.isdigit() else last] = value
        return path

    return tamper


def _rank_of_first_answerable(value: Any) -> Callable[[Report], str]:
    def tamper(report: Report) -> str:
        i = _row(report, True)
        report["rankers"]["questions"][i]["ranks"]["bm25"] = value
        return f"rankers.questions[{i}].ranks.bm25"

    return tamper


def _one_more_correct(report: Report) -> str:
    report["end_to_end"]["correct"] += 1  # 13 where 12 outcomes are correct
    return "end_to_end.correct"


def _funnel_off_by_one(report: Report) -> str:
    report["end_to_end"]["funnel"]["reader"] += 1
    return "end_to_end.funnel.reader"


def _accuracy_not_correct_over_n(report: Report) -> str:
    report["end_to_end"]["accuracy"] = 0.41  # the interval still holds it; 12 / 30 is 0.4
    return "end_to_end.accuracy"


def _duplicate_id(report: Report) -> str:
    rows = report["rankers"]["questions"]
    rows[1]["id"] = rows[0]["id"]
    return "rankers.questions[1].id"


def _rank_without_answer(report: Report) -> str:
    i = _row(report, False)
    report["rankers"]["questions"][i]["ranks"]["lsa"] = 3
    return f"rankers.questions[{i}].ranks"


def _outcome_of_no_question(report: Report) -> str:
    report["end_to_end"]["outcomes"][0]["id"] = "q-nowhere"
    return "end_to_end.outcomes[0].id"


def _grid_cell(report: Report) -> str:
    report["bm25"]["train_recall"][2][3] = 0.99
    return "bm25.train_recall[2][3]"


def _counts_do_not_add_up(report: Report) -> str:
    report["data"]["counts"]["train"]["out_of_corpus"] += 1
    return "data.counts.train"


def _false_answer_to_answerable(report: Report) -> str:
    i = _outcome(report, "reader")
    o = report["end_to_end"]["outcomes"][i]
    o["outcome"] = "false answer"
    report["end_to_end"]["funnel"]["reader"] -= 1
    report["end_to_end"]["funnel"]["false answer"] += 1
    return f"end_to_end.outcomes[{i}].outcome"


def _setting_refused(report: Report) -> str:
    report["settings"]["windows"] = 10**9
    return "settings.windows"


#: Each tampering of the handbook's report: a value impossible for its field (item 1 of the
#: issue's list first), or one the schema allows but the other fields contradict.
TAMPERED = {
    "rank first": _rank_of_first_answerable("first"),
    "rank 1.0": _rank_of_first_answerable(1.0),
    "rank 0": _rank_of_first_answerable(0),
    "rank -3": _rank_of_first_answerable(-3),
    "rank true": _rank_of_first_answerable(True),
    "no outcomes": _set("end_to_end.outcomes", []),
    "accuracy NaN": _set("end_to_end.accuracy", float("nan")),
    "accuracy Infinity": _set("end_to_end.accuracy", float("inf")),
    "accuracy -Infinity": _set("end_to_end.accuracy", float("-inf")),
    "correct -5": _set("end_to_end.correct", -5),
    "n -1": _set("end_to_end.n", -1),
    "pages -1": _set("data.pages", -1),
    "outcome banana": _set("end_to_end.outcomes[0].outcome", "banana"),
    "split dev": _set("split", "dev"),
    "settings split dev": _set("settings.split", "dev"),
    "unknown key": _set("banana", 1),
    "unknown nested key": _set("end_to_end.outcomes[0].confidence", 0.5),
    "unknown ranker": _set("rankers.questions[0].ranks.bm26", 1),
    "section split": _set("end_to_end.split", "train"),
    "correct 13": _one_more_correct,
    "funnel": _funnel_off_by_one,
    "accuracy": _accuracy_not_correct_over_n,
    "duplicate id": _duplicate_id,
    "rank without answer": _rank_without_answer,
    "outcome of no question": _outcome_of_no_question,
    "grid cell": _grid_cell,
    "counts": _counts_do_not_add_up,
    "false answer with an answer": _false_answer_to_answerable,
    "setting refused": _setting_refused,
}


@pytest.mark.parametrize("name", TAMPERED)
def test_a_tampered_report_names_the_field(report: Report, name: str) -> None:
    """Oracle: the field the tampering changed, named in the first problem that mentions it;
    the untampered report has no problem."""
    broken = copy.deepcopy(report)
    field = TAMPERED[name](broken)
    problems = validate_report(broken)
    assert problems, name
    assert any(p.startswith(field) for p in problems), problems


def test_nesting_is_bounded_and_strings_do_not_count() -> None:
    """Oracle: brackets counted by hand; those inside a JSON string (escaped quote included)
    are text."""
    limit = MAX_REPORT_DEPTH
    assert nesting_problem("[" * limit + "]" * limit) is None
    assert nesting_problem('{"a": "' + "[" * 1000 + '\\"[[["}') is None
    deep = nesting_problem("[" * (limit + 1))
    assert deep is not None and f"more than {limit} deep" in deep
    assert "line 3" in str(nesting_problem("{\n\n" + '{"a":' * limit))
