"""The page in a real browser: a new reader walks through every exhibit, then reloads.

The server runs as ``python -m raglab.cli.serve`` on a free port (one per session, shared by
every browser test); Chromium is driven by Playwright. Every number checked on the page is
computed here by the library for the same settings. Each test opens its own page in a new
browser context whose localStorage is prepared beforehand (the progress a reader would have
saved by then: :func:`saved_progress`), so the tests pass in any order and alone. A screenshot of
each exhibit is saved under ``test-artifacts/``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from raglab.metrics.stats import mcnemar_exact, wilson_interval
from raglab.pipeline.chunking_report import ChunkingReport, chunking_report
from raglab.pipeline.end_to_end import outcomes_vector, run_pipeline
from raglab.pipeline.exhibits.rerank import version_demo
from raglab.pipeline.grid import bm25_grid
from raglab.pipeline.lab import Lab
from raglab.pipeline.reranking import choose_lambda, measure_order, train_reranker
from raglab.pipeline.retrieval import (
    choose_weight,
    first_ranks,
    measure,
    ranker_table,
)
from raglab.run_settings import ChunkingKey, RetrievalSettings, RunSettings
from tests.web.pages import expect_bm25_example, expect_lsa_exhibit, f3

pytestmark = pytest.mark.browser
expect.set_options(timeout=15_000)

METRICS = ("recall@1", "recall@3", "recall@5", "recall@10", "mrr", "ndcg@10")


@dataclass
class Visit:
    page: Page
    base: str
    artifacts: Path
    record: Callable[[str, float], None]
    errors: list[str] = field(default_factory=list)

    def shot(self, name: str, selector: str) -> None:
        """Save a screenshot of one part of the page, without the sticky bar over it."""
        bar = "document.querySelector('.progress-bar').style.position"
        self.page.evaluate(f"{bar} = 'static'")
        self.page.locator(selector).screenshot(path=str(self.artifacts / f"{name}.png"))
        self.page.evaluate(f"{bar} = ''")

    def timed(self, name: str, action: Callable[[], None], until: Callable[[], None]) -> None:
        """Do ``action`` and wait for ``until``; the time is reported, never asserted."""
        self.page.evaluate("performance.clearResourceTimings()")
        start = time.perf_counter()
        action()
        until()
        self.record(f"page {name}: action to screen", (time.perf_counter() - start) * 1000)
        served = self.page.evaluate(
            """() => performance.getEntriesByType("resource")
                .filter((e) => e.name.includes("/api/"))
                .map((e) => e.responseEnd - e.requestStart)"""
        )
        if served:
            self.record(f"page {name}: slowest API answer", max(served))


def slide_to(page: Page, selector: str, target: float, minimum: float, step: float) -> None:
    """Move a range input with the keyboard, as a reader would: Home, then arrow keys."""
    slider = page.locator(selector)
    slider.focus()
    slider.press("Home")
    for _ in range(round((target - minimum) / step)):
        slider.press("ArrowRight")
    assert float(slider.input_value()) == pytest.approx(target)


#: Where the page keeps a reader's progress (``Store`` in static/lib.js).
PROGRESS_KEY = "raglab.progress.v1"
EXHIBITS = ("chunking", "bm25", "lsa", "fusion", "rerank", "end-to-end")


def saved_progress(
    meta: dict[str, Any],
    explored: tuple[str, ...] = (),
    settings: dict[str, Any] | None = None,
    runs: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The localStorage entry the page writes (``Store`` in static/lib.js): the served data's
    fingerprint, the exhibits explored, each exhibit's saved settings and the runs kept."""
    kept = runs or []
    return {
        "fingerprint": meta["fingerprint"],
        "explored": {name: True for name in explored},
        "settings": settings or {},
        "runs": kept,
        "nextRun": len(kept) + 1,
    }


def default_request(meta: dict[str, Any]) -> dict[str, Any]:
    """The body the end-to-end form posts to ``/api/run`` untouched: every setting's default from
    ``/api/meta``, the tuned ones left to the server (None)."""
    spec = {s["name"]: s for s in meta["settings"]}
    return {
        "chunker": spec["chunker"]["default"],
        "size": spec["size"]["default"],
        "overlap": spec["overlap"]["default"] if spec["chunker"]["default"] == "fixed" else None,
        "retriever": spec["retriever"]["default"],
        "weight": None,
        "rerank": spec["rerank"]["default"],
        "mmr": bool(spec["rerank"]["default"] and spec["mmr"]["default"]),
        "mmr_lambda": None,
        "budget": spec["budget"]["default"],
        "threshold": None,
        "reader_scoring": spec["reader_scoring"]["default"],
    }


def saved_run(server: str, request: dict[str, Any], number: int) -> dict[str, Any]:
    """One run as the page keeps it after pressing Run: its request and the server's answer."""
    result = httpx.post(f"{server}/api/run", json=request, timeout=120).json()
    keys = ("correct", "n", "accuracy", "interval")
    return {"request": request, **{k: result[k] for k in keys}, "number": number}


Opener = Callable[[dict[str, Any] | None], Visit]


@pytest.fixture
def open_visit(
    browser: Browser,
    server: str,
    artifacts: Path,
    timings: Callable[[str, float], None],
) -> Iterator[Opener]:
    """``open_visit(progress)``: the served lab in a new context whose localStorage holds
    ``progress`` (None: empty, a first visit), loaded and ready. On exit the context closes and
    the test fails if the page reported an error."""
    visits: list[tuple[Any, Visit]] = []

    def opened(progress: dict[str, Any] | None) -> Visit:
        storage: Any = {"cookies": [], "origins": []}
        if progress is not None:
            entry = {"name": PROGRESS_KEY, "value": json.dumps(progress)}
            storage["origins"] = [{"origin": server, "localStorage": [entry]}]
        context = browser.new_context(
            viewport={"width": 1280, "height": 900}, storage_state=storage
        )
        page = context.new_page()
        v = Visit(page, server, artifacts, timings)
        visits.append((context, v))
        page.on("pageerror", lambda e: v.errors.append(f"page error: {e}"))
        page.on("console", lambda m: v.errors.append(m.text) if m.type == "error" else None)
        page.goto(f"{server}/")
        page.wait_for_selector("body[data-ready=true]")
        return v

    yield opened
    for context, v in visits:
        context.close()
        assert v.errors == []


@pytest.fixture
def visit(open_visit: Opener) -> Visit:
    """A first visit: nothing saved."""
    return open_visit(None)


def test_01_introduction_names_the_data(visit: Visit, lab: Lab) -> None:
    page = visit.page
    summary = page.locator("#data-summary").text_content() or ""
    assert f"{len(lab.corpus)} pages" in summary
    assert f"{len(lab.questions)} labelled questions" in summary
    assert f"{len(lab.split('test'))} for testing" in summary
    expect(page.locator("#progress-count")).to_have_text("0 of 6 explored")
    expect(page.locator("#closing")).to_be_hidden()
    expect(page.locator("#chunk-count")).to_have_text("waiting for a cut")
    assert page.locator("section.exhibit h2").count() == 6
    unnamed = page.evaluate(
        """() => [...document.querySelectorAll("input, select, button, [tabindex='0']")]
            .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute("aria-label")
                && !el.getAttribute("aria-labelledby") && !el.textContent.trim())
            .map((el) => el.outerHTML.slice(0, 80))"""
    )
    assert unnamed == [], "every control needs a name a screen reader can read"
    for exhibit in ("chunking", "bm25", "lsa", "fusion", "rerank", "end-to-end"):
        section = page.locator(f"section#{exhibit}")
        expect(section.locator(".maths math").first).to_be_attached()
        expect(section.locator(".note.practice")).to_have_count(1)
        expect(section.locator(".note.caution")).to_have_count(1)
    assert visit.errors == []
    visit.shot("exhibit-0-introduction", "header.masthead")


def _cutting_setting(lab: Lab) -> tuple[int, int, ChunkingReport]:
    """A fixed setting that cuts some test answers and keeps others whole."""
    for size, overlap in ((150, 10), (100, 10), (60, 10), (40, 0)):
        report = chunking_report(lab, ChunkingKey("fixed", size, overlap))
        test = [a for a in report.answers if a.split == "test"]
        if any(a.intact for a in test) and not all(a.intact for a in test):
            return size, overlap, report
    pytest.fail("no fixed setting on the slider cuts some test answers and keeps others whole")


def test_02_chunking(visit: Visit, lab: Lab) -> None:
    page = visit.page
    size, overlap, report = _cutting_setting(lab)
    page.locator("#chunk-method-fixed").check()
    slide_to(page, "#chunk-size", size, 20, 10)
    slide_to(page, "#chunk-overlap", overlap, 0, 5)
    expect(page.locator("#chunk-count")).to_have_text("waiting for a cut")
    page.locator("#chunk-cut").click()
    expect(page.locator("#chunk-count")).to_have_text(str(report.n_chunks))
    expect(page.locator("#chunk-expected")).to_have_text(f"{report.expected_chunks} (agrees)")
    # No cut is chosen on the training split here: the test figure carries the page's label.
    expect(page.locator("#chunk-intact")).to_have_text(
        f"{report.intact} of {report.total} ({f3(report.intact_rate)}) test, not chosen on train"
    )
    expect(page.locator("#chunk-chart-caption")).to_contain_text(
        "a test figure at a size not chosen on the training split: \u201ctest, not chosen on train\u201d"
    )
    test_answers = [a for a in report.answers if a.split == "test"]
    expect(page.locator("#questions-summary")).to_contain_text(
        f"{sum(a.intact for a in test_answers)} of {len(test_answers)} test "
        "(test, not chosen on train)"
    )
    assert report.predicted_intact is not None
    expect(page.locator("#chunk-predicted")).to_have_text(f3(report.predicted_intact))
    expect(page.locator("#chunk-chart svg circle").first).to_be_visible()

    cut = next(a for a in test_answers if not a.intact)
    whole = next(a for a in test_answers if a.intact)
    table = page.locator("#questions-table tbody")
    expect(table.locator("tr")).to_have_count(len(lab.split("test")))
    row = table.locator(
        "tr",
        has=page.get_by_role(
            "button", name=f"Show the answer to {cut.id} with the chunk edges", exact=True
        ),
    )
    expect(row.locator(".badge")).to_have_text("cut")
    row.get_by_role("button").click()
    expect(page.locator("#answer-view .verdict")).to_contain_text("Cut:")
    answer = lab.questions.by_id(cut.id).answer or ""
    expect(page.locator("#answer-view mark").first).to_be_visible()
    marked = "".join(page.locator("#answer-view mark").all_text_contents())
    assert " ".join(marked.split()) == " ".join(answer.split())
    assert page.locator("#answer-view .edge").count() >= 1
    table.get_by_role(
        "button", name=f"Show the answer to {whole.id} with the chunk edges", exact=True
    ).click()
    holders = lab.indexes.chunk_set(report.key).relevance(lab.questions.by_id(whole.id))
    first_holder = lab.indexes.chunk_set(report.key).chunks[min(holders)].id
    expect(page.locator("#answer-view .verdict")).to_contain_text(f"Held whole by {first_holder}")

    bigger = chunking_report(lab, ChunkingKey("fixed", size + 10, overlap))
    visit.timed(
        "chunking: one slider step, new chunk count",
        lambda: page.locator("#chunk-size").press("ArrowRight"),
        lambda: expect(page.locator("#chunk-count")).to_have_text(str(bigger.n_chunks)),
    )
    expect(page.locator("#progress-count")).to_have_text("1 of 6 explored")
    visit.shot("exhibit-1-chunking", "#chunking")


def test_03_bm25(visit: Visit, lab: Lab) -> None:
    page = visit.page
    expect_bm25_example(page, lab)

    expect(page.locator("#bm25-test")).to_have_text("measured once you commit")
    page.locator("#bm25-map").click()
    grid = bm25_grid(lab, k=5)

    def counted(split: str, settings: RetrievalSettings) -> str:
        ranks = first_ranks(lab, split, settings)
        hits = sum(r is not None and r <= 5 for r in ranks)
        return f"{f3(measure(lab, split, settings)['recall@5'])} ({hits} of {len(ranks)})"

    best = RetrievalSettings("bm25", k1=grid.best_k1, b=grid.best_b)
    expect(page.locator("#bm25-best")).to_have_text(
        f"{counted('train', best)} at k1 = {grid.best_k1:.1f}, b = {grid.best_b:.1f}"
    )
    page.locator("#bm25-use-best").click()
    at = f"at k1 = {grid.best_k1:.2f}, b = {grid.best_b:.2f}"
    expect(page.locator("#bm25-train")).to_have_text(f"{counted('train', best)} {at}")
    expect(page.locator("#bm25-test")).to_have_text("measured once you commit")
    page.locator("#bm25-commit").click()
    # The grid's best cell is the setting the training split chooses: its test figure says so.
    expect(page.locator("#bm25-test")).to_have_text(f"{counted('test', best)} {at} chosen on train")

    j = grid.bs.index(grid.best_b)
    key, nj = ("ArrowLeft", j - 1) if j > 0 else ("ArrowRight", j + 1)
    b = grid.bs[nj]
    moved = RetrievalSettings("bm25", k1=grid.best_k1, b=b)
    heatmap = page.locator("#bm25-heatmap svg")
    heatmap.focus()
    visit.timed(
        "BM25: arrow key on the grid, new training recall",
        lambda: heatmap.press(key),
        lambda: expect(page.locator("#bm25-train")).to_have_text(
            f"{counted('train', moved)} at k1 = {grid.best_k1:.2f}, b = {b:.2f}"
        ),
    )
    expect(page.locator("#bm25-b-out")).to_have_text(f"{b:.2f}")
    # Committed once: moving on changes the training number only.
    expect(page.locator("#bm25-test")).to_have_text(f"{counted('test', best)} {at} chosen on train")
    visit.shot("exhibit-2-bm25", "#bm25")


def test_04_lsa(visit: Visit, lab: Lab) -> None:
    page = visit.page
    expect_lsa_exhibit(page, lab)
    visit.shot("exhibit-3-lsa", "#lsa")


def _row(page: Page, ranker: str) -> list[str]:
    return page.locator(f"#fusion-table tr[data-ranker={ranker}] td").all_text_contents()


def test_05_fusion(open_visit: Opener, meta: dict[str, Any], lab: Lab) -> None:
    """From a reader who has explored the three exhibits before fusion."""
    visit = open_visit(saved_progress(meta, EXHIBITS[:3]))
    page = visit.page
    expect(page.locator("#progress-count")).to_have_text("3 of 6 explored")
    chosen = choose_weight(lab)
    table = ranker_table(lab, weight=chosen)
    expect(page.locator("#fusion-caption")).to_contain_text(f"w = {chosen:.2f}")
    for ranker, metrics in table.items():
        assert _row(page, ranker) == [f3(metrics[m]) for m in METRICS], ranker
    step = 0.05
    target = round(chosen + 2 * step, 2) if chosen <= 0.9 else round(chosen - 2 * step, 2)
    # The slider moves the training figures; the test table stays at the weight chosen on train.
    other = ranker_table(lab, split="train", weight=target)
    visit.timed(
        "fusion: move the weight, new table",
        lambda: slide_to(page, "#fusion-weight", target, 0.0, step),
        lambda: expect(page.locator("#fusion-train-caption")).to_contain_text(f"w = {target:.2f}"),
    )
    train_score = page.locator("#fusion-train-table tr[data-ranker=score] td")
    expect(train_score.nth(2)).to_have_text(f3(other["score"]["recall@5"]))
    assert train_score.all_text_contents() == [f3(other["score"][m]) for m in METRICS]
    assert _row(page, "score") == [f3(table["score"][m]) for m in METRICS]

    ranks = {
        name: first_ranks(lab, "test", s)
        for name, s in (
            ("bm25", RetrievalSettings("bm25")),
            ("lsa", RetrievalSettings("lsa")),
            ("fusion", RetrievalSettings("score", weight=target)),
        )
    }
    found = {name: sum(r is not None and r <= 5 for r in rs) for name, rs in ranks.items()}
    n = len(lab.split("test", answerable=True))
    expect(page.locator("#fusion-summary")).to_have_text(
        f"Within the first 5: BM25 finds {found['bm25']}, the embedding {found['lsa']} "
        f"and your fusion {found['fusion']} (test, not chosen on train, w = {target:.2f}) "
        f"of {n} answerable questions."
    )
    assert page.locator("#fusion-grid .square").count() == len(lab.split("test"))
    lit = page.locator("#fusion-grid .dot.fusion.on").count()
    assert lit == found["fusion"]
    qid = lab.split("test", answerable=True)[0].id
    page.locator(f"#fusion-grid .square[data-id='{qid}']").click()
    expect(page.locator("#fusion-lists .ranked")).to_have_count(3)
    expect(page.locator("#progress-count")).to_have_text("4 of 6 explored")
    visit.shot("exhibit-4-fusion", "#fusion")


def test_06_reranker(visit: Visit, lab: Lab) -> None:
    page = visit.page
    reranker = train_reranker(lab, RetrievalSettings())
    chosen = choose_lambda(lab, reranker)
    page.locator("#rerank-train").click()
    expect(page.locator("#rerank-summary")).to_contain_text(f"{reranker.rows:,} candidate rows")
    expect(page.locator("#rerank-weights svg rect.bar")).to_have_count(len(reranker.weights))
    reranked = measure_order(lab, "test", reranker, "reranked", chosen)
    cells = page.locator("#rerank-table tr[data-split=test][data-order=reranked] td")
    expect(cells.nth(1)).to_have_text(f3(reranked["top1"]))
    assert cells.all_text_contents()[1:] == [
        f3(reranked[m]) for m in ("top1", "p@3", "recall@5", "mrr")
    ]
    target = round(chosen - 0.1, 2) if chosen >= 0.1 else round(chosen + 0.1, 2)
    mmr = measure_order(lab, "train", reranker, "reranked + MMR", target)
    slide_to(page, "#rerank-lambda", target, 0.0, 0.05)
    expect(page.locator("#version-demo .ranked h4").nth(1)).to_have_text(
        f"After MMR at λ = {target:.2f}, top 3"
    )
    # The slider moves the training rows; the test rows stay at the λ chosen on train.
    mmr_cells = page.locator("#rerank-table tr[data-split=train][data-order='reranked + MMR'] td")
    expect(mmr_cells.first).to_have_text(f"reranked + MMR (λ = {target:.2f})")
    assert mmr_cells.all_text_contents()[1:] == [
        f3(mmr[m]) for m in ("top1", "p@3", "recall@5", "mrr")
    ]
    tested = measure_order(lab, "test", reranker, "reranked + MMR", chosen)
    test_cells = page.locator("#rerank-table tr[data-split=test][data-order='reranked + MMR'] td")
    assert test_cells.all_text_contents() == [
        f"reranked + MMR (λ = {chosen:.2f}, chosen on train)",
        *(f3(tested[m]) for m in ("top1", "p@3", "recall@5", "mrr")),
    ]
    demo = version_demo(lab, reranker, target)
    if demo["question"] is not None:
        leaves = demo["leaves_at"]
        verdict = page.locator("#version-verdict")
        if leaves is None:
            expect(verdict).to_contain_text("no λ on the grid")
        else:
            expect(verdict).to_contain_text(f"at or below {leaves:.2f}")
        stale = page.locator("#version-demo .ranked").nth(1).locator(".badge.bad").count()
        assert stale == len(demo["superseded_mmr"])
    visit.shot("exhibit-5-reranker", "#rerank")


def test_07_end_to_end(open_visit: Opener, meta: dict[str, Any], lab: Lab) -> None:
    """From a reader who has explored every exhibit before this one and kept no run."""
    visit = open_visit(saved_progress(meta, EXHIBITS[:5]))
    page = visit.page
    expect(page.locator("#progress-count")).to_have_text("5 of 6 explored")
    expect(page.locator("#runs-table tbody tr")).to_have_count(0)
    default = run_pipeline(lab, RunSettings())
    visit.timed(
        "end to end: run the default settings",
        lambda: page.locator("#run-button").click(),
        lambda: expect(page.locator("#run-accuracy")).to_have_text(
            f"{default.correct} of {default.n} = {f3(default.accuracy)}"
        ),
    )
    lo, hi = wilson_interval(default.correct, default.n, z=1.959963984540054)
    expect(page.locator("#run-interval")).to_have_text(f"{f3(lo)} to {f3(hi)}")
    expect(page.locator("#run-bound")).to_contain_text(f3(default.bound))
    expect(page.locator("#run-table tbody tr")).to_have_count(default.n)
    wrong = sum(o.outcome != "correct" for o in default.outcomes)
    assert page.locator("#run-table tbody tr.wrong").count() == wrong

    page.locator("#run-rerank").uncheck()
    expect(page.locator("#run-mmr")).to_be_disabled()
    page.locator("#run-button").click()
    expect(page.locator("#runs-table tbody tr")).to_have_count(2)
    plain = run_pipeline(lab, RunSettings(rerank=False, mmr=False))
    expect(page.locator("#run-accuracy")).to_have_text(
        f"{plain.correct} of {plain.n} = {f3(plain.accuracy)}"
    )
    page.get_by_role("checkbox", name="Compare run 1").check()
    page.get_by_role("checkbox", name="Compare run 2").check()
    test = mcnemar_exact(outcomes_vector(default), outcomes_vector(plain))
    summary = page.locator("#compare-summary")
    expect(summary).to_contain_text(
        f"Both right on {test.both_right}, only run 1 right on {test.only_a}, "
        f"only run 2 right on {test.only_b}, both wrong on {test.both_wrong}."
    )
    expect(summary).to_contain_text(f"p = {f3(test.p_value)}")
    expect(page.locator("#progress-count")).to_have_text("6 of 6 explored")
    expect(page.locator("#closing")).to_be_visible()
    visit.shot("exhibit-6-end-to-end", "#end-to-end")


@pytest.fixture
def finished(meta: dict[str, Any], server: str, lab: Lab) -> tuple[dict[str, Any], int]:
    """The progress a reader saves by the end of a visit: every exhibit explored, a fixed cut
    made, BM25 committed at the grid's best cell, LSA built, the reranker trained, and two runs
    (the defaults, then without the reranker), each as the server answered it. Also the chunk
    count the saved cut gives (by the library)."""
    size, overlap, _ = _cutting_setting(lab)
    chunks = chunking_report(lab, ChunkingKey("fixed", size + 10, overlap)).n_chunks
    grid = bm25_grid(lab, k=5)
    default = default_request(meta)
    plain = {**default, "rerank": False, "mmr": False, "mmr_lambda": None}
    settings = {
        "chunking": {
            "method": "fixed",
            "sizes": {"fixed": size + 10},
            "overlap": overlap,
            "cut": True,
        },
        "bm25": {
            "k1": grid.best_k1,
            "b": grid.best_b,
            "mapped": True,
            "committed": {"k1": grid.best_k1, "b": grid.best_b, "stem": meta["stem"]},
        },
        "lsa": {"built": True},
        "rerank": {"trained": True},
    }
    runs = [saved_run(server, default, 1), saved_run(server, plain, 2)]
    return saved_progress(meta, EXHIBITS, settings, runs), chunks


def test_08_reload_keeps_progress_settings_and_runs(
    open_visit: Opener, finished: tuple[dict[str, Any], int]
) -> None:
    progress, chunks = finished
    visit = open_visit(progress)
    page = visit.page
    for _ in range(2):  # as opened, then after a reload
        expect(page.locator("#progress-count")).to_have_text("6 of 6 explored")
        expect(page.locator("#closing")).to_be_visible()
        expect(page.locator("#chunk-count")).to_have_text(str(chunks))
        expect(page.locator("#runs-table tbody tr")).to_have_count(2)
        expect(page.locator("#bm25-test")).not_to_have_text("measured once you commit")
        expect(page.locator("#lsa-tools")).to_be_visible()
        expect(page.locator("#rerank-train")).to_be_disabled()
        assert page.locator(".progress-bar a.done").count() == 6
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
    visit.shot("closing-note", "#closing")


def test_09_narrow_screen_and_reset(
    open_visit: Opener, finished: tuple[dict[str, Any], int]
) -> None:
    visit = open_visit(finished[0])
    page = visit.page
    expect(page.locator("#progress-count")).to_have_text("6 of 6 explored")
    expect(page.locator("#runs-table tbody tr")).to_have_count(2)
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(100)
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1
    page.locator("#fusion").scroll_into_view_if_needed()
    page.screenshot(path=str(visit.artifacts / "narrow-screen.png"))
    page.set_viewport_size({"width": 1280, "height": 900})
    reset = page.locator("#reset")
    reset.click()
    expect(reset).to_have_text("Press again to forget everything")
    with page.expect_navigation():
        reset.click()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator("#progress-count")).to_have_text("0 of 6 explored")
    expect(page.locator("#runs-table tbody tr")).to_have_count(0)
    expect(page.locator("#chunk-count")).to_have_text("waiting for a cut")
