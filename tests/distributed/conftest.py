"""Session-wide fixtures of the Dask tests: one 2-process LocalCluster, the handbook, Cranfield,
and the single machine's outputs of the commands several modules compare their cluster's against.

Every module of this folder shares the one cluster (``client``) and the data; none may stop a worker of it. A
module whose tests kill workers takes a cluster of its own
(:func:`tests.distributed.cluster_fixtures.client`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from raglab.distributed.cluster import connect
from raglab.pipeline.lab import Lab
from tests.distributed.cluster_fixtures import SingleMachine


@pytest.fixture(scope="package")
def client() -> Iterator[Any]:
    """A Dask client on a LocalCluster of 2 single-threaded worker processes: one for the whole
    of tests/distributed, closed after its last test (its worker processes would otherwise sit
    idle, holding memory, through the rest of the session)."""
    with connect(workers=2) as c:
        yield c


@pytest.fixture(scope="session")
def handbook(handbook_lab: Lab) -> Lab:
    """The session's handbook lab (read-only)."""
    return handbook_lab


@pytest.fixture(scope="session")
def cranfield_dir(cranfield_import: Path) -> Path:
    """Cranfield imported once per session by ``raglab import glasgow`` (pages/ and
    questions.jsonl)."""
    return cranfield_import


@pytest.fixture(scope="session")
def cranfield(cranfield_dir: Path) -> Lab:
    """Cranfield with Snowball stemming, the classic comparison's setting."""
    return Lab.load(cranfield_dir / "pages", cranfield_dir / "questions.jsonl", stem=True)


@pytest.fixture(scope="session")
def single_machine(tmp_path_factory: pytest.TempPathFactory) -> SingleMachine:
    """The single machine's output of each command a test compares against, run once for the
    session (:class:`~tests.distributed.cluster_fixtures.SingleMachine`)."""
    return SingleMachine(tmp_path_factory.mktemp("single-machine"))
