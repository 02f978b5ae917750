"""The page-text view and the data's warnings in the browser (issue #30).

Browser tests (marked ``browser``) drive Chromium against the real server, each on a fresh page.
A page id shown in a ranking opens the page's text as retrieval sees it, its answer passage
marked; Escape closes the view and gives the keyboard back to the link. The warnings reading the
data found are listed under the data's summary, and none is shown for the handbook.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from raglab.pipeline.exhibits.fusion import fusion_settings, three_lists
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import choose_weight
from tests.web.pages import PHONE, Opener

expect.set_options(timeout=30_000)


def alone_on_its_page(lab: Lab, question_id: str) -> bool:
    """Whether the question's one answer passage overlaps no other question's on its page (so
    the view marks it as one piece)."""
    (span,) = lab.questions.by_id(question_id).spans
    return not any(
        s.page_id == span.page_id and s.start < span.end and span.start < s.end
        for q in lab.questions
        if q.id != question_id
        for s in q.spans
    )


@pytest.mark.browser
def test_a_page_id_in_a_ranking_opens_its_text_with_the_answer_marked(page: Page, lab: Lab) -> None:
    """Oracle: the library's BM25 list for a test question whose first chunk holds its answer
    (three_lists), the page's text as the library reads it, and the answer passage as the
    questions file writes it."""
    fused = fusion_settings("score", choose_weight(lab))
    q = next(
        q
        for q in lab.split("test", answerable=True)
        if len(q.spans) == 1
        and alone_on_its_page(lab, q.id)
        and three_lists(lab, q.id, fused)["lists"]["bm25"]["rows"][0]["relevant"]
    )
    page_id = q.spans[0].page_id
    page.locator(f"#fusion-grid .square[data-id='{q.id}']").click()
    link = page.locator("#fusion-lists .ranked").first.locator("li").first.locator(".page-link")
    expect(link).to_have_attribute("data-page", page_id)
    # From the keyboard: the link takes the focus and Enter opens the view.
    link.focus()
    page.keyboard.press("Enter")
    view = page.locator("#page-view")
    expect(view).to_be_visible()
    expect(page.locator("#page-view-title")).to_have_text(lab.corpus.page(page_id).title)
    expect(page.locator("#page-view-text")).to_have_text(lab.corpus.page(page_id).text)
    current = page.locator("#page-view-text mark.current")
    expect(current).to_have_count(1)
    expect(current).to_have_text(str(q.answer))
    expect(current).to_be_in_viewport()
    page.keyboard.press("Escape")
    expect(view).to_be_hidden()
    expect(link).to_be_focused()
    # The close button closes it too, and the keyboard comes back to the link again.
    link.click()
    expect(view).to_be_visible()
    page.locator("#page-view-close").click()
    expect(view).to_be_hidden()
    expect(link).to_be_focused()


@pytest.mark.browser
def test_the_handbook_shows_no_data_warnings(page: Page) -> None:
    """Oracle: the handbook reads with no warning (its /api/meta lists none): the notice is on
    the page, and hidden."""
    notice = page.locator("#data-warnings")
    expect(notice).to_have_count(1)
    expect(notice).to_be_hidden()


@pytest.mark.browser
def test_the_handbooks_tuned_values_carry_no_warning(page: Page) -> None:
    """Oracle: the handbook's 45 answerable training questions (more than 30) chose the weight
    and λ off their grids' edges (tests/web/test_api_fusion.py, test_api_rerank.py): the notes
    are on the page, hidden."""
    for node in ("#fusion-tuning", "#rerank-tuning"):
        expect(page.locator(node)).to_have_count(1)
    expect(page.locator("#fusion-caption")).to_contain_text("Test split")
    expect(page.locator("#fusion-tuning")).to_be_hidden()
    page.locator("#rerank-train").click()
    expect(page.locator("#rerank-table tbody tr")).not_to_have_count(0)
    expect(page.locator("#rerank-tuning")).to_be_hidden()


@pytest.mark.browser
def test_the_page_view_fits_a_phone(open_page: Opener, lab: Lab) -> None:
    """At 390 px the view stays inside the screen: nothing to scroll sideways, the text in a box
    of its own that scrolls down, the close button in reach. Oracle: the viewport's width."""
    page = open_page(PHONE)
    page.locator("#bm25-query").fill("motor stall")
    page.locator("#bm25-form button[type=submit]").click()
    link = page.locator("#bm25-results .page-link").first
    page_id = link.get_attribute("data-page")
    assert page_id in lab.corpus
    link.click()
    expect(page.locator("#page-view-text")).to_have_text(lab.corpus.page(page_id).text)
    width = PHONE["width"]
    for node in ("#page-view", "#page-view-text", "#page-view-close"):
        box = page.locator(node).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, node
    scroll = page.locator("#page-view-text").evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert scroll[0] <= scroll[1]
    expect(page.locator("#page-view-close")).to_be_in_viewport()
    page.locator("#page-view-close").click()
    expect(page.locator("#page-view")).to_be_hidden()
