"""Exhibit V in the browser: the rule that chooses MMR's λ, the λ sweep drawn from the API, test
figures only at the λ chosen on train, and the keyboard's focus kept on "Train the reranker".

Browser tests (marked ``browser``) drive Chromium against the real server, each on a fresh page.
Oracle: ``/api/rerank/sweep`` and ``/api/rerank/table`` (their numbers are the library's, checked
in tests/web/test_api_rerank.py and test_api.py); the page must draw and print the same numbers.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.web.pages import asked_at_once, before_first_answer

expect.set_options(timeout=30_000)

COLUMNS = ("top1", "p@3", "recall@5", "mrr")
UNCHOSEN = "test, not chosen on train"


@pytest.fixture(scope="module")
def sweep(server: str) -> dict[str, Any]:
    data: dict[str, Any] = httpx.get(f"{server}/api/rerank/sweep", timeout=120).json()
    return data


def table(server: str, lam: float | None = None) -> dict[str, Any]:
    params = {} if lam is None else {"lam": lam}
    data: dict[str, Any] = httpx.get(
        f"{server}/api/rerank/table", params=params, timeout=120
    ).json()
    return data


def train(page: Page) -> None:
    page.locator("#rerank-train").click()
    expect(page.locator("#rerank-sweep svg .series.sweep-train[data-points]")).to_be_attached()
    expect(page.locator("#rerank-table tbody tr")).to_have_count(6)


def cells(page: Page, split: str, order: str) -> list[str]:
    row = page.locator(f"#rerank-table tr[data-split={split}][data-order='{order}'] td")
    return row.all_text_contents()


@pytest.mark.browser
def test_the_page_states_the_rule_that_chose_lambda_and_draws_the_sweep(
    page: Page, sweep: dict[str, Any]
) -> None:
    """Issue #29, 3: the rule the library uses, in words; the sweep drawn from the API."""
    train(page)
    chosen = sweep["chosen_lambda"]
    metric = sweep["rule_metric"]
    at = next(p for p in sweep["points"] if p["split"] == "train" and p["lambda"] == chosen)
    summary = page.locator("#rerank-summary")
    expect(summary).not_to_contain_text("works best")
    expect(summary).to_contain_text(
        f"the smallest λ on the grid whose training {metric} is no lower than the reranker's "
        f"without MMR ({sweep['reference']['train'][metric]:.3f})"
    )
    expect(summary).to_contain_text(f"λ = {chosen:.2f} (training {metric} {at[metric]:.3f})")
    # The chart opens on the rule's measure; each line is the API's points, in order.
    select = page.locator("#rerank-sweep-metric")
    expect(select).to_have_value(metric)
    for name in (metric, "p@3", "mrr", "top1"):
        select.select_option(name)
        chart = page.locator("#rerank-sweep svg")
        for split in ("train", "test"):
            group = chart.locator(f".series.sweep-{split}[data-points]")
            expect(group).to_have_attribute("data-metric", name)
            drawn = json.loads(group.get_attribute("data-points") or "[]")
            wanted = [[p["lambda"], p[name]] for p in sweep["points"] if p["split"] == split]
            assert drawn == wanted, (name, split)
            dots = chart.locator(f".series.sweep-{split} circle title")
            expect(dots).to_have_count(len(wanted))
        # The chosen λ marked: the dashed line at it and its test point ringed.
        expect(chart.locator(".marker-line")).to_have_attribute("data-x", str(chosen))
        expect(chart.locator(".marker-label")).to_have_text(f"chosen on train {chosen:.2f}")
        ring = chart.locator(".series.sweep-chosen")
        test_at = next(p for p in sweep["points"] if p["split"] == "test" and p["lambda"] == chosen)
        assert float(ring.get_attribute("data-lambda") or "nan") == chosen
        assert float(ring.get_attribute("data-value") or "nan") == test_at[name]
        reference = chart.locator(".series.sweep-reference")
        assert (
            float(reference.get_attribute("data-value") or "nan")
            == (sweep["reference"]["train"][name])
        )
    # Every test point but the chosen one is labelled as a test figure not chosen on train.
    titles = page.locator("#rerank-sweep .series.sweep-test circle title").all_text_contents()
    assert sum(UNCHOSEN in t for t in titles) == len(titles) - 1
    expect(page.locator("#rerank-sweep-legend")).to_contain_text(UNCHOSEN)


@pytest.mark.browser
def test_test_rows_stay_at_the_lambda_chosen_on_train(
    page: Page, server: str, sweep: dict[str, Any]
) -> None:
    """Issue #29, 4: the slider moves the training figures; test figures stay at the chosen λ."""
    train(page)
    chosen = sweep["chosen_lambda"]
    at_chosen = table(server)
    assert at_chosen["lambda"] == chosen
    target = round(chosen + 0.5, 2) if chosen <= 0.5 else round(chosen - 0.5, 2)
    moved = table(server, target)
    slider = page.locator("#rerank-lambda")
    slider.fill(str(target))
    mmr = "reranked + MMR"
    expect(
        page.locator(f"#rerank-table tr[data-split=train][data-order='{mmr}'] td").first
    ).to_have_text(f"{mmr} (λ = {target:.2f})")
    for row in moved["rows"]:
        if row["split"] == "train":
            assert cells(page, "train", row["order"])[1:] == [f"{row[c]:.3f}" for c in COLUMNS]
    for row in at_chosen["rows"]:
        if row["split"] == "test":
            assert cells(page, "test", row["order"])[1:] == [f"{row[c]:.3f}" for c in COLUMNS]
    expect(
        page.locator(f"#rerank-table tr[data-split=test][data-order='{mmr}'] td").first
    ).to_have_text(f"{mmr} (λ = {chosen:.2f}, chosen on train)")
    # The moved λ's test figures differ, and appear nowhere in the table.
    test_moved = next(r for r in moved["rows"] if r["split"] == "test" and r["order"] == mmr)
    test_chosen = next(r for r in at_chosen["rows"] if r["split"] == "test" and r["order"] == mmr)
    assert test_moved != test_chosen
    expect(page.locator("#rerank-table-note")).to_contain_text(UNCHOSEN)


@pytest.mark.browser
def test_enter_on_train_keeps_the_focus_on_the_button(page: Page) -> None:
    """Issue #29, 9: training from the keyboard leaves the focus on the button."""
    button = page.locator("#rerank-train")
    button.focus()
    with page.expect_response(lambda r: "/api/rerank/train" in r.url):
        page.keyboard.press("Enter")
    expect(page.locator("#rerank-weights svg rect.bar").first).to_be_attached()
    expect(button).to_have_text("Trained")
    expect(button).to_be_focused()
    expect(button).to_have_attribute("aria-disabled", "true")
    # Pressed again, it does nothing: no second request, focus still there.
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url) if "/rerank/train" in r.url else None)
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)
    assert requests == []
    expect(button).to_be_focused()


@pytest.mark.browser
def test_training_asks_for_the_model_its_sweep_table_and_demo_at_once(page: Page) -> None:
    """Issue #31: "Train the reranker" sends every request it needs before the first answer
    comes back, so none waits behind another exhibit's answers for its turn (they went one
    after another: the model, then its sweep, then the table and the demo). Oracle: the
    browser's own order of requests and answers."""
    routes = ("rerank/train", "rerank/sweep", "rerank/table", "rerank/version")
    log = asked_at_once(
        page, "#rerank-train", routes, "#rerank-sweep svg .series.sweep-train[data-points]"
    )
    expect(page.locator("#rerank-table tbody tr")).to_have_count(6)
    assert before_first_answer(log) == set(routes), log


# In the page: read the layout's widths through a counter while the sweep's measure is changed
# (drawSweep runs in the change event); the count, and the measure the sweep then shows.
COUNT_WIDTH_READS = """() => {
  const width = Object.getOwnPropertyDescriptor(Element.prototype, "clientWidth");
  let reads = 0;
  Object.defineProperty(Element.prototype, "clientWidth", {
    configurable: true,
    get() { reads += 1; return width.get.call(this); },
  });
  const select = document.querySelector("#rerank-sweep-metric");
  try {
    select.value = [...select.options].find((o) => o.value !== select.value).value;
    select.dispatchEvent(new Event("change"));
  } finally {
    Object.defineProperty(Element.prototype, "clientWidth", width);
  }
  const drawn = document.querySelector("#rerank-sweep .series.sweep-train[data-points]").dataset.metric;
  return { reads, picked: select.value, drawn };
}"""


@pytest.mark.browser
def test_a_chart_drawn_again_reads_no_layout(page: Page) -> None:
    """Issue #31: a chart redrawn for new numbers takes its host's width as last measured (by
    the ResizeObserver, after a layout the page made anyway) rather than reading the layout in
    the middle of the exhibit's writes, which forced the browser to lay the page out again.
    Oracle: a count of every ``clientWidth`` read while the sweep is redrawn, and the sweep
    drawn for the measure picked."""
    train(page)
    seen = page.evaluate(COUNT_WIDTH_READS)
    assert seen["drawn"] == seen["picked"]
    assert seen["reads"] == 0
