"""Every output error is one line naming the user's path (never a temporary file, never a
traceback), exit status 1; what was there before is left as it was."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from raglab.base import files as _io
from raglab.cli.main import main

DOCS = ".I 1\n.T\nLift .\n.W\nwings lift .\n.I 2\n.T\nDrag .\n.W\ndrag rises .\n"
QUERIES = ".I 1\n.W\nwhat lifts ?\n"
QRELS = "1 1 1\n"


def call(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, err


def glasgow(tmp_path: Path, out: Path) -> list[str]:
    args = ["import", "glasgow", "--out", str(out)]
    for name, text in (("docs", DOCS), ("queries", QUERIES), ("qrels", QRELS)):
        (tmp_path / name).write_text(text, encoding="utf-8")
        args += [f"--{name}", str(tmp_path / name)]
    return args


def _no_space(fd: int) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("missing/run.txt", "cannot be written: the folder {parent} does not exist"),
        (".", "cannot be written: is a folder; give a file path"),
    ],
)
def test_trec_export_to_a_path_it_cannot_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, expected: str
) -> None:
    target = tmp_path / where
    code, err = call(
        capsys, "trec", "export", "--retriever", "bm25", "--run", str(target), "--force"
    )
    assert code == 1
    line = f"raglab trec: {target}: " + expected.format(parent=target.parent)
    assert err.strip() == line


def test_trec_export_on_a_full_disk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "run.txt"
    monkeypatch.setattr(_io.os, "fsync", _no_space)  # the disk filling up, simulated
    code, err = call(capsys, "trec", "export", "--retriever", "bm25", "--run", str(target))
    assert code == 1
    assert (
        err.strip() == f"raglab trec: {target}: cannot be written: no space left on the disk "
        "(nothing was written)"
    )
    assert list(tmp_path.iterdir()) == []


def test_import_under_a_file_and_on_a_full_disk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    code, err = call(capsys, *glasgow(tmp_path, blocker / "out"))
    assert (
        code == 1
        and f"{blocker / 'out'}: cannot be written: {blocker} is a file, not a folder" in err
    )
    assert len(err.strip().splitlines()) == 1
    out = tmp_path / "out"
    monkeypatch.setattr(_io.os, "fsync", _no_space)
    code, err = call(capsys, *glasgow(tmp_path, out))
    assert code == 1
    assert (
        err.strip()
        == f"raglab import: {out}: cannot be written: no space left on the disk (nothing was written)"
    )
    assert not out.exists()  # created by this import, so removed again


def test_a_killed_import_leaves_names_users_recognise_and_the_next_import_clears_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert call(capsys, *glasgow(tmp_path, out))[0] == 0
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()  # a process that has ended, as a killed import has
    stale_pages = out / f".pages.raglab-{proc.pid}-0a1b.tmp"
    stale_pages.mkdir()
    (stale_pages / "1.md").write_text("half", encoding="utf-8")
    stale_questions = out / f".questions.jsonl.raglab-{proc.pid}-0a1b.tmp"
    stale_questions.write_text("half", encoding="utf-8")
    assert call(capsys, *glasgow(tmp_path, out), "--force")[0] == 0
    assert sorted(p.name for p in out.iterdir()) == ["pages", "questions.jsonl"]
