"""What the Dask tests share besides the session's fixtures: a chunking key, and a cluster of a
test module's own for a test that kills its workers.

tests/distributed/conftest.py holds the session-wide fixtures: one 2-process LocalCluster
(``client``) for every module, the handbook (the session's ``handbook_lab``) and Cranfield (the
session's ``cranfield_import``). A
module whose tests kill workers imports :func:`client` from here instead (``from
tests.distributed.cluster_fixtures import client``), which gives it a cluster of its own and
leaves the shared one whole. This folder is the package ``tests.distributed``, so it does not
hide Dask's own ``distributed``.

Dask is imported here, not skipped: CI installs ``raglab[dask]`` (the ``test`` extra holds it),
so a missing Dask fails these tests instead of hiding them. The rest of the suite imports no
Dask module (tests/distributed/test_no_dask.py checks the command line's side of that).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

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
