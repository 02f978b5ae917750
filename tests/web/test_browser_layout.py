"""The lab as a learner sees it, on a laptop (1280 x 900) and a phone (390 x 844).

Browser tests (marked ``browser``) drive Chromium against the real server, each on a fresh page
(a new context, so no saved progress), independent of order. They measure what is drawn: every
score on its own row, chart text no smaller than 11 px as rendered, the exhibits' navigation in
reach from the foot of the page, the keyboard's focus kept through a redraw, and the closing note
where the learner is when they finish (formulas and exhibit II on a phone:
tests/web/test_browser_phone.py). One plain test (no browser) checks the favicon that ``/docs``
and every browser ask for.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import Browser, Page, ViewportSize, expect

from raglab.pipeline.lab import Lab
from raglab.web.app import create_app
from tests.web.client import served
from tests.web.pages import LAPTOP, PHONE, Opener

expect.set_options(timeout=15_000)

WIDTHS = pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1280", "390"])
# The smallest text a chart may show, in CSS pixels as rendered.
MIN_TEXT_PX = 11.0


# --- interactions, one per exhibit ------------------------------------------------------------


def cut(page: Page) -> None:
    page.locator("#chunk-cut").click()
    expect(page.locator("#chunk-chart svg circle").first).to_be_attached()


def search_bm25(page: Page) -> None:
    page.locator("#bm25-query").fill("E-4107 stall")
    expect(page.locator("#bm25-results .score").first).to_be_attached()


def map_bm25(page: Page) -> None:
    page.locator("#bm25-map").click()
    expect(page.locator("#bm25-heatmap svg text").first).to_be_attached()


def fit_lsa(page: Page) -> None:
    page.locator("#lsa-build").click()
    expect(page.locator("#lsa-tools")).to_be_visible()
    expect(page.locator("#twins-out .mini-list li").first).to_be_attached()
    page.locator("#lsa-query").fill("my handset lost its location")
    expect(page.locator("#lsa-results .score").first).to_be_attached()


def pick_square(page: Page) -> None:
    page.locator("#fusion-grid .square").first.click()
    expect(page.locator("#fusion-lists .ranked")).to_have_count(3)


def train(page: Page) -> None:
    page.locator("#rerank-train").click()
    expect(page.locator("#rerank-weights svg rect.bar").first).to_be_attached()
    expect(page.locator("#version-demo > *").first).to_be_attached()


def run(page: Page) -> None:
    before = page.locator("#runs-table tbody tr").count()
    page.locator("#run-button").click()
    expect(page.locator("#runs-table tbody tr")).to_have_count(before + 1)
    expect(page.locator("#run-funnel svg rect.bar").first).to_be_attached()


def settle(page: Page) -> None:
    """Two animation frames: a chart redrawn for a new width is drawn by then."""
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


# --- 1. every score on its own row --------------------------------------------------------------

SCORES_OUTSIDE_ROWS = """(root) => [...root.querySelectorAll(".score")].flatMap((score) => {
  const row = score.closest("li");
  if (!row) return [];
  const s = score.getBoundingClientRect();
  const r = row.getBoundingClientRect();
  const inside = s.top >= r.top - 0.5 && s.bottom <= r.bottom + 0.5
    && s.left >= r.left - 0.5 && s.right <= r.right + 0.5;
  return inside ? [] : [`${score.textContent} at ${s.top}-${s.bottom}, its row ${r.top}-${r.bottom}`];
})"""


@pytest.mark.browser
@WIDTHS
def test_each_score_sits_on_its_own_row(open_page: Opener, viewport: ViewportSize) -> None:
    page = open_page(viewport)
    fit_lsa(page)
    pick_square(page)
    train(page)
    for exhibit in ("#lsa", "#fusion", "#rerank"):
        section = page.locator(exhibit)
        if exhibit != "#rerank":  # exhibit V's lists carry badges, not scores
            assert section.locator("li .score").count() > 0, exhibit
        assert section.evaluate(SCORES_OUTSIDE_ROWS) == [], exhibit


# --- 2. the keyboard keeps its place --------------------------------------------------------


def focused(page: Page, attribute: str) -> str | None:
    value = page.evaluate(f"() => document.activeElement.getAttribute('{attribute}')")
    return value if isinstance(value, str) else None


@pytest.mark.browser
def test_choosing_a_question_square_from_the_keyboard_keeps_the_focus(
    open_page: Opener,
) -> None:
    page = open_page(LAPTOP)
    squares = page.locator("#fusion-grid .square")
    expect(squares.first).to_be_attached()
    for index, key in ((2, "Enter"), (5, " ")):
        square = squares.nth(index)
        qid = square.get_attribute("data-id")
        square.focus()
        page.keyboard.press(key)
        expect(page.locator(f"#fusion-grid .square[data-id='{qid}']")).to_have_attribute(
            "aria-pressed", "true"
        )
        expect(page.locator("#fusion-lists h4").first).to_contain_text(f"{qid}:")
        assert focused(page, "data-id") == qid
        assert page.evaluate("() => document.activeElement.closest('#fusion-grid') !== null")
    # Tab goes on from the chosen square to the next one, as from any button.
    page.keyboard.press("Tab")
    assert focused(page, "data-id") == squares.nth(6).get_attribute("data-id")


@pytest.mark.browser
def test_choosing_a_question_id_from_the_keyboard_keeps_the_focus(
    open_page: Opener,
) -> None:
    page = open_page(LAPTOP)
    cut(page)
    buttons = page.locator("#questions-table button[data-id]")
    expect(buttons.first).to_be_attached()
    for index, key in ((1, " "), (3, "Enter")):
        button = buttons.nth(index)
        qid = button.get_attribute("data-id")
        button.focus()
        page.keyboard.press(key)
        chosen = page.locator(f"#questions-table button[data-id='{qid}']")
        expect(chosen).to_have_attribute("aria-pressed", "true")
        expect(page.locator("#answer-view h4")).to_contain_text(f"{qid}:")
        assert focused(page, "data-id") == qid
    # A change of the cut redraws the table again; the focus stays on the same id.
    page.locator("#chunk-method-sentence").check()
    expect(page.locator("#chunk-expected")).to_have_text("none for this rule")
    mean = page.locator("#chunk-mean").text_content()
    page.locator("#questions-table button[data-id]").nth(3).focus()
    qid = focused(page, "data-id")
    # A click from script leaves the focus where it is, as a change made elsewhere would.
    page.locator("#chunk-method-heading").evaluate("(n) => n.click()")
    expect(page.locator("#chunk-mean")).not_to_have_text(mean or "")
    settle(page)
    assert focused(page, "data-id") == qid


@pytest.mark.browser
def test_ticking_a_run_from_the_keyboard_keeps_the_focus(
    open_page: Opener,
) -> None:
    page = open_page(LAPTOP)
    run(page)
    page.locator("#run-budget").focus()
    page.locator("#run-budget").press("ArrowRight")
    run(page)
    box = page.get_by_role("checkbox", name="Compare run 1")
    box.focus()
    page.keyboard.press(" ")
    expect(page.get_by_role("checkbox", name="Compare run 1")).to_be_checked()
    assert focused(page, "data-compare") == "1"
    page.keyboard.press("Tab")
    assert focused(page, "data-show") == "1"


# --- 3. a phone: chart text and navigation ------------------------------------------------

SMALL_TEXT = f"""() => [...document.querySelectorAll("svg text")]
  .filter((t) => t.getClientRects().length && t.textContent.trim())
  .flatMap((t) => {{
    const m = t.getScreenCTM();
    const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
    const host = t.closest("[id]");
    return px < {MIN_TEXT_PX} - 0.05 ? [`${{host && host.id}}: "${{t.textContent}}" at ${{px.toFixed(1)}} px`] : [];
  }})"""


def draw_every_chart(page: Page) -> None:
    cut(page)
    map_bm25(page)
    fit_lsa(page)
    train(page)
    run(page)


def chart_texts(page: Page) -> int:
    return int(page.evaluate("() => document.querySelectorAll('svg text').length"))


@pytest.mark.browser
@WIDTHS
def test_chart_text_is_at_least_11_px_as_rendered(
    open_page: Opener, viewport: ViewportSize
) -> None:
    page = open_page(viewport)
    draw_every_chart(page)
    settle(page)
    assert chart_texts(page) > 100
    assert page.evaluate(SMALL_TEXT) == []
    # The page itself never scrolls sideways; a chart too wide for the phone scrolls in its box.
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 1


@pytest.mark.browser
def test_charts_drawn_on_a_laptop_are_redrawn_for_a_phone(
    open_page: Opener,
) -> None:
    page = open_page(LAPTOP)
    draw_every_chart(page)
    page.set_viewport_size(PHONE)
    settle(page)
    page.wait_for_function(f"() => !({SMALL_TEXT})().length", timeout=5_000)
    assert page.evaluate(SMALL_TEXT) == []
    labels = page.locator("#rerank-weights svg text.tick").all_text_contents()
    assert len(labels) == page.locator("#rerank-weights svg rect.bar").count()


@pytest.mark.browser
def test_the_exhibits_stay_in_reach_at_the_foot_of_a_phone_page(
    open_page: Opener,
) -> None:
    page = open_page(PHONE)
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height > 10 * PHONE["height"]
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    settle(page)
    nav = page.locator(".progress-bar")
    box = nav.bounding_box()
    assert box is not None
    assert box["y"] >= -0.5 and box["y"] + box["height"] <= PHONE["height"]
    assert box["height"] <= 60  # one compact line, not a third of the screen
    for name in ("chunking", "bm25", "lsa", "fusion", "rerank", "end-to-end"):
        link = page.locator(f".progress-bar a[data-progress='{name}']")
        expect(link).to_be_in_viewport()
        # Nothing covers it: a tap at its centre lands on it.
        hit = link.evaluate(
            """(a) => { const r = a.getBoundingClientRect();
                return a.contains(document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2)); }"""
        )
        assert hit, name
    page.locator(".progress-bar a[data-progress='lsa']").click()
    heading = page.locator("#lsa-title")
    expect(heading).to_be_in_viewport()
    top = heading.evaluate("(h) => h.getBoundingClientRect().top")
    assert top >= (box["height"] - 1), "the exhibit's title is hidden under the bar"


# --- 4. the favicon ---------------------------------------------------------------------------


def test_favicon_is_served_and_named_by_the_api_index(lab: Lab) -> None:
    # A client of its own, not the session's ``api``: that one runs an event loop of its own,
    # which this module's browser (running one in this thread) would refuse.
    api = TestClient(served(create_app(lab)), base_url="http://127.0.0.1:8000")
    icon = api.get("/favicon.ico")
    assert icon.status_code == 200
    assert icon.headers["content-type"] == "image/x-icon"
    assert icon.content[:4] == b"\x00\x00\x01\x00"  # an ICO file's header
    docs = api.get("/docs").text
    hrefs = re.findall(r"""<link rel=['"]icon['"] href=['"]([^'"]+)['"]""", docs)
    assert "/favicon.ico" in hrefs
    for href in hrefs:
        assert href.startswith("/"), href  # the package's own file, no CDN
        assert api.get(href).status_code == 200, href


@pytest.mark.browser
def test_the_api_index_asks_for_nothing_that_is_missing(browser: Browser, server: str) -> None:
    context = browser.new_context(viewport=LAPTOP)
    failed: list[str] = []
    context.on(
        "response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None
    )
    page = context.new_page()
    page.goto(f"{server}/docs")
    expect(page.locator("h1")).to_have_text("RAG lab API")
    page.wait_for_load_state("networkidle")
    icon = page.evaluate("() => fetch('/favicon.ico').then((r) => r.status)")
    context.close()
    assert failed == []
    assert icon == 200


# --- 5. the closing note ----------------------------------------------------------------------


@pytest.mark.browser
@WIDTHS
def test_the_closing_note_meets_the_learner_and_names_the_six_stages(
    open_page: Opener, viewport: ViewportSize, meta: dict[str, Any]
) -> None:
    page = open_page(viewport)
    names = meta["labels"]["exhibits"]
    assert list(names) == ["chunking", "bm25", "lsa", "fusion", "rerank", "end-to-end"]
    # The navigation names the exhibits as the API does.
    for key, name in names.items():
        expect(page.locator(f".progress-bar a[data-progress='{key}'] .label")).to_have_text(name)
    # Explore from the bottom up, so the last exhibit is the first one, at the top of the page.
    run(page)
    train(page)
    pick_square(page)
    fit_lsa(page)
    search_bm25(page)
    closing = page.locator("#closing")
    expect(page.locator("#progress-count")).to_have_text("5 of 6 explored")
    expect(closing).to_be_hidden()
    cut(page)
    expect(page.locator("#progress-count")).to_have_text("6 of 6 explored")
    expect(closing).to_be_visible()
    expect(closing).to_be_in_viewport(ratio=1)
    for key, name in names.items():
        expect(closing.locator(f"#closing-stages a[href='#{key}']")).to_contain_text(name)
    assert page.locator("#closing-stages li").count() == 6
    # It covers nothing for good: closed, it stays at the foot of the page.
    page.locator("#closing-dock").click()
    expect(closing).to_be_visible()
    expect(closing).not_to_be_in_viewport()
    expect(page.locator("#closing-dock")).to_be_hidden()
    # Coming back later, the note waits at the foot of the page rather than over it.
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(closing).to_be_visible()
    expect(closing).not_to_be_in_viewport()
    page.locator("#closing").scroll_into_view_if_needed()
    expect(closing).to_contain_text(names["end-to-end"])
