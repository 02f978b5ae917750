"""Exhibit III's neural panel and exhibit IV's neural rows in a real browser, on a warm cache
and on an empty one (the server encoding in the background).

Browser tests (marked ``browser``) drive Chromium against the real server, each on a fresh page.
Oracle: the library on a lab of its own (``first_rank_rows``, ``measure``).
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from raglab.pipeline.exhibits.rerank import fitted_reranker, rerank_rows
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import first_rank_rows, measure
from raglab.run_settings import RetrievalSettings
from raglab.settings import NEURAL_RETRIEVERS
from tests.web.conftest import serving
from tests.web.pages import LAPTOP, PHONE, opener

pytestmark = pytest.mark.browser
expect.set_options(timeout=30_000)


def _rank(rank: int | None) -> str:
    return "not ranked" if rank is None else str(rank)


def test_the_neural_panel_shows_the_library_ranks(page: Page, lab: Lab) -> None:
    page.click("#neural-build")
    expect(page.locator("#neural-questions")).to_be_visible()
    rankers = {name: RetrievalSettings(name) for name in ("bm25", "lsa", "neural")}
    want = [
        r
        for r in first_rank_rows(lab, "test", rankers)
        if r["kind"] == "paraphrase" and r["answerable"]
    ]
    rows = page.locator("#neural-questions tbody tr")
    expect(rows).to_have_count(len(want))
    for i, r in enumerate(want):
        cells = rows.nth(i).locator("td")
        assert [cells.nth(j).inner_text() for j in range(3)] == [
            _rank(r["ranks"][n]) for n in ("bm25", "lsa", "neural")
        ]
    found = lambda x: x is not None and x <= 5  # noqa: E731
    only = sum(found(r["ranks"]["neural"]) and not found(r["ranks"]["lsa"]) for r in want)
    expect(page.locator("#neural-questions tr.neural-only")).to_have_count(only)
    expect(page.locator("#neural-summary")).to_contain_text(f"finds {only} within the first 5")
    expect(page.locator("#neural-costs")).to_contain_text("ms a chunk on this machine")
    expect(page.locator("#neural-twins")).to_contain_text("E-4107 and E-4170")


def test_the_fusion_table_shows_the_neural_rows(page: Page, lab: Lab) -> None:
    for name in NEURAL_RETRIEVERS:
        row = page.locator(f'#fusion-table tr[data-ranker="{name}"] td')
        want = measure(lab, "test", RetrievalSettings(name))["recall@5"]
        expect(row.nth(2)).to_have_text(f"{want:.3f}")


def test_controls_take_their_options_and_ranges_from_the_api(
    page: Page, meta: dict[str, Any]
) -> None:
    """The retriever list (neural ones included), the budget slider's span and the chunk-size
    slider's span equal /api/meta's settings; index.html carries none of its own."""
    spec = {s["name"]: s for s in meta["settings"]}
    options = page.eval_on_selector_all(
        "#run-retriever option", "os => os.map(o => [o.value, o.textContent])"
    )
    labels = spec["retriever"]["choice_labels"]
    assert options == [[c, labels[c]] for c in spec["retriever"]["choices"]]
    assert {"neural", "neural-rrf", "neural-score"} <= {value for value, _ in options}
    for selector, name in (("#run-budget", "budget"), ("#bm25-k1", "k1"), ("#bm25-b", "b")):
        got = page.eval_on_selector(selector, "e => [Number(e.min), Number(e.max), Number(e.step)]")
        assert got == spec[name]["slider"], name
    size = meta["labels"]["size_sliders"]["fixed"]
    got = page.eval_on_selector(
        "#chunk-size", "e => [Number(e.min), Number(e.max), Number(e.step)]"
    )
    assert got == [size["min"], size["max"], size["step"]]
    assert page.eval_on_selector_all(
        "#fusion-k option", "os => os.map(o => Number(o.value))"
    ) == next(f["value"] for f in meta["fixed"] if f["name"] == "recall_ks")


def test_exhibit_five_reranks_the_neural_first_stage(page: Page, lab: Lab) -> None:
    """Oracle: rerank_rows of the reranker fitted over the neural first stage."""
    reranker, chosen = fitted_reranker(lab, RetrievalSettings("neural"))
    page.click("#rerank-train")
    expect(page.locator("#rerank-train")).to_be_disabled()
    page.select_option("#rerank-first", "neural")
    want = rerank_rows(lab, reranker, chosen)
    first = page.locator('#rerank-table tr[data-split="test"]').first.locator("td")
    row = next(r for r in want if r["split"] == "test")
    expect(first.nth(1)).to_have_text(f"{row['top1']:.3f}")
    expect(first.nth(3)).to_have_text(f"{row['recall@5']:.3f}")


def test_the_neural_panel_opens_again_on_reload(page: Page) -> None:
    """Like every exhibit's state, the opened panel is kept (localStorage) and shown again."""
    page.click("#neural-build")
    expect(page.locator("#neural-questions")).to_be_visible()
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator("#neural-questions")).to_be_visible()
    expect(page.locator("#neural-costs")).to_contain_text("ms a chunk on this machine")


def test_a_fresh_lab_shows_encoding_progress_then_the_numbers(
    browser: Browser, lab: Lab, tmp_path: Path
) -> None:
    """A server on an empty cache: the page is usable at once, says "encoding, n of N" where
    the neural numbers wait (the shared indicator, the neural panel, the fusion table's neural
    rows), and shows the library's numbers once the server has encoded them."""
    cache = tmp_path / "cache"
    with serving(
        "--quiet", log_name="web-server-cold-browser.log", env={"RAGLAB_CACHE_DIR": str(cache)}
    ) as base:
        opened = opener(browser, base)
        open_page = next(opened)
        page = open_page(LAPTOP)
        progress = re.compile(r"encoding, \d+ of \d+")
        expect(page.locator("#encoding-status")).to_have_text(progress)
        # The indicator lies in the sticky bar at the top, at a laptop's width and a phone's, so
        # it covers none of what it waits for.
        phone = open_page(PHONE)
        expect(phone.locator("#encoding-status")).to_have_text(progress)
        for each in (page, phone):
            box = each.locator("#encoding-status").bounding_box()
            bar = each.locator("nav.progress-bar").bounding_box()
            width = each.viewport_size["width"] if each.viewport_size else 0
            assert box is not None and bar is not None
            assert bar["y"] <= box["y"] and box["y"] + box["height"] <= bar["y"] + bar["height"]
            assert box["x"] >= 0 and box["x"] + box["width"] <= width
        phone.close()
        row = page.locator('#fusion-table tr[data-ranker="neural"]')
        expect(row).to_contain_text("encoding")
        expect(page.locator('#fusion-table tr[data-ranker="bm25"] td').nth(2)).to_have_text(
            re.compile(r"\d\.\d{3}")
        )
        page.click("#neural-build")
        expect(page.locator("#neural-status")).to_have_text(re.compile(r"Encoding, \d+ of \d+"))
        # The numbers, once encoded (minutes at most on a slow shared core).
        expect(page.locator("#neural-questions")).to_be_visible(timeout=600_000)
        want = measure(lab, "test", RetrievalSettings("neural"))["recall@5"]
        expect(row.locator("td").nth(2)).to_have_text(f"{want:.3f}", timeout=60_000)
        expect(page.locator("#encoding-status")).to_be_hidden()
        expect(page.locator("#neural-status")).to_have_text("")
        with contextlib.suppress(StopIteration):
            next(opened)  # closes the page, asserting it reported no error
