"""What the Dask tests share besides the session's fixtures: a chunking key, a cluster of a test
module's own for a test that kills its workers, and the means to kill one at a chosen moment.

tests/distributed/conftest.py holds the session-wide fixtures: one 2-process LocalCluster
(``client``) for every module, the handbook (the session's ``handbook_lab``) and Cranfield (the
session's ``cranfield_import``). A
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

import os
import signal
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from dask.utils import key_split
from distributed.diagnostics.plugin import WorkerPlugin

from raglab.distributed.cluster import connect
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
    process. ``folder`` records each kill as an empty file named after the function, created
    exclusively, so only one worker dies per function, even with the plugin on the workers
    that replace the dead ones."""

    def __init__(self, functions: Iterable[str], folder: Path) -> None:
        self.functions = frozenset(functions)
        self.folder = str(folder)

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        name = key_split(key)
        if finish != "executing" or name not in self.functions:
            return
        try:
            os.close(os.open(os.path.join(self.folder, name), os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return
        os.kill(os.getpid(), signal.SIGKILL)


def killed(folder: Path) -> set[str]:
    """The functions whose first task cost a worker its life (:class:`KillOnce`)."""
    return {p.name for p in folder.iterdir()}
