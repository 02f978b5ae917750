"""``raglab bm25 grid`` prints the counts behind its shares, the ties and the rule.

Oracle: :func:`~raglab.pipeline.exhibits.grid_view`, the one composition of the grid.
"""

from __future__ import annotations

import json

import pytest

from raglab.cli.main import main
from raglab.pipeline.exhibits.bm25 import grid_view
from raglab.pipeline.lab import Lab


@pytest.fixture(scope="module")
def lab(handbook_lab: Lab) -> Lab:
    return handbook_lab


def test_grid_json_and_text_give_counts_beside_shares(
    capsys: pytest.CaptureFixture[str], lab: Lab
) -> None:
    view = grid_view(lab)
    capsys.readouterr()
    assert main(["bm25", "grid", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["train_hits@5"] == [list(row) for row in view.hits]
    assert data["train_questions"] == view.questions
    assert data["best"]["train_hits@5"] == view.best.train_hits
    assert data["default_train_hits@5"] == view.default.train_hits
    assert data["test_hits@5_at_best"] == view.best.split_hits
    assert data["test_questions"] == view.split_questions
    assert data["tied"] == [[view.k1s[i], view.bs[j]] for i, j in view.tied]
    assert data["rule"] == view.rule
    assert main(["bm25", "grid"]) == 0
    text = capsys.readouterr().out
    n = view.questions
    assert f"{view.default.train_recall:.3f} ({view.default.train_hits} of {n})" in text
    assert f"{view.best.train_recall:.3f} ({view.best.train_hits} of {n})" in text
    cells = len(view.k1s) * len(view.bs)
    assert f"{len(view.tied)} of {cells} cells tie with the best." in text
    last = text.splitlines()[-1]
    assert last.endswith(f"({view.best.split_hits} of {view.split_questions})")
    assert " ".join(view.rule.split()) in " ".join(text.split())
