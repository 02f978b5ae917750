"""The report: every exhibit's numbers as the library computes them, reproducible, fingerprinted."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import raglab
from raglab.base.sentinels import TUNED
from raglab.corpus.pages import bundled_handbook_dir
from raglab.metrics.stats import mcnemar_exact
from raglab.pipeline.chunking_report import chunking_report
from raglab.pipeline.end_to_end import outcomes_vector, run_pipeline
from raglab.pipeline.exhibits.end_to_end import funnel
from raglab.pipeline.exhibits.lsa import lsa_spectrum
from raglab.pipeline.exhibits.rerank import rerank_rows
from raglab.pipeline.fingerprint import data_digests, fingerprint
from raglab.pipeline.gate import RECALL_K, compare_reports
from raglab.pipeline.grid import bm25_grid
from raglab.pipeline.lab import Lab
from raglab.pipeline.record import run_settings_from, settings_record
from raglab.pipeline.report import SECTIONS, build_report, headline
from raglab.pipeline.report_check import REPORT_FORMAT, validate_report
from raglab.pipeline.reranking import choose_lambda, train_reranker
from raglab.pipeline.retrieval import choose_weight, first_ranks, measure, ranker_table
from raglab.run_settings import ChunkingKey, RetrievalSettings, RunSettings
from raglab.settings import CHUNK_SIZES, FIXED_OVERLAP, RETRIEVERS, default

WHEN = datetime(2025, 3, 1, 12, 30, 5, tzinfo=UTC)
SMALL_BUDGET = 50  # words: a context that holds one or two heading chunks at most


@pytest.fixture(scope="module")
def report(lab: Lab) -> dict[str, Any]:
    return build_report(lab, created=WHEN, settings=RunSettings())


@pytest.fixture(scope="module")
def small_budget_report(lab: Lab) -> dict[str, Any]:
    return build_report(lab, RunSettings(budget=SMALL_BUDGET), created=WHEN)


PAGES = {
    "mounts": "# Mounts\n\nThe EQ5 mount carries a payload of 15 kg including the tube. Tracking "
    "stops when the supply falls below 11 volts.\n\n## Balance\n\nBalance the tube before "
    "tracking.\n",
    "returns": "# Returns\n\nA return needs an RMA number issued by support. Unopened goods may "
    "come back within 45 days of delivery.\n",
    "levels": "# Levels\n\nThe AL-32 level has 32x magnification and an accuracy of 1.0 mm per "
    "km.\n\n## Care\n\nWipe the lens with a soft cloth.\n",
    "tripods": "# Tripods\n\nFellside tripods carry 20 kg and fold to 70 cm for transport.\n",
}
PAGE_QUESTIONS = [
    ("p1", "train", "What payload does the EQ5 mount carry?", ["mounts"]),
    ("p2", "train", "How long do unopened goods have to come back?", ["returns"]),
    ("p3", "train", "What magnification has the AL-32 level?", ["levels"]),
    ("p4", "train", "How far do Fellside tripods fold?", ["tripods"]),
    ("p5", "test", "What voltage stops tracking on the mount?", ["mounts"]),
    ("p6", "test", "How do I clean the level lens?", ["levels"]),
]


def write_page_labelled(folder: Path) -> Lab:
    """A four-page corpus whose questions name relevant pages (BEIR style), never passages."""
    pages = folder / "pages"
    pages.mkdir()
    for name, text in PAGES.items():
        (pages / f"{name}.md").write_text(text, encoding="utf-8")
    rows = [
        {"id": i, "split": s, "kind": "beir", "question": q, "pages": p}
        for i, s, q, p in PAGE_QUESTIONS
    ]
    questions = folder / "questions.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return Lab.load(pages, questions)


# --- the numbers are the library's --------------------------------------------------------------


def test_sections_and_identity(report: dict[str, Any]) -> None:
    """Oracle: the layout promised by the module docstring."""
    assert report["format"] == REPORT_FORMAT
    assert report["version"] == raglab.__version__
    assert [key for key, _ in SECTIONS] == [
        "chunking",
        "bm25",
        "lsa",
        "rankers",
        "reranker",
        "end_to_end",
    ]
    for key, _ in SECTIONS:
        assert key in report
    assert validate_report(report) == []


def test_end_to_end_equals_the_library_run(lab: Lab, report: dict[str, Any]) -> None:
    """Oracle: raglab.pipeline.end_to_end.run and exhibits.funnel on the same lab."""
    result = run_pipeline(lab, RunSettings())
    e2e = report["end_to_end"]
    assert e2e["supported"] is True
    assert (e2e["accuracy"], e2e["correct"], e2e["n"]) == (
        result.accuracy,
        result.correct,
        result.n,
    )
    assert e2e["interval"] == list(result.interval)
    assert e2e["bound"] == result.bound
    assert e2e["funnel"] == result.funnel
    assert e2e["stages"] == funnel(result)["stages"]
    assert [
        (o["id"], o["outcome"], o["rank"], o["k_budget"], o["quote"]) for o in e2e["outcomes"]
    ] == [(o.id, o.outcome, o.rank, o.k_budget, o.quote) for o in result.outcomes]
    # The bundled test split: 30 questions, 26 answerable (docs/design.md#bundled-data).
    assert e2e["n"] == 30 and e2e["answerable"] == 26


def test_settings_are_resolved(lab: Lab, report: dict[str, Any]) -> None:
    """Oracle: the run's chosen threshold and lambda; the heading chunker's cap from settings.CHUNK_SIZES."""
    result = run_pipeline(lab, RunSettings())
    s = report["settings"]
    assert s["threshold"] == result.threshold
    assert s["mmr_lambda"] == result.mmr_lambda
    assert (s["chunker"], s["size"], s["overlap"]) == ("heading", CHUNK_SIZES["heading"], None)
    assert s["chosen_on_train"] == ["mmr_lambda", "threshold"]
    assert (s["budget"], s["split"], s["stem"]) == (default("budget"), "test", False)


def test_bm25_grid_equals_the_library(lab: Lab, report: dict[str, Any]) -> None:
    """Oracle: bm25_grid and measure (the same functions ``raglab bm25 grid`` prints)."""
    grid = bm25_grid(lab, k=5)
    sec = report["bm25"]
    assert (sec["best"]["k1"], sec["best"]["b"], sec["best"]["train_recall"]) == (
        grid.best_k1,
        grid.best_b,
        grid.best_recall,
    )
    assert sec["train_recall"] == grid.recall.tolist()
    at_best = RetrievalSettings("bm25", k1=grid.best_k1, b=grid.best_b)
    assert sec["best"]["split_recall"] == measure(lab, "test", at_best)["recall@5"]
    default = RetrievalSettings("bm25")
    assert sec["default"]["train_recall"] == measure(lab, "train", default)["recall@5"]
    assert sec["default"]["split_recall"] == measure(lab, "test", default)["recall@5"]


def test_ranker_table_equals_the_library(lab: Lab, report: dict[str, Any]) -> None:
    """Oracle: ranker_table at the train-chosen weight, and first_ranks per ranker."""
    weight = choose_weight(lab)
    sec = report["rankers"]
    assert sec["weight"] == weight
    assert sec["table"] == ranker_table(lab, weight=weight)
    answerable = [q for q in sec["questions"] if q["answerable"]]
    for name in RETRIEVERS:
        # The neural score fusion's weight is chosen on train on its own (TUNED).
        w = weight if name == "score" else TUNED
        expected = first_ranks(lab, "test", RetrievalSettings(name, weight=w))
        assert [q["ranks"][name] for q in answerable] == expected
        # recall@5 is the share of first ranks within 5: the gate's per-question view agrees.
        hits = sum(r is not None and r <= RECALL_K for r in expected)
        assert sec["table"][name]["recall@5"] == pytest.approx(hits / len(expected), abs=1e-15)
    assert [q["id"] for q in sec["questions"]] == [q.id for q in lab.split("test")]


def test_chunking_equals_the_library(lab: Lab, report: dict[str, Any]) -> None:
    """Oracle: chunking_report for the run's chunker and the three reference chunkers."""
    sec = report["chunking"]
    assert sec["supported"] is True
    keys = [
        ChunkingKey(),
        ChunkingKey("heading"),
        ChunkingKey("sentence"),
        ChunkingKey("fixed", CHUNK_SIZES["fixed"], FIXED_OVERLAP),
    ]
    assert [c["role"] for c in sec["chunkers"]] == ["chosen", "reference", "reference", "reference"]
    for row, key in zip(sec["chunkers"], keys, strict=True):
        expected = chunking_report(lab, key)
        assert (row["chunks"], row["intact"], row["total"], row["intact_rate"]) == (
            expected.n_chunks,
            expected.intact,
            expected.total,
            expected.intact_rate,
        )
        assert row["expected_chunks"] == expected.expected_chunks
    fixed = chunking_report(lab, keys[3])
    by_id = {a.id: a.intact for a in fixed.answers}
    assert [a["intact"][3] for a in sec["answers"]] == [by_id[a["id"]] for a in sec["answers"]]
    assert len(sec["answers"]) == 26


def test_lsa_and_reranker_equal_the_library(lab: Lab, report: dict[str, Any]) -> None:
    """Oracle: lsa_spectrum; train_reranker, choose_lambda and rerank_rows on the run's stage."""
    assert report["lsa"] == json.loads(json.dumps(lsa_spectrum(lab)))
    reranker = train_reranker(lab, RunSettings().retrieval)
    lam = choose_lambda(lab, reranker)
    sec = report["reranker"]
    assert sec["chosen_lambda"] == lam == report["settings"]["mmr_lambda"]
    assert sec["weights"] == reranker.weights
    assert sec["rows"] == rerank_rows(lab, reranker, lam)


def test_headline(report: dict[str, Any]) -> None:
    """Oracle: the report's own sections."""
    top = headline(report)
    assert top["accuracy"] == report["end_to_end"]["accuracy"]
    assert top["recall"] == {k: v["recall@5"] for k, v in report["rankers"]["table"].items()}


# --- reproducible -----------------------------------------------------------------------------


def test_plain_json(report: dict[str, Any]) -> None:
    """Oracle: a JSON round trip (no NaN allowed) gives back an equal dict."""
    assert json.loads(json.dumps(report, allow_nan=False)) == report


def test_two_builds_differ_only_in_created(report: dict[str, Any]) -> None:
    """Oracle: a second build on a freshly loaded lab (no shared cache), a minute later."""
    again = build_report(
        Lab.load(), created=datetime(2025, 3, 1, 12, 31, 5, tzinfo=UTC), settings=RunSettings()
    )
    assert again["created"] != report["created"]
    assert {k: v for k, v in again.items() if k != "created"} == {
        k: v for k, v in report.items() if k != "created"
    }


def test_created_is_utc_iso(lab: Lab) -> None:
    """Oracle: datetime.fromisoformat reads it back; a +02:00 time is converted to UTC."""
    when = datetime(2025, 3, 1, 14, 30, 5, 123456, tzinfo=timezone(timedelta(hours=2)))
    record = build_report(lab, created=when, settings=RunSettings())["created"]
    assert record == "2025-03-01T12:30:05Z"
    assert datetime.fromisoformat(record) == when.replace(microsecond=0)


def test_fingerprint_digests(lab: Lab, report: dict[str, Any]) -> None:
    """Oracle: hashlib over the questions file's bytes; the same pages copied elsewhere hash the
    same (paths are taken relative to the corpus folder)."""
    questions = bundled_handbook_dir() / "questions.jsonl"
    assert (
        report["data"]["sha256"]["questions"] == hashlib.sha256(questions.read_bytes()).hexdigest()
    )
    assert report["data"]["sha256"] == data_digests(lab)
    assert report["fingerprint"] == fingerprint(data_digests(lab), report["settings"])


def test_fingerprint_changes_with_one_page_byte(tmp_path: Path, lab: Lab) -> None:
    """Oracle: the same bytes elsewhere give the same digest; one changed byte changes it."""
    copy_dir = tmp_path / "handbook"
    shutil.copytree(bundled_handbook_dir(), copy_dir)
    same = Lab.load(copy_dir, copy_dir / "questions.jsonl")
    assert data_digests(same) == data_digests(lab)
    page = copy_dir / "tripod-care.md"
    raw = page.read_bytes()
    at = raw.index(b" ", raw.index(b"\n#"))  # a space in the body: answers ignore whitespace
    page.write_bytes(raw[:at] + b"\t" + raw[at + 1 :])
    changed = Lab.load(copy_dir, copy_dir / "questions.jsonl")
    digests = data_digests(changed)
    assert digests["questions"] == data_digests(lab)["questions"]
    assert digests["corpus"] != data_digests(lab)["corpus"]
    record = settings_record(
        RunSettings(), split="test", resolved=RunSettings(mmr_lambda=0.3, threshold=0.45)
    )
    assert fingerprint(digests, record) != fingerprint(data_digests(lab), record)


def test_fingerprint_changes_with_one_setting(lab: Lab) -> None:
    """Oracle: equal records hash equal; a budget one word larger hashes differently."""
    digests = data_digests(lab)
    base = settings_record(
        RunSettings(), split="test", resolved=RunSettings(mmr_lambda=0.3, threshold=0.45)
    )
    wider = settings_record(
        RunSettings(budget=default("budget") + 1),
        split="test",
        resolved=RunSettings(budget=default("budget") + 1, mmr_lambda=0.3, threshold=0.45),
    )
    assert fingerprint(digests, dict(base)) == fingerprint(digests, base)
    assert fingerprint(digests, wider) != fingerprint(digests, base)
    other_split = {**base, "split": "train"}
    assert fingerprint(digests, other_split) != fingerprint(digests, base)


def test_settings_round_trip() -> None:
    """Oracle: run_settings_from inverts settings_record; chosen values are chosen again."""
    given = RunSettings(
        chunker="fixed",
        size=150,
        overlap=10,
        retriever="score",
        weight=0.3,
        mmr_lambda=0.4,
        threshold=0.25,
        budget=250,
    )
    record = settings_record(given, split="test", resolved=given)
    assert record["chosen_on_train"] == []
    assert run_settings_from(record) == given
    chosen = settings_record(
        RunSettings(), split="test", resolved=RunSettings(mmr_lambda=0.3, threshold=0.45)
    )
    assert run_settings_from(chosen) == RunSettings(size=CHUNK_SIZES["heading"])
    with pytest.raises(ValueError, match="budget"):
        run_settings_from({**record, "budget": "many"})
    with pytest.raises(ValueError, match="rerank"):
        run_settings_from({**record, "rerank": 1})


# --- page labels --------------------------------------------------------------------------------


def test_page_labels_say_what_they_cannot_support(tmp_path: Path) -> None:
    """Oracle: measure on the same lab for the rankers; docs/design.md#page-labels for what pages cannot support."""
    lab = write_page_labelled(tmp_path)
    rep = build_report(lab, created=WHEN, settings=RunSettings())
    assert rep["data"]["labels"] == "pages"
    for key in ("chunking", "end_to_end"):
        assert rep[key]["supported"] is False
        assert "labelled by relevant pages" in rep[key]["reason"]
    assert rep["chunking"]["chunkers"][0]["chunks"] == len(lab.indexes.chunk_set())
    assert rep["chunking"]["chunkers"][0]["intact"] is None
    assert rep["settings"]["threshold"] is None
    weight = choose_weight(lab, chunking=ChunkingKey().resolved())
    assert rep["rankers"]["table"]["bm25"] == measure(
        lab, "test", RetrievalSettings("bm25", weight=weight, chunking=ChunkingKey().resolved())
    )
    assert validate_report(rep) == []
    assert headline(rep)["accuracy"] is None
    json.dumps(rep, allow_nan=False)


# --- comparing two reports ----------------------------------------------------------------------


def test_a_report_compared_with_itself_passes(report: dict[str, Any]) -> None:
    """Oracle: nothing changed, so every McNemar table is concordant and p = 1."""
    result = compare_reports(report, copy.deepcopy(report))
    assert result["verdict"] == "pass" and result["fell"] == []
    assert result["same_data"] and result["settings_changed"] == {}
    for m in result["measures"]:
        assert m["worse"] == [] and m["better"] == [] and m["mcnemar"]["p_value"] == 1.0


def test_a_small_budget_fails_and_names_the_questions(
    lab: Lab, report: dict[str, Any], small_budget_report: dict[str, Any]
) -> None:
    """Oracle: the two library runs' outcomes, and stats.mcnemar_exact on their vectors."""
    base, small = (
        run_pipeline(lab, RunSettings()),
        run_pipeline(lab, RunSettings(budget=SMALL_BUDGET)),
    )
    result = compare_reports(report, small_budget_report)
    assert result["verdict"] == "fail" and "accuracy" in result["fell"]
    acc = next(m for m in result["measures"] if m["measure"] == "accuracy")
    pairs = list(zip(base.outcomes, small.outcomes, strict=True))
    assert acc["worse"] == [a.id for a, b in pairs if a.outcome == "correct" != b.outcome]
    assert acc["better"] == [a.id for a, b in pairs if b.outcome == "correct" != a.outcome]
    assert acc["worse"]
    expected = mcnemar_exact(outcomes_vector(base), outcomes_vector(small))
    assert acc["mcnemar"]["p_value"] == expected.p_value
    assert (acc["mcnemar"]["only_baseline"], acc["mcnemar"]["only_current"]) == (
        expected.only_a,
        expected.only_b,
    )
    assert (acc["baseline"], acc["current"]) == (base.accuracy, small.accuracy)
    assert result["settings_changed"]["budget"] == {
        "baseline": default("budget"),
        "current": SMALL_BUDGET,
    }


def test_tolerance_bounds_the_fall(
    report: dict[str, Any], small_budget_report: dict[str, Any]
) -> None:
    """Oracle: the fall computed from the two accuracies; a tolerance equal to it passes."""
    drop = report["end_to_end"]["accuracy"] - small_budget_report["end_to_end"]["accuracy"]
    assert drop > 0
    loose = compare_reports(report, small_budget_report, tolerance_accuracy=drop)
    assert "accuracy" not in loose["fell"]
    tight = compare_reports(report, small_budget_report, tolerance_accuracy=drop - 0.01)
    assert "accuracy" in tight["fell"]
    with pytest.raises(ValueError, match="tolerance_recall"):
        compare_reports(report, report, tolerance_recall=1.5)


def test_comparison_runs_on_shared_questions(report: dict[str, Any]) -> None:
    """Oracle: dropping one question from the baseline lists it and compares the rest."""
    baseline = copy.deepcopy(report)
    gone = baseline["rankers"]["questions"].pop(0)["id"]
    baseline["end_to_end"]["outcomes"] = [
        o for o in baseline["end_to_end"]["outcomes"] if o["id"] != gone
    ]
    result = compare_reports(baseline, report)
    assert result["questions"]["only_current"] == [gone]
    assert result["questions"]["shared"] == 29
    acc = next(m for m in result["measures"] if m["measure"] == "accuracy")
    assert acc["n"] == 29 and result["verdict"] == "pass"


def test_one_flipped_question_is_a_fall_with_its_chance(report: dict[str, Any]) -> None:
    """Oracle: one discordant question gives the exact McNemar p = min(1, 2 * 1/2) = 1."""
    current = copy.deepcopy(report)
    flipped = next(o for o in current["end_to_end"]["outcomes"] if o["outcome"] == "correct")
    flipped["outcome"] = "reader"
    result = compare_reports(report, current)
    acc = next(m for m in result["measures"] if m["measure"] == "accuracy")
    assert acc["fell"] and acc["worse"] == [flipped["id"]] and acc["mcnemar"]["p_value"] == 1.0


@pytest.mark.parametrize(
    ("broken", "needle"),
    [
        ([], "not an object"),
        ({"format": "something-else"}, "format"),
        ({"format": REPORT_FORMAT, "schema": 99}, "schema"),
        ({"format": REPORT_FORMAT, "schema": 1}, "settings: missing"),
    ],
)
def test_validate_report_names_the_problem(broken: Any, needle: str) -> None:
    """Oracle: the structure build_report writes."""
    problems = validate_report(broken)
    assert problems and needle in " ".join(problems)


def test_validate_report_needs_per_question_rows(report: dict[str, Any]) -> None:
    """Oracle: a report whose rankers lost their rows cannot be compared question by question."""
    broken = copy.deepcopy(report)
    broken["rankers"]["questions"] = "all of them"
    assert "rankers.questions: 'all of them' is not of type 'array'" in validate_report(broken)
    broken = copy.deepcopy(report)
    del broken["end_to_end"]["outcomes"]
    assert "end_to_end.outcomes: missing" in validate_report(broken)
