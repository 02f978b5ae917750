"""``raglab label``'s command line: usage errors exit 2 in one line; the server it starts answers.

Oracles: the exit-status table (2 for an option that cannot be used, 1 for data that cannot be
read) and the address the command prints, asked for the labelling API's meta.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from raglab.cli._common import EXIT_BAD_INPUT, EXIT_USAGE
from raglab.cli.main import main
from tests.labelling_corpus import write_corpus


@pytest.mark.parametrize(
    "args",
    [
        ["--corpus", "CORPUS"],
        ["--questions", "Q"],
        ["--corpus", "CORPUS", "--questions", "Q", "--port", "70000"],
    ],
)
def test_missing_or_bad_options_are_usage_errors(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = str(write_corpus(tmp_path / "pages"))
    words = [
        corpus if a == "CORPUS" else str(tmp_path / "q.jsonl") if a == "Q" else a for a in args
    ]
    with pytest.raises(SystemExit) as exit_:
        main(["label", *words])
    assert exit_.value.code == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].startswith("raglab label: error:")
    assert "Traceback" not in err


@pytest.mark.parametrize("where", ["folder", "missing-folder"])
def test_a_questions_path_that_cannot_be_a_file_is_one_line_and_exit_2(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = str(write_corpus(tmp_path / "pages"))
    questions = tmp_path if where == "folder" else tmp_path / "nowhere" / "q.jsonl"
    assert main(["label", "--corpus", corpus, "--questions", str(questions)]) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"raglab label: --questions {questions}")


def test_a_corpus_that_does_not_exist_is_bad_input(tmp_path: Path) -> None:
    code = main(
        ["label", "--corpus", str(tmp_path / "none"), "--questions", str(tmp_path / "q.jsonl")]
    )
    assert code == EXIT_BAD_INPUT


def test_the_command_prints_its_address_and_serves_the_page(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "pages")
    questions = tmp_path / "q.jsonl"
    command = [sys.executable, "-m", "raglab", "label", "--corpus", str(corpus)]
    process = subprocess.Popen(
        [*command, "--questions", str(questions), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith(f"Labelling 0 questions of {questions} against 4 pages at "), line
        address = line.split(" at ", 1)[1].split()[0]
        assert address.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{address}api/label/meta", timeout=10) as response:
            assert json.load(response)["pages"] == 4
        with urllib.request.urlopen(address, timeout=10) as response:
            assert b"label.js" in response.read()
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_busy_port_is_one_line_naming_this_command(tmp_path: Path) -> None:
    corpus = str(write_corpus(tmp_path / "pages"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        with pytest.raises(SystemExit) as exit_:
            data = ["--corpus", corpus, "--questions", str(tmp_path / "q.jsonl")]
            main(["label", *data, "--port", str(port)])
    assert str(exit_.value.code).startswith(
        f"raglab label: port {port} on 127.0.0.1 is already in use"
    )
