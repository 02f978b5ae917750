"""Fixtures of the Dask tests: one 2-process LocalCluster per module, the handbook and Cranfield.

Each test module imports the fixtures it uses from here (``from cluster_fixtures import ...``).
This folder is deliberately not a package and has no conftest.py: a package would be importable
as ``distributed`` and hide Dask's own package of that name, and a second top-level
``conftest`` module would hide the suite's.

Dask is imported here, not skipped: CI installs ``raglab[dask]`` (the ``test`` extra holds it),
so a missing Dask fails these tests instead of hiding them. The rest of the suite imports no
Dask module (tests/distributed/test_no_dask.py checks the command line's side of that).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from raglab.cli.main import main
from raglab.distributed.cluster import connect
from raglab.pipeline.lab import Lab
from raglab.run_settings import ChunkingKey

CRANFIELD = Path(__file__).resolve().parents[1] / "fixtures" / "cranfield"
#: One chunk per Cranfield abstract (no abstract reaches this cap), as tests/pipeline uses.
WHOLE_PAGES = ChunkingKey("heading", 100_000)


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """A Dask client on a LocalCluster of 2 single-threaded worker processes."""
    with connect(workers=2) as c:
        yield c


@pytest.fixture(scope="module")
def handbook() -> Lab:
    return Lab.load()


@pytest.fixture(scope="module")
def cranfield_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Cranfield imported by ``raglab import glasgow`` (pages/ and questions.jsonl)."""
    out = tmp_path_factory.mktemp("cranfield-dask") / "cranfield"
    argv = ["import", "glasgow", "--out", str(out), "--quiet"]
    for option, name in (("--docs", "cran.all.1400"), ("--queries", "cran.qry")):
        argv += [option, str(CRANFIELD / name)]
    argv += ["--qrels", str(CRANFIELD / "cranqrel")]
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        assert main(argv) == 0, sink.getvalue()
    return out


@pytest.fixture(scope="module")
def cranfield(cranfield_dir: Path) -> Lab:
    """Cranfield with Snowball stemming, the classic comparison's setting."""
    return Lab.load(cranfield_dir / "pages", cranfield_dir / "questions.jsonl", stem=True)
