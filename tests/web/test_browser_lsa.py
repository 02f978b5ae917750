"""Exhibit III in the browser: the example identifier pair and the clearest blurred pair with
their cosines and why, and nearest words seen in one passage marked; and exhibit II's stemming
switch when the lab's analyzer already stems.

Browser tests (marked ``browser``) drive Chromium against the real server, each on a fresh page
(a new context: no saved progress), independent of order. Oracle: the library on a lab of its
own (``term_cosine``, ``identifier_pairs``, ``nearest_words``), and for the one-passage flag an
independent count of the LSA windows holding each word, from the windows' word ranges.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from raglab.embedding.lsa import even_windows
from raglab.pipeline.exhibits.lsa import (
    EXAMPLE_PAIR,
    clearest_pair,
    identifier_pairs,
    nearest_words,
    term_cosine,
)
from raglab.pipeline.lab import Lab
from raglab.text.tokens import count_words
from tests.web.conftest import serving
from tests.web.pages import LAPTOP, PHONE, Opener, asked_at_once, before_first_answer, f3, opener

expect.set_options(timeout=30_000)


def fit(page: Page) -> None:
    page.locator("#lsa-build").click()
    expect(page.locator("#lsa-tools")).to_be_visible()
    expect(page.locator("#lsa-pairs .pair").first).to_be_attached()


@pytest.mark.browser
@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1280", "390"])
def test_the_example_pair_and_the_clearest_pair_show_the_librarys_cosines(
    open_page: Opener, lab: Lab, viewport: ViewportSize
) -> None:
    page = open_page(viewport)
    fit(page)
    a, b = (x.lower() for x in EXAMPLE_PAIR)
    # Both codes really are in the handbook, so the example is the handbook's own.
    text = " ".join(p.text for p in lab.corpus)
    assert all(x in text for x in EXAMPLE_PAIR)
    cosine = term_cosine(lab, a, b)
    assert cosine is not None
    example = page.locator("#lsa-pair-example")
    expect(example.locator("h4")).to_have_text(
        f"The example pair: {a} and {b}, cosine {f3(cosine)}"
    )
    best = clearest_pair(lab)
    assert best is not None
    best_cosine = term_cosine(lab, *best)
    assert best_cosine is not None and best_cosine > cosine  # the clearer blur
    clearest = page.locator("#lsa-pair-clearest")
    expect(clearest.locator("h4")).to_contain_text(
        f"{best[0]} and {best[1]}, cosine {f3(best_cosine)}"
    )
    why = {p["role"]: p["why"] for p in identifier_pairs(lab)["pairs"]}
    expect(example.locator("p")).to_have_text(why["example"])
    expect(clearest.locator("p")).to_have_text(why["clearest"])


def _one_passage_by_hand(lab: Lab, word: str) -> bool:
    """Whether every LSA window holding ``word`` overlaps every other, counted from the windows'
    word ranges and their token lists (independently of the library's flag)."""
    n = sum(count_words(p.text) for p in lab.corpus)
    ranges = [
        cast(range, r) for r in even_windows(range(n), count=len(lab.indexes.lsa_windows), size=256)
    ]
    held = [r for r, tokens in zip(ranges, lab.indexes.lsa_windows, strict=True) if word in tokens]
    return all(x.start < y.stop and y.start < x.stop for x in held for y in held)


@pytest.mark.browser
def test_neighbours_seen_in_one_passage_are_marked(open_page: Opener, lab: Lab) -> None:
    page = open_page(LAPTOP)
    fit(page)
    page.locator("#lsa-word").fill("charging")
    rows = page.locator("#lsa-neighbours tbody tr")
    near = nearest_words(lab, "charging")
    expect(rows).to_have_count(len(near["neighbours"]))
    expected = [_one_passage_by_hand(lab, n["word"]) for n in near["neighbours"]]
    assert expected == [n["one_passage"] for n in near["neighbours"]]
    assert any(expected) and not all(expected)  # the lesson: some ties mean nothing
    marked = ["one-passage" in (row.get_attribute("class") or "") for row in rows.all()]
    assert marked == expected
    for row, n, one in zip(rows.all(), near["neighbours"], expected, strict=True):
        badge = "one passage" if one else ""
        expect(row).to_have_text(f"{n['word']}{badge}{f3(n['cosine'])}")
    expect(page.locator("#lsa-thin-note")).to_contain_text(f"{sum(expected)} of these 10 words")
    expect(page.locator("#lsa-word-thin")).to_be_visible()  # charging itself: one passage


# --- exhibit II under Lucene's analyzer ------------------------------------------------------


@pytest.fixture(scope="module")
def lucene_server() -> Iterator[str]:
    """The handbook served with ``--analyzer lucene`` (as conftest's ``server`` serves the
    default lab); yields its base URL."""
    with serving("--analyzer", "lucene", log_name="web-server-lucene.log") as base:
        yield base


@pytest.mark.browser
def test_the_stemming_switch_says_it_does_nothing_under_lucene(
    browser: Browser, lucene_server: str
) -> None:
    """Oracle: the library: under Lucene's analyzer the chunks' tokens are the same with the
    switch on and off, so the page must say the switch changes nothing (and not offer it)."""
    lab = Lab.load(analyzer="lucene")
    assert lab.indexes.chunk_set().tokens == lab.with_stem(True).indexes.chunk_set().tokens
    pages = opener(browser, lucene_server)
    page = next(pages)(LAPTOP)
    expect(page.locator("#bm25-stem")).to_be_disabled()
    expect(page.locator("#bm25-stem-help")).to_contain_text("so this switch changes nothing here")
    expect(page.locator("#bm25-stem-help")).to_contain_text("Lucene English analyzer")
    next(pages, None)


@pytest.mark.browser
def test_the_fit_asks_for_its_pairs_and_twins_at_once(open_page: Opener) -> None:
    """Issue #31: "Fit" sends the fit's, the pairs' and the twins' requests before the first
    answer comes back (they went one after another). Oracle: the browser's own order of
    requests and answers."""
    page = open_page(LAPTOP)
    routes = ("lsa", "lsa/pairs", "lsa/twins")
    log = asked_at_once(page, "#lsa-build", routes, "#twins-cosine")
    assert before_first_answer(log) == set(routes), log
