"""A progress bar for long work: shown on a terminal, silent everywhere else.

``progress`` wraps an iterable and yields its items unchanged. On a terminal (stderr by default) it
draws a rich progress bar, which disappears when the work is done; when ``quiet`` is set, or the
stream is not a terminal (a pipe, a file, a test's captured output, a notebook), it writes nothing
at all, so logs and machine-readable output stay clean.
"""

from __future__ import annotations

import sys
from collections.abc import Generator, Iterable, Sized
from typing import TextIO, TypeVar

T = TypeVar("T")


def is_terminal(stream: TextIO) -> bool:
    """True when ``stream`` is an open interactive terminal."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def progress(
    iterable: Iterable[T],
    *,
    total: int | None = None,
    description: str,
    quiet: bool = False,
    file: TextIO | None = None,
) -> Generator[T, None, None]:
    """Yield the items of ``iterable``, drawing a progress bar on ``file`` (default: stderr).

    ``total`` defaults to ``len(iterable)`` when it has one; without a total the bar shows the
    count and the elapsed time only. Nothing is written when ``quiet`` is true or ``file`` is not
    a terminal. The bar is removed when the iteration ends (also when it ends early).
    """
    stream = sys.stderr if file is None else file
    if quiet or not is_terminal(stream):
        yield from iterable
        return
    # rich is imported only when a bar is drawn: quiet and piped runs never need it.
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    if total is None and isinstance(iterable, Sized):
        total = len(iterable)
    columns = [
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    ]
    console = Console(file=stream, highlight=False)
    # No redirection of stdout and stderr: the caller's own output must go where it always goes.
    with Progress(
        *columns,
        console=console,
        transient=True,
        redirect_stdout=False,
        redirect_stderr=False,
    ) as bar:
        task = bar.add_task(description, total=total)
        for item in iterable:
            yield item
            bar.advance(task)
