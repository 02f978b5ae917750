"""``raglab trec export``: the runs it writes score outside exactly as ``raglab fuse`` reports.

Two independent oracles score each exported run against the exported qrels: ``pytrec_eval``
(trec_eval's C code) and ``ranx``: ir_measures through its ranx provider (ranx's numba code). Asked
for by name, since ir_measures' default provider for these measures is pytrec_eval again.

Query sets, accounted for explicitly. RAG lab averages over the split's answerable questions (read
here from the questions file). A question without an answer has no qrels, so every evaluator
skips it too. An answerable question that no chunk holds whole has no qrels, and one with an empty
ranking no run lines; our means count either as 0, while for a judged query missing from the run
pytrec_eval skips it, ir_measures' default provider counts it 0 and ranx refuses to run
(test_evaluators_on_a_judged_query_missing_from_the_run). So ``scored`` asserts that every
answerable question is both judged and ranked before it divides each oracle's sum by their count.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import ir_measures
import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from ir_measures import RR, P, Success, nDCG

from raglab.cli.main import main
from raglab.corpus.questions import bundled_questions_path
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import measure, ranker_table
from raglab.run_settings import RetrievalSettings
from raglab.settings import RETRIEVERS, default
from tests.prewarm import ranx_doc

#: Every retriever, the neural ones included (CI installs the model).
RETRIEVERS = RETRIEVERS
ORACLES = ("pytrec_eval", "ranx")
V = TypeVar("V")
#: Our metric -> (pytrec_eval's name, ir_measures' measure).
MEASURES = {
    "recall@1": ("success_1", Success @ 1),
    "recall@3": ("success_3", Success @ 3),
    "recall@5": ("success_5", Success @ 5),
    "recall@10": ("success_10", Success @ 10),
    "mrr": ("recip_rank", RR),
    "ndcg@10": ("ndcg_cut_10", nDCG @ 10),
    "p@3": ("P_3", P @ 3),
}
Run = dict[str, list[tuple[str, float]]]
Cap = pytest.CaptureFixture[str]
Memo = dict[Any, Any]
Data = tuple[str, ...]


@pytest.fixture(scope="session")
def memo(tmp_path_factory: pytest.TempPathFactory) -> Memo:
    """Command outputs by command line, each computed once per session (and a folder for runs)."""
    return {"dir": tmp_path_factory.mktemp("exports")}


@pytest.fixture(scope="module")
def lab(handbook_lab: Lab) -> Lab:
    return handbook_lab


def cli_json(capsys: Cap, *argv: str) -> Any:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def fuse(capsys: Cap, memo: Memo, *argv: str) -> Any:
    """``raglab fuse --json --split test ARGV``'s output."""
    if ("fuse", argv) not in memo:
        memo["fuse", argv] = cli_json(capsys, "fuse", "--split", "test", *argv)
    return memo["fuse", argv]


def read_checked_run(path: Path, tag: str) -> Run:
    """The run file's entries by question, after checking every line: six fields, ranks 1..n,
    scores strictly decreasing (no evaluator's tie-break by document id applies), no document
    twice."""
    run: Run = {}
    for line in path.read_text().splitlines():
        qid, q0, doc, rank, score, line_tag = line.split()
        assert (q0, line_tag) == ("Q0", tag)
        entries = run.setdefault(qid, [])
        assert int(rank) == len(entries) + 1
        assert not entries or float(score) < entries[-1][1], line
        entries.append((doc, float(score)))
    for qid, entries in run.items():
        assert len({d for d, _ in entries}) == len(entries), qid
    return run


def export(
    capsys: Cap, memo: Memo, retriever: str, *options: str
) -> tuple[Run, Path, Path, dict[str, Any]]:
    """``raglab trec export --retriever RETRIEVER OPTIONS --json``, once per session: the checked
    run, the run and qrels files and the summary."""
    key = ("export", retriever, options)
    if key not in memo:
        out = memo["dir"] / str(len(memo))
        out.mkdir()
        run_file, qrels_file = out / "exported.run", out / "exported.qrels"
        summary = cli_json(
            capsys, "trec", "export", "--retriever", retriever,
            "--run", str(run_file), "--qrels", str(qrels_file), *options,
        )  # fmt: skip
        assert summary["settings"]["retriever"] == retriever
        run = read_checked_run(run_file, f"raglab-{retriever}")
        memo[key] = (run, run_file, qrels_file, summary)
    exported: tuple[Run, Path, Path, dict[str, Any]] = memo[key]
    return exported


def answerable(questions_file: Path, split: str) -> set[str]:
    """Ids of the split's questions with an answer (a passage or relevant pages), read from the
    file itself."""
    rows = [json.loads(line) for line in questions_file.read_text("utf-8").splitlines() if line]
    return {
        r["id"]
        for r in rows
        if r["split"] == split and (r.get("answer") is not None or r.get("pages"))
    }


@contextlib.contextmanager
def ranx_strings() -> Iterator[None]:
    """ir_measures hands ranx pandas columns of question ids; ranx 0.3 insists on dtype object,
    which pandas 3 no longer infers for strings. Ask for object columns while ranx runs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas' deprecation of the option, numba's casts
        try:
            pd.get_option("future.infer_string")
        except KeyError:  # pandas before 2.1: strings are objects already
            yield
            return
        with pd.option_context("future.infer_string", False):
            yield


def scored(run_file: Path, qrels_file: Path, questions: set[str], oracle: str) -> dict[str, float]:
    """One oracle's means over ``questions`` (the split's answerable ones), after checking that
    each of them is in the qrels (none lacks a judged chunk) and in the run (no empty ranking)."""
    with run_file.open() as fh:
        run = pytrec_eval.parse_run(fh)
    with qrels_file.open() as fh:
        qrels = pytrec_eval.parse_qrel(fh)
    assert set(qrels) == questions and questions <= set(run)  # the run may add unanswerable ones
    values: dict[str, list[float]] = {key: [] for key in MEASURES}
    if oracle == "pytrec_eval":
        names = {name: key for key, (name, _) in MEASURES.items()}
        per_query = pytrec_eval.RelevanceEvaluator(qrels, set(names)).evaluate(run)
        assert set(per_query) == questions  # it scores exactly the queries in run and qrels
        for row in per_query.values():
            for name, value in row.items():
                values[names[name]].append(value)
    else:
        measures = {str(m): key for key, (_, m) in MEASURES.items()}
        with ranx_strings():  # ranx wants the same queries in run and qrels
            evaluator = ir_measures.providers.registry["ranx"].evaluator(
                [m for _, m in MEASURES.values()], _padded(qrels)
            )
            rows = list(evaluator.iter_calc(_padded({q: run[q] for q in questions})))
        assert {r.query_id for r in rows} == questions
        for r in rows:
            values[measures[str(r.measure)]].append(float(r.value))
    return {key: math.fsum(v) / len(questions) for key, v in values.items()}


def _padded(table: dict[str, dict[str, V]]) -> dict[str, dict[str, V]]:
    """``table`` (question -> document -> value) with the document ids padded to one width
    (``ranx_doc``): ranx compiles its functions once per width of id, and no measure reads
    an id but to match a run's to the qrels'."""
    return {q: {ranx_doc(d): v for d, v in docs.items()} for q, docs in table.items()}


def assert_agree(values: dict[str, float], ours: dict[str, float]) -> None:
    for key, value in values.items():
        assert value == pytest.approx(ours[key], abs=1e-9), (key, value, ours[key])


def cases(*retrievers: str) -> list[Any]:
    return [pytest.param(r, o) for r in retrievers for o in ORACLES]


def test_evaluators_on_a_judged_query_missing_from_the_run() -> None:
    qrels, run = {"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}}
    assert pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run) == {
        "q1": {"recip_rank": 1.0}
    }
    assert ir_measures.calc_aggregate([RR], qrels, run) == {RR: 0.5}
    with ranx_strings(), pytest.raises(AssertionError, match="do not match"):
        ir_measures.providers.registry["ranx"].calc_aggregate([RR], _padded(qrels), _padded(run))


HANDBOOK_TEST = answerable(bundled_questions_path(), "test")


@pytest.mark.parametrize(("retriever", "oracle"), cases(*RETRIEVERS))
def test_handbook_runs_score_outside_as_fuse_reports(
    retriever: str, oracle: str, capsys: Cap, memo: Memo
) -> None:
    """Oracles: pytrec_eval and ir_measures (ranx) on the exported test split at depth 100."""
    ours = fuse(capsys, memo, "--depth", "100")
    assert ours["settings"]["depth"] == ours["settings"]["fusion_depth"] == 100
    run, run_file, qrels, summary = export(
        capsys, memo, retriever, "--split", "test", "--depth", "100"
    )
    assert summary["settings"]["depth"] == summary["settings"]["fusion_depth"] == 100
    assert summary["questions"] == len(run) == 30 and len(HANDBOOK_TEST) == 26
    assert_agree(scored(run_file, qrels, HANDBOOK_TEST, oracle), ours["rankers"][retriever])


@pytest.mark.parametrize(("retriever", "oracle"), cases(*RETRIEVERS))
def test_with_no_option_an_export_scores_as_the_labs_table(
    retriever: str, oracle: str, capsys: Cap, memo: Memo, lab: Lab
) -> None:
    """With no option both commands use the settings' depths (100, and a fusion of each ranker's
    first 20), so every row, fusions included, scores outside as the lab's table says: once
    exported RRF's MRR was 0.4710 against the table's 0.4745. Oracles as above, to 1e-12, against
    ``fuse`` and the pipeline's table itself (:func:`ranker_table`, what the page shows)."""
    ours = fuse(capsys, memo)
    table = ranker_table(lab, split="test")  # as the page asks for it
    assert ours["rankers"][retriever] == table[retriever]
    defaults = (default("depth"), default("fusion_depth"))
    assert (ours["settings"]["depth"], ours["settings"]["fusion_depth"]) == defaults
    _, run_file, qrels, summary = export(capsys, memo, retriever, "--split", "test")
    assert (summary["settings"]["depth"], summary["settings"]["fusion_depth"]) == defaults
    values = scored(run_file, qrels, HANDBOOK_TEST, oracle)
    for key, value in values.items():
        assert value == pytest.approx(table[retriever][key], abs=1e-12), (key, value)


def test_help_states_the_fusion_depth_an_export_uses(capsys: Cap, memo: Memo) -> None:
    """``--help``'s defaults come from the settings table, and the export uses them: it once said
    20 and fused 100. A deeper fusion is the explicit ``--fusion-depth``, which then measures as
    ``fuse --depth 100`` (both depths 100; oracle: pytrec_eval)."""
    with pytest.raises(SystemExit) as done:
        main(["trec", "export", "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    stated = {
        name: int(m.group(1))
        for name in ("depth", "fusion-depth")
        if (m := re.search(rf"--{name} N .*?\(default: (\d+)", text))
    }
    assert stated == {"depth": default("depth"), "fusion-depth": default("fusion_depth")}
    *_, summary = export(capsys, memo, "rrf", "--split", "test")
    assert summary["settings"]["fusion_depth"] == stated["fusion-depth"]
    _, run_file, qrels, deeper = export(
        capsys, memo, "rrf", "--split", "test", "--fusion-depth", "100"
    )
    assert (deeper["settings"]["depth"], deeper["settings"]["fusion_depth"]) == (100, 100)
    ours = fuse(capsys, memo, "--depth", "100")
    assert_agree(scored(run_file, qrels, HANDBOOK_TEST, "pytrec_eval"), ours["rankers"]["rrf"])


@pytest.mark.parametrize("oracle", ORACLES)
def test_an_explicit_weight_changes_the_run(oracle: str, capsys: Cap, memo: Memo, lab: Lab) -> None:
    """Oracles: pytrec_eval and ir_measures (ranx) on the run at w = 0.3, against the library's
    measure at w = 0.3 (``fuse --weight`` is checked below)."""
    assert fuse(capsys, memo, "--depth", "100")["train_chosen_weight"] != 0.3
    tuned, *_ = export(capsys, memo, "score", "--split", "test", "--depth", "100")
    run, run_file, qrels, summary = export(
        capsys, memo, "score", "--split", "test", "--depth", "100", "--weight", "0.3"
    )
    assert summary["settings"]["weight"] == 0.3 and run != tuned
    ours = measure(lab, "test", RetrievalSettings("score", weight=0.3, depth=100, fusion_depth=100))
    assert_agree(scored(run_file, qrels, HANDBOOK_TEST, oracle), ours)


def test_fuse_takes_the_weight_it_is_given(capsys: Cap, memo: Memo, lab: Lab) -> None:
    ours = fuse(capsys, memo, "--depth", "100", "--weight", "0.3")
    at_03 = measure(
        lab, "test", RetrievalSettings("score", weight=0.3, depth=100, fusion_depth=100)
    )
    assert ours["weight"] == 0.3 and ours["rankers"]["score"] == at_03


def test_score_fusion_exports_at_the_weight_chosen_on_train(capsys: Cap, memo: Memo) -> None:
    chosen = fuse(capsys, memo)["train_chosen_weight"]
    run, _, _, summary = export(capsys, memo, "score")
    assert summary["settings"]["fusion_depth"] == default("fusion_depth")  # as fuse measures
    assert summary["settings"]["weight"] == chosen
    explicit, *_ = export(capsys, memo, "score", "--weight", str(chosen))
    assert explicit == run  # ranked at that weight, not merely labelled with it


def test_depth_all_keeps_every_chunk_bm25_scores_above_zero(
    capsys: Cap, memo: Memo, lab: Lab
) -> None:
    """BM25's idf is positive, so a chunk scores above 0 exactly when it shares a term with the
    question; the others are not retrieved, at any depth."""
    run, _, _, summary = export(capsys, memo, "bm25", "--depth", "all")
    assert summary["settings"]["depth"] == 0
    cs = lab.indexes.chunk_set()
    dropped = 0
    for q in lab.questions:
        terms = set(lab.indexes.query_tokens(q))
        sharing = {
            c.id for c, words in zip(cs.chunks, cs.tokens, strict=True) if terms & set(words)
        }
        assert {d for d, _ in run.get(q.id, [])} == sharing, q.id
        assert all(s > 0 for _, s in run.get(q.id, []))
        dropped += len(cs) - len(sharing)
    assert max(len(r) for r in run.values()) > 100 and dropped > 0


def test_exported_scores_stay_strictly_decreasing_as_trec_eval_reads_them(
    capsys: Cap, memo: Memo
) -> None:
    run, *_ = export(capsys, memo, "rrf", "--split", "test", "--depth", "100")
    for qid, entries in run.items():
        as_read = np.asarray([s for _, s in entries], dtype=np.float32)
        assert np.all(np.diff(as_read) < 0), qid


@pytest.mark.parametrize(("retriever", "oracle"), cases(*RETRIEVERS))
def test_cranfield_runs_score_outside_as_fuse_reports(
    retriever: str,
    oracle: str,
    capsys: Cap,
    memo: Memo,
    cranfield_data: Data,
) -> None:
    """Oracles: pytrec_eval and ir_measures (ranx) on Cranfield's test split, chunk level."""
    ours = fuse(capsys, memo, "--depth", "100", *cranfield_data)
    _, run_file, qrels, _ = export(
        capsys, memo, retriever, "--split", "test", "--depth", "100", *cranfield_data
    )
    questions = answerable(Path(cranfield_data[3]), "test")
    assert len(questions) == 90
    assert_agree(scored(run_file, qrels, questions, oracle), ours["rankers"][retriever])


@pytest.mark.parametrize("oracle", ORACLES)
def test_cranfield_page_level_run_with_graded_qrels(
    oracle: str,
    capsys: Cap,
    memo: Memo,
    cranfield_data: Data,
    cranfield: Any,
) -> None:
    """One chunk per page (a heading cap no abstract reaches), so fuse's chunk-level numbers are
    page-level ones. Oracles: pytrec_eval and ir_measures (ranx) with Cranfield's grades."""
    whole = ("--chunker", "heading", "--size", "100000", "--depth", "100", *cranfield_data)
    ours = fuse(capsys, memo, *whole)
    run, run_file, qrels, _ = export(
        capsys, memo, "bm25", "--split", "test", "--level", "page", *whole
    )
    assert all("#" not in d for entries in run.values() for d, _ in entries)
    gains = set()
    for line in qrels.read_text().splitlines():
        qid, _, doc, gain = line.split()
        assert int(gain) == 5 - cranfield.qrels[int(qid)][int(doc)]  # relevance 5 - grade
        gains.add(int(gain))
    assert gains == {1, 2, 3, 4}
    questions = answerable(Path(cranfield_data[3]), "test")
    assert_agree(scored(run_file, qrels, questions, oracle), ours["rankers"]["bm25"])


@pytest.mark.parametrize("oracle", ORACLES)
def test_cranfield_depth_1000(
    oracle: str,
    capsys: Cap,
    memo: Memo,
    cranfield_data: Data,
) -> None:
    """Up to 1000 entries a question, and still fuse's numbers (pytrec_eval, ir_measures/ranx)."""
    run, run_file, qrels, _ = export(
        capsys, memo, "bm25", "--split", "test", "--depth", "1000", *cranfield_data
    )
    assert max(len(r) for r in run.values()) == 1000
    ours = fuse(capsys, memo, "--depth", "1000", *cranfield_data)
    questions = answerable(Path(cranfield_data[3]), "test")
    assert_agree(scored(run_file, qrels, questions, oracle), ours["rankers"]["bm25"])
