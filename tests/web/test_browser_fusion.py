"""Exhibit IV in the browser: the slider moves the training figures, the test figures stay at the
weight chosen on train, and a test figure at any other weight says so.

Browser tests (marked ``browser``) drive Chromium against the real server, each on a fresh page.
Oracle: the library on a lab of its own (``ranker_table``, ``choose_weight``, ``first_ranks``).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import choose_weight, first_ranks, ranker_table
from raglab.run_settings import RetrievalSettings
from tests.web.pages import LAPTOP, route_log

expect.set_options(timeout=30_000)

METRICS = ("recall@1", "recall@3", "recall@5", "recall@10", "mrr", "ndcg@10")
UNCHOSEN = "test, not chosen on train"


def rows(page: Page, table: str) -> dict[str, list[str]]:
    out = {}
    for row in page.locator(f"#{table} tbody tr").all():
        ranker = row.get_attribute("data-ranker") or ""
        out[ranker] = row.locator("td").all_text_contents()
    return out


def shown(table: dict[str, dict[str, float]]) -> dict[str, list[str]]:
    return {name: [f"{m[c]:.3f}" for c in METRICS] for name, m in table.items()}


@pytest.mark.browser
def test_the_slider_moves_training_figures_and_test_stays_at_the_chosen_weight(
    page: Page, lab: Lab
) -> None:
    """Issue #29, 4: test figures at the weight chosen on train; others on the training split."""
    chosen = choose_weight(lab)
    test = shown(ranker_table(lab, split="test", weight=chosen))
    expect(page.locator("#fusion-caption")).to_contain_text(f"w = {chosen:.2f}")
    expect(page.locator("#fusion-caption")).to_contain_text("Test split")
    assert rows(page, "fusion-table") == test
    target = round(chosen + 0.4, 2) if chosen <= 0.5 else round(chosen - 0.4, 2)
    assert shown(ranker_table(lab, split="test", weight=target))["score"] != test["score"]
    page.locator("#fusion-weight").fill(str(target))
    expect(page.locator("#fusion-weight-out")).to_have_text(f"{target:.2f}")
    # The training table follows the slider...
    expect(page.locator("#fusion-train-caption")).to_contain_text(f"w = {target:.2f}")
    # ... and the test table has not moved: the weight chosen on train, the same figures.
    expect(page.locator("#fusion-caption")).to_contain_text(f"w = {chosen:.2f}")
    assert rows(page, "fusion-table") == test
    assert rows(page, "fusion-train-table") == shown(
        ranker_table(lab, split="train", weight=target)
    )
    page.locator("#fusion-use-chosen").click()
    expect(page.locator("#fusion-train-caption")).to_contain_text(f"w = {chosen:.2f}")
    assert rows(page, "fusion-train-table") == shown(
        ranker_table(lab, split="train", weight=chosen)
    )
    page.locator("#fusion-weight").fill(str(target))
    expect(page.locator("#fusion-train-caption")).to_contain_text(f"w = {target:.2f}")
    # The grid counts test questions at the slider's weight: labelled as such.
    ranks = first_ranks(lab, "test", RetrievalSettings("score", weight=target))
    found = sum(r is not None and r <= 5 for r in ranks)
    summary = page.locator("#fusion-summary")
    expect(summary).to_contain_text(f"your fusion {found} ({UNCHOSEN}, w = {target:.2f})")
    page.locator("#fusion-grid .square").first.click()
    expect(page.locator("#fusion-lists .ranked h4").nth(2)).to_contain_text(UNCHOSEN)
    # Back at the weight chosen on train, the label goes: that test figure is the one to report.
    page.locator("#fusion-use-chosen").click()
    expect(summary).not_to_contain_text(UNCHOSEN)
    expect(page.locator("#fusion-lists .ranked h4").nth(2)).not_to_contain_text(UNCHOSEN)
    expect(page.locator("#fusion-rule")).to_contain_text(UNCHOSEN)


@pytest.mark.browser
def test_the_exhibit_asks_for_its_tables_and_grid_at_once(browser: Browser, server: str) -> None:
    """Issue #31: on opening, exhibit IV sends its test table's, training table's and grid's
    requests before the first answer comes back (the test table went first, alone, and the
    rest waited for it), and fills both tables and the grid. Oracle: the browser's own order
    of requests and answers."""
    context = browser.new_context(viewport=LAPTOP)
    try:
        page = context.new_page()
        log = route_log(page, ("fusion/table", "fusion/grid"))
        page.goto(f"{server}/")
        page.wait_for_selector("body[data-ready=true]")
        expect(page.locator("#fusion-train-table tr[data-ranker=bm25] td").first).to_have_text(
            re.compile(r"\d\.\d{3}")
        )
        expect(page.locator("#fusion-grid > *").first).to_be_attached()
        first = next(i for i, entry in enumerate(log) if entry.startswith("answered"))
        assert sorted(log[:first]) == [
            "asked fusion/grid",
            "asked fusion/table",
            "asked fusion/table",
        ], log
    finally:
        context.close()
