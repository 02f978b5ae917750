"""Small file helpers every module shares: reading UTF-8 text, and writing files safely.

Reading (:func:`read_text`, :func:`read_text_lines`) drops a leading byte-order mark and raises
:class:`~raglab.errors.InputError` naming the file when it cannot be read or is not UTF-8.
Writing (:func:`atomic_write_text`) goes to a temporary file beside the target, which replaces the
target only when everything has been written, so a failure never leaves a half-written or emptied
file; :func:`write_new_text` is its first step, for callers that swap files in themselves.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable
from pathlib import Path

from raglab.errors import InputError, Problem


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


def atomic_write_text(path: str | Path, text: str, *, overwrite: bool = True) -> None:
    """Write ``text`` (UTF-8, line endings untouched) to ``path`` atomically.

    The text goes to a temporary file in the target's folder (same file system, so the final
    rename is atomic) which then replaces ``path``; on any failure the temporary file is removed
    and ``path`` is left as it was. ``overwrite=False`` raises ``FileExistsError`` instead of
    replacing an existing file (checked without a race where the file system has hard links).
    The new file gets the usual permissions (0o666 less the umask), not those of the old one.
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    write_new_text(tmp, (text,))
    try:
        if overwrite:
            os.replace(tmp, target)
        else:
            _link_no_clobber(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    tmp.unlink(missing_ok=True)


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
