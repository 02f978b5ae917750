"""Fixtures of the pipeline tests: the small hand-worked corpus (tests/pipeline/small_corpus.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from raglab.pipeline.lab import Lab
from tests.pipeline.small_corpus import write_small_lab


@pytest.fixture
def small_lab(tmp_path: Path) -> Lab:
    """Three pages and six questions (two train and two test answerable, one of each out of
    corpus), in this test's temporary folder."""
    return write_small_lab(tmp_path)
