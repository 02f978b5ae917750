"""Small file helpers every module shares: reading UTF-8 text, and writing files safely.

Reading (:func:`read_text`, :func:`read_text_lines`) drops a leading byte-order mark and raises
:class:`~raglab.errors.InputError` naming the file when it cannot be read or is not UTF-8.
Writing (:func:`atomic_write_text`) goes to a temporary file beside the target, which replaces the
target only when everything has been written, so a failure never leaves a half-written or emptied
file; :func:`atomic_write_texts` does so for several files as one (a run and its qrels), and
:func:`write_new_text` is their first step, for callers that swap files in themselves. A failed
write raises :class:`~raglab.errors.OutputError` naming the user's path and why, in one line.

Temporary files are named ``.NAME.raglab-PID-TOKEN.tmp`` (:func:`temp_path`), so a user who finds
one knows what left it; one left by a process that no longer runs (killed mid-write) is removed by
the next write to the same target (:func:`remove_stale_temps`).
"""

from __future__ import annotations

import contextlib
import errno
import glob
import os
import re
import secrets
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path

from raglab.errors import InputError, OutputError, Problem

_TEMP = re.compile(r"\.raglab-(\d+)-[0-9a-f]+\.\w+$")


def read_text(path: str | Path) -> str:
    """The text of a UTF-8 file (a leading byte-order mark is dropped; line endings untouched).

    Raises :class:`InputError` when the file cannot be read or is not UTF-8.
    """
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError([Problem(source, f"cannot be read: {exc.strerror or exc}")]) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            [
                Problem(
                    source,
                    f"is not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
                    line,
                )
            ]
        ) from None


def read_text_lines(path: str | Path) -> list[str]:
    """The lines of a UTF-8 text file (a leading byte-order mark is dropped).

    Lines are split at ``\\n`` only (a trailing ``\\r`` is removed), so characters such as U+2028
    inside a JSON string do not break a line. A final newline does not make an extra empty line.
    Raises :class:`InputError` when the file cannot be read or is not UTF-8.
    """
    lines = read_text(path).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def write_new_text(path: str | Path, chunks: Iterable[str]) -> None:
    """Create ``path``, which must not exist, holding ``chunks`` as UTF-8, flushed to disk.

    Line endings are written untouched. When writing fails after the file was created, the
    partial file is removed; ``FileExistsError`` when ``path`` already exists.
    """
    handle = open(path, "x", encoding="utf-8", newline="")  # noqa: SIM115 (closed below)
    try:
        with handle:
            handle.writelines(chunks)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        Path(path).unlink(missing_ok=True)
        raise


def temp_path(target: str | Path, kind: str = "tmp") -> Path:
    """A fresh hidden sibling of ``target``: ``.NAME.raglab-PID-TOKEN.KIND``."""
    target = Path(target)
    return target.with_name(f".{target.name}.raglab-{os.getpid()}-{secrets.token_hex(4)}.{kind}")


def remove_stale_temps(target: str | Path) -> list[Path]:
    """Remove the temporary siblings of ``target`` (:func:`temp_path`) whose process has ended.

    Files of a process still running (another write in progress) are left alone. Returns what
    was removed; a sibling that cannot be removed is skipped.
    """
    target = Path(target)
    removed: list[Path] = []
    try:
        siblings = list(target.parent.glob(f".{glob.escape(target.name)}.raglab-*"))
    except OSError:
        return removed
    for path in siblings:
        m = _TEMP.search(path.name)
        if m is None or _alive(int(m.group(1))):
            continue
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError:
            continue
        removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def output_error(path: str | Path, exc: OSError) -> OutputError:
    """One line saying why ``path`` (the user's path, not a temporary file) cannot be written."""
    target = Path(path)
    if exc.errno == errno.ENOSPC:
        why = "no space left on the disk (nothing was written)"
    elif exc.errno == errno.EDQUOT:
        why = "the disk quota is exceeded (nothing was written)"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        why = f"permission denied in {target.parent or Path('.')}"
    elif isinstance(exc, IsADirectoryError) or target.is_dir():
        why = "is a folder; give a file path"
    elif isinstance(exc, NotADirectoryError) or _file_above(target):
        why = f"{_file_above(target) or target.parent} is a file, not a folder"
    elif isinstance(exc, FileNotFoundError) or not target.parent.is_dir():
        why = f"the folder {target.parent} does not exist"
    else:
        why = exc.strerror or str(exc)
    return OutputError([Problem(str(path), f"cannot be written: {why}")])


def _file_above(target: Path) -> Path | None:
    """The nearest existing ancestor of ``target`` when it is a file (so no folder can be made)."""
    for parent in target.parents:
        if parent.exists():
            return parent if not parent.is_dir() else None
    return None


def atomic_write_text(path: str | Path, text: str, *, overwrite: bool = True) -> None:
    """Write ``text`` (UTF-8, line endings untouched) to ``path`` atomically.

    The text goes to a temporary file in the target's folder (same file system, so the final
    rename is atomic) which then replaces ``path``; on any failure the temporary file is removed
    and ``path`` is left as it was. ``overwrite=False`` raises ``FileExistsError`` instead of
    replacing an existing file (checked without a race where the file system has hard links).
    The new file gets the usual permissions (0o666 less the umask), not those of the old one.
    Any other failure raises :class:`OutputError` naming ``path``.
    """
    target = Path(path)
    if target.is_dir():
        raise OutputError([Problem(str(path), "cannot be written: is a folder; give a file path")])
    remove_stale_temps(target)
    tmp = temp_path(target)
    try:
        write_new_text(tmp, (text,))
        try:
            if overwrite:
                os.replace(tmp, target)
            else:
                _link_no_clobber(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    except FileExistsError:
        raise
    except OSError as exc:
        raise output_error(path, exc) from None


def _link_no_clobber(tmp: Path, target: Path) -> None:
    try:
        os.link(tmp, target)  # fails with FileExistsError when target exists: no race
    except FileExistsError:
        raise
    except OSError:
        # File systems without hard links: check, then rename (a narrow race remains).
        if target.exists():
            raise FileExistsError(f"{target} already exists") from None
        os.replace(tmp, target)


def atomic_write_texts(files: Sequence[tuple[str | Path, str]], *, overwrite: bool = True) -> None:
    """Write several files as one (a TREC run and its qrels): every target replaced, or none.

    Each text goes to a temporary sibling of its target (:func:`write_new_text`, flushed to disk);
    only once all are written do they replace their targets, back to back, so a failure to write
    any one leaves every target as it was. A replacement that fails after others were made puts
    those back (from hard links kept to the old files, where the file system has them). What a
    kill can still split is the few microseconds between two renames. ``overwrite=False`` raises
    ``FileExistsError`` (its ``filename`` the target) when a target exists; other failures raise
    :class:`OutputError` naming the user's path.
    """
    targets = [(Path(path), path) for path, _ in files]
    for target, path in targets:
        if target.is_dir():
            raise OutputError(
                [Problem(str(path), "cannot be written: is a folder; give a file path")]
            )
    temps: list[Path] = []
    # A replaced target -> a link to its old file, or None where there was none (the new file is
    # then removed to undo); one whose old file could not be kept is not undone.
    kept: dict[Path, Path | None] = {}
    try:
        for (target, path), (_, text) in zip(targets, files, strict=True):
            remove_stale_temps(target)
            tmp = temp_path(target)
            try:
                write_new_text(tmp, (text,))
            except OSError as exc:
                raise output_error(path, exc) from None
            temps.append(tmp)
        for tmp, (target, path) in zip(temps, targets, strict=True):
            existed = os.path.lexists(target)
            old = _keep_old(target) if overwrite and existed else None
            try:
                if overwrite:
                    os.replace(tmp, target)
                else:
                    _link_no_clobber(tmp, target)
            except FileExistsError:
                _put_back(kept)
                raise FileExistsError(errno.EEXIST, "already exists", str(path)) from None
            except OSError as exc:
                if old is not None:
                    old.unlink(missing_ok=True)
                _put_back(kept)
                raise output_error(path, exc) from None
            if old is not None or not existed:
                kept[target] = old
        for old in kept.values():
            if old is not None:
                old.unlink(missing_ok=True)
    finally:
        for tmp in temps:
            tmp.unlink(missing_ok=True)


def _keep_old(target: Path) -> Path | None:
    """A hard link to ``target``'s file (to put it back), or None where there can be none."""
    link = temp_path(target, "old")
    try:
        os.link(target, link)
    except OSError:  # a file system without hard links
        return None
    return link


def _put_back(kept: dict[Path, Path | None]) -> None:
    """Undo the replacements made so far: each old file back, each new one without an old removed."""
    for target, old in kept.items():
        with contextlib.suppress(OSError):
            if old is None:
                target.unlink()
            else:
                os.replace(old, target)
