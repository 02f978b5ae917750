"""``raglab.base.files``: a failed write names the user's path in one line, leaves no temporary file,
and the temporary files a killed process left are cleared by the next write."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from raglab.base import files as _io
from raglab.base.files import atomic_write_text, atomic_write_texts, remove_stale_temps, temp_path
from raglab.errors import OutputError


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _message(exc: pytest.ExceptionInfo[OutputError]) -> str:
    (problem,) = exc.value.problems
    return str(problem)


def test_a_missing_folder_is_named(tmp_path: Path) -> None:
    target = tmp_path / "nowhere" / "run.txt"
    with pytest.raises(OutputError) as exc:
        atomic_write_text(target, "x")
    assert (
        _message(exc) == f"{target}: cannot be written: the folder {target.parent} does not exist"
    )


def test_a_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(OutputError) as exc:
        atomic_write_text(tmp_path, "x")
    assert _message(exc) == f"{tmp_path}: cannot be written: is a folder; give a file path"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (errno.ENOSPC, "no space left on the disk (nothing was written)"),
        (errno.EACCES, "permission denied in "),
        (errno.EROFS, "permission denied in "),
    ],
)
def test_os_failures_name_the_users_path_and_leave_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, expected: str
) -> None:
    # The operating system's failure is simulated (tests run as root, and no disk is filled);
    # the code under test is the real writer.
    def fail(fd: int) -> None:
        raise OSError(code, os.strerror(code))

    target = tmp_path / "run.txt"
    target.write_text("old", encoding="utf-8")
    monkeypatch.setattr(_io.os, "fsync", fail)
    with pytest.raises(OutputError) as exc:
        atomic_write_text(target, "new text")
    message = _message(exc)
    assert message.startswith(f"{target}: cannot be written: {expected}")
    assert ".tmp" not in message and "\n" not in message
    assert target.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.txt"]


def test_temporary_names_say_who_left_them(tmp_path: Path) -> None:
    name = temp_path(tmp_path / "run.txt").name
    assert name.startswith(f".run.txt.raglab-{os.getpid()}-") and name.endswith(".tmp")


def test_stale_temporaries_of_ended_processes_are_removed(tmp_path: Path) -> None:
    target = tmp_path / "report[1].html"  # a glob character in the name
    dead = _dead_pid()
    stale_file = tmp_path / f".{target.name}.raglab-{dead}-ab12.tmp"
    stale_dir = tmp_path / f".{target.name}.raglab-{dead}-cd34.old"
    live = tmp_path / f".{target.name}.raglab-{os.getpid()}-ef56.tmp"  # a write in progress
    other = tmp_path / f".other.html.raglab-{dead}-ab12.tmp"
    stale_file.write_text("partial", encoding="utf-8")
    stale_dir.mkdir()
    (stale_dir / "page.md").write_text("x", encoding="utf-8")
    live.write_text("partial", encoding="utf-8")
    other.write_text("partial", encoding="utf-8")
    assert sorted(remove_stale_temps(target)) == sorted([stale_file, stale_dir])
    assert live.exists() and other.exists()
    atomic_write_text(target, "done")
    assert target.read_text(encoding="utf-8") == "done"


def _listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_several_files_are_replaced_together(tmp_path: Path) -> None:
    """Oracle: the files' bytes; both replaced, no temporary left."""
    run, qrels = tmp_path / "r", tmp_path / "q"
    run.write_text("old run\n")
    qrels.write_text("old qrels\n")
    atomic_write_texts([(run, "new run\n"), (qrels, "new qrels\n")])
    assert _listing(tmp_path) == {"r": b"new run\n", "q": b"new qrels\n"}


@pytest.mark.parametrize("second", ["a folder", "missing/q"])
def test_a_second_file_that_cannot_be_written_leaves_the_first_as_it_was(
    tmp_path: Path, second: str
) -> None:
    """Oracle: the first file's bytes before and after; the error names the second path."""
    run = tmp_path / "r"
    run.write_text("old run\n")
    target = tmp_path / second
    if second == "a folder":
        target.mkdir()
    with pytest.raises(OutputError) as exc:
        atomic_write_texts([(run, "new run\n"), (target, "new qrels\n")])
    assert _message(exc).startswith(f"{target}: cannot be written: ")
    assert _listing(tmp_path) == {"r": b"old run\n"}


def test_a_replacement_that_fails_puts_back_the_ones_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second rename fails (simulated: the one OS call that can still fail once both files
    are written): the first target gets its old bytes back, the new file with no old one goes.
    Oracle: the folder's listing before and after."""
    run, qrels, extra = tmp_path / "r", tmp_path / "q", tmp_path / "x"
    run.write_text("old run\n")
    qrels.write_text("old qrels\n")
    real = os.replace

    def replace(src: str | Path, dst: str | Path) -> None:
        if Path(dst) == qrels:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(src, dst)

    monkeypatch.setattr(_io.os, "replace", replace)
    with pytest.raises(OutputError) as exc:
        atomic_write_texts([(run, "new run\n"), (extra, "new x\n"), (qrels, "new qrels\n")])
    assert _message(exc) == f"{qrels}: cannot be written: {os.strerror(errno.EIO)}"
    monkeypatch.undo()
    assert _listing(tmp_path) == {"r": b"old run\n", "q": b"old qrels\n"}


def test_without_overwrite_an_existing_second_file_stops_both(tmp_path: Path) -> None:
    run, qrels = tmp_path / "r", tmp_path / "q"
    qrels.write_text("old qrels\n")
    with pytest.raises(FileExistsError) as exc:
        atomic_write_texts([(run, "new run\n"), (qrels, "new qrels\n")], overwrite=False)
    assert exc.value.filename == str(qrels)
    assert _listing(tmp_path) == {"q": b"old qrels\n"}
