"""Exhibit VI in the browser with the neural reader: the cosine choice from /api/meta, its run's
funnel split by question kind, the runs table naming each run's reader and its right answers by
kind, and each miss naming the cosine.

Browser tests (marked ``browser``): Chromium against the real server, each on a fresh page.
Oracles: the library's run (``run_pipeline``) and its funnel (``funnel``) on a lab of its own,
with the page's names for the diagnoses written out here; and the server's own ``POST /api/run``
answer for the same settings.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from raglab.pipeline.end_to_end import run_pipeline
from raglab.pipeline.exhibits.end_to_end import funnel
from raglab.pipeline.lab import Lab
from raglab.run_settings import RunSettings
from tests.web.pages import LAPTOP, STAGE_NAMES, Opener

expect.set_options(timeout=60_000)


@pytest.mark.browser
def test_the_cosine_reader_shows_where_each_kind_of_answer_goes(
    open_page: Opener, meta: dict[str, Any], lab: Lab
) -> None:
    spec = next(s for s in meta["settings"] if s["name"] == "reader_scoring")
    label = spec["choice_labels"]["cosine"]
    result = run_pipeline(lab, RunSettings(retriever="neural-rrf", reader_scoring="cosine"))
    page = open_page(LAPTOP)
    page.locator("#run-retriever").select_option("neural-rrf")
    page.locator("#run-reader-scoring").select_option("cosine")
    page.locator("#run-button").click()
    expect(page.locator("#runs-table tbody tr")).to_have_count(1)
    row = page.locator("#runs-table tbody tr").last
    expect(row).to_contain_text(label)
    expect(row).to_contain_text(f"{result.correct} of {result.n}")
    caption = page.locator("#run-funnel-caption")
    for k in funnel(result)["kinds"]:
        lost = [f"{STAGE_NAMES[d]} {c}" for d, c in k["lost"].items() if c]
        expect(caption).to_contain_text(
            ", ".join([f"{k['kind']} {k['correct']} of {k['n']}", *lost])
        )
    paraphrase = next(k for k in funnel(result)["kinds"] if k["kind"] == "paraphrase")
    assert paraphrase["n"] == 7  # the handbook's paraphrases on the test split


def posted_run(page: Page) -> tuple[dict[str, Any], dict[str, Any]]:
    """Press Run; return the request the page posted and the answer it drew."""
    before = page.locator("#runs-table tbody tr").count()
    with page.expect_response("**/api/run") as answer:
        page.locator("#run-button").click()
    expect(page.locator("#runs-table tbody tr")).to_have_count(before + 1)
    request: dict[str, Any] = answer.value.request.post_data_json
    result: dict[str, Any] = answer.value.json()
    return request, result


@pytest.mark.browser
def test_the_runs_table_gives_each_runs_reader_and_right_answers_by_kind(
    open_page: Opener, meta: dict[str, Any], server: str
) -> None:
    """Issue #29, 13: runs with the three reader scorings side by side, each with its right
    answers per question kind, equal to POST /api/run's for the same settings."""
    spec = next(s for s in meta["settings"] if s["name"] == "reader_scoring")
    page = open_page(LAPTOP)
    requests = []
    for scoring in spec["choices"]:
        page.locator("#run-reader-scoring").select_option(scoring)
        requests.append(posted_run(page)[0])
    rows = page.locator("#runs-table tbody tr")
    expect(rows).to_have_count(len(spec["choices"]))
    answers = [httpx.post(f"{server}/api/run", json=r, timeout=300).json() for r in requests]
    kinds = [k["kind"] for k in answers[0]["stages"]["kinds"]]
    assert "paraphrase" in kinds and "identifier" in kinds
    # One column per kind the runs met, named as the API names it, under "Right by kind".
    table = page.locator("#runs-table")
    expect(table.locator("thead")).to_contain_text("Right by kind")
    expect(table.locator("thead th[data-kind]")).to_have_text(kinds)
    for row, scoring, answer in zip(rows.all(), spec["choices"], answers, strict=True):
        assert answer["settings"]["reader_scoring"] == scoring
        expect(row.locator("td[data-reader]")).to_have_text(spec["choice_labels"][scoring])
        by_kind = {k["kind"]: f"{k['correct']} of {k['n']}" for k in answer["stages"]["kinds"]}
        expect(row.locator("td[data-kind]")).to_have_text([by_kind[k] for k in kinds])
    # The paraphrase gain shows in its column: the cosine reader quotes paraphrases the plain
    # coverage cannot.
    right = [
        next(k["correct"] for k in a["stages"]["kinds"] if k["kind"] == "paraphrase")
        for a in answers
    ]
    assert right[spec["choices"].index("cosine")] > right[spec["choices"].index("coverage")]


@pytest.mark.browser
def test_a_run_saved_before_the_kinds_shows_dashes(open_page: Opener, meta: dict[str, Any]) -> None:
    """A run saved by an older page (no reader scoring, no counts by kind) still shows, with
    the default reader and "—" where its counts by kind would be."""
    spec = next(s for s in meta["settings"] if s["name"] == "reader_scoring")
    page = open_page(LAPTOP)
    old = {
        "request": {
            "chunker": "heading",
            "size": None,
            "overlap": None,
            "retriever": "rrf",
            "weight": None,
            "rerank": True,
            "mmr": True,
            "mmr_lambda": None,
            "budget": 400,
            "threshold": None,
        },
        "correct": 20,
        "n": 30,
        "accuracy": 20 / 30,
        "interval": [0.5, 0.8],
        "number": 1,
    }
    progress = {
        "fingerprint": meta["fingerprint"],
        "explored": {},
        "settings": {},
        "runs": [old],
        "nextRun": 2,
    }
    page.evaluate("(p) => localStorage.setItem('raglab.progress.v1', JSON.stringify(p))", progress)
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    row = page.locator("#runs-table tbody tr").first
    expect(row).to_contain_text("20 of 30")
    expect(row.locator("td[data-reader]")).to_have_text(spec["choice_labels"][spec["default"]])
    expect(row.locator("td[data-kind]")).to_have_text(["—"])
    # A new run brings its kinds; the old run shows "—" under each of them.
    _, result = posted_run(page)
    kinds = [k["kind"] for k in result["stages"]["kinds"]]
    expect(page.locator("#runs-table thead th[data-kind]")).to_have_text(kinds)
    expect(row.locator("td[data-kind]")).to_have_text(["—"] * len(kinds))
    new = page.locator("#runs-table tbody tr").last
    expect(new.locator("td[data-kind]")).to_have_text(
        [f"{k['correct']} of {k['n']}" for k in result["stages"]["kinds"]]
    )


@pytest.mark.browser
def test_a_miss_names_the_cosine_and_its_score(open_page: Opener, meta: dict[str, Any]) -> None:
    """Issue #29, 13: a miss under the cosine reader gives the cosine, not a coverage."""
    spec = next(s for s in meta["settings"] if s["name"] == "reader_scoring")
    label = spec["choice_labels"]["cosine"]
    page = open_page(LAPTOP)
    page.locator("#run-reader-scoring").select_option("cosine")
    _, result = posted_run(page)
    misses = [o for o in result["outcomes"] if o["outcome"] != "correct"]
    assert any(o["quote"] is None for o in misses) and any(o["quote"] for o in misses)
    for o in misses:
        note = page.locator(f"#run-misses .miss[data-miss='{o['id']}'] .miss-quote p.small")
        score = f"{o['coverage']:.2f}"
        if o["quote"]:
            expect(note).to_contain_text(f"The reader's quote ({label} {score}, ")
        else:
            expect(note).to_contain_text(
                f"Best {label} {score}, below the threshold {result['threshold']:.2f}"
            )
        expect(note).not_to_contain_text("coverage")
