"""The written site (``raglab site``) in Chromium: served by a plain static server, with every
other host blocked, exhibits I to VI show the numbers ``raglab serve`` shows, computed in the
tab (the neural rows from the vectors the site ships), at 1280 and 390 px; a question typed
into exhibit III is encoded in the tab, its weights' download shown by a progress bar.

Oracle: the Python engine (the session's handbook lab, the lab ``raglab serve`` serves).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, Route, ViewportSize, expect

from raglab.cli.main import main
from raglab.pipeline.chunking_report import chunking_report
from raglab.pipeline.end_to_end import run_pipeline
from raglab.pipeline.grid import bm25_grid
from raglab.pipeline.lab import Lab
from raglab.pipeline.reranking import ORDERS, choose_lambda, measure_order, train_reranker
from raglab.pipeline.retrieval import (
    choose_weight,
    first_ranks,
    measure,
    ranker_table,
    resolve,
)
from raglab.run_settings import ChunkingKey, RetrievalSettings, RunSettings
from raglab.settings import READER_THRESHOLDS, SITE_PROGRESS_CHUNKS, SITE_PROGRESS_WEIGHTS
from tests.web.conftest import _wait_for, free_port
from tests.web.pages import LAPTOP, PHONE, expect_bm25_example, expect_lsa_exhibit, f3

pytestmark = pytest.mark.browser

#: Exhibit IV's table columns, in the page's order.
METRICS = ("recall@1", "recall@3", "recall@5", "recall@10", "mrr", "ndcg@10")


@pytest.fixture(scope="module")
def site_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The site written into a temporary folder, served by ``python -m http.server``."""
    out = tmp_path_factory.mktemp("site")
    assert main(["site", "--out", str(out), "--quiet"]) == 0
    port = free_port()
    log = out.parent / "http-server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "-d", str(out)],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for(f"{base}/data/site.json", process, log)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)


def open_site(
    browser: Browser, base: str, viewport: ViewportSize, init_script: str | None = None
) -> tuple[Page, list[str], list[str]]:
    """The site in a fresh context: every request to a host other than the site's aborted and
    listed; page errors listed; `init_script` run in the page before its own scripts."""
    context = browser.new_context(viewport=viewport)
    if init_script is not None:
        context.add_init_script(init_script)
    page = context.new_page()
    foreign: list[str] = []
    errors: list[str] = []
    site = urlsplit(base).netloc

    def guard(route: Route) -> None:
        url = route.request.url
        if urlsplit(url).scheme in ("data", "blob") or urlsplit(url).netloc == site:
            route.continue_()
        else:
            foreign.append(url)
            route.abort()

    page.route("**/*", guard)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{base}/")
    page.wait_for_selector("body[data-ready=true]")
    return page, foreign, errors


#: Run in the page before its own scripts: the Workers it starts, counted in window.__workers.
COUNT_WORKERS = """(() => {
  window.__workers = [];
  const Base = window.Worker;
  window.Worker = class extends Base {
    constructor(url, options) {
      super(url, options);
      window.__workers.push(String(url));
    }
  };
})();"""


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1280", "390"])
def test_the_static_site_computes_exhibits_one_to_six_in_the_tab(
    browser: Browser, site_url: str, lab: Lab, viewport: ViewportSize
) -> None:
    page, foreign, errors = open_site(browser, site_url, viewport, COUNT_WORKERS)
    # One engine Worker, started by the page's first script and taken by answers.js.
    assert page.evaluate("window.__workers") == ["static/engine/worker.js"]
    expect(page.locator("#site-note")).to_contain_text("computed in this tab, with no server")
    # With the neural files the site lacks nothing, so the note names nothing lacking.
    expect(page.locator("#site-note")).not_to_contain_text("does not hold")

    # Exhibit I: the fixed chunker at its own size, cut.
    report = chunking_report(lab, ChunkingKey("fixed"))
    page.locator("#chunk-method-fixed").check()
    page.locator("#chunk-cut").click()
    expect(page.locator("#chunk-count")).to_have_text(str(report.n_chunks))
    expect(page.locator("#chunk-expected")).to_have_text(f"{report.expected_chunks} (agrees)")
    expect(page.locator("#chunk-intact")).to_contain_text(
        f"{report.intact} of {report.total} ({f3(report.intact_rate)})"
    )
    assert report.predicted_intact is not None
    expect(page.locator("#chunk-predicted")).to_have_text(f3(report.predicted_intact))

    # Exhibit II: an example query's ranking, then the k1 x b grid and its best cell.
    expect_bm25_example(page, lab)
    page.locator("#bm25-map").click()
    grid = bm25_grid(lab, k=5)
    best = RetrievalSettings("bm25", k1=grid.best_k1, b=grid.best_b)
    ranks = first_ranks(lab, "train", best)
    hits = sum(r is not None and r <= 5 for r in ranks)
    recall = measure(lab, "train", best)["recall@5"]
    expect(page.locator("#bm25-best")).to_have_text(
        f"{f3(recall)} ({hits} of {len(ranks)}) at k1 = {grid.best_k1:.1f}, b = {grid.best_b:.1f}"
    )
    # The grid's progress was shown while the Worker swept it (one line per cell, then hidden).
    cells = len(grid.k1s) * len(grid.bs)
    expect(page.locator("#tab-progress")).to_have_text(
        f"Computing the k1 × b grid in this tab: {cells} of {cells}"
    )

    # Exhibit III: the LSA fit's spectrum, a suggested word's neighbours, the twins' cosine.
    expect_lsa_exhibit(page, lab)

    # Exhibit IV: the test table at the weight chosen on train, its neural rows from the
    # shipped vectors.
    chosen = choose_weight(lab)
    table = ranker_table(lab, weight=chosen)
    assert "neural" in table
    expect(page.locator("#fusion-caption")).to_contain_text(f"w = {chosen:.2f}")
    for ranker, metrics in table.items():
        cells = page.locator(f"#fusion-table tr[data-ranker={ranker}] td")
        expect(cells).to_have_text([f3(metrics[m]) for m in METRICS])

    # Exhibit V: the reranker trained in the tab, its rows at the λ chosen on train.
    reranker = train_reranker(lab, resolve(lab, RetrievalSettings()))
    chosen_lambda = choose_lambda(lab, reranker)
    page.locator("#rerank").scroll_into_view_if_needed()
    page.locator("#rerank-train").click()
    expect(page.locator("#rerank-summary")).to_contain_text(f"{reranker.rows:,} candidate rows")
    expect(page.locator("#rerank-weights svg rect.bar")).to_have_count(len(reranker.weights))
    for split in ("train", "test"):
        for order in ORDERS:
            measured = measure_order(lab, split, reranker, order, chosen_lambda)
            cells = page.locator(f"#rerank-table tr[data-split={split}][data-order='{order}'] td")
            expect(cells).to_have_count(5)
            assert cells.all_text_contents()[1:] == [
                f3(measured[m]) for m in ("top1", "p@3", "recall@5", "mrr")
            ], (split, order)

    # Exhibit VI: the default run on test, its accuracy, interval and bound.
    result = run_pipeline(lab, RunSettings())
    page.locator("#run-button").scroll_into_view_if_needed()
    page.locator("#run-button").click()
    expect(page.locator("#run-accuracy")).to_have_text(
        f"{result.correct} of {result.n} = {result.accuracy:.3f}"
    )
    low, high = result.interval
    expect(page.locator("#run-interval")).to_contain_text(f"{low:.3f}")
    expect(page.locator("#run-interval")).to_contain_text(f"{high:.3f}")
    expect(page.locator("#run-bound")).to_contain_text(f"{result.bound:.3f}")
    expect(page.locator("#run-risk-table tbody tr")).to_have_count(len(READER_THRESHOLDS))
    expect(page.locator(".tab-missing")).to_have_count(0)
    assert foreign == [], f"requests to other hosts: {foreign}"
    assert errors == []
    page.context.close()


#: A question no labelled one is, typed into exhibit III's neural search.
TYPED = "how do I keep the batteries warm in winter"


def test_the_tab_shows_the_servers_neural_numbers_and_encodes_a_typed_question(
    browser: Browser, site_url: str, lab: Lab
) -> None:
    from raglab.pipeline.exhibits.neural import neural_search, neural_view

    page, foreign, errors = open_site(browser, site_url, LAPTOP)
    # A neural number from the shipped vectors: exhibit III's panel, each question's rank.
    view = neural_view(lab)
    page.locator("#neural-build").click()
    for row in view["questions"]:
        cells = page.locator(f"#neural-questions tr[data-question={row['id']}] td")
        ranks = [row["ranks"][n] for n in ("bm25", "lsa", "neural")]
        expect(cells).to_have_text(["not ranked" if r is None else str(r) for r in ranks])
    expect(page.locator("#neural-twins")).to_contain_text(f3(view["twins"]["twin"]["neural"]))

    # A typed question: the weights fetched once, their progress bar run to the end, then the
    # nearest chunks, the first equal to the server's (its cosine within float16's error,
    # tests/web/test_site.py's bound, and the page's rounding).
    page.locator("#neural-query").fill(TYPED)
    page.locator("#neural-search-form button").click()
    expect(page.locator("#neural-search-results tbody tr")).to_have_count(5, timeout=120_000)
    line = page.locator("#tab-progress")
    assert line.get_attribute("data-what") == SITE_PROGRESS_WEIGHTS
    assert line.get_attribute("data-done") == line.get_attribute("data-total")
    bar = line.locator("progress")
    assert bar.get_attribute("value") == bar.get_attribute("max")
    expected = neural_search(lab, TYPED, top=5)["results"][0]
    first = page.locator("#neural-search-results tbody tr").first
    expect(first).to_have_attribute("data-chunk", expected["chunk"])
    shown = float(first.locator("td.score").inner_text())
    assert abs(shown - expected["score"]) <= 5e-3, (shown, expected["score"])
    # Chromium validates the encoder's WebAssembly SIMD kernel (its bytes written by a module of
    # the site, fetched from it like any script), so the Worker encoded on that path.
    kernel = "./static/engine/embedding/neural/kernel.js"
    assert page.evaluate(f"import('{kernel}').then((m) => m.simdSupported())") is True
    assert foreign == [], f"requests to other hosts: {foreign}"
    assert errors == []
    page.context.close()


#: Wraps the page's Worker so that its messages are logged in order (window.workerLog: requests
#: out with their id and URL, answers and progress in), and clicks exhibit II's first example
#: the moment the Worker says it starts encoding the chunks (progress 0 of the chunks), so the
#: request is queued while the first text encodes however fast the machine is.
WORKER_LOG = """
(() => {
  const log = [];
  window.workerLog = log;
  const Base = window.Worker;
  let clicked = false;
  window.Worker = class extends Base {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        const { id, progress, status } = event.data || {};
        if (progress) log.push({ id, done: progress.done, total: progress.total, what: progress.what });
        else if (status !== undefined) log.push({ id, status });
        if (progress && progress.what === WHAT && progress.done === 0 && !clicked) {
          clicked = true;
          log.push({ click: true });
          document.querySelector("#bm25-examples button").click();
        }
      });
    }
    postMessage(message, ...rest) {
      if (message && message.url) log.push({ id: message.id, url: message.url });
      return super.postMessage(message, ...rest);
    }
  };
})();
"""


def test_a_neural_run_at_another_chunking_is_encoded_in_the_tab(
    browser: Browser, site_url: str, lab: Lab
) -> None:
    # Heading chunks of at most 90 words: some are texts the site ships no vector for.
    settings = RunSettings(chunker="heading", size=90, retriever="neural", rerank=False, mmr=False)
    result = run_pipeline(lab, settings)
    script = WORKER_LOG.replace("WHAT", json.dumps(SITE_PROGRESS_CHUNKS))
    page, foreign, errors = open_site(browser, site_url, LAPTOP, init_script=script)
    page.locator("#run-button").scroll_into_view_if_needed()
    page.locator("#run-chunker").select_option("heading")
    page.locator("#run-size").fill("90")
    page.locator("#run-retriever").select_option("neural")
    page.locator("#run-rerank").uncheck()
    page.locator("#run-button").click()
    # The weights fetched, then the new chunks encoded, the progress line saying so meanwhile.
    expect(page.locator("#tab-progress")).to_contain_text(
        f"Computing {SITE_PROGRESS_CHUNKS} in this tab", timeout=120_000
    )
    expect(page.locator("#bm25-results .result-list > li").first).to_be_visible(timeout=60_000)
    expect(page.locator("#run-accuracy")).to_have_text(
        f"{result.correct} of {result.n} = {result.accuracy:.3f}", timeout=300_000
    )
    # Another exhibit answers meanwhile (the Worker yields between two texts): exhibit II's
    # example, asked when the encoding began, is answered before the last text's progress, by
    # the order of the Worker's messages, not by the clock.
    log = page.evaluate("window.workerLog")
    click = next(i for i, entry in enumerate(log) if entry.get("click"))
    asked = next(entry for entry in log[click:] if "url" in entry)
    assert "/api/bm25/" in asked["url"], asked
    answered = next(i for i, e in enumerate(log) if e.get("id") == asked["id"] and "status" in e)
    encoding = [
        (i, e) for i, e in enumerate(log) if e.get("what") == SITE_PROGRESS_CHUNKS and "done" in e
    ]
    last, final = encoding[-1]
    assert final["done"] == final["total"] > 1, final
    done_then = max(e["done"] for i, e in encoding if i < answered)
    assert answered < last and done_then < final["total"], (
        f"exhibit II answered after {done_then} of {final['total']} texts: the encoding ended first"
    )
    expect(page.locator(".tab-missing")).to_have_count(0)
    assert foreign == [], f"requests to other hosts: {foreign}"
    assert errors == []
    page.context.close()
