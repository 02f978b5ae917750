"""``raglab run``: the bounds of its settings are ones a run reaches."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from raglab.cli.main import build_parser, main
from raglab.pipeline.end_to_end import run_pipeline
from raglab.run_settings import RunSettings
from raglab.settings import setting
from tests.pipeline.small_corpus import write_small_lab

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_most_windows_allowed_is_a_run_that_finishes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Oracle: the measured runs on the bundled handbook (2 shared cores): ``raglab run
    --windows 50000`` in 28 s, 100,000 in 94 s, and 1,000,000, the maximum once documented, not
    within 600 s. The maximum is 50,000: the old one is refused as a usage error before any
    work (exit 2, naming the bound), and README's settings table states the same bound."""
    windows = setting("windows")
    assert windows.maximum == 50_000
    with pytest.raises(SystemExit) as refused:  # parsed only: nothing runs either way
        build_parser("run").parse_args(["run", "--windows", "1000000"])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert "at most 50000" in err and "Traceback" not in err
    row = next(line for line in README.read_text("utf-8").splitlines() if "`--windows`" in line)
    assert re.search(r"\| 1 to 50,000 \|", row), row


def test_a_value_tuned_on_few_questions_is_printed_with_its_count(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Oracle: the library's run on the same small lab (three training questions, counted by
    hand in tests/pipeline/small_corpus.py): its JSON's ``tuning`` equals the library's notes,
    and the plain output prints each warned note's sentence on a line of its own."""
    lab = write_small_lab(tmp_path)
    data = ("--corpus", str(tmp_path / "pages"), "--questions", str(tmp_path / "q.jsonl"))
    result = run_pipeline(lab, RunSettings())
    assert main(["run", *data, "--json"]) == 0
    tuning = json.loads(capsys.readouterr().out)["tuning"]
    assert tuning == [note.to_dict() for note in result.tuning]
    assert [t["name"] for t in tuning] == ["mmr_lambda", "threshold"]
    assert tuning[1]["questions"] == 3 and "few questions" in tuning[1]["warnings"]
    assert main(["run", *data]) == 0
    lines = capsys.readouterr().out.splitlines()
    sentence = (
        "Reader threshold 0.00 was chosen on 3 training questions, fewer than 30, at the low "
        "edge of its grid 0.00–1.00: treat it with caution."
    )
    assert sentence in lines
    assert [n.sentence for n in result.tuning if n.sentence] == [
        line for line in lines if line.endswith("treat it with caution.")
    ]
