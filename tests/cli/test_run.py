"""``raglab run``: the bounds of its settings are ones a run reaches."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from raglab.cli.main import build_parser
from raglab.settings import setting

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
