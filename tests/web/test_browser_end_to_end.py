"""Exhibit VI in the browser: the reader's scoring switch, accuracy and bound on one base, each
miss's quote beside its answer passage, and the risk-coverage view.

Browser tests (marked ``browser``) drive Chromium against the real server, each on a fresh page
(a new context: no saved runs), independent of order. Oracle: the library (``run_pipeline``,
``threshold_sweep``) on a lab of its own; the page must show its numbers, and its labels and
defaults must be /api/meta's.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, ViewportSize, expect

from raglab.pipeline.end_to_end import RunResult, run_pipeline, threshold_sweep
from raglab.pipeline.lab import Lab
from raglab.run_settings import RunSettings
from tests.web.pages import LAPTOP, PHONE, Opener

expect.set_options(timeout=30_000)

# The page's name for each diagnosis (the category names the library and reports use are keys).
STAGE_NAMES = {
    "cut": "cut by the chunker",
    "not retrieved": "not retrieved",
    "past budget": "ranked past the budget",
    "reader": "missed by the reader",
    "false answer": "answered when it should not",
}


@pytest.fixture(scope="module")
def plain_run(lab: Lab) -> RunResult:
    return run_pipeline(lab, RunSettings())


@pytest.fixture(scope="module")
def idf_run(lab: Lab) -> RunResult:
    return run_pipeline(lab, RunSettings(reader_scoring="idf"))


def run(page: Page, scoring: str | None = None) -> None:
    if scoring is not None:
        page.locator("#run-reader-scoring").select_option(scoring)
    before = page.locator("#runs-table tbody tr").count()
    page.locator("#run-button").click()
    expect(page.locator("#runs-table tbody tr")).to_have_count(before + 1)
    expect(page.locator("#run-risk-table tbody tr").first).to_be_attached()


def share(count: int, n: int) -> str:
    return f"{count / n:.3f}" if n else "0.000"


@pytest.mark.browser
def test_the_scoring_switch_comes_from_meta_and_runs_the_librarys_reader(
    open_page: Opener, meta: dict[str, Any], idf_run: RunResult
) -> None:
    page = open_page(LAPTOP)
    spec = next(s for s in meta["settings"] if s["name"] == "reader_scoring")
    select = page.locator("#run-reader-scoring")
    expect(select).to_have_value(spec["default"])
    assert select.locator("option").all_text_contents() == [
        spec["choice_labels"][c] for c in spec["choices"]
    ]
    expect(page.locator("label[for=run-reader-scoring]")).to_have_text(spec["label"])
    run(page, "idf")
    r = idf_run
    expect(page.locator("#run-accuracy")).to_have_text(f"{r.correct} of {r.n} = {r.accuracy:.3f}")
    expect(page.locator("#runs-table tbody tr").last).to_contain_text(spec["choice_labels"]["idf"])
    # Both measures on the answerable base, and both on every question.
    answerable = [o for o in r.outcomes if o.answerable]
    fits = sum(o.rank is not None and o.rank <= o.k_budget for o in answerable)
    a, n, out = len(answerable), r.n, r.n - len(answerable)
    bases = page.locator("#run-bases")
    expect(bases).to_contain_text(
        f"Answerable: {r.answerable_correct} of {a} right ({share(r.answerable_correct, a)}), "
        f"bound {fits} of {a} ({share(fits, a)})"
    )
    expect(bases).to_contain_text(
        f"all questions: {r.correct} of {n} right ({share(r.correct, n)}), "
        f"at most {fits + out} of {n} ({share(fits + out, n)})"
    )
    expect(page.locator("#run-correct-rule")).to_contain_text(
        "lies inside the answer passage, or contains the whole passage"
    )


@pytest.mark.browser
def test_each_miss_shows_the_quote_beside_the_answer(
    open_page: Opener, plain_run: RunResult
) -> None:
    page = open_page(LAPTOP)
    run(page)
    misses = [o for o in plain_run.outcomes if o.outcome != "correct"]
    cards = page.locator("#run-misses .miss")
    expect(cards).to_have_count(len(misses))
    for o in misses:
        card = page.locator(f"#run-misses .miss[data-miss='{o.id}']")
        quote, answer = card.locator("blockquote.quote").nth(0), card.locator("blockquote").nth(1)
        expect(quote).to_have_text(o.quote if o.quote is not None else "not found")
        if o.answerable:
            assert o.answer is not None
            expect(answer).to_have_text(o.answer)
        flag = ", false answer" if o.answerable and o.false_answer else ""
        expect(card.locator(".badge")).to_have_text(STAGE_NAMES[o.outcome] + flag)
    # A false answer is named beside its diagnosis in the table too.
    flagged = [o for o in misses if o.answerable and o.false_answer]
    assert flagged  # the default run has misses the reader answered anyway
    row = page.locator("#run-table tbody tr", has=page.locator(f"th:text-is('{flagged[0].id}')"))
    expect(row.locator("td").nth(3)).to_contain_text("false answer")


@pytest.mark.browser
@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1280", "390"])
def test_the_risk_coverage_view_shows_the_librarys_sweep(
    open_page: Opener, lab: Lab, plain_run: RunResult, viewport: ViewportSize
) -> None:
    page = open_page(viewport)
    run(page)
    points = threshold_sweep(lab, plain_run)
    rows = page.locator("#run-risk-table tbody tr")
    expect(rows).to_have_count(len(points))
    a = int(points[0]["answerable"])
    u = int(points[0]["unanswerable"])
    shown = [row.locator("td").all_text_contents() for row in rows.all()]
    assert shown == [
        [
            f"{p['answerable_correct']} of {a}",
            f"{p['answerable_false']} of {a}",
            f"{p['unanswerable_false']} of {u}",
            f"{p['correct']} of {a + u}",
        ]
        for p in points
    ]
    chosen = plain_run.threshold
    expect(page.locator(f"#run-risk-table tr.chosen[data-threshold='{chosen:.2f}']")).to_have_count(
        1
    )
    at = next(p for p in points if p["threshold"] == chosen)
    expect(page.locator("#run-risk-summary")).to_contain_text(
        f"At the threshold chosen on train, {chosen:.2f}: {at['answerable_correct']} of {a} "
        f"answerable questions right, {at['answerable_false']} answered falsely, and "
        f"{at['unanswerable_false']} of {u} out-of-corpus questions answered falsely"
    )
    # The chart: three lines, the train choice marked, the run's threshold circled.
    chart = page.locator("#run-risk svg")
    expect(chart.locator("path.line")).to_have_count(3)
    expect(chart.locator(".marker-label")).to_have_text(f"train {chosen:.2f}")
    expect(chart.locator(".current circle")).to_have_count(2)
    # No chart text smaller than 11 px as rendered, at either width.
    small = page.locator("#run-risk").evaluate(
        """(host) => [...host.querySelectorAll("svg text")].filter((t) => {
          const m = t.getScreenCTM();
          return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b) < 10.95;
        }).map((t) => t.textContent)"""
    )
    assert small == []
