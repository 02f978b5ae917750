"""What the Dask tests share besides the session's fixtures: a chunking key, a cluster of a test
module's own for a test that kills its workers, and the means to kill one at a chosen moment.

tests/distributed/conftest.py holds the session-wide fixtures: one 2-process LocalCluster
(``client``) for every module, the handbook (the session's ``handbook_lab``), Cranfield (the
session's ``cranfield_import``) and the single machine's outputs of commands
(:class:`SingleMachine`, each command run once for every test comparing against it). A
module whose tests kill workers imports :func:`client` from here instead (``from
tests.distributed.cluster_fixtures import client``), which gives it a cluster of its own and
leaves the shared one whole. This folder is the package ``tests.distributed``, so it does not
hide Dask's own ``distributed``.

:class:`KillOnce` is a Dask worker plugin: the worker process that starts the first task of a
named function kills itself (SIGKILL, as the kernel's out-of-memory killer would), once per
function, so a test loses a worker in the middle of the phase it names, whatever that worker
holds at that moment.

Dask is imported here, not skipped: CI installs ``raglab[dask]`` (the ``test`` extra holds it),
so a missing Dask fails these tests instead of hiding them. The rest of the suite imports no
Dask module (tests/distributed/test_no_dask.py checks the command line's side of that).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from dask.utils import key_split
from distributed.diagnostics.plugin import WorkerPlugin

import raglab
import raglab.cli._cluster as cluster_module
from raglab.cli.main import main
from raglab.distributed.cluster import connect
from raglab.pipeline.lab import Lab
from raglab.run_settings import ChunkingKey

CRANFIELD = Path(__file__).resolve().parents[1] / "fixtures" / "cranfield"
#: One chunk per Cranfield abstract (no abstract reaches this cap), as tests/pipeline uses.
WHOLE_PAGES = ChunkingKey("heading", 100_000)


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """A Dask client on a LocalCluster of 2 single-threaded worker processes, the module's own
    (for tests that kill a worker)."""
    with connect(workers=2) as c:
        yield c


class KillOnce(WorkerPlugin):  # type: ignore[misc]
    """The worker starting the first task of each of ``functions`` (by name) kills its own
    process (or the process ``pid``: a scheduler's, say). ``folder`` records each kill as an empty file named after the function, created
    exclusively, so only one worker dies per function, even with the plugin on the workers
    that replace the dead ones."""

    def __init__(self, functions: Iterable[str], folder: Path, pid: int | None = None) -> None:
        self.functions = frozenset(functions)
        self.folder = str(folder)
        self.pid = pid

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        name = key_split(key)
        if finish != "executing" or name not in self.functions:
            return
        try:
            os.close(os.open(os.path.join(self.folder, name), os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return
        os.kill(os.getpid() if self.pid is None else self.pid, signal.SIGKILL)


def write_folder(root: Path, pages: dict[str, str], questions: list[dict[str, str]]) -> list[str]:
    """Write ``pages`` (file stem to Markdown) under ``root/pages`` and ``questions`` (one JSON
    object a line) to ``root/questions.jsonl``; the run's data options naming them."""
    folder = root / "pages"
    folder.mkdir()
    for stem, text in pages.items():
        (folder / f"{stem}.md").write_text(text, encoding="utf-8")
    rows = "\n".join(json.dumps(q) for q in questions) + "\n"
    (root / "questions.jsonl").write_text(rows, encoding="utf-8")
    return ["--corpus", str(folder), "--questions", str(root / "questions.jsonl")]


def killed(folder: Path) -> set[str]:
    """The functions whose first task cost a worker its life (:class:`KillOnce`)."""
    return {p.name for p in folder.iterdir()}


#: The folder RAG lab is imported from here and the folder holding ``tests``: a process
#: started by a test imports RAG lab (and :class:`KillOnce`) from them.
SOURCE = Path(raglab.__file__).resolve().parents[1]
ROOT = Path(__file__).resolve().parents[2]


def python_path(*first: Path) -> str:
    """A PYTHONPATH with ``first`` ahead of this checkout's source and test folders."""
    return os.pathsep.join(str(p) for p in (*first, SOURCE, ROOT))


@contextlib.contextmanager
def scheduler_process(folder: Path) -> Iterator[tuple[subprocess.Popen[bytes], str, Path]]:
    """``dask scheduler`` as a process of its own, as a Dask user starts one: (the process,
    its address, the scheduler file it wrote), killed at the end."""
    file = folder / "scheduler.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
         "--port", "0", "--no-dashboard", "--scheduler-file", str(file)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not file.is_file() or not file.read_text():
            assert process.poll() is None and time.monotonic() < deadline, "no scheduler"
            time.sleep(0.1)
        time.sleep(0.2)  # the file is written whole once it has text; let it finish
        address = json.loads(file.read_text())["address"]
        yield process, address, file
    finally:
        process.kill()
        process.wait(timeout=30)


@contextlib.contextmanager
def worker_process(
    address: str,
    *,
    env: dict[str, str] | None = None,
    code: str = "",
    wait: bool = True,
    options: tuple[str, ...] = ("--no-nanny",),
) -> Iterator[subprocess.Popen[bytes]]:
    """``dask worker ADDRESS`` (one thread, no nanny by default: a killed worker stays dead)
    as a process of its own, with ``env`` over this process's environment; ``code``: Python
    run first, in the worker's process (to take something from its environment);
    ``options``: more of ``dask worker``'s (``()``: with a nanny, which restarts a killed
    worker). Yielded once the scheduler has it (at once without ``wait``: a worker that may
    not last); killed at the end."""
    from distributed import Client

    start = code + "\nfrom distributed.cli.dask_worker import main\nmain()\n"
    with Client(address, timeout=30) as c:
        wanted = len(c.scheduler_info()["workers"]) + 1
        process = subprocess.Popen(
            [sys.executable, "-c", start, address, "--nthreads", "1", *options,
             "--no-dashboard"],
            env={**os.environ, "PYTHONPATH": python_path(), **(env or {})},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            if wait:
                c.wait_for_workers(wanted, timeout=90)
        except BaseException:
            process.kill()
            raise
    try:
        yield process
    finally:
        process.kill()
        process.wait(timeout=30)


#: Run first in a worker's process: RAG lab cannot be imported there, as on a machine where it
#: is not installed (this checkout's own install would be found otherwise).
WITHOUT_RAGLAB = """
import importlib.abc, sys

class _NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "raglab" or name.startswith("raglab."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NotInstalled())
"""


def recorded_labs(monkeypatch: pytest.MonkeyPatch) -> list[Lab]:
    """The labs ``cluster_lab`` builds from now on, recorded as they are made (to read what a
    command's client held once it is done)."""
    labs: list[Lab] = []

    class Recorded(Lab):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            labs.append(self)

    monkeypatch.setattr(cluster_module, "Lab", Recorded)
    return labs


#: The environment that decides a command's output besides its words: the vector cache (whether
#: the vectors it reads are encoded or read) and the report's fixed creation time.
OUTPUT_ENVIRONMENT = ("RAGLAB_CACHE_DIR", "SOURCE_DATE_EPOCH")


@dataclass(frozen=True, slots=True)
class Output:
    """What one in-process command gave: its exit status, stdout and stderr (the file's path
    written ``OUT`` in them), and the bytes of the file it wrote at ``OUT`` (None: none)."""

    status: int
    out: str
    err: str
    file: bytes | None


class SingleMachine:
    """The single machine's output of a command (``raglab.cli.main.main`` in this process, no
    cluster option), run the first time a test asks for it and kept for the session: the oracle
    several modules compare their cluster's output against (the handbook's report, its default
    run), computed once instead of once a test.

    A word of ``argv`` starting ``OUT.`` names the file the command writes (``OUT.json``: a JSON
    report), in a folder of the command's own under ``folder``. A command is the same when its
    words, the working folder and :data:`OUTPUT_ENVIRONMENT` are (so a test that points
    RAGLAB_CACHE_DIR at a folder of its own gets a run of its own, and a run under the session's
    warm cache was run under it)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.done: dict[tuple[object, ...], Output] = {}

    def __call__(self, *argv: str) -> Output:
        key = (argv, os.getcwd(), *(os.environ.get(name) for name in OUTPUT_ENVIRONMENT))
        if key not in self.done:
            self.done[key] = self._run(list(argv), self.folder / str(len(self.done)))
        return self.done[key]

    def _run(self, argv: list[str], folder: Path) -> Output:
        folder.mkdir()
        names = [word for word in argv if word.startswith("OUT.")]
        paths = {name: folder / name for name in names}
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main([str(paths.get(word, word)) for word in argv])
        printed = [out.getvalue(), err.getvalue()]
        for path in paths.values():
            printed = [text.replace(str(path), "OUT") for text in printed]
        written = [path.read_bytes() for path in paths.values() if path.exists()]
        return Output(status, *printed, written[0] if written else None)


def _fetched_keys(dask_worker: Any) -> list[tuple[float, str]]:
    """Run on each worker: (start time, key) of every value it fetched from another worker."""
    return [
        (entry["start"], str(key))
        for entry in dask_worker.transfer_incoming_log
        for key in entry["keys"]
    ]


def moved_since(client: Any, start: float) -> list[str]:
    """The keys of the values a worker of ``client``'s cluster fetched from another since
    ``start`` (``time.time()``), from the workers' transfer logs."""
    return [key for got in client.run(_fetched_keys).values() for t, key in got if t >= start]
