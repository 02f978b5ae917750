"""``raglab bm25 grid`` fits an 80-column terminal and prints what :func:`grid_view` holds."""

from __future__ import annotations

import pytest

from raglab.cli.bm25 import GRID_WIDTH
from raglab.cli.main import main
from raglab.pipeline.exhibits.bm25 import grid_view
from raglab.pipeline.lab import Lab


@pytest.fixture(scope="module")
def lab(handbook_lab: Lab) -> Lab:
    return handbook_lab


@pytest.mark.parametrize("columns", [None, "80", "200"])
def test_every_line_of_the_grid_fits_80_columns(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lab: Lab,
    columns: str | None,
) -> None:
    """Oracle: the 80-column rule, on a console as wide as the pipe's default, an 80-column
    terminal and a 200-column one (the table must not merely be squeezed to the width)."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    capsys.readouterr()
    assert main(["bm25", "grid"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert GRID_WIDTH == 80
    assert max(len(line) for line in lines) <= 80
    text = "\n".join(lines)
    assert "…" not in text  # no cell cut short
    view = grid_view(lab)
    for k1, row in zip(view.k1s, view.recall, strict=True):
        cells = [
            f"{v:.2f}" + ("*" if (k1, b) == (view.best.k1, view.best.b) else "")
            for b, v in zip(view.bs, row, strict=True)
        ]
        assert any(line.split() == [f"{k1:.1f}", *cells] for line in lines), k1
    assert f"{view.best.split_recall:.3f}" in lines[-1]
