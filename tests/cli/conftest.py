"""Fixtures shared by the command-line tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def cranfield_data(cranfield_import: Path) -> tuple[str, ...]:
    """Cranfield imported once per session by ``raglab import glasgow`` (the root conftest's
    ``cranfield_import``): the data options (``--corpus DIR --questions FILE``) every command
    takes to run on it."""
    return (
        "--corpus",
        str(cranfield_import / "pages"),
        "--questions",
        str(cranfield_import / "questions.jsonl"),
    )
