"""The parity fixtures, written once per session for the Node and the Chromium parity tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web.static.engine.parity import write_fixtures


@pytest.fixture(scope="session")
def parity_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary folder holding every fixture :func:`~tests.web.static.engine.parity.write_fixtures`
    writes (about 20 s of one core)."""
    out = tmp_path_factory.mktemp("parity")
    write_fixtures(out)
    return out
