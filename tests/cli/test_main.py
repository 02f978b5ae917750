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


PAGES = {
    "mounts": "# Mounts\n\nThe EQ5 mount carries a payload of 15 kg. Tracking stops below 11 volts.\n",
    "returns": "# Returns\n\nA return needs an RMA number. Unopened goods come back within 45 days.\n",
    "levels": "# Levels\n\nThe AL-32 level has 32x magnification and 1.0 mm per km.\n",
}


def neural_export(tmp_path: Path) -> list[str]:
    """``raglab trec export --retriever neural`` on a three-page corpus: its command line."""
    folder = tmp_path / "pages"
    folder.mkdir()
    for name, text in PAGES.items():
        (folder / f"{name}.md").write_text(text, encoding="utf-8")
    questions = tmp_path / "questions.jsonl"
    row = {"id": "q1", "split": "test", "kind": "keyword", "question": "What does the EQ5 carry?"}
    row["answer"] = "15 kg"
    questions.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return [
        "trec", "export", "--retriever", "neural", "--run", str(tmp_path / "out.run"), "--force",
        "--corpus", str(folder), "--questions", str(questions), "--quiet",
    ]  # fmt: skip


def test_a_damaged_cache_is_one_plain_warning_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every chunk vector's entry with one bit flipped: one line for the whole command, in
    words, not Python's ``file:line: RuntimeWarning:`` and source line; the run is the one an
    intact cache gives (the vectors recomputed)."""
    argv = neural_export(tmp_path)
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(tmp_path / "cache"))
    assert main(argv) == 0 and capsys.readouterr().err == ""
    intact = (tmp_path / "out.run").read_bytes()
    [folder] = (tmp_path / "cache" / "neural").iterdir()
    entries = sorted(folder.glob("*.npy"))  # the chunks' (the question's are in queries/)
    assert len(entries) == 3
    for path in entries:
        data = bytearray(path.read_bytes())
        data[128 + 2] ^= 1 << 6  # a mantissa bit of the first number
        path.write_bytes(bytes(data))
    assert main(argv) == 0
    assert capsys.readouterr().err == (
        f"raglab: 3 cached vectors in {folder} failed their checksum (damaged, or written before "
        "entries carried one); recomputed\n"
    )
    assert (tmp_path / "out.run").read_bytes() == intact


def test_an_unwritable_cache_is_one_plain_warning_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache folder is a file: the chunks' vectors and the question's cannot be kept, each
    said in one line (no Python source line), and the export still succeeds."""
    argv = neural_export(tmp_path)
    blocker = tmp_path / "cache"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(blocker))
    assert main(argv) == 0
    lines = capsys.readouterr().err.splitlines()
    [folder] = {line.split(": ")[1] for line in lines if "/queries:" not in line}
    assert folder.startswith(str(blocker / "neural") + "/")
    why = "sentence vectors not cached (Not a directory); they will be encoded again next time"
    assert lines == [f"raglab: {folder}: {why}", f"raglab: {folder}/queries: {why}"]
