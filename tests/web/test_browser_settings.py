"""The page takes its defaults, bounds and display names from ``/api/meta``, never its own.

Browser tests (marked ``browser``) drive Chromium against the real server, each on a fresh page
(a new context, so no saved progress), independent of order. The oracle is the API: ``/api/meta``
for the controls and names, the ``/api/run`` response for the values a tuned run used. One plain
test reads the exhibits' JavaScript and proves no default or display-name table is typed in.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from raglab.labels import CHUNKER_LABELS, FEATURE_LABELS, RETRIEVER_LABELS

expect.set_options(timeout=15_000)

STATIC = Path(__file__).resolve().parents[2] / "src" / "raglab" / "web" / "static"
# The exhibit VI sliders whose default is "chosen on the training split": the slider's id stem,
# the setting's name and the grid in meta's fixed values the pipeline chooses it on.
TUNED = (("weight", "weight", "fusion_weights"), ("lambda", "mmr_lambda", "mmr_lambdas"))
TUNED += (("threshold", "threshold", "reader_thresholds"),)


def spec(meta: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in meta["settings"] if s["name"] == name)


def attr(page: Page, selector: str, name: str) -> float:
    return float(page.locator(selector).get_attribute(name) or "nan")


def prop(page: Page, selector: str, name: str) -> str:
    return str(page.locator(selector).evaluate(f"(node) => String(node.{name})"))


@pytest.mark.browser
def test_run_controls_take_defaults_bounds_and_choices_from_meta(
    page: Page, meta: dict[str, Any]
) -> None:
    for name in ("chunker", "retriever"):
        s = spec(meta, name)
        select = page.locator(f"#run-{name}")
        values = select.locator("option").evaluate_all("(os) => os.map((o) => o.value)")
        texts = select.locator("option").all_text_contents()
        assert values == s["choices"]
        assert texts == [s["choice_labels"][c] for c in s["choices"]]
        expect(select).to_have_value(s["default"])
    for name in ("size", "overlap"):
        s = spec(meta, name)
        assert s["default"] is None
        expect(page.locator(f"#run-{name}")).to_have_value("")
        assert attr(page, f"#run-{name}", "min") == s["minimum"]
        assert attr(page, f"#run-{name}", "max") == s["maximum"]
    for name in ("rerank", "mmr"):
        assert page.locator(f"#run-{name}").is_checked() is spec(meta, name)["default"]
    # The weight is used by score fusion alone: with another retriever it shows no value.
    assert spec(meta, "retriever")["default"] != "score"
    assert prop(page, "#run-weight-out", "value") == "not used"
    expect(page.locator("#run-weight-tuned")).to_be_hidden()
    page.locator("#run-retriever").select_option("score")
    for key, name, grid in TUNED:
        s = spec(meta, name)
        slider = f"#run-{key}"
        assert attr(page, slider, "min") == s["minimum"]
        assert attr(page, slider, "max") == s["maximum"]
        grid_values = next(f["value"] for f in meta["fixed"] if f["name"] == grid)
        assert attr(page, slider, "step") == pytest.approx(grid_values[1] - grid_values[0])
        assert page.locator(f"{slider}-tuned").is_checked() is s["tuned"] is True
        expect(page.locator(slider)).to_be_disabled()
        # Before any run the value a tuned setting takes is not known: the slider says so.
        assert prop(page, f"{slider}-out", "value") == "tuned"
    budget = spec(meta, "budget")
    expect(page.locator("#run-budget")).to_have_value(str(budget["default"]))
    assert prop(page, "#run-budget-out", "value") == str(budget["default"])
    assert attr(page, "#run-budget", "min") >= budget["minimum"]
    assert attr(page, "#run-budget", "max") <= budget["maximum"]


@pytest.mark.browser
def test_fusion_and_rerank_show_the_display_names_of_meta(page: Page, meta: dict[str, Any]) -> None:
    names = meta["labels"]["retrievers"]
    rows = page.locator("#fusion-table tbody tr")
    expect(rows).to_have_count(len(names))
    for ranker, label in names.items():
        cell = page.locator(f"#fusion-table tr[data-ranker={ranker}] th")
        if ranker in ("score", "neural-score"):
            expect(cell).to_contain_text(re.compile(rf"^{re.escape(label)} \(w = \d\.\d\d\)$"))
        else:
            expect(cell).to_have_text(label)
    weight = spec(meta, "weight")
    assert attr(page, "#fusion-weight", "min") == weight["minimum"]
    assert attr(page, "#fusion-weight", "max") == weight["maximum"]

    with page.expect_response(lambda r: "/api/rerank/train" in r.url) as answer:
        page.locator("#rerank-train").click()
    features = answer.value.json()["features"]
    ticks = page.locator("#rerank-weights svg text.tick")
    expect(ticks).to_have_count(len(features))
    assert ticks.all_text_contents() == [meta["labels"]["features"][f] for f in features]
    lam = spec(meta, "mmr_lambda")
    assert attr(page, "#rerank-lambda", "min") == lam["minimum"]
    assert attr(page, "#rerank-lambda", "max") == lam["maximum"]


@pytest.mark.browser
def test_the_texts_numbers_come_from_the_settings_table(page: Page, meta: dict[str, Any]) -> None:
    """Every number the text states (RRF's k in prose and MathML, the fusion depth, BM25's
    defaults, LSA's shape) is /api/meta's: the HTML holds none of them (test_defaults.py)."""
    values = {f["name"]: f["value"] for f in meta["fixed"]}
    values |= {s["name"]: s["default"] for s in meta["settings"]}
    nodes = page.locator("[data-meta]")
    assert nodes.count() > 20
    for name, text in nodes.evaluate_all("(ns) => ns.map((n) => [n.dataset.meta, n.textContent])"):
        if name in values:
            assert text == str(values[name]).replace("True", "true"), name
    k = values["rrf_k"]
    expect(page.locator('mn[data-meta="rrf_k"]')).to_have_text(str(k))
    expect(page.locator('[data-meta="rrf_k_plus_2"]').first).to_have_text(str(k + 2))
    expect(page.locator('[data-meta="rrf_both_second"]')).to_have_text(f"{2 / (k + 2):.3f}")
    expect(page.locator('[data-meta="fusion_depth"]').first).to_have_text(
        str(spec(meta, "fusion_depth")["default"])
    )


@pytest.mark.browser
def test_tuned_sliders_show_what_the_run_used(page: Page, meta: dict[str, Any]) -> None:
    page.locator("#run-retriever").select_option("score")
    expect(page.locator("#run-weight-tuned")).to_be_enabled()
    for key, _, _ in TUNED:
        assert page.locator(f"#run-{key}-tuned").is_checked()
        assert prop(page, f"#run-{key}-out", "value") == "tuned"
    with page.expect_response("**/api/run") as answer:
        page.locator("#run-button").click()
    result = answer.value.json()
    expect(page.locator("#run-accuracy")).to_have_text(
        f"{result['correct']} of {result['n']} = {result['accuracy']:.3f}"
    )
    used = result["settings"]
    chosen = result["chosen_on_train"]
    assert set(chosen) == {name for _, name, _ in TUNED}  # the fusion weight included
    for key, name, _ in TUNED:
        slider = page.locator(f"#run-{key}")
        expect(slider).to_be_disabled()
        assert prop(page, f"#run-{key}-out", "value") == f"{used[name]:.2f}"
        assert float(slider.input_value()) == pytest.approx(used[name])
    line = page.locator("#run-used")
    for name in chosen:
        s = spec(meta, name)
        expect(line).to_contain_text(f"{s['label']} {used[name]:.2f} (tuned on train)")
    expect(line).to_contain_text("; run 1")

    # Once the form asks for another run, the value that run will use is not known yet.
    budget = page.locator("#run-budget")
    budget.focus()
    budget.press("ArrowRight")
    for key, _, _ in TUNED:
        assert prop(page, f"#run-{key}-out", "value") == "tuned"
    # Unticked, a slider starts from the value the shown run chose and says its own number.
    budget.press("ArrowLeft")
    assert prop(page, "#run-threshold-out", "value") == f"{used['threshold']:.2f}"
    page.locator("#run-threshold-tuned").uncheck()
    expect(page.locator("#run-threshold")).to_be_enabled()
    assert prop(page, "#run-threshold-out", "value") == f"{used['threshold']:.2f}"


@pytest.mark.browser
def test_a_weight_not_used_says_so_and_is_not_listed(page: Page, meta: dict[str, Any]) -> None:
    assert spec(meta, "retriever")["default"] != "score"
    with page.expect_response("**/api/run") as answer:
        page.locator("#run-button").click()
    result = answer.value.json()
    expect(page.locator("#run-accuracy")).not_to_have_text("no run yet")
    assert "weight" not in result["chosen_on_train"]
    assert prop(page, "#run-weight-out", "value") == "not used"
    expect(page.locator("#run-weight")).to_be_hidden()
    line = page.locator("#run-used")
    expect(line).not_to_contain_text(spec(meta, "weight")["label"])
    for name in result["chosen_on_train"]:
        value = result["settings"][name]
        expect(line).to_contain_text(f"{spec(meta, name)['label']} {value:.2f} (tuned on train)")


def _source(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


def test_exhibits_type_in_no_defaults_and_no_display_names() -> None:
    e2e = _source("end_to_end.js")
    # The old typed-in defaults of the tuned sliders, in any spacing.
    for key in ("weight", "lambda", "threshold", "budget"):
        assert not re.search(rf"\b{key}\s*:\s*\d", e2e), key
    assert not re.search(r"\bchunker\s*:\s*[\"']", e2e)
    assert not re.search(r"\bretriever\s*:\s*meta\.defaults", e2e)
    for name in ("end_to_end.js", "fusion.js", "rerank.js"):
        text = _source(name)
        # No table of display names: none of the API's labels appears as a string literal.
        for label in {
            *RETRIEVER_LABELS.values(),
            *FEATURE_LABELS.values(),
            *CHUNKER_LABELS.values(),
        }:
            for quote in ('"', "'"):
                assert f"{quote}{label}{quote}" not in text, (name, label)
        # Nor an object literal of names (the old NAMES, FEATURE_NAMES, RETRIEVERS, CHUNKERS).
        table = re.search(r"\b(NAMES|FEATURE_NAMES|RETRIEVERS|CHUNKERS)\s*=\s*\{", text)
        assert table is None, (name, table)
    assert '"Score fusion"' not in _source("fusion.js")
    assert "weight: 0.5" not in e2e and "threshold: 0.3" not in e2e
    # Each exhibit reads its names from meta.labels.
    assert "meta.labels.retrievers" in _source("fusion.js")
    assert "meta.labels.features" in _source("rerank.js")
    assert "meta.labels" in e2e and "settingOf(meta" in e2e
