"""Exhibit II in a real browser: contribution bars to scale, counts beside shares, the tied and
default cells marked, test recall only after a commit, and the stemming switch.

Browser tests (marked ``browser``) drive Chromium against the real server (``python -m
raglab.cli.serve``), each on a fresh page (a new context, so no saved progress), independent of
order. Oracle: the library, on labs of its own (the ``lab`` fixture and one loaded with
``stem=True``): bm25_search, grid_view, first_ranks and measure for the same settings; the API
only for the labels of ``/api/meta``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from raglab.pipeline.exhibits.bm25 import bm25_search, grid_view, stemming_effect
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import first_ranks, measure
from raglab.run_settings import RetrievalSettings
from raglab.settings import GRID_RECALL_K, default

pytestmark = pytest.mark.browser
expect.set_options(timeout=15_000)

K = GRID_RECALL_K
# A training question whose second result splits its score 54 : 46 between two terms: bars
# drawn the same width would hide the difference.
QUERY = "When should an agent escalate a ticket?"


@pytest.fixture(scope="module")
def stemmed(handbook_lab: Lab) -> Lab:
    """The session's handbook with stemmed retrieval tokens (its sibling, built once)."""
    return handbook_lab.with_stem(True)


@pytest.fixture
def page(browser: Browser, server: str) -> Iterator[Page]:
    """A fresh page (its own context: empty localStorage), loaded and ready; it records the
    API paths it asks for in ``page.api_calls``."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    p = context.new_page()
    errors: list[str] = []
    calls: list[str] = []
    p.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    p.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    p.on("request", lambda r: calls.append(r.url.split("?")[0].split("/api/", 1)[-1]))
    p.api_calls = calls  # type: ignore[attr-defined]
    p.goto(f"{server}/")
    p.wait_for_selector("body[data-ready=true]")
    yield p
    context.close()
    assert errors == []


def f3(value: float) -> str:
    return f"{value:.3f}"


def counted(lab: Lab, split: str, k1: float, b: float) -> str:
    """The page's "share (hits of questions)" for BM25 at (k1, b), from the library."""
    settings = RetrievalSettings("bm25", k1=k1, b=b)
    ranks = first_ranks(lab, split, settings)
    hits = sum(r is not None and r <= K for r in ranks)
    return f"{f3(measure(lab, split, settings)[f'recall@{K}'])} ({hits} of {len(ranks)})"


def at(k1: float, b: float, digits: int = 2) -> str:
    return f"at k1 = {k1:.{digits}f}, b = {b:.{digits}f}"


def search(page: Page, query: str) -> None:
    page.locator("#bm25-query").fill(query)
    page.locator("#bm25-form button[type=submit]").click()


def test_contribution_bars_are_drawn_to_each_terms_share(page: Page, lab: Lab) -> None:
    """Oracle: bm25_search's contributions over each chunk's score; one scale for every bar."""
    search(page, QUERY)
    found = bm25_search(lab, QUERY, k1=default("k1"), b=default("b"))
    rows = page.locator("#bm25-results .result-list > li")
    expect(rows).to_have_count(len(found["results"]))
    expect(rows.first.locator(".chunk-id")).to_have_text(found["results"][0]["chunk"])
    pairs: list[tuple[float, float]] = []
    for n, row in enumerate(found["results"]):
        widths = (
            rows.nth(n)
            .locator(".contrib-bar")
            .evaluate_all("(bars) => bars.map((b) => b.getBoundingClientRect().width)")
        )
        shares = [t["contribution"] / row["score"] for t in row["terms"]]
        assert len(widths) == len(shares)
        pairs += zip(shares, widths, strict=True)
    # The one scale that fits all bars best (least squares), then every bar within a pixel.
    scale = sum(s * w for s, w in pairs) / sum(s * s for s, _ in pairs)
    assert scale > 20
    for s, w in pairs:
        assert abs(w - s * scale) <= 1, (s, w, scale)
    # The 54 : 46 split of the second result shows as two different widths.
    second = [w for s, w in pairs[len(found["results"][0]["terms"]) :][:3] if s > 0]
    assert len(second) == 2 and abs(second[0] - second[1]) >= 3


def test_the_grid_shows_counts_and_marks_tied_and_default_cells(page: Page, lab: Lab) -> None:
    """Oracle: grid_view of the library's lab: its counts, ties, rule, best and default cells."""
    view = grid_view(lab, split=None)
    n = view.questions
    page.locator("#bm25-map").click()
    cells = page.locator("#bm25-heatmap .cell")
    expect(cells).to_have_count(len(view.k1s) * len(view.bs))
    texts = cells.locator("text").all_text_contents()
    assert texts == [str(h) for row in view.hits for h in row]
    tied = page.locator("#bm25-heatmap .cell.tied").evaluate_all(
        "(cells) => cells.map((c) => [Number(c.dataset.i), Number(c.dataset.j)])"
    )
    assert [tuple(x) for x in tied] == list(view.tied)
    assert len(view.tied) > len(texts) / 2  # the handbook's lesson: most of the grid ties
    mark = page.locator("#bm25-heatmap .default-mark")
    expect(mark).to_have_count(1)
    # The defaults (k1 = 1.2, b = 0.75) sit on row 6, halfway between columns 7 and 8.
    assert (mark.get_attribute("data-i"), mark.get_attribute("data-j")) == ("6", "7.5")
    assert view.default.at == (6.0, 7.5)
    best, default = view.best, view.default
    expect(page.locator("#bm25-best")).to_have_text(
        f"{f3(best.train_recall)} ({best.train_hits} of {n}) {at(best.k1, best.b, 1)}"
    )
    expect(page.locator("#bm25-default")).to_have_text(
        f"{counted(lab, 'train', default.k1, default.b)} {at(default.k1, default.b)}"
    )
    assert best.train_hits == default.train_hits + 1
    expect(page.locator("#bm25-ties")).to_have_text(f"{len(view.tied)} of {len(texts)} cells")
    expect(page.locator("#bm25-rule")).to_have_text(view.rule)
    legend = page.locator("#bm25-legend")
    expect(legend).to_contain_text(f"of the {n} training questions")
    expect(legend).to_contain_text(f"({len(view.tied)} of {len(texts)})")
    # Picking a cell shows its count beside its share.
    i, j = 0, 3
    page.locator(f"#bm25-heatmap .cell[data-i='{i}'][data-j='{j}']").click()
    expect(page.locator("#bm25-train")).to_have_text(
        f"{counted(lab, 'train', view.k1s[i], view.bs[j])} {at(view.k1s[i], view.bs[j])}"
    )


def test_test_recall_is_measured_once_after_the_commit(page: Page, lab: Lab) -> None:
    """Oracle: measure and first_ranks on the test split at the committed setting; the page's
    own requests (no test measurement before the commit, none after it on a move)."""
    test = page.locator("#bm25-test")
    commit = page.locator("#bm25-commit")
    expect(test).to_have_text("measured once you commit")
    page.locator("#bm25-map").click()
    page.locator("#bm25-use-best").click()
    view = grid_view(lab, split=None)
    best = view.best
    expect(page.locator("#bm25-train")).to_have_text(
        f"{counted(lab, 'train', best.k1, best.b)} {at(best.k1, best.b)}"
    )
    heatmap = page.locator("#bm25-heatmap svg")
    heatmap.focus()
    heatmap.press("ArrowUp")
    heatmap.press("ArrowDown")
    expect(page.locator("#bm25-train")).to_have_text(
        f"{counted(lab, 'train', best.k1, best.b)} {at(best.k1, best.b)}"
    )
    expect(test).to_have_text("measured once you commit")
    calls: list[str] = page.api_calls  # type: ignore[attr-defined]
    assert "bm25/recall" in calls and "bm25/test" not in calls
    expect(commit).to_have_text("Commit and measure on test")
    commit.click()
    expect(test).to_have_text(f"{counted(lab, 'test', best.k1, best.b)} {at(best.k1, best.b)}")
    expect(commit).to_be_disabled()
    expect(page.locator("#bm25-commit-note")).to_contain_text(
        f"You committed to k1 = {best.k1:.2f}, b = {best.b:.2f}, stemming off"
    )
    assert calls.count("bm25/test") == 1
    # A move afterwards changes the training number only.
    heatmap.focus()
    heatmap.press("ArrowLeft")
    j = view.bs.index(best.b) - 1
    expect(page.locator("#bm25-train")).to_have_text(
        f"{counted(lab, 'train', best.k1, view.bs[j])} {at(best.k1, view.bs[j])}"
    )
    expect(test).to_have_text(f"{counted(lab, 'test', best.k1, best.b)} {at(best.k1, best.b)}")
    assert calls.count("bm25/test") == 1


def test_the_stemming_switch_changes_search_and_grid(
    page: Page, lab: Lab, stemmed: Lab, meta: dict[str, Any]
) -> None:
    """Oracle: bm25_search, grid_view and measure on a lab loaded with ``stem=True``; the
    switch's label and starting state from /api/meta."""
    spec = next(s for s in meta["settings"] if s["name"] == "stem")
    switch = page.locator("#bm25-stem")
    expect(page.locator("label:has(#bm25-stem)")).to_have_text(spec["label"])
    expect(page.locator("#bm25-stem-help")).to_contain_text(spec["help"])
    assert switch.is_checked() is spec["default"] is meta["stem"] is False
    results = page.locator("#bm25-results .result-list > li")

    search(page, "locks")
    expect(page.locator("#bm25-results")).to_contain_text("BM25 retrieves nothing")
    assert bm25_search(lab, "locks", k1=default("k1"), b=default("b"))["results"] == []

    switch.check()
    want = bm25_search(stemmed, "locks", k1=default("k1"), b=default("b"))
    assert want["results"]
    expect(results).to_have_count(len(want["results"]))
    for n, row in enumerate(want["results"]):
        expect(results.nth(n).locator(".chunk-id")).to_have_text(row["chunk"])
        expect(results.nth(n).locator(".score")).to_have_text(f"score {f3(row['score'])}")
        expect(results.nth(n).locator("tbody th")).to_have_text(["lock"])
    expect(page.locator("#bm25-results .stemmed")).to_have_text("Stemming changed locks → lock.")
    expect(page.locator("#bm25-train")).to_have_text(
        f"{counted(stemmed, 'train', default('k1'), default('b'))} {at(default('k1'), default('b'))}"
    )

    page.locator("#bm25-map").click()
    view = grid_view(stemmed, split=None)
    best = view.best
    expect(page.locator("#bm25-best")).to_have_text(
        f"{f3(best.train_recall)} ({best.train_hits} of {view.questions}) {at(best.k1, best.b, 1)}"
    )
    cells = page.locator("#bm25-heatmap .cell text")
    expect(cells).to_have_text([str(h) for row in view.hits for h in row])
    expect(page.locator("#bm25-heatmap .cell.tied")).to_have_count(len(view.tied))
    expect(page.locator("#bm25-ties")).to_have_text(
        f"{len(view.tied)} of {len(view.k1s) * len(view.bs)} cells"
    )
    # Stemming fixes training questions at the defaults; the page counts and names them.
    changed = stemming_effect(lab, k1=default("k1"), b=default("b"))
    assert changed["fixes"]
    effect = page.locator("#bm25-stem-effect")
    fixes = len(changed["fixes"])
    expect(effect).to_contain_text(
        f"stemming finds the answer in the first {K} for {fixes} of the {view.questions}"
    )
    for q in changed["fixes"]:
        expect(effect).to_contain_text(q["question"])
    expect(effect).to_contain_text(
        "loses none" if not changed["breaks"] else f"loses it for {len(changed['breaks'])}"
    )

    switch.uncheck()
    expect(page.locator("#bm25-results")).to_contain_text("BM25 retrieves nothing")
    plain = grid_view(lab, split=None)
    expect(page.locator("#bm25-heatmap .cell.tied")).to_have_count(len(plain.tied))
    expect(page.locator("#bm25-best")).to_have_text(
        f"{f3(plain.best.train_recall)} ({plain.best.train_hits} of {plain.questions}) "
        f"{at(plain.best.k1, plain.best.b, 1)}"
    )
