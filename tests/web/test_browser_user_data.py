"""The lab on a user's untidy, lightly labelled folder, in the browser (issue #30).

One real server (a module's own) serves the small corpus of tests/pipeline/small_corpus.py (three
pages, three training questions, two of them answerable) with three odd files added: a page in
cp1252, an empty page, and a page carrying a front-matter key RAG lab does not use under an id
that needs URL-encoding. Each test opens a fresh page on it. Reading it warns three times; the
page lists each warning, opens every page's text, and says of each value tuned on its two
answerable training questions that so few chose it.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from raglab.pipeline.exhibits.rerank import fitted_reranker
from raglab.pipeline.lab import Lab
from raglab.pipeline.resolve import lab_tuning
from raglab.pipeline.retrieval import choose_weight
from raglab.run_settings import RetrievalSettings
from raglab.settings import default
from tests.pipeline.small_corpus import write_small_lab
from tests.web.conftest import serving, wait_for_encoding
from tests.web.pages import LAPTOP, Opener, opener

expect.set_options(timeout=30_000)

ODD_ID = "guides/set-up?v=2#top"


@pytest.fixture(scope="module")
def untidy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Lab, str]]:
    """The untidy folder's lab (read here, by the library) and the base URL of a server on it,
    once its neural vectors are encoded (so every table is whole at the first load)."""
    root = tmp_path_factory.mktemp("untidy")
    write_small_lab(root)
    pages = root / "pages"
    (pages / "cafe.md").write_bytes(
        "# Café\n\nThe café opens the espresso valve at nine bar.\n".encode("cp1252")
    )
    (pages / "blank.md").write_text("", encoding="utf-8")
    (pages / "guide.md").write_text(
        f"---\nid: {ODD_ID}\ntitle: Setting up\nlayout: docs\n---\n# Setting up\n\n"
        "Fit the grinder burr before the first run.\n",
        encoding="utf-8",
    )
    lab = Lab.load(pages, root / "q.jsonl")
    data = ("--corpus", str(pages), "--questions", str(root / "q.jsonl"))
    env = {"RAGLAB_CACHE_DIR": str(root / "cache")}
    with serving(*data, log_name="web-server-untidy.log", env=env) as base:
        wait_for_encoding(base)
        yield lab, base


@pytest.fixture
def open_untidy(browser: Browser, untidy: tuple[Lab, str]) -> Iterator[Opener]:
    yield from opener(browser, untidy[1])


@pytest.mark.browser
def test_each_warning_is_listed_and_the_odd_pages_open(
    open_untidy: Opener, untidy: tuple[Lab, str]
) -> None:
    """Oracle: the folder written here: one warning per odd file (the encoding detected, the
    empty page, the key kept as metadata), each listed verbatim as the library words it; the
    page with the odd id opens from a search result with its metadata and its text."""
    lab, _ = untidy
    warnings = [str(w) for w in lab.corpus.warnings]
    assert len(warnings) == 3 and lab.questions.warnings == ()
    assert any("cp1252" in w for w in warnings) and any("empty" in w for w in warnings)
    assert any("layout" in w for w in warnings)
    page = open_untidy(LAPTOP)
    expect(page.locator("#data-warnings")).to_be_visible()
    count = page.locator("#data-warnings-count")
    expect(count).to_have_text("3 warnings from reading the corpus")
    expect(page.locator("#data-warnings-list")).to_be_hidden()
    count.click()
    expect(page.locator("#data-warnings-list li")).to_have_text(warnings)
    search(page, "grinder burr")
    link = page.locator("#bm25-results .page-link").first
    expect(link).to_have_attribute("data-page", ODD_ID)
    link.click()
    expect(page.locator("#page-view-title")).to_have_text("Setting up")
    expect(page.locator("#page-view-meta dt")).to_have_text(["layout"])
    expect(page.locator("#page-view-meta dd")).to_have_text(["docs"])
    expect(page.locator("#page-view-text")).to_have_text(lab.corpus.page(ODD_ID).text)
    page.keyboard.press("Escape")
    expect(page.locator("#page-view")).to_be_hidden()
    # The page read as cp1252 shows its text decoded.
    search(page, "espresso")
    page.locator("#bm25-results .page-link").first.click()
    expect(page.locator("#page-view-text")).to_have_text(lab.corpus.page("cafe").text)
    assert "The café opens" in lab.corpus.page("cafe").text


def search(page: Page, query: str) -> None:
    page.locator("#bm25-query").fill(query)
    page.locator("#bm25-form button[type=submit]").click()


@pytest.mark.browser
def test_values_tuned_on_two_questions_are_warned_on_exhibits_iv_and_v(
    open_untidy: Opener, untidy: tuple[Lab, str]
) -> None:
    """Oracle: the library on the same folder: the weight chosen on train and the reranker's
    λ, each noted by lab_tuning (its count of answerable training questions, 2, is hand-counted
    in tests/pipeline/small_corpus.py); BM25 + neural score fusion's weight as the API notes
    it. Each sentence shows beside the value, as exhibit VI shows its own."""
    lab, base = untidy
    (weight,) = lab_tuning(lab, {"weight": choose_weight(lab)})
    neural = httpx.get(f"{base}/api/fusion/table", timeout=60).json()["neural_tuning"]
    assert weight.questions == 2 and weight.sentence and len(neural) == 1
    name = httpx.get(f"{base}/api/meta", timeout=30).json()["labels"]["retrievers"]["neural-score"]
    assert "on 2 answerable training questions, fewer than 30" in neural[0]["sentence"]
    page = open_untidy(LAPTOP)
    tuning = page.locator("#fusion-tuning")
    expect(tuning).to_be_visible()
    expect(tuning).to_have_text(f"{weight.sentence} {name}: {neural[0]['sentence']}")
    _, lam = fitted_reranker(lab, RetrievalSettings(default("retriever")))
    (note,) = lab_tuning(lab, {"mmr_lambda": lam})
    assert note.questions == 2 and note.sentence
    expect(page.locator("#rerank-tuning")).to_be_hidden()
    page.locator("#rerank-train").click()
    expect(page.locator("#rerank-tuning")).to_have_text(note.sentence)
    expect(page.locator("#rerank-tuning")).to_be_visible()
