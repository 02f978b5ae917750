"""Opening the lab in Chromium for a browser test: a fresh page per call, each in its own context
(empty localStorage, so no saved progress), loaded and ready; any page error or console error
fails the test that opened it. The fixtures ``open_page`` and ``page`` (tests/web/conftest.py)
are built on :func:`opener`; a test module with a server of its own calls it directly."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from playwright.sync_api import Browser, Page, Request, ViewportSize, expect

from raglab.pipeline.exhibits.lsa import identifier_twins, lsa_spectrum, term_cosine
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import rank
from raglab.run_settings import RetrievalSettings

LAPTOP: ViewportSize = {"width": 1280, "height": 900}
PHONE: ViewportSize = {"width": 390, "height": 844}
Opener = Callable[[ViewportSize], Page]

#: The page's name for each diagnosis (the category names the library and reports use are keys).
STAGE_NAMES = {
    "cut": "cut by the chunker",
    "not retrieved": "not retrieved",
    "past budget": "ranked past the budget",
    "reader": "missed by the reader",
    "false answer": "answered when it should not",
}


#: For each element: its box, and the first box around it that clips it or scrolls past it.
OUT_OF_VIEW = """(nodes) => nodes.flatMap((node) => {
  const r = node.getBoundingClientRect();
  const name = node.getAttribute("aria-label") || node.getAttribute("class") || node.tagName;
  const text = (node.textContent || "").trim().slice(0, 40);
  const what = `${name} "${text}"`;
  if (r.left < -0.5 || r.right > window.innerWidth + 0.5) {
    return [`${what}: ${r.left.toFixed(1)} to ${r.right.toFixed(1)}, outside the viewport`];
  }
  for (let box = node.parentElement; box && box !== document.body; box = box.parentElement) {
    const b = box.getBoundingClientRect();
    const clips = getComputedStyle(box).overflowX !== "visible";
    if (clips && (r.left < b.left - 0.5 || r.right > b.right + 0.5)) {
      return [`${what}: ${r.left.toFixed(1)} to ${r.right.toFixed(1)}, outside its box ${box.id || box.className}`];
    }
    if (clips && box.scrollWidth > box.clientWidth + 1) {
      return [`${what}: its box ${box.id || box.className} scrolls sideways (${box.scrollWidth} > ${box.clientWidth})`];
    }
  }
  return [];
})"""


def out_of_view(page: Page, selector: str) -> list[str]:
    """Each element of ``selector`` outside the viewport or a box that clips or scrolls it."""
    found: list[str] = page.locator(selector).evaluate_all(OUT_OF_VIEW)
    return found


def opener(browser: Browser, base: str) -> Iterator[Opener]:
    """Yield ``open(viewport)``, which opens ``base`` in a fresh context; on exit close every
    context and assert the pages reported no error."""
    contexts = []
    errors: list[str] = []

    def opened(viewport: ViewportSize) -> Page:
        context = browser.new_context(viewport=viewport)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(f"{base}/")
        page.wait_for_selector("body[data-ready=true]")
        return page

    yield opened
    for context in contexts:
        context.close()
    assert errors == []


def f3(value: float) -> str:
    """A number as the page writes it to three decimals."""
    return f"{value:.3f}"


def expect_lsa_exhibit(page: Page, lab: Lab) -> None:
    """Exhibit III fitted and read as the library computes it (:func:`lsa_spectrum`, the LSA
    neighbours, :func:`identifier_twins`): the spectrum's summary and bars, a suggested word's
    nearest words, and the identifier twins' cosine; the same checks in server and tab mode."""
    spectrum = lsa_spectrum(lab)
    page.locator("#lsa-build").click()
    summary = page.locator("#lsa-summary")
    expect(summary).to_contain_text(
        f"The largest singular value is {spectrum['singular_values'][0]:.2f}"
    )
    expect(summary).to_contain_text(
        f"{spectrum['rank']} dimensions fitted on {spectrum['windows']} windows"
    )
    expect(page.locator("#lsa-chart svg rect.bar")).to_have_count(spectrum["rank"])
    word = spectrum["sample_words"][0]
    page.locator("#lsa-suggestions button", has_text=word).first.click()
    neighbours = lab.indexes.lsa.neighbours(word, k=10)
    rows = page.locator("#lsa-neighbours tbody tr")
    expect(rows).to_have_count(len(neighbours))
    expect(rows.first).to_have_text(f"{neighbours[0][0]}{f3(neighbours[0][1])}")
    twins = identifier_twins(lab)
    cosine = term_cosine(lab, twins["a"], twins["b"])
    assert cosine is not None
    expect(page.locator("#twins-cosine")).to_contain_text(f"{twins['a']} and {twins['b']}")
    expect(page.locator("#twins-cosine")).to_contain_text(f3(cosine))


def expect_bm25_example(page: Page, lab: Lab) -> None:
    """Exhibit II's first example query ranked as :func:`rank` ranks it with BM25: the first
    chunk's id and score, and five results (fewer when fewer match); server and tab alike."""
    example = page.locator("#bm25-examples button").first
    query = example.text_content() or ""
    example.click()
    ranking = rank(lab, query, RetrievalSettings("bm25"))
    cs = lab.indexes.chunk_set()
    first = page.locator("#bm25-results .result-list > li").first
    expect(first.locator(".chunk-id")).to_have_text(cs.chunks[int(ranking.indices[0])].id)
    expect(first.locator(".score")).to_have_text(f"score {f3(float(ranking.scores[0]))}")
    expect(page.locator("#bm25-results .result-list > li")).to_have_count(min(5, len(ranking)))


def route_log(page: Page, routes: tuple[str, ...]) -> list[str]:
    """A list the page fills, in the order the browser sees them, with each request to one of
    the API ``routes`` ("asked <route>") and each answer to one ("answered <route>")."""
    log: list[str] = []

    def route(url: str) -> str | None:
        path = url.split("/api/", 1)[-1].split("?", 1)[0]
        return path if path in routes else None

    def on(event: str) -> Callable[[Request], None]:
        def record(request: Request) -> None:
            name = route(request.url)
            if name is not None:
                log.append(f"{event} {name}")

        return record

    page.on("request", on("asked"))
    page.on("requestfinished", on("answered"))
    return log


def asked_at_once(page: Page, click: str, routes: tuple[str, ...], done: str) -> list[str]:
    """Click ``click`` and return the :func:`route_log` of ``routes`` until the element
    ``done`` is attached."""
    log = route_log(page, routes)
    page.locator(click).click()
    expect(page.locator(done)).to_be_attached()
    return log


def before_first_answer(log: list[str]) -> set[str]:
    """The routes a :func:`route_log` asked for before its first answer."""
    first = next(i for i, entry in enumerate(log) if entry.startswith("answered"))
    return {entry.split(" ", 1)[1] for entry in log[:first]}
