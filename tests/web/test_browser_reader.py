"""Exhibit VI in the browser with the neural reader: the cosine choice from /api/meta, its run's
funnel split by question kind, and the runs table naming each run's reader.

Browser test (marked ``browser``): Chromium against the real server, on a fresh page. Oracle: the
library's run (``run_pipeline``) and its funnel (``funnel``) on a lab of its own, with the page's
names for the diagnoses written out here.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from raglab.pipeline.end_to_end import run_pipeline
from raglab.pipeline.exhibits.end_to_end import funnel
from raglab.pipeline.lab import Lab
from raglab.run_settings import RunSettings
from tests.web.pages import LAPTOP, Opener

expect.set_options(timeout=60_000)

STAGE_NAMES = {
    "cut": "cut by the chunker",
    "not retrieved": "not retrieved",
    "past budget": "ranked past the budget",
    "reader": "missed by the reader",
    "false answer": "answered when it should not",
}


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
