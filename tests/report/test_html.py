"""The HTML report: one self-contained page, every section, charts drawn as inline SVG."""

from __future__ import annotations

import copy
import json
import re
from datetime import UTC, datetime
from html import escape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from raglab.pipeline.end_to_end import run_pipeline
from raglab.pipeline.lab import Lab
from raglab.pipeline.report import SECTIONS, build_report
from raglab.report.html import funnel_svg, heatmap_svg, render_html, singular_values_svg
from raglab.run_settings import RunSettings
from tests.pipeline.small_corpus import write_small_lab
from tests.report.labs import page_labelled_lab

WHEN = datetime(2025, 3, 1, 12, 30, 5, tzinfo=UTC)
VOID = {"meta", "br", "img", "input", "link", "hr", "area", "base", "col", "wbr"}


@pytest.fixture(scope="module")
def report(handbook_lab: Lab) -> dict[str, Any]:
    return build_report(handbook_lab, created=WHEN, settings=RunSettings())


@pytest.fixture(scope="module")
def page(report: dict[str, Any]) -> str:
    return render_html(report)


class Structure(HTMLParser):
    """Checks that every element opened is closed in order, and records ids, hrefs and tags."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.tags: dict[str, int] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._attrs(tag, attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._attrs(tag, attrs)

    def _attrs(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for name, value in attrs:
            if name == "id" and value is not None:
                self.ids.append(value)
            if name in ("href", "src", "xlink:href") and value is not None:
                self.hrefs.append(value)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def parse(page: str) -> Structure:
    parser = Structure()
    parser.feed(page)
    parser.close()
    return parser


def user_text(report: dict[str, Any]) -> list[str]:
    """Every string in the report that came from the user's files, as the page escapes it."""
    found = [report["data"]["corpus"], report["data"]["questions"]]
    for o in report["end_to_end"].get("outcomes", []):
        found += [o["question"], o["quote"] or "", o["kind"], o["id"]]
    return [escape(s, quote=True) for s in found if s]


# --- the page -----------------------------------------------------------------------------------


def test_every_section_in_order(page: str) -> None:
    """Oracle: SECTIONS; each is a <section> with its id and title, in exhibit order."""
    keys = ["summary", "data", "settings", *(key for key, _ in SECTIONS)]
    positions = [page.index(f'<section id="{key}">') for key in keys]
    assert positions == sorted(positions)
    for _, title in SECTIONS:
        assert f"<h2>{escape(title)}</h2>" in page


def test_well_formed_with_working_anchors(page: str) -> None:
    """Oracle: an HTML parser; every element closes in order and every link is in-page."""
    s = parse(page)
    assert s.errors == [] and s.stack == []
    assert s.hrefs and all(h.startswith("#") for h in s.hrefs)
    assert {h[1:] for h in s.hrefs} <= set(s.ids)


def test_self_contained(report: dict[str, Any], page: str) -> None:
    """Oracle: nothing fetched or run: no scripts, sources, style sheets, imports or URLs."""
    s = parse(page)
    for tag in ("script", "link", "img", "iframe", "object", "embed"):
        assert tag not in s.tags
    lowered = page.lower()
    for needle in ("<script", "src=", "@import", "url(", "//cdn", "javascript:"):
        assert needle not in lowered
    stripped = page
    for text in sorted(user_text(report), key=len, reverse=True):
        stripped = stripped.replace(text, "")
    assert "http" not in stripped
    assert s.tags["style"] == 1


def test_three_charts(report: dict[str, Any], page: str) -> None:
    """Oracle: the report's sizes: one funnel bar per stage, 16 x 11 grid cells plus the
    outline of the best, one bar per singular value."""
    svgs = re.findall(r"<svg.*?</svg>", page, flags=re.S)
    assert len(svgs) == 3
    heat = next(s for s in svgs if "k1 and b" in s)
    bars = next(s for s in svgs if "Singular values" in s)
    funnel = next(s for s in svgs if "Funnel" in s)
    grid = report["bm25"]
    assert heat.count("<rect") == len(grid["k1s"]) * len(grid["bs"]) + 1
    assert heat.count('class="best"') == 1
    assert bars.count('class="bar"') == report["lsa"]["rank"]
    stages = report["end_to_end"]["stages"]
    assert funnel.count('class="bar"') == len(stages)
    assert funnel.count('class="lost"') == sum(st["lost"] > 0 for st in stages)


def test_deterministic(report: dict[str, Any], page: str) -> None:
    """Oracle: the same dict, copied and sent through JSON, renders to the same bytes."""
    assert render_html(copy.deepcopy(report)) == page
    assert render_html(json.loads(json.dumps(report))) == page


def test_user_text_is_escaped(report: dict[str, Any]) -> None:
    """Oracle: html.escape of the injected text appears; the raw markup does not."""
    tampered = copy.deepcopy(report)
    tampered["end_to_end"]["outcomes"][0]["question"] = '<script>alert("x")</script>'
    tampered["data"]["corpus"] = "/data/<b>pages</b>"
    text = render_html(tampered)
    assert "<script" not in text and "<b>" not in text
    assert escape('<script>alert("x")</script>', quote=True) in text
    assert parse(text).errors == []


def test_page_labels_are_said_to_be_unsupported(tmp_path: Path) -> None:
    """Oracle: docs/design.md#page-labels; without a run there is no funnel, the other two charts remain."""
    rep = build_report(page_labelled_lab(tmp_path), created=WHEN, settings=RunSettings())
    text = render_html(rep)
    assert text.count('<p class="note">') >= 2
    assert "labelled by relevant pages" in text
    assert text.count("<svg") == 2
    assert parse(text).errors == []


# --- the charts' geometry, worked by hand -------------------------------------------------------


def test_funnel_geometry() -> None:
    """Oracle: by hand. Bars span 680 - 170 - 150 = 360 units for the largest count (10):
    8 left -> 360 * 8/10 = 288.0 wide, 2 lost -> 72.0 wide starting at 170 + 288 = 458.0."""
    svg = funnel_svg(
        [
            {"stage": "answerable", "count": 10, "lost": 0, "loss": None},
            {"stage": "in the first 20", "count": 8, "lost": 2, "loss": "not retrieved"},
        ]
    )
    assert 'class="bar" x="170" y="5" width="360.0"' in svg
    assert 'class="bar" x="170" y="39" width="288.0"' in svg
    assert 'class="lost" x="458.0" y="39" width="72.0"' in svg
    assert "8  (−2 not retrieved)" in svg


def test_heatmap_geometry_and_colours() -> None:
    """Oracle: by hand. Cells are 44 x 22 from (56, 34); the best cell (row 1, column 1) is
    outlined at (56 + 44 + 1, 34 + 22 + 1) = (101, 57). Colours run from #eff6ff at the minimum
    (0.2) to #1d4ed8 at the maximum (0.8); 0.4 sits a third of the way:
    (239 - 210/3, 246 - 168/3, 255 - 39/3) = (169, 190, 242) = #a9bef2."""
    svg = heatmap_svg([0.0, 0.5], [0.0, 1.0], [[0.2, 0.4], [0.6, 0.8]], (0.5, 1.0))
    assert '<rect class="best" x="101" y="57" width="42" height="20"/>' in svg
    assert 'x="56" y="34" width="44" height="22" fill="#eff6ff"' in svg
    assert 'x="100" y="34" width="44" height="22" fill="#a9bef2"' in svg
    assert 'x="100" y="56" width="44" height="22" fill="#1d4ed8"' in svg


def test_singular_value_bars() -> None:
    """Oracle: by hand. Bars are scaled to s_1 over 200 units above a base line at y = 210:
    s = (4, 2, 1) -> heights 200.0, 100.0, 50.0, tops at 10.0, 110.0, 160.0."""
    svg = singular_values_svg([4.0, 2.0, 1.0])
    heights = re.findall(
        r'class="bar" x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)"', svg
    )
    assert heights == [("10.0", "200.0"), ("110.0", "100.0"), ("160.0", "50.0")]


def test_a_value_tuned_on_few_questions_is_noted_with_its_count(tmp_path: Path) -> None:
    """Issue #30. Oracle: the library's run on the small lab (three training questions, counted
    by hand in tests/pipeline/small_corpus.py): each warned tuning note's sentence is a note, the
    reranker section's lambda's too."""
    lab = write_small_lab(tmp_path)
    result = run_pipeline(lab, RunSettings())
    rep = build_report(lab, created=WHEN, settings=RunSettings())
    html = render_html(rep)
    sentences = [note.sentence for note in result.tuning if note.sentence]
    assert sentences and "3 training questions, fewer than 30" in sentences[-1]
    for sentence in sentences:
        assert f'<p class="note">{escape(sentence)}</p>' in html
    # The reranker section's lambda, chosen on the two answerable training questions (t1, t2).
    [lam] = rep["reranker"]["tuning"]
    assert lam["name"] == "mmr_lambda" and lam["questions"] == 2
    assert f'<p class="note">{escape(lam["sentence"])}</p>' in html
