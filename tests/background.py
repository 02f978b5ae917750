"""A self-contained suite run in a subprocess beside the test session, and waited for by its test.

The session starts one (:func:`start`) once its tests are collected, so the machine's other core
runs it while the first tests run on this one; the test that owns it waits for it
(:meth:`Background.finish`) and asserts on its exit status and output, which it shows on failure.
A step the suite marks with a file in its folder (:meth:`Background.wait_for`) lets a fixture use
what the suite wrote before the suite ends.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

#: Seconds between two looks at a marker file.
POLL_S = 0.05


@dataclass(frozen=True, slots=True)
class Background:
    """A subprocess writing into ``folder``; its output (stdout and stderr) in ``folder/log.txt``."""

    folder: Path
    process: subprocess.Popen[bytes]

    def log(self) -> str:
        """What the subprocess has printed so far."""
        return (self.folder / "log.txt").read_text(encoding="utf-8", errors="replace")

    def wait_for(self, marker: str) -> bool:
        """Wait until ``folder/marker`` exists or the subprocess ends; whether it exists."""
        return wait_for_file(self.folder / marker, running=lambda: self.process.poll() is None)

    def finish(self, timeout: float) -> tuple[int | None, str]:
        """The exit status (``None`` when still running after ``timeout`` seconds, then killed)
        and the whole output."""
        try:
            code: int | None = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            code = None
        return code, self.log()

    def stop(self) -> None:
        """Kill the subprocess if it still runs."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def wait_for_file(
    path: Path, *, running: Callable[[], bool] = lambda: True, timeout: float | None = None
) -> bool:
    """Wait until ``path`` exists, while ``running()`` says its writer still runs and for at
    most ``timeout`` seconds (None: no limit); whether it exists. The writer may be another
    process's subprocess (another xdist worker's), known only by the file it writes."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while not path.exists() and running():
        if deadline is not None and time.monotonic() > deadline:
            break
        time.sleep(POLL_S)
    return path.exists()


def start(
    folder: Path, argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None
) -> Background:
    """Start ``argv`` in ``cwd`` (``env``: its whole environment; this process's by default),
    its output into ``folder/log.txt`` (``folder`` made here)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "log.txt", "wb") as log:
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    return Background(folder, process)
