"""The Markdown report: every section, the library's numbers in its tables, escaped user text."""

from __future__ import annotations

import copy
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from raglab.labels import RETRIEVER_LABELS, TEST_FIGURE_LABELS
from raglab.pipeline.end_to_end import run_pipeline
from raglab.pipeline.lab import Lab
from raglab.pipeline.report import SECTIONS, build_report
from raglab.pipeline.report_check import validate_report
from raglab.report.markdown import render_markdown
from raglab.report.model import Note, Table
from raglab.report.sections import sections
from raglab.run_settings import RunSettings
from raglab.settings import RETRIEVERS
from tests.pipeline.small_corpus import write_small_lab
from tests.report.labs import page_labelled_lab

WHEN = datetime(2025, 3, 1, 12, 30, 5, tzinfo=UTC)
# A table row's cell separators: pipes not escaped by a backslash.
CELL_PIPE = re.compile(r"(?<!\\)\|")


@pytest.fixture(scope="module")
def report(handbook_lab: Lab) -> dict[str, Any]:
    return build_report(handbook_lab, created=WHEN, settings=RunSettings())


@pytest.fixture(scope="module")
def markdown(report: dict[str, Any]) -> str:
    return render_markdown(report)


def table_rows(markdown: str, caption: str) -> list[list[str]]:
    """The cells of the table under ``**caption**`` (header first, separator dropped)."""
    lines = markdown.splitlines()
    start = lines.index(f"**{caption}**") + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in CELL_PIPE.split(line)[1:-1]]
        if not all(set(c) <= set("-:") for c in cells):
            rows.append(cells)
    return rows


def test_every_section_in_exhibit_order(markdown: str) -> None:
    """Oracle: SECTIONS, after the summary, data and settings."""
    titles = ["Summary", "Data", "Settings", *(title for _, title in SECTIONS)]
    positions = [markdown.index(f"\n## {title}\n") for title in titles]
    assert positions == sorted(positions)
    assert markdown.startswith("# RAG lab report\n")


def test_tables_hold_the_reports_numbers(report: dict[str, Any], markdown: str) -> None:
    """Oracle: the report dict, formatted by hand to three decimals."""
    e2e = report["end_to_end"]
    assert f"{e2e['correct']}/{e2e['n']} = {e2e['accuracy']:.3f}" in markdown
    rankers = table_rows(markdown, "Rankers")
    assert rankers[0][:4] == ["Ranker", "R@1", "R@3", "R@5"]
    bm25 = report["rankers"]["table"]["bm25"]
    assert rankers[1][:4] == [
        "BM25",
        f"{bm25['recall@1']:.3f}",
        f"{bm25['recall@3']:.3f}",
        f"{bm25['recall@5']:.3f}",
    ]
    best = report["bm25"]["best"]
    assert f"[{best['train_recall']:.2f}]" in markdown
    outcomes = {row[0]: row[3] for row in table_rows(markdown, "Every question")[1:]}
    assert outcomes == {o["id"]: o["outcome"] for o in e2e["outcomes"]}
    lsa = table_rows(markdown, "Singular values")
    assert len(lsa) == 1 + report["lsa"]["rank"]


def test_every_table_row_has_its_headers_cells(report: dict[str, Any], markdown: str) -> None:
    """Oracle: the Table objects the rendering is made from."""
    for section in sections(report):
        for part in section.parts:
            if isinstance(part, Table):
                rows = table_rows(markdown, part.caption)
                assert len(rows) == 1 + len(part.rows)
                assert all(len(r) == len(part.header) for r in rows)


def test_deterministic(report: dict[str, Any], markdown: str) -> None:
    """Oracle: the same dict, copied and sent through JSON, renders to the same text."""
    assert render_markdown(copy.deepcopy(report)) == markdown
    assert render_markdown(json.loads(json.dumps(report))) == markdown


def test_no_external_url(report: dict[str, Any], markdown: str) -> None:
    """Oracle: the bundled data holds no URL, so none may appear."""
    assert "http" not in markdown
    assert "](" not in markdown  # no Markdown links or images


def test_user_text_cannot_break_a_table_or_inject_markup(report: dict[str, Any]) -> None:
    """Oracle: the table keeps its seven cells; angle brackets and pipes arrive escaped."""
    tampered = copy.deepcopy(report)
    first = tampered["end_to_end"]["outcomes"][0]
    first["question"] = "a | b <script>x</script>\nnext line"
    text = render_markdown(tampered)
    row = next(r for r in table_rows(text, "Every question") if r[0] == first["id"])
    assert len(row) == 7
    assert row[2] == "a \\| b &lt;script&gt;x&lt;/script&gt; next line"
    assert "<script>" not in text


def test_page_labels_are_said_to_be_unsupported(tmp_path: Path) -> None:
    """Oracle: docs/design.md#page-labels: passage measures say plainly that page labels do not support them."""
    rep = build_report(page_labelled_lab(tmp_path), created=WHEN, settings=RunSettings())
    text = render_markdown(rep)
    assert "Answer-intact rates are not supported" in text
    assert "The end-to-end run is not supported" in text
    assert text.count("labelled by relevant pages") >= 2
    rankers = table_rows(text, "Rankers")
    assert [r[0] for r in rankers[1:]] == [RETRIEVER_LABELS[name] for name in RETRIEVERS]


def test_a_test_figure_not_chosen_on_train_is_labelled(
    report: dict[str, Any], markdown: str
) -> None:
    """design.md, "Test figures": the held-out recall at the defaults (a setting the grid did not
    choose) carries the label; the one at the grid's best cell says it was chosen on train.
    Oracle: the report dict's own cells and the two labels."""
    sec = report["bm25"]
    assert sec["split"] != sec["tuned_on"]
    assert (sec["default"]["k1"], sec["default"]["b"]) != (sec["best"]["k1"], sec["best"]["b"])
    rows = {row[0]: row for row in table_rows(markdown, f"Recall@{sec['k']}")[1:]}
    assert rows["defaults"][4].endswith(f"({TEST_FIGURE_LABELS[False]})")
    assert rows["best on the grid"][4].endswith(f"({TEST_FIGURE_LABELS[True]})")


def test_a_value_tuned_on_few_questions_is_noted_with_its_count(
    tmp_path: Path, markdown: str
) -> None:
    """Issue #30. Oracle: the library's run on the small lab (three training questions, counted
    by hand in tests/pipeline/small_corpus.py): the report holds its tuning notes, passes its
    own schema, and shows each warned note's sentence as a note, in the end-to-end section and
    for the lambda in the reranker section; the handbook's default report
    (50 training questions, nothing on an edge) shows none."""
    lab = write_small_lab(tmp_path)
    rep = build_report(lab, created=WHEN, settings=RunSettings())
    result = run_pipeline(lab, RunSettings())
    assert rep["end_to_end"]["tuning"] == [note.to_dict() for note in result.tuning]
    assert validate_report(json.loads(json.dumps(rep))) == []
    sentences = [note.sentence for note in result.tuning if note.sentence]
    assert sentences and "3 training questions, fewer than 30" in sentences[-1]
    text = render_markdown(rep)
    for sentence in sentences:
        assert f"> **Note.** {sentence}" in text.splitlines()
    # The reranker section's lambda, chosen on the two answerable training questions (t1, t2).
    [lam] = rep["reranker"]["tuning"]
    assert (lam["name"], lam["value"], lam["questions"]) == (
        "mmr_lambda",
        rep["reranker"]["chosen_lambda"],
        2,
    )
    assert "few questions" in lam["warnings"]
    [reranker] = [sec for sec in sections(rep) if sec.key == "reranker"]
    assert Note(lam["sentence"]) in reranker.parts
    assert f"> **Note.** {lam['sentence']}" in text.splitlines()
    assert "treat it with caution" not in markdown
