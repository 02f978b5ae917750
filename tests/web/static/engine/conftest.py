"""The parity fixtures, written once per session for the Node and the Chromium parity tests, and
the Node parity suite's run on them, both in the subprocess the session starts once its tests are
collected (tests/web/static/engine/node_suite.py, :func:`tests.conftest.start_node_suite`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.background import Background
from tests.conftest import NODE_SUITE, NODE_SUITE_WANTS_NODE, start_node_suite
from tests.web.static.engine.node_suite import DONE


def node_suite(tmp_path_factory: pytest.TempPathFactory, *, node: bool) -> Background:
    """The session's Node suite subprocess; started here if the collection started none (as on
    an xdist worker), with Node when this fixture or a collected test needs its run."""
    if not NODE_SUITE:
        node = node or any(NODE_SUITE_WANTS_NODE)
        start_node_suite(tmp_path_factory.getbasetemp(), node=node)
    return NODE_SUITE[0]


@pytest.fixture(scope="session")
def parity_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary folder holding every fixture :func:`~tests.web.static.engine.parity.write_fixtures`
    writes (about 15 s of one core, on the other core while the first tests run)."""
    job = node_suite(tmp_path_factory, node=False)
    assert job.wait_for(DONE), "the parity fixtures were not written:\n" + job.log()[-8000:]
    return job.folder / "fixtures"


@pytest.fixture(scope="session")
def node_suite_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int | None, str]:
    """The Node parity suite's exit status (``None``: still running 600 s after a test asked,
    then stopped) and its whole output (TAP)."""
    return node_suite(tmp_path_factory, node=True).finish(timeout=600)
