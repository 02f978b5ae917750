"""The front end: every command is listed, and running one loads only that command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from raglab.cli.main import COMMANDS, build_parser, main


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    listing = capsys.readouterr().out
    for name in COMMANDS:
        assert f"    {name} " in listing


def test_an_unknown_command_is_refused_with_the_whole_list(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["serv"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert "invalid choice: 'serv'" in error and "'import'" in error


def test_one_command_registers_alone_and_parses_as_in_the_whole_parser() -> None:
    argv = ["bm25", "search", "tripod head", "--top", "3"]
    assert vars(build_parser("bm25").parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_serve_loads_no_other_command_and_no_rich() -> None:
    """``raglab serve`` starts sooner without the report renderers, the importers and rich: a
    fresh interpreter that builds the serve command's parser has imported none of them (only
    the shared options, which the table of settings derives)."""
    code = (
        "import json, sys\n"
        "from raglab.cli.main import build_parser\n"
        "build_parser('serve').parse_args(['serve', '--quiet'])\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
    )
    commands = sorted(m for m in loaded if m.startswith("raglab.cli."))
    assert commands == [
        "raglab.cli._common",
        "raglab.cli.main",
        "raglab.cli.options",
        "raglab.cli.serve",
    ]
    assert not [m for m in loaded if m == "rich" or m.startswith(("rich.", "raglab.report"))]


def test_version_and_the_exit_status_table(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    from raglab.cli._common import EXIT_CODES

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"raglab {version('raglab')}\n"
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "exit status:" in text and all(f"  {code} " in text for code in EXIT_CODES)
    assert max(len(line) for line in text.splitlines()) <= 100


def test_with_json_every_error_is_a_json_object_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: the documented exit table (usage 2, input 1) and the error object's fields."""
    with pytest.raises(SystemExit) as info:
        main(["run", "--budget", "0", "--json"])
    assert info.value.code == 2
    out = json.loads(capsys.readouterr().out)
    assert out == {
        "error": {"message": "argument --budget: budget must be at least 1, not 0", "problems": []}
    }
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "a.md").write_text("# A\n\nSome words here.\n", encoding="utf-8")
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "q1", "question": 5}\n', encoding="utf-8")
    status = main(
        ["validate", "--corpus", str(tmp_path / "pages"), "--questions", str(questions), "--json"]
    )
    assert status == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["message"] == "the input has problems" and error["problems"]
    first = error["problems"][0]
    assert first["file"] == str(questions) and first["line"] == 1 and first["field"]
    assert main(["lsa", "neighbours", "zzzqqqx", "--json"]) == 2
    captured = capsys.readouterr()
    assert "not in the embedding's vocabulary" in json.loads(captured.out)["error"]["message"]
    assert "zzzqqqx" in captured.err
