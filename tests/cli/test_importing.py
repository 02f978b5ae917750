"""``raglab import``: summaries, the next command, refusing to overwrite, and bad input named."""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

import pytest

from raglab.cli import importing
from raglab.cli import validate as validate_command

DOCS = ".I 1\n.T\nLift .\n.W\nwings lift .\n.I 2\n.T\nDrag .\n.W\ndrag rises .\n.I 3\n.T\n.W\n"
QUERIES = ".I 1\n.W\nwhat lifts ?\n.I 5\n.W\nwhat drags ?\n"
QRELS = "1 1 1\n1 2 4\n2 2 2\n2 3 -1\n"


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="raglab")
    sub = root.add_subparsers(dest="command", required=True)
    importing.register(sub)
    validate_command.register(sub)
    return root


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    args = parser().parse_args(list(argv))
    code = int(args.handler(args))
    out, err = capsys.readouterr()
    return code, out, err


def beir_folder(root: Path, score: str = "1") -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(
        json.dumps({"_id": "d1", "title": "Lift", "text": "Wings lift."})
        + "\n"
        + json.dumps({"_id": "d2", "title": "Drag", "text": "Drag rises."})
        + "\n",
        encoding="utf-8",
    )
    (root / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "what lifts?"})
        + "\n"
        + json.dumps({"_id": "q2", "text": "unjudged"})
        + "\n",
        encoding="utf-8",
    )
    (root / "qrels" / "test.tsv").write_text(
        f"query-id\tcorpus-id\tscore\nq1\td1\t{score}\n", encoding="utf-8"
    )
    return root


def glasgow_args(tmp_path: Path, qrels: str = QRELS, docs: str = DOCS) -> list[str]:
    files = {"docs": docs, "queries": QUERIES, "qrels": qrels}
    args = ["import", "glasgow"]
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        args += [f"--{name}", str(tmp_path / name)]
    return args


def test_beir_import_prints_summary_and_a_next_command_that_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "my out"  # a space, so the next command must quote it
    code, out, err = cli(
        capsys, "import", "beir", str(beir_folder(tmp_path / "beir")), "--out", str(out_dir)
    )
    assert code == 0 and err == ""
    assert f"Pages 2 in {out_dir / 'pages'}" in out
    # one question kept; one file of qrels, so a random split: floor(0.4 * 1 + 0.5) = 0 test.
    assert "Questions 1: 1 train, 0 test; 1 skipped (no relevant page)" in out
    assert "Labels 1 relevant (question, page) pairs" in out
    (next_line,) = [line for line in out.splitlines() if line.startswith("Next: ")]
    expected = (
        f"raglab validate --corpus {shlex.quote(str(out_dir / 'pages'))} "
        f"--questions {shlex.quote(str(out_dir / 'questions.jsonl'))}"
    )
    assert next_line == "Next: " + expected
    code, out, _ = cli(capsys, *shlex.split(expected)[1:])
    assert code == 0 and "2 pages" in out


def test_beir_split_option_and_json_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = str(beir_folder(tmp_path / "beir"))
    code, out, _ = cli(
        capsys, "import", "beir", folder, "--out", str(tmp_path / "o"), "--split", "test", "--json"
    )
    summary = json.loads(out)
    assert code == 0
    assert summary["questions"] == {"train": 0, "test": 1}
    assert (summary["pages"], summary["skipped_questions"], summary["labels"]) == (2, 1, 1)


def test_glasgow_import_with_warnings_free_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """oracle: QRELS by hand with rel = 5 - grade: query 1 -> {1: 4, 2: 1}, query 2 -> {2: 3}
    and its -1 dropped; page 3 has no body; 2 questions, --test-fraction 1 sends both to test."""
    out_dir = tmp_path / "out"
    args = [*glasgow_args(tmp_path), "--out", str(out_dir), "--test-fraction", "1", "--json"]
    code, out, err = cli(capsys, *args)
    summary = json.loads(out)
    assert code == 0 and err == ""
    assert (summary["pages"], summary["empty_pages"]) == (3, 1)
    assert (summary["labels"], summary["dropped_labels"]) == (3, 1)
    assert summary["questions"] == {"train": 0, "test": 2}
    rows = [json.loads(x) for x in (out_dir / "questions.jsonl").read_text("utf-8").splitlines()]
    assert [(q["id"], q["pages"]) for q in rows] == [("1", {"1": 4, "2": 1}), ("2", {"2": 3})]


def test_glasgow_numbering_and_grade_map_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With --no-queries-by-position the qrels' 5 is the query whose .I is 5."""
    out_dir = tmp_path / "out"
    args = [*glasgow_args(tmp_path, qrels="5 1 0\n1 2 0\n"), "--out", str(out_dir)]
    code, _, err = cli(capsys, *args, "--no-queries-by-position", "--grade-map", "0=2")
    assert code == 0, err
    rows = [json.loads(x) for x in (out_dir / "questions.jsonl").read_text("utf-8").splitlines()]
    assert [(q["id"], q["pages"]) for q in rows] == [("1", {"2": 2}), ("5", {"1": 2})]


def test_stray_markers_are_printed_as_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = DOCS.replace("drag rises .\n", "drag rises .\n.W\nmore\n")
    args = [*glasgow_args(tmp_path, docs=docs), "--out", str(tmp_path / "out")]
    code, _, err = cli(capsys, *args)
    assert code == 0
    assert "Warnings (1)" in err and "docs:11, id 2, field '.W'" in err


def test_non_empty_output_is_refused_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "keep.txt").write_text("mine", encoding="utf-8")
    args = [*glasgow_args(tmp_path), "--out", str(out_dir)]
    code, out, err = cli(capsys, *args)
    assert code == 1 and out == ""
    assert "not empty" in err and "--force" in err and "Traceback" not in err
    assert sorted(p.name for p in out_dir.iterdir()) == ["keep.txt"]
    code, _, _ = cli(capsys, *args, "--force")
    assert code == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["keep.txt", "pages", "questions.jsonl"]


def test_bad_input_exits_1_naming_file_line_field_and_overwrites_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "out"
    good = [*glasgow_args(tmp_path), "--out", str(out_dir)]
    assert cli(capsys, *good)[0] == 0
    before = {p: p.read_bytes() for p in out_dir.rglob("*") if p.is_file()}
    bad = [*glasgow_args(tmp_path, qrels="1 1 1\n1 2 seven\n"), "--out", str(out_dir), "--force"]
    code, out, err = cli(capsys, *bad)
    assert code == 1 and out == ""
    assert f"{tmp_path / 'qrels'}:2, id 1, field 'grade': not a whole number" in err
    assert "Traceback" not in err
    assert {p: p.read_bytes() for p in out_dir.rglob("*") if p.is_file()} == before


def test_bad_beir_input_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = beir_folder(tmp_path / "beir", score="high")
    code, _, err = cli(capsys, "import", "beir", str(folder), "--out", str(tmp_path / "o"))
    assert code == 1 and "test.tsv:2, id q1, field 'score'" in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "extra",
    [
        ["--split", "test", "--test-fraction", "0.5"],
        ["--test-fraction", "1.5"],
        ["--test-fraction", "half"],
        ["--split", "dev"],
    ],
)
def test_usage_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        parser().parse_args(["import", "beir", str(tmp_path), "--out", str(tmp_path / "o"), *extra])
    assert exc.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_grade_map_parsing() -> None:
    assert importing.parse_grade_map("1=4,2=3,-1=0") == {1: 4, 2: 3, -1: 0}
    for bad in ("1:4", "a=1", "1=", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            importing.parse_grade_map(bad)


CACM = Path(__file__).resolve().parents[1] / "fixtures" / "cacm"


def test_glasgow_imports_cacm_as_distributed_and_it_validates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """oracle: the excerpt's README (tests/fixtures/cacm): 55 records, qrels rows 'q d 0 0' for
    queries 1, 2, 3 and 5 (22 rows), an empty '.I 0' at line 520 of query.text, a 0x19 in
    documents 2712 and 2857. With no option the import succeeds, says why, warns, and the next
    command it prints (raglab validate) passes."""
    out_dir = tmp_path / "cacm"
    args = ["import", "glasgow", "--out", str(out_dir)]
    for option, name in (("docs", "cacm.all"), ("queries", "query.text"), ("qrels", "qrels.text")):
        args += [f"--{option}", str(CACM / name)]
    code, out, err = cli(capsys, *args)
    assert code == 0, err
    assert "Questions 4: " in out and "Labels 22 relevant (question, page) pairs" in out
    assert "relevance is binary" in out
    assert "query.text:520: record .I 0 has no fields and is skipped" in out
    assert "Warnings (2)" in err
    assert "cacm.all:1530, id 2712, field '.W': control character U+0019 at column 39" in err
    (next_line,) = [line for line in out.splitlines() if line.startswith("Next: ")]
    code, out, err = cli(capsys, *shlex.split(next_line.removeprefix("Next: "))[1:])
    assert code == 0 and "55 pages" in out, err


def test_glasgow_fields_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--fields takes letters with or without their dot; a letter outside T,W,A,K,B is a usage
    error (exit 2) naming the option."""
    docs = ".I 1\n.T\nLift .\n.A\nPrieve, B. G.\n.W\nwings lift .\n.I 2\n.T\nDrag .\n.I 3\n.T\n"
    out_dir = tmp_path / "out"
    code, _, err = cli(
        capsys, *glasgow_args(tmp_path, docs=docs), "--out", str(out_dir), "--fields", ".T,a"
    )
    assert code == 0, err
    page = (out_dir / "pages" / "1.md").read_text("utf-8")
    assert page.endswith("# Lift .\n\nAuthors: Prieve, B. G.\n") and "wings" not in page
    with pytest.raises(SystemExit) as exit_info:
        cli(capsys, *glasgow_args(tmp_path), "--out", str(tmp_path / "o2"), "--fields", "T,X")
    assert exit_info.value.code == 2
    assert "argument --fields: expected some of T,W,A,K,B" in capsys.readouterr().err
