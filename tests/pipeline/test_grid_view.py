"""grid_view is the report's BM25 section too: the same grid, best and default cells.

Oracle: the report's own composition (:func:`raglab.pipeline.report_sections.bm25_section`),
until the report is switched to :func:`~raglab.pipeline.exhibits.grid_view`.
"""

from __future__ import annotations

import pytest

from raglab.pipeline.exhibits.bm25 import grid_view
from raglab.pipeline.lab import Lab
from raglab.pipeline.report_sections import bm25_section
from raglab.run_settings import ChunkingKey


@pytest.mark.parametrize(
    ("key", "split"),
    [(ChunkingKey(), "test"), (ChunkingKey(), "train"), (ChunkingKey("fixed", 120, 20), "test")],
)
def test_grid_view_holds_the_report_section(lab: Lab, key: ChunkingKey, split: str) -> None:
    view = grid_view(lab, split=split, chunking=key)
    sec = bm25_section(lab, key, split)
    assert (view.tuned_on, view.split, view.k) == (sec["tuned_on"], sec["split"], sec["k"])
    assert list(view.k1s) == sec["k1s"] and list(view.bs) == sec["bs"]
    assert [list(row) for row in view.recall] == sec["train_recall"]
    for cell, want in ((view.best, sec["best"]), (view.default, sec["default"])):
        assert (cell.k1, cell.b) == (want["k1"], want["b"])
        assert (cell.train_recall, cell.split_recall) == (
            want["train_recall"],
            want["split_recall"],
        )
    assert view.chunking == key.resolved()
