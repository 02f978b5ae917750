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
from tests.web.pages import f3

pytestmark = pytest.mark.browser
expect.set_options(timeout=15_000)

K = GRID_RECALL_K
# The page's one rule for test figures (its masthead), and the two labels it gives them.
RULE = (
    "Test figures are shown for the setting chosen on the training split; any other test "
    "figure is labelled \u201ctest, not chosen on train\u201d."
)
CHOSEN = "chosen on train"
NOT_CHOSEN = "test, not chosen on train"
# The query: its fourth result's one term earns less than the first result's first,
# yet makes all of its own chunk's score.
QUERY = "E-4107 stall"


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


def test_contribution_bars_share_one_scale_across_the_results(page: Page, lab: Lab) -> None:
    """Oracle: bm25_search's contributions and scores. Every bar of every result shown is drawn
    on one scale (the column is headed "contribution"), and each term's share of its own
    chunk's score is said in words beside it."""
    search(page, QUERY)
    found = bm25_search(lab, QUERY, k1=default("k1"), b=default("b"))
    rows = page.locator("#bm25-results .result-list > li")
    expect(rows).to_have_count(len(found["results"]))
    expect(rows.first.locator(".chunk-id")).to_have_text(found["results"][0]["chunk"])
    pairs: list[tuple[float, float]] = []
    widths_of: list[list[float]] = []
    for n, row in enumerate(found["results"]):
        widths = (
            rows.nth(n)
            .locator(".contrib-bar")
            .evaluate_all("(bars) => bars.map((b) => b.getBoundingClientRect().width)")
        )
        contributions = [t["contribution"] for t in row["terms"]]
        assert len(widths) == len(contributions)
        pairs += zip(contributions, widths, strict=True)
        widths_of.append(widths)
        expect(rows.nth(n).locator("td.contribution")).to_have_text(
            [f"{f3(c)} {100 * c / row['score']:.0f} % of the score" for c in contributions]
        )
    # The one scale that fits all bars best (least squares), then every bar within a pixel.
    scale = sum(c * w for c, w in pairs) / sum(c * c for c, _ in pairs)
    assert scale * max(c for c, _ in pairs) > 40
    for c, w in pairs:
        assert abs(w - c * scale) <= 1, (c, w, scale)
    # The case: rank 4's only term (3.809) is shorter than rank 1's first (5.671),
    # not the full width because it makes all of its own chunk's score.
    first, fourth = found["results"][0]["terms"][0], found["results"][3]["terms"][0]
    assert (f3(first["contribution"]), f3(fourth["contribution"])) == ("5.671", "3.809")
    assert widths_of[3][0] < widths_of[0][0] - 10


def test_the_legend_says_which_training_questions_it_counts(
    page: Page, lab: Lab, meta: dict[str, Any]
) -> None:
    """Oracle: grid_view's question count (the answerable training questions) and /api/meta's
    training split (all of them): the legend names both, as the page's data summary does."""
    view = grid_view(lab, split=None)
    train = meta["questions"]["splits"]["train"]
    assert view.questions == train["answerable"] < train["total"]
    page.locator("#bm25-map").click()
    legend = page.locator("#bm25-legend")
    expect(legend).to_contain_text(
        f"of the {view.questions} answerable training questions (of {train['total']};"
    )
    expect(page.locator("#data-summary")).to_contain_text(f"{train['total']} for training")
    page.locator("#bm25-heatmap .cell").first.hover()
    title = page.locator("#bm25-heatmap .cell title").first.text_content() or ""
    assert f"of {view.questions} answerable training questions" in title


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
    expect(legend).to_contain_text(f"of the {n} answerable training questions")
    expect(legend).to_contain_text(f"({len(view.tied)} of {len(texts)})")
    # Picking a cell shows its count beside its share.
    i, j = 0, 3
    page.locator(f"#bm25-heatmap .cell[data-i='{i}'][data-j='{j}']").click()
    expect(page.locator("#bm25-train")).to_have_text(
        f"{counted(lab, 'train', view.k1s[i], view.bs[j])} {at(view.k1s[i], view.bs[j])}"
    )


def test_test_recall_is_measured_once_after_the_commit(page: Page, lab: Lab) -> None:
    """Oracle: measure and first_ranks on the test split at the committed setting, grid_view's
    best cell (the setting chosen on train); the page's own requests (no test measurement
    before the commit, none after it on a move)."""
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
    figure = f"{counted(lab, 'test', best.k1, best.b)} {at(best.k1, best.b)}"
    expect(test).to_have_text(f"{figure} {CHOSEN}")
    expect(test.locator(".badge")).to_have_text(CHOSEN)
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
    expect(test).to_have_text(f"{figure} {CHOSEN}")
    assert calls.count("bm25/test") == 1


def test_a_test_figure_at_a_setting_not_chosen_on_train_is_labelled(page: Page, lab: Lab) -> None:
    """The issue's sequence: k1 = 0, b = 0, committed before the grid is mapped. Oracle:
    measure and first_ranks on the test split there; grid_view's best cell, the setting the
    training split chooses, lies elsewhere, so the test figure carries the page's label."""
    expect(page.locator("#test-rule")).to_have_text(RULE)
    view = grid_view(lab, split=None)
    assert (view.best.k1, view.best.b) != (0.0, 0.0)
    for name in ("k1", "b"):
        page.locator(f"#bm25-{name}").fill("0")
    expect(page.locator("#bm25-train")).to_have_text(f"{counted(lab, 'train', 0, 0)} {at(0, 0)}")
    page.locator("#bm25-commit").click()
    test = page.locator("#bm25-test")
    expect(test).to_have_text(f"{counted(lab, 'test', 0, 0)} {at(0, 0)} {NOT_CHOSEN}")
    expect(test.locator(".badge")).to_have_text(NOT_CHOSEN)
    note = page.locator("#bm25-commit-note")
    expect(note).to_contain_text(NOT_CHOSEN)
    expect(note).to_contain_text(
        f"the training split chooses k1 = {view.best.k1:.2f}, b = {view.best.b:.2f}"
    )
    # The grid, mapped afterwards, does not turn the label into a choice.
    page.locator("#bm25-map").click()
    expect(page.locator("#bm25-heatmap .cell").first).to_be_attached()
    expect(test.locator(".badge")).to_have_text(NOT_CHOSEN)


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
