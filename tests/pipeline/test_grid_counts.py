"""The BM25 grid's counts, its tied cells and the rule that picks the best, and Lab.with_stem.

Oracle: each cell's hits counted question by question from first_ranks (the rankings every
measure reads), a tie-break worked by hand from the rule, and a second lab loaded with
``stem=True``.
"""

from __future__ import annotations

import pytest

from raglab.pipeline.exhibits.bm25 import grid_view, stemming_effect
from raglab.pipeline.grid import bm25_grid, grid_rule
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import first_ranks
from raglab.run_settings import RetrievalSettings
from raglab.settings import GRID_K1, GRID_RECALL_K, default

K = GRID_RECALL_K


def found(lab: Lab, split: str, k1: float, b: float) -> int:
    ranks = first_ranks(lab, split, RetrievalSettings("bm25", k1=k1, b=b))
    return sum(r is not None and r <= K for r in ranks)


@pytest.mark.parametrize("stem", [False, True])
def test_grid_hits_count_the_questions_found_in_every_cell(lab: Lab, stem: bool) -> None:
    """Oracle: first_ranks at every (k1, b), counted; the tie-break worked from the rule."""
    lab = lab.with_stem(stem)
    grid = bm25_grid(lab, k=5)
    n = len(lab.split("train", answerable=True))
    assert grid.questions == n
    assert (grid.recall == grid.hits / n).all()
    # Counted one ranking at a time on a spread of cells (every one would take a minute).
    for i in range(0, len(grid.k1s), 3):
        for j in range(0, len(grid.bs), 2):
            k1, b = grid.k1s[i], grid.bs[j]
            assert grid.hits[i, j] == found(lab, "train", k1, b), (k1, b)
    top = int(grid.hits.max())
    tied = [(i, j) for i in range(len(grid.k1s)) for j in range(len(grid.bs))]
    tied = [(i, j) for i, j in tied if grid.hits[i, j] == top]
    assert list(grid.tied) == tied
    # The rule by hand: nearest the defaults in grid steps, then the smaller k1, then b.
    step_k1, step_b = 0.2, 0.1
    nearest = min(
        tied,
        key=lambda c: (
            ((grid.k1s[c[0]] - default("k1")) / step_k1) ** 2
            + ((grid.bs[c[1]] - default("b")) / step_b) ** 2,
            c,
        ),
    )
    assert (grid.best_k1, grid.best_b) == (grid.k1s[nearest[0]], grid.bs[nearest[1]])
    assert "nearest the defaults" in grid_rule(5) and f"k1 = {default('k1')}" in grid_rule(5)


def test_grid_view_carries_the_counts_of_both_splits(lab: Lab) -> None:
    """Oracle: first_ranks on train and test at the best and default cells."""
    view = grid_view(lab, split="test")
    assert view.questions == len(lab.split("train", answerable=True))
    assert view.split_questions == len(lab.split("test", answerable=True))
    assert view.stem is False and view.rule == grid_rule(view.k, view.tuned_on)
    for cell in (view.best, view.default):
        assert cell.train_hits == found(lab, "train", cell.k1, cell.b)
        assert cell.split_hits == found(lab, "test", cell.k1, cell.b)
    assert view.default.at == (GRID_K1.index(default("k1")), 7.5)  # b = 0.75: between 0.7, 0.8
    assert view.best.at == (view.k1s.index(view.best.k1), view.bs.index(view.best.b))
    alone = grid_view(lab, split=None)
    assert alone.split_questions is None and alone.best.split_hits is None


def test_with_stem_is_the_data_under_the_other_stemming(lab: Lab) -> None:
    """Oracle: a lab loaded with ``stem=True``; the sibling is built once and points back."""
    assert lab.with_stem(False) is lab
    sibling = lab.with_stem(True)
    assert sibling is lab.with_stem(True) and sibling.with_stem(False) is lab
    assert sibling.stem is True and sibling.corpus is lab.corpus
    loaded = Lab.load(stem=True)
    assert sibling.indexes.query_tokens("the clutch locks") == loaded.indexes.query_tokens(
        "the clutch locks"
    )
    assert bm25_grid(sibling, k=5).recall.tolist() == bm25_grid(loaded, k=5).recall.tolist()
    with pytest.raises(ValueError):
        lab.with_stem("yes")  # type: ignore[arg-type]


def test_stemming_effect_compares_the_two_labs(lab: Lab) -> None:
    """Oracle: first_ranks of each training question on a plain and a stemmed lab."""
    loaded = Lab.load(stem=True)
    for k1, b in ((default("k1"), default("b")), (0.0, 0.0), (2.2, 0.2)):
        effect = stemming_effect(lab, k1=k1, b=b)
        settings = RetrievalSettings("bm25", k1=k1, b=b)
        pairs = zip(
            lab.split("train", answerable=True),
            first_ranks(lab, "train", settings),
            first_ranks(loaded, "train", settings),
            strict=True,
        )
        fixes, breaks = [], []
        for q, off, on in pairs:
            before, after = off is not None and off <= K, on is not None and on <= K
            if after and not before:
                fixes.append(q.id)
            if before and not after:
                breaks.append(q.id)
        assert [x["id"] for x in effect["fixes"]] == fixes
        assert [x["id"] for x in effect["breaks"]] == breaks
