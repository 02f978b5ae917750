"""``raglab report``: writes the library's report atomically and never clobbers a file unasked."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from raglab.cli import report as report_command
from raglab.cli.main import main
from raglab.pipeline.lab import Lab
from raglab.pipeline.report import build_report
from raglab.report.html import render_html
from raglab.report.markdown import render_markdown
from raglab.run_settings import RunSettings


def cli(*argv: str) -> int:
    """Run ``raglab report`` through a parser of our own, as main.py would dispatch it."""
    parser = argparse.ArgumentParser(prog="raglab")
    sub = parser.add_subparsers(dest="command", required=True)
    report_command.register(sub)
    try:
        args = parser.parse_args(["report", *argv])
    except SystemExit as exc:  # a usage error: argparse has printed it
        return int(exc.code or 0)
    return int(args.handler(args))


@pytest.fixture(scope="module")
def library_report(handbook_lab: Lab) -> dict[str, Any]:
    return build_report(handbook_lab, settings=RunSettings())


def without_created(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k != "created"}


def test_json_report_is_the_librarys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], library_report: dict[str, Any]
) -> None:
    """Oracle: build_report on the same data and settings; only ``created`` may differ."""
    out = tmp_path / "baseline.json"
    assert cli("--format", "json", "--out", str(out)) == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    assert without_created(written) == without_created(library_report)
    printed = capsys.readouterr().out
    e2e = library_report["end_to_end"]
    assert f"Wrote {out}" in printed
    assert f"Accuracy {e2e['correct']}/{e2e['n']} = {e2e['accuracy']:.3f}" in printed
    assert library_report["fingerprint"] in printed
    # The atomic write leaves no temporary file behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["baseline.json"]


def test_force_replaces_with_the_settings_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: the flags as given reach the file; the format follows the suffix; --json prints
    where the report went; --force replaced the old bytes."""
    out = tmp_path / "small.md"
    out.write_bytes(b"old")
    assert cli("--out", str(out), "--force", "--budget", "120", "--no-rerank", "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["out"] == str(out) and summary["format"] == "md"
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# RAG lab report\n")
    assert "| Context budget | 120 words |" in text
    assert "| Reranker | off |" in text
    assert summary["bytes"] == len(text.encode())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.md"]


def test_own_data_with_page_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Oracle: docs/design.md#page-labels: page labels support no run, and the command says so; --quiet prints
    nothing."""
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "mounts.md").write_text("# Mounts\n\nThe EQ5 carries 15 kg.\n", encoding="utf-8")
    (pages / "levels.md").write_text("# Levels\n\nThe AL-32 has 32x zoom.\n", encoding="utf-8")
    rows = [
        ("a", "train", "What does the EQ5 carry?", ["mounts"]),
        ("b", "train", "What zoom has the AL-32?", ["levels"]),
        ("c", "test", "How much does the EQ5 carry?", ["mounts"]),
    ]
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        "".join(
            json.dumps({"id": i, "split": sp, "kind": "beir", "question": q, "pages": p}) + "\n"
            for i, sp, q, p in rows
        ),
        encoding="utf-8",
    )
    data = ["--corpus", str(pages), "--questions", str(questions)]
    assert cli("--out", str(tmp_path / "r.html"), *data) == 0
    assert "No end-to-end run" in capsys.readouterr().out
    assert cli("--out", str(tmp_path / "r.json"), "--quiet", *data) == 0
    assert capsys.readouterr().out == ""
    written = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert written["end_to_end"]["supported"] is False
    assert written["data"]["questions"] == str(questions)


def test_renderings(library_report: dict[str, Any]) -> None:
    """Oracle: the renderers themselves; JSON reads back equal."""
    assert report_command.render(library_report, "md") == render_markdown(library_report)
    assert report_command.render(library_report, "html") == render_html(library_report)
    assert json.loads(report_command.render(library_report, "json")) == library_report


def test_refuses_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Oracle: the user's bytes, unchanged; exit 1 with a message naming --force."""
    out = tmp_path / "mine.html"
    out.write_bytes(b"precious")
    assert cli("--out", str(out)) == 1
    assert out.read_bytes() == b"precious"
    err = capsys.readouterr().err
    assert str(out) in err and "--force" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.html"]


@pytest.mark.parametrize(
    ("argv", "status", "needle"),
    [
        (["--out", "report.txt"], 2, "--format"),
        (["--out", "report.md", "--budget", "0"], 2, "budget"),
        (["--out", "."], 1, "folder"),
        (["--out", "missing-dir/report.md"], 1, "cannot write"),
    ],
)
def test_clear_errors(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    status: int,
    needle: str,
) -> None:
    """Oracle: the documented exit status and a one-line message, never a traceback; with
    --json the same message as the error object on stdout."""
    monkeypatch.chdir(tmp_path)
    assert cli(*argv) == status
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err
    try:  # the real command line: a usage error is JSON too
        code = main(["report", *argv, "--json"])
    except SystemExit as exc:
        code = int(exc.code or 0)
    assert code == status
    captured = capsys.readouterr()
    message = json.loads(captured.out)["error"]["message"]
    assert needle in message and message in captured.err


def test_source_date_epoch_makes_two_runs_byte_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: 1700000000 s after 1970-01-01 is 2023-11-14T22:13:20Z (by hand: 19675 days and
    80000 s); with it set, two reports of the same data are the same bytes in every format."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    for suffix in ("json", "html", "md"):
        a, b = tmp_path / f"a.{suffix}", tmp_path / f"b.{suffix}"
        assert cli("--out", str(a)) == 0 and cli("--out", str(b)) == 0
        assert a.read_bytes() == b.read_bytes(), suffix
    assert json.loads((tmp_path / "a.json").read_text("utf-8"))["created"] == "2023-11-14T22:13:20Z"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    assert cli("--out", str(tmp_path / "c.json")) == 2
    assert "SOURCE_DATE_EPOCH must be whole seconds" in capsys.readouterr().err


def test_schema_prints_the_published_schema_and_the_report_passes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], library_report: dict[str, Any]
) -> None:
    """Oracle: jsonschema's own Draft 2020-12 validator, given the printed schema, on the JSON
    file ``raglab report`` writes; --schema builds and writes nothing. Without --out or
    --schema: a usage error (exit 2), as JSON under --json."""
    import jsonschema

    assert cli("--schema") == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    out = tmp_path / "baseline.json"
    assert cli("--out", str(out), "--quiet") == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(written)) == []
    assert list(tmp_path.iterdir()) == [out]
    capsys.readouterr()
    assert cli("--json") == 2
    captured = capsys.readouterr()
    assert "--out" in captured.err and "--out" in json.loads(captured.out)["error"]["message"]
