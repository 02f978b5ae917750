"""Exhibit II and every formula on a phone (390 x 844): what the lesson needs is in view.

Browser tests (marked ``browser``) drive Chromium against the real server, each on a fresh page
(a new context, so no saved progress), independent of order. They measure what is drawn: each
element the lesson needs (the k1 x b grid's cells and marks, the term tables' headers and cells,
each formula) lies inside the 390-px viewport and inside every box that holds it, so none sits in
a scroll area the learner has no hint of. Oracle: grid_view of the library's lab for the grid's
size and its best cell; the page's own geometry for the rest.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from raglab.pipeline.exhibits.bm25 import grid_view
from raglab.pipeline.lab import Lab
from tests.web.pages import PHONE, Opener, out_of_view

pytestmark = pytest.mark.browser
expect.set_options(timeout=15_000)

# The smallest font a formula may be scaled to, in CSS pixels (the body text is 16 px).
MIN_FORMULA_PX = 12.0


def test_the_grid_and_the_term_tables_fit_a_phone(open_page: Opener, lab: Lab) -> None:
    """The issue's sequence at 390 px: search "E-4107 stall", map the grid, use the best cell.
    Every cell of the grid, the ring on the chosen cell, the best cell's star, the defaults'
    diamond and every column label are in view, as is every header and cell of the term
    tables, and a term is never broken across lines."""
    page = open_page(PHONE)
    page.locator("#bm25-query").fill("E-4107 stall")
    expect(page.locator("#bm25-results .score").first).to_be_attached()
    page.locator("#bm25-map").click()
    view = grid_view(lab, split=None)
    cells = page.locator("#bm25-heatmap .cell")
    expect(cells).to_have_count(len(view.k1s) * len(view.bs))
    page.locator("#bm25-use-best").click()
    expect(page.locator("#bm25-b-out")).to_have_text(f"{view.best.b:.2f}")
    ring = page.locator("#bm25-heatmap .current-ring")
    ring_at = ring.evaluate("(r) => [Number(r.getAttribute('x')), Number(r.getAttribute('y'))]")
    best = cells.nth(view.k1s.index(view.best.k1) * len(view.bs) + view.bs.index(view.best.b))
    box = best.locator("rect").evaluate(
        "(r) => [Number(r.getAttribute('x')), Number(r.getAttribute('y'))]"
    )
    assert abs(ring_at[0] - box[0] - 2) < 0.01 and abs(ring_at[1] - box[1] - 2) < 0.01
    for selector in (
        "#bm25-heatmap .cell",
        "#bm25-heatmap .current-ring",
        "#bm25-heatmap .best-star",
        "#bm25-heatmap .default-mark",
        "#bm25-heatmap text.tick",
    ):
        assert page.locator(selector).count() > 0, selector
        assert out_of_view(page, selector) == [], selector
    # The b labels under the grid: one per column, every value of the grid.
    labels = page.locator("#bm25-heatmap text.tick").all_text_contents()
    assert [f"{b:.1f}" for b in view.bs] == labels[len(view.k1s) :]

    tables = page.locator("#bm25-results table.terms")
    assert tables.count() == 5
    headers = tables.first.locator("thead th").all_text_contents()
    assert [h.lower() for h in headers] == [
        "term",
        "tf",
        "df",
        "idf",
        "length factor",
        "contribution",
    ]
    for selector in ("#bm25-results table.terms th", "#bm25-results table.terms td"):
        assert out_of_view(page, selector) == [], selector
    # "e-4107" on one line: the row header's text has one line box.
    term = tables.first.locator("tbody th").first
    expect(term).to_have_text("e-4107")
    lines = term.evaluate(
        "(th) => { const r = document.createRange(); r.selectNodeContents(th); "
        "return new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size; }"
    )
    assert lines == 1
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 1


def test_every_formula_fits_a_phone(open_page: Opener) -> None:
    """Every formula of the six exhibits is whole inside the 390-px viewport and its box, with
    nothing to scroll to, at a size no smaller than MIN_FORMULA_PX."""
    page = open_page(PHONE)
    formulas = page.locator("math[display=block]")
    assert formulas.count() >= 17
    assert out_of_view(page, "math[display=block]") == []
    sizes = formulas.evaluate_all(
        """(ms) => ms.map((m) => ({
          label: m.getAttribute("aria-label"),
          px: parseFloat(getComputedStyle(m).fontSize),
          fits: m.scrollWidth <= m.clientWidth + 1,
          width: m.scrollWidth,
          box: m.clientWidth,
        }))"""
    )
    for f in sizes:
        assert f["fits"], f
        assert f["px"] >= MIN_FORMULA_PX, f
    # The bound is set on two lines, so it keeps the page's size.
    bound = next(f for f in sizes if f["label"] == "the bound on accuracy")
    assert bound["px"] == max(f["px"] for f in sizes), bound
    assert "accuracy on answerable questions" in (
        page.locator("math[aria-label='the bound on accuracy']").text_content() or ""
    )
    # The same formulas on a laptop keep the size the page sets for them.
    page.set_viewport_size({"width": 1280, "height": 900})
    laptop = formulas.evaluate_all(
        "(ms) => ms.map((m) => parseFloat(getComputedStyle(m).fontSize))"
    )
    assert min(laptop) == max(laptop) >= 17
