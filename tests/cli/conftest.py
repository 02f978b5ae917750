"""Fixtures shared by the command-line tests."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from raglab.cli.main import main

CRANFIELD = Path(__file__).resolve().parents[1] / "fixtures" / "cranfield"


@pytest.fixture(scope="session")
def cranfield_data(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    """Cranfield imported once per session by ``raglab import glasgow``: the data options
    (``--corpus DIR --questions FILE``) every command takes to run on it."""
    out = tmp_path_factory.mktemp("cranfield-import") / "cranfield"
    argv = ["import", "glasgow", "--out", str(out)]
    for option, name in (("--docs", "cran.all.1400"), ("--queries", "cran.qry")):
        argv += [option, str(CRANFIELD / name)]
    argv += ["--qrels", str(CRANFIELD / "cranqrel")]
    # A session fixture cannot take capsys: the summary and warnings are swallowed here.
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        code = main(argv)
    assert code == 0, sink.getvalue()
    assert (out / "questions.jsonl").is_file() and len(list((out / "pages").iterdir())) == 1400
    return ("--corpus", str(out / "pages"), "--questions", str(out / "questions.jsonl"))
