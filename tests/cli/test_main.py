"""The front end: every command is listed, and running one loads only that command."""

from __future__ import annotations

import json
import subprocess
import sys

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
