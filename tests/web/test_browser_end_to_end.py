"""Exhibit VI in the browser: the reader's scoring switch, accuracy and bound on one base, each
miss's quote beside its answer passage, and the risk-coverage view.

Browser tests (marked ``browser``) drive Chromium against the real server, each on a fresh page
(a new context: no saved runs), independent of order. Oracle: the library (``run_pipeline``,
``threshold_sweep``) on a lab of its own; the page must show its numbers, and its labels and
defaults must be /api/meta's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from raglab.pipeline.end_to_end import RunResult, run_pipeline, threshold_sweep
from raglab.pipeline.lab import Lab
from raglab.run_settings import RunSettings
from tests.pipeline.small_corpus import write_small_lab
from tests.web.conftest import serving
from tests.web.pages import LAPTOP, PHONE, STAGE_NAMES, Opener, opener

expect.set_options(timeout=30_000)


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


# --- the form beside a run shows the run's own settings ------------------------------------------


def spec(meta: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in meta["settings"] if s["name"] == name)


def out(page: Page, key: str) -> str:
    """What a slider's <output> reads."""
    return str(page.locator(f"#run-{key}-out").evaluate("(node) => String(node.value)"))


def posted(page: Page) -> dict[str, Any]:
    """Press Run and return the /api/run answer once the page has drawn it."""
    before = page.locator("#runs-table tbody tr").count()
    with page.expect_response("**/api/run") as answer:
        page.locator("#run-button").click()
    expect(page.locator("#runs-table tbody tr")).to_have_count(before + 1)
    result: dict[str, Any] = answer.value.json()
    expect(page.locator("#run-accuracy")).to_have_text(
        f"{result['correct']} of {result['n']} = {result['accuracy']:.3f}"
    )
    return result


@pytest.mark.browser
def test_controls_the_run_did_not_use_show_no_value(page: Page) -> None:
    """Issue #29, 1: values typed into controls a later run does not use are not shown."""
    page.locator("#run-retriever").select_option("score")
    page.locator("#run-weight-tuned").uncheck()
    page.locator("#run-weight").fill("0.3")
    assert out(page, "weight") == "0.30"
    page.locator("#run-mmr").check()
    page.locator("#run-lambda-tuned").uncheck()
    page.locator("#run-lambda").fill("0.3")
    assert out(page, "lambda") == "0.30"
    page.locator("#run-chunker").select_option("fixed")
    page.locator("#run-overlap").fill("20")
    page.locator("#run-retriever").select_option("rrf")
    page.locator("#run-chunker").select_option("heading")
    page.locator("#run-rerank").uncheck()
    result = posted(page)
    assert result["settings"]["weight"] is None
    assert result["settings"]["mmr"] is False
    # Neither the weight nor λ nor the overlap was used: none of them shows a value.
    for key in ("weight", "lambda"):
        expect(page.locator(f"#run-{key}")).to_be_disabled()
        assert out(page, key) == "not used"
        expect(page.locator(f"#run-{key}")).to_be_hidden()
        expect(page.locator(f"#run-{key}-tuned")).to_be_hidden()
    expect(page.locator("#run-overlap")).to_be_disabled()
    expect(page.locator("#run-overlap")).to_have_value("")
    expect(page.locator("#run-overlap")).to_have_attribute("placeholder", "not used")
    expect(page.locator("#run-mmr")).to_be_disabled()
    expect(page.locator("#run-mmr")).not_to_be_checked()
    # Used again, each control gets back what was typed into it.
    page.locator("#run-chunker").select_option("fixed")
    expect(page.locator("#run-overlap")).to_have_value("20")
    page.locator("#run-retriever").select_option("score")
    assert out(page, "weight") == "0.30"
    page.locator("#run-rerank").check()
    expect(page.locator("#run-mmr")).to_be_checked()
    assert out(page, "lambda") == "0.30"


@pytest.mark.browser
def test_showing_a_run_again_restores_its_settings(page: Page, meta: dict[str, Any]) -> None:
    """Issue #29, 5: "Show run N again" puts run N's settings back in the form."""
    first = posted(page)
    budget = spec(meta, "budget")["default"]
    page.locator("#run-retriever").select_option("score")
    page.locator("#run-weight-tuned").uncheck()
    page.locator("#run-weight").fill("0.3")
    page.locator("#run-rerank").uncheck()
    page.locator("#run-budget").fill(str(budget * 2))
    page.locator("#run-threshold-tuned").uncheck()
    page.locator("#run-threshold").fill("0.2")
    second = posted(page)
    assert second["settings"]["weight"] == pytest.approx(0.3)

    page.get_by_role("button", name="Show run 1 again").click()
    expect(page.locator("#run-used")).to_contain_text("; run 1")
    expect(page.locator("#run-retriever")).to_have_value(spec(meta, "retriever")["default"])
    expect(page.locator("#run-rerank")).to_be_checked()
    expect(page.locator("#run-mmr")).to_be_checked()
    expect(page.locator("#run-budget")).to_have_value(str(budget))
    expect(page.locator("#run-threshold-tuned")).to_be_checked()
    # The tuned sliders read what run 1 used, as they do beside a fresh run.
    assert out(page, "lambda") == f"{first['settings']['mmr_lambda']:.2f}"
    assert out(page, "threshold") == f"{first['settings']['threshold']:.2f}"
    assert out(page, "budget") == str(budget)

    page.get_by_role("button", name="Show run 2 again").click()
    expect(page.locator("#run-used")).to_contain_text("; run 2")
    expect(page.locator("#run-retriever")).to_have_value("score")
    expect(page.locator("#run-weight-tuned")).not_to_be_checked()
    assert out(page, "weight") == "0.30"
    expect(page.locator("#run-rerank")).not_to_be_checked()
    expect(page.locator("#run-budget")).to_have_value(str(budget * 2))
    assert out(page, "threshold") == "0.20"
    # Run again from the restored form, the request is run 2's: the same answer.
    again = posted(page)
    assert (again["correct"], again["settings"]) == (second["correct"], second["settings"])


@pytest.mark.browser
def test_enter_on_run_keeps_the_focus_on_the_button(page: Page) -> None:
    """Issue #29, 9: running from the keyboard leaves the focus where it was."""
    button = page.locator("#run-button")
    button.focus()
    with page.expect_response("**/api/run"):
        page.keyboard.press("Enter")
    expect(page.locator("#runs-table tbody tr")).to_have_count(1)
    expect(button).to_be_focused()
    # The button stays in the tab order, ready for the next run.
    with page.expect_response("**/api/run"):
        page.keyboard.press("Enter")
    expect(page.locator("#runs-table tbody tr")).to_have_count(2)
    expect(button).to_be_focused()


# --- the completion note -------------------------------------------------------------------------

# The ids whose first line of text, where in view below the sticky progress bar, lies under the
# completion note.
COVERED = """(ids) => ids.filter((id) => {
  const r = document.getElementById(id).getBoundingClientRect();
  const x = r.left + r.width / 2, y = r.top + Math.min(r.height / 2, 12);
  const bar = document.querySelector(".progress-bar").getBoundingClientRect().bottom;
  if (y < bar || y > innerHeight) return false;  // out of view: nothing to cover
  const top = document.elementFromPoint(x, y);
  return Boolean(top && document.getElementById("closing").contains(top));
})"""


@pytest.mark.browser
@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1280", "390"])
def test_the_completion_note_hides_none_of_the_results(
    open_page: Opener, meta: dict[str, Any], viewport: ViewportSize
) -> None:
    """Issue #29, 6: the note that pops up when the last exhibit is explored covers no result."""
    page = open_page(viewport)
    explored = {name: True for name in meta["labels"]["exhibits"] if name != "end-to-end"}
    progress = {
        "fingerprint": meta["fingerprint"],
        "explored": explored,
        "settings": {},
        "runs": [],
        "nextRun": 1,
    }
    page.evaluate("(p) => localStorage.setItem('raglab.progress.v1', JSON.stringify(p))", progress)
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.locator("#run-button").scroll_into_view_if_needed()
    posted(page)
    note = page.locator("#closing")
    expect(note).to_be_visible()
    expect(note).to_be_in_viewport(ratio=1)
    expect(note.locator("h2")).to_be_visible()
    expect(page.locator("#closing-dock")).to_be_visible()
    box = note.bounding_box()
    bar = page.locator(".progress-bar").bounding_box()
    assert box is not None and bar is not None
    # It lies over the progress bar, the page's chrome, and nowhere on the content.
    assert box["y"] >= bar["y"] - 0.5
    assert box["y"] + box["height"] <= bar["y"] + bar["height"] + 0.5
    assert box["height"] * box["width"] <= 0.08 * viewport["width"] * viewport["height"]
    readouts = ["run-accuracy", "run-interval", "run-bound", "run-used", "run-bases"]
    for node in readouts:
        page.locator(f"#{node}").scroll_into_view_if_needed()
        assert page.evaluate(COVERED, readouts) == [], node
    assert page.evaluate(COVERED, ["run-funnel", "run-risk"]) == []


@pytest.mark.browser
def test_a_run_at_a_given_tuned_value_labels_its_test_figures(page: Page) -> None:
    """Issue #29, 4: a run's figures are the test split's; at a tuned setting given rather than
    chosen on train they are labelled "test, not chosen on train"."""
    posted(page)
    expect(page.locator("#run-accuracy-note")).to_have_text("")
    expect(page.locator("#run-risk-summary")).not_to_contain_text("not chosen on train")
    page.locator("#run-threshold-tuned").uncheck()
    page.locator("#run-threshold").fill("0.2")
    result = posted(page)
    assert "threshold" not in result["chosen_on_train"]
    expect(page.locator("#run-accuracy-note")).to_contain_text("test, not chosen on train")
    expect(page.locator("#run-risk-summary")).to_contain_text(
        "At this run's given threshold, 0.20 (test, not chosen on train)"
    )


@pytest.mark.browser
def test_a_miss_names_the_runs_reader_scoring(
    open_page: Opener, meta: dict[str, Any], idf_run: RunResult
) -> None:
    """Issue #29, 13: a miss gives the score of the run's own reader scoring, by its label."""
    label = spec(meta, "reader_scoring")["choice_labels"]["idf"]
    page = open_page(LAPTOP)
    run(page, "idf")
    misses = [o for o in idf_run.outcomes if o.outcome != "correct"]
    assert any(o.quote is None for o in misses) and any(o.quote for o in misses)
    for o in misses:
        note = page.locator(f"#run-misses .miss[data-miss='{o.id}'] .miss-quote p.small")
        if o.quote:
            expect(note).to_contain_text(f"The reader's quote ({label} {o.coverage:.2f}, ")
        else:
            expect(note).to_contain_text(
                f"Best {label} {o.coverage:.2f}, below the threshold {idf_run.threshold:.2f}"
            )


@pytest.mark.browser
def test_each_risk_row_says_whether_train_chose_its_threshold(
    page: Page, lab: Lab, plain_run: RunResult
) -> None:
    """Issue #29, 4: every row of the sweep is a test figure; only the threshold chosen on train
    is labelled so, each other row "test, not chosen on train"."""
    run(page)
    points = threshold_sweep(lab, plain_run)
    rows = page.locator("#run-risk-table tbody tr")
    expect(rows).to_have_count(len(points))
    for row, p in zip(rows.all(), points, strict=True):
        chosen = abs(float(p["threshold"]) - plain_run.threshold) < 1e-9
        label = "chosen on train" if chosen else "test, not chosen on train"
        expect(row.locator("th .test-label")).to_have_text(label)
    assert sum(abs(float(p["threshold"]) - plain_run.threshold) < 1e-9 for p in points) == 1


@pytest.mark.browser
def test_a_value_tuned_on_few_questions_is_shown_with_its_sentence(
    browser: Browser, tmp_path: Path
) -> None:
    """Issue #30. Oracle: the library's run on the small lab (three training questions, counted
    by hand in tests/pipeline/small_corpus.py): beside "Used", the page shows each warned
    value's sentence as the API sends it, and no other."""
    lab = write_small_lab(tmp_path / "lab")
    result = run_pipeline(lab, RunSettings())
    sentences = [note.sentence for note in result.tuning if note.sentence]
    assert sentences and "3 training questions, fewer than 30" in sentences[-1]
    data = ("--corpus", str(tmp_path / "lab" / "pages"), "--questions")
    env = {"RAGLAB_CACHE_DIR": str(tmp_path / "cache")}
    with serving(
        *data, str(tmp_path / "lab" / "q.jsonl"), log_name="web-server-small.log", env=env
    ) as base:
        pages = opener(browser, base)
        page = next(pages)(LAPTOP)
        run(page)
        expect(page.locator("#run-tuning")).to_have_text(" ".join(sentences))
        expect(page.locator("#run-tuning")).to_be_visible()
        next(pages, None)
