"""``raglab check``: the regression gate against a baseline report."""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from raglab.base.sentinels import TUNED
from raglab.cli import check as check_command
from raglab.metrics.stats import mcnemar_exact
from raglab.pipeline.end_to_end import outcomes_vector, run_pipeline
from raglab.pipeline.gate import compare_reports
from raglab.pipeline.lab import Lab
from raglab.pipeline.report import build_report
from raglab.pipeline.report_check import MAX_REPORT_BYTES, MAX_REPORT_DEPTH
from raglab.run_settings import RunSettings
from tests.pipeline.test_report import write_page_labelled
from tests.pipeline.test_report_check import TAMPERED


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="raglab")
    sub = p.add_subparsers(dest="command", required=True)
    check_command.register(sub)
    return p


def cli(*argv: str) -> int:
    """Run ``raglab check`` through a parser of our own, as main.py would dispatch it."""
    args = parser().parse_args(["check", *argv])
    return int(args.handler(args))


@pytest.fixture(scope="module")
def lab(handbook_lab: Lab) -> Lab:
    return handbook_lab


@pytest.fixture(scope="module")
def baseline(lab: Lab) -> dict[str, Any]:
    return build_report(lab, settings=RunSettings())


@pytest.fixture(scope="module")
def baseline_file(tmp_path_factory: pytest.TempPathFactory, baseline: dict[str, Any]) -> Path:
    path = tmp_path_factory.mktemp("gate") / "baseline.json"
    path.write_text(json.dumps(baseline, indent=2), encoding="utf-8")
    return path


def test_passes_against_its_own_baseline(
    baseline_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: the same data and settings give the same questions right: exit 0."""
    assert cli("--baseline", str(baseline_file)) == 0
    out = capsys.readouterr().out
    assert "PASS" in out and "warning" not in out


def test_a_tiny_budget_fails_naming_the_questions(
    lab: Lab, baseline_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: the library's runs at the default and the tiny budget, and stats.mcnemar_exact
    on their per-question outcomes."""
    assert cli("--baseline", str(baseline_file), "--budget", "50", "--json") == 1
    result = json.loads(capsys.readouterr().out)
    base, tiny = run_pipeline(lab, RunSettings()), run_pipeline(lab, RunSettings(budget=50))
    acc = next(m for m in result["measures"] if m["measure"] == "accuracy")
    pairs = list(zip(base.outcomes, tiny.outcomes, strict=True))
    assert acc["worse"] == [a.id for a, b in pairs if a.outcome == "correct" != b.outcome]
    assert acc["better"] == [a.id for a, b in pairs if b.outcome == "correct" != a.outcome]
    expected = mcnemar_exact(outcomes_vector(base), outcomes_vector(tiny))
    assert acc["mcnemar"]["p_value"] == expected.p_value
    assert (acc["baseline"], acc["current"]) == (base.accuracy, tiny.accuracy)
    assert result["verdict"] == "fail" and result["exit"] == 1
    assert result["settings_changed"]["budget"] == {"baseline": 400, "current": 50}
    assert any(acc["worse"][0] in line and "McNemar" in line for line in result["lines"])


PAGES = {
    "mounts": "# Mounts\n\nThe EQ5 mount carries a payload of 15 kg including the tube and finder. "
    "Tracking stops when the supply falls below 11 volts.\n",
    "returns": "# Returns\n\nA return needs an RMA number issued by support. Unopened goods may "
    "come back within 45 days of delivery.\n",
    "levels": "# Levels\n\nThe AL-32 level has 32x magnification and an accuracy of 1.0 mm per "
    "km.\n",
}
QUESTIONS = [
    ("t1", "train", "What payload does the EQ5 mount carry?", "payload of 15 kg"),
    ("t2", "train", "What magnification has the AL-32 level?", "32x magnification"),
    ("t3", "train", "Do you sell telescope eyepieces?", None),
    ("s1", "test", "How many days for unopened goods to come back?", "within 45 days"),
    ("s2", "test", "Below what supply voltage does tracking stop?", "falls below 11 volts"),
    ("s3", "test", "Is there a padded bag for the EQ5?", None),
]


@pytest.fixture
def small(tmp_path: Path) -> tuple[list[str], Path]:
    """A three-page corpus with six passage-labelled questions, and its JSON report."""
    folder = tmp_path / "pages"
    folder.mkdir()
    for name, text in PAGES.items():
        (folder / f"{name}.md").write_text(text, encoding="utf-8")
    rows = [
        {"id": i, "split": s, "kind": "keyword", "question": q, "answer": a}
        for i, s, q, a in QUESTIONS
    ]
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report = tmp_path / "baseline.json"
    report.write_text(
        json.dumps(build_report(Lab.load(folder, questions), settings=RunSettings())),
        encoding="utf-8",
    )
    return ["--corpus", str(folder), "--questions", str(questions)], report


def test_a_worse_setting_fails_in_words(
    small: tuple[list[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: a 5-word budget packs no chunk (every heading chunk is longer), so every
    answerable question is lost; the verdict carries its McNemar p-value in words."""
    data, baseline = small
    assert json.loads(baseline.read_text())["end_to_end"]["correct"] >= 2
    status = cli(
        "--baseline", str(baseline), *data, "--retriever", "bm25", "--no-rerank", "--budget", "5"
    )
    assert status == 1
    out = capsys.readouterr().out
    fail = next(line for line in out.splitlines() if line.startswith("FAIL"))
    assert "accuracy" in fail and "McNemar" in fail and "p = " in fail
    assert "retriever rrf -> bm25" in out and "budget 400 -> 5" in out
    acc = next(line for line in out.splitlines() if line.startswith("accuracy:"))
    assert "worse: s1, s2" in acc and "of the time" in acc


def test_changed_data_stops_the_gate_unless_accepted(
    small: tuple[list[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: one page byte changed (a space become a tab, which no measure sees) changes the
    corpus digest: the gate stops (exit 2) saying what changed; with --accept-changed corpus it
    warns, compares the shared questions, and passes."""
    data, baseline = small
    page = Path(data[1]) / "levels.md"
    raw = page.read_bytes()
    at = raw.index(b" ", raw.index(b"\n\n"))
    page.write_bytes(raw[:at] + b"\t" + raw[at + 1 :])
    assert cli("--baseline", str(baseline), *data) == 2
    err = capsys.readouterr().err
    assert "the baseline was made from different data: the corpus pages changed (digest" in err
    assert "--accept-changed corpus" in err and "PASS" not in err
    assert cli("--baseline", str(baseline), *data, "--json") == 2
    stopped = json.loads(capsys.readouterr().out)
    assert stopped["verdict"] == "cannot check" and stopped["exit"] == 2
    assert "corpus pages changed" in stopped["error"]["message"]
    assert cli("--baseline", str(baseline), *data, "--json", "--accept-changed", "corpus") == 0
    result = json.loads(capsys.readouterr().out)
    assert result["same_data"] is False and result["data_changed"] == ["corpus"]
    assert result["questions"]["shared"] == 3
    assert any(
        line.startswith("warning: the baseline was made from different data")
        for line in result["lines"]
    )


def _rewrite_questions(data: list[str], keep: Any) -> None:
    path = Path(data[3])
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows if keep(r)), encoding="utf-8")


def test_a_question_set_that_changed_stops_the_gate_unless_accepted(
    small: tuple[list[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: removing test question s3 by hand leaves s1 and s2 shared."""
    data, baseline = small
    _rewrite_questions(data, lambda r: r["id"] != "s3")
    assert cli("--baseline", str(baseline), *data) == 2
    err = capsys.readouterr().err
    assert "the questions changed: 1 only in the baseline (s3)" in err
    assert "--accept-changed questions" in err
    assert cli("--baseline", str(baseline), *data, "--accept-changed", "questions") == 0
    out = capsys.readouterr().out
    assert "only in the baseline (not compared): s3" in out and "PASS" in out


def test_a_baseline_sharing_no_question_cannot_pass(
    small: tuple[list[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: every test question renamed, so no id is shared: nothing is compared, exit 2,
    even with every change accepted."""
    data, baseline = small
    path = Path(data[3])
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"id": "s', '"id": "new-s'), encoding="utf-8")
    argv = ["--baseline", str(baseline), *data, "--accept-changed", "questions"]
    assert cli(*argv) == 2
    err = capsys.readouterr().err
    assert "the baseline shares no question with the current data (3 in the baseline, 3 now)" in err
    assert "PASS" not in err


def test_one_question_is_worded_with_its_chance(baseline: dict[str, Any]) -> None:
    """Oracle: one discordant question: exact McNemar p = min(1, 2 * 1/2) = 1, which the
    wording must call possibly chance, not proof."""
    current = copy.deepcopy(baseline)
    flipped = next(o for o in current["end_to_end"]["outcomes"] if o["outcome"] == "correct")
    flipped["outcome"] = "reader"
    comparison = compare_reports(baseline, current)
    lines = check_command.describe(comparison, "baseline.json")
    acc = next(line for line in lines if line.startswith("accuracy:"))
    assert f"worse: {flipped['id']}" in acc
    assert "p = 1" in acc and "could be chance" in acc and "not proof" in acc
    assert lines[-1].startswith("FAIL") and "p = 1" in lines[-1]


def test_tolerance_lets_a_small_fall_pass(baseline: dict[str, Any]) -> None:
    """Oracle: one question of 30 is a fall of 1/30 < 0.05: within the tolerance, so pass, with
    the worse question still named."""
    current = copy.deepcopy(baseline)
    flipped = next(o for o in current["end_to_end"]["outcomes"] if o["outcome"] == "correct")
    flipped["outcome"] = "reader"
    comparison = compare_reports(baseline, current, tolerance_accuracy=0.05)
    assert comparison["verdict"] == "pass"
    lines = check_command.describe(comparison, "baseline.json")
    assert lines[-1].startswith("PASS")
    assert any(f"worse: {flipped['id']}" in line for line in lines)


def test_flags_override_the_baselines_settings(baseline: dict[str, Any]) -> None:
    """Oracle: the documented rules: a new chunker drops the old size; a given lambda or
    threshold is no longer chosen on train; --no-rerank also drops MMR."""
    p = parser()
    record = baseline["settings"]
    same, split, data = check_command.current_settings(
        record, p.parse_args(["check", "--baseline", "x"])
    )
    assert same == RunSettings(size=300) and split == "test"
    assert data == {"analyzer": "raglab", "stem": False, "windows": None, "model": None}
    args = p.parse_args(
        ["check", "--baseline", "x", "--chunker", "fixed", "--threshold", "0.3", "--no-rerank"]
    )
    changed, _, _ = check_command.current_settings(record, args)
    assert (changed.chunker, changed.size, changed.overlap) == ("fixed", None, None)
    assert changed.threshold == 0.3 and changed.mmr_lambda is TUNED
    assert (changed.rerank, changed.mmr) == (False, False)
    weighted, _, _ = check_command.current_settings(
        record,
        p.parse_args(["check", "--baseline", "x", "--retriever", "score", "--weight", "0.3"]),
    )
    assert (weighted.retriever, weighted.weight) == ("score", 0.3)
    _, split, data = check_command.current_settings(
        record,
        p.parse_args(
            ["check", "--baseline", "x", "--split", "train", "--stem", "--analyzer", "lucene"]
        ),
    )
    assert split == "train" and data == {
        "analyzer": "lucene",
        "stem": True,
        "windows": None,
        "model": None,
    }


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"# RAG lab report\n", "not JSON"),
        (b'{"format": "raglab-report", "schema": 1', "not JSON"),
        (b"[1, 2, 3]", "not an object"),
        (b'{"fingerprint": "abc"}', "format"),
        (b"\xff\xfe\x00binary", "not UTF-8"),
        (b'{"format": "raglab-report", "schema": 7}', "schema"),
    ],
)
def test_a_file_that_is_not_a_report_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, needle: str
) -> None:
    """Oracle: the documented exit status 2 and a message naming the file; no traceback."""
    path = tmp_path / "baseline.json"
    path.write_bytes(content)
    assert cli("--baseline", str(path)) == 2
    captured = capsys.readouterr()
    assert str(path) in captured.err and needle in captured.err
    assert "Traceback" not in captured.err + captured.out


def test_missing_baseline_and_bad_settings_are_exit_2(
    tmp_path: Path, baseline: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: exit 2 with the file named, for a missing file, a folder, a baseline whose
    settings were tampered with, and a tolerance outside [0, 1]."""
    missing = tmp_path / "nope.json"
    assert cli("--baseline", str(missing)) == 2
    assert str(missing) in capsys.readouterr().err
    assert cli("--baseline", str(tmp_path)) == 2
    assert str(tmp_path) in capsys.readouterr().err
    tampered = copy.deepcopy(baseline)
    tampered["settings"]["budget"] = "plenty"
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(tampered), encoding="utf-8")
    assert cli("--baseline", str(path)) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "budget" in err
    assert cli("--baseline", str(path), "--tolerance-recall", "2") == 2
    assert "--tolerance-recall" in capsys.readouterr().err


# --- a baseline is checked before it is believed ------------------------------------------------


@pytest.mark.parametrize("name", TAMPERED)
def test_a_tampered_baseline_is_exit_2_naming_the_field(
    baseline: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Oracle: the field each tampering changed (tests/pipeline/test_report_check.py), named on
    stderr and in the JSON error, exit 2, before any lab is built. NaN and Infinity are written
    as the literals Python's JSON writer gives them."""
    broken = copy.deepcopy(baseline)
    field = TAMPERED[name](broken)
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(broken), encoding="utf-8")
    assert cli("--baseline", str(path)) == 2
    captured = capsys.readouterr()
    assert str(path) in captured.err and f"{field}" in captured.err
    assert "Traceback" not in captured.err and "PASS" not in captured.out
    assert cli("--baseline", str(path), "--json") == 2
    error = json.loads(capsys.readouterr().out)
    assert error["verdict"] == "cannot check" and error["exit"] == 2
    assert field in error["error"]["message"]


def test_a_rank_that_is_not_a_rank_is_not_a_better_question(
    baseline: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: q10 (bm25 rank 1 in the baseline) given the rank "first": read as a rank, the
    gate would count q10 as lost by the baseline and found now ("better"), and pass; refused
    instead, naming the field."""
    broken = copy.deepcopy(baseline)
    row = next(r for r in broken["rankers"]["questions"] if r["id"] == "q10")
    assert row["ranks"]["bm25"] == 1
    row["ranks"]["bm25"] = "first"
    path = tmp_path / "first.json"
    path.write_text(json.dumps(broken), encoding="utf-8")
    assert cli("--baseline", str(path), "--json") == 2
    result = json.loads(capsys.readouterr().out)
    assert "better" not in result and "measures" not in result
    assert "ranks.bm25: 'first' is not of type 'integer', 'null'" in result["error"]["message"]


DEPTH = 100_000


def _nested(tmp_path: Path, name: str, baseline: dict[str, Any]) -> Path:
    """A baseline file of each nesting or size case (item 2 of the issue)."""
    path = tmp_path / f"{name}.json"
    if name == "open brackets":
        path.write_text("[" * DEPTH, encoding="utf-8")
    elif name == "closed brackets":
        path.write_text("[" * DEPTH + "]" * DEPTH, encoding="utf-8")
    elif name == "open objects":
        path.write_text('{"a":' * DEPTH, encoding="utf-8")
    elif name == "deep field in a report":
        deep = copy.deepcopy(baseline)
        deep["settings"]["model"] = json.loads("[" * 40 + "]" * 40)
        path.write_text(json.dumps(deep), encoding="utf-8")
    elif name == "one level too deep":
        path.write_text("[" * (MAX_REPORT_DEPTH + 1) + "]" * (MAX_REPORT_DEPTH + 1))
    elif name == "larger than the limit":
        with path.open("wb") as f:  # sparse: no disk is written for the zeros
            f.truncate(MAX_REPORT_BYTES + 1)
    elif name == "endless":
        return Path("/dev/zero")
    return path


NESTED = {
    "open brackets": "nest more than 32 deep",
    "closed brackets": "nest more than 32 deep",
    "open objects": "nest more than 32 deep",
    "deep field in a report": "nest more than 32 deep",
    "one level too deep": "nest more than 32 deep",
    "larger than the limit": "larger than 64 MiB",
    "endless": "larger than 64 MiB",
}


@pytest.mark.parametrize("name", NESTED)
def test_depth_and_size_are_bounded(
    baseline: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Oracle: MAX_REPORT_DEPTH (32) and MAX_REPORT_BYTES (64 MiB): a document past either is
    refused in one line (exit 2, the file named), never a RecursionError; /dev/zero never ends,
    and only the limit is read of it."""
    assert (MAX_REPORT_DEPTH, MAX_REPORT_BYTES) == (32, 64 * 1024 * 1024)
    path = _nested(tmp_path, name, baseline)
    assert cli("--baseline", str(path)) == 2
    captured = capsys.readouterr()
    assert str(path) in captured.err and NESTED[name] in captured.err
    assert "Traceback" not in captured.err and "RecursionError" not in captured.err


def test_every_error_is_json_under_json(
    baseline: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: the documented error object on stdout (verdict "cannot check", exit 2, the
    message naming the baseline) for a missing file, a folder, a file that is not JSON, a
    baseline whose settings are refused and a tolerance outside [0, 1]; through the real
    command line too."""
    refused = copy.deepcopy(baseline)
    refused["settings"]["chunker"] = "fixed"
    refused["settings"]["overlap"] = refused["settings"]["size"]  # overlap must be < size
    files = {
        "missing": tmp_path / "nope.json",
        "folder": tmp_path,
        "not json": tmp_path / "text.json",
        "settings": tmp_path / "settings.json",
    }
    files["not json"].write_text("# a Markdown report\n", encoding="utf-8")
    files["settings"].write_text(json.dumps(refused), encoding="utf-8")
    cases = [["--baseline", str(path)] for path in files.values()]
    cases.append(["--baseline", str(files["settings"]), "--tolerance-recall", "2"])
    for argv in cases:
        assert cli(*argv, "--json") == 2, argv
        captured = capsys.readouterr()
        error = json.loads(captured.out)
        assert (error["verdict"], error["exit"], error["baseline"]) == ("cannot check", 2, argv[1])
        assert error["error"]["message"] and error["error"]["message"] in captured.err
    from raglab.cli.main import main

    assert main(["check", "--baseline", str(files["missing"]), "--json"]) == 2
    message = json.loads(capsys.readouterr().out)["error"]["message"]
    assert message.startswith(f"cannot read the baseline {files['missing']}")


# --- a skipped check does not pass unless allowed -----------------------------------------------


def test_a_check_the_gate_cannot_make_fails_unless_allowed(
    baseline: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: a baseline made without the neural model (its neural rankers unavailable, as
    rankers_section writes them) has no neural recall to compare: the gate names the three
    skipped measures, exits 2 (verdict "incomplete"), and passes with --allow-skip, still
    naming them."""
    old = copy.deepcopy(baseline)
    section = old["rankers"]
    neural = [name for name in section["table"] if name.startswith("neural")]
    assert neural == ["neural", "neural-rrf", "neural-score"]
    for name in neural:
        del section["table"][name]
        for row in section["questions"]:
            del row["ranks"][name]
    section["unavailable"] = {name: "the neural model is not installed" for name in neural}
    section["neural_weight"] = None
    path = tmp_path / "no-neural.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    assert cli("--baseline", str(path)) == 2
    out = capsys.readouterr().out
    skipped = [line for line in out.splitlines() if line.startswith("skipped: ")]
    assert [line.split()[2] for line in skipped] == neural
    assert "INCOMPLETE" in out and "--allow-skip" in out and "PASS" not in out
    assert cli("--baseline", str(path), "--json") == 2
    result = json.loads(capsys.readouterr().out)
    assert (result["verdict"], result["exit"], result["allow_skip"]) == ("incomplete", 2, False)
    assert [s["measure"] for s in result["skipped"]] == [f"recall@5 {n}" for n in neural]
    assert cli("--baseline", str(path), "--allow-skip") == 0
    out = capsys.readouterr().out
    assert out.count("skipped (allowed by --allow-skip): recall@5 neural") == 3
    assert "PASS" in out.splitlines()[-1] and "recall@5 neural-score" in out.splitlines()[-1]


def test_no_end_to_end_run_on_either_side_is_a_skipped_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: questions labelled by pages support no end-to-end run (docs/design.md#page-labels),
    so accuracy is compared in neither report: a skipped check, exit 2 without --allow-skip."""
    lab = write_page_labelled(tmp_path)
    path = tmp_path / "pages.json"
    path.write_text(json.dumps(build_report(lab, RunSettings())), encoding="utf-8")
    data = ["--corpus", str(tmp_path / "pages"), "--questions", str(tmp_path / "questions.jsonl")]
    assert cli("--baseline", str(path), *data, "--json") == 2
    result = json.loads(capsys.readouterr().out)
    assert result["verdict"] == "incomplete" and result["fell"] == [] and result["lost"] == []
    accuracy = next(s for s in result["skipped"] if s["measure"] == "accuracy")
    assert "neither report has an end-to-end run" in accuracy["reason"]
    assert "labelled by relevant pages" in accuracy["reason"]
    assert cli("--baseline", str(path), *data, "--allow-skip") == 0
    assert "PASS" in capsys.readouterr().out
