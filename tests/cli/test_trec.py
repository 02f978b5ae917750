"""``raglab trec``: our rankings out as TREC files, an external run in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytrec_eval

from raglab.cli.main import main
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import measure
from raglab.run_settings import RetrievalSettings


@pytest.fixture(scope="module")
def lab(handbook_lab: Lab) -> Lab:
    return handbook_lab


def test_exported_run_scores_the_same_in_trec_eval(
    tmp_path: Path, lab: Lab, capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: pytrec_eval (trec_eval's measures) on the files we wrote."""
    run_file, qrels_file = tmp_path / "run.txt", tmp_path / "qrels.txt"
    assert (
        main(
            [
                "trec",
                "export",
                "--retriever",
                "bm25",
                "--split",
                "test",
                "--run",
                str(run_file),
                "--qrels",
                str(qrels_file),
            ]
        )
        == 0
    )
    capsys.readouterr()
    with run_file.open() as fh:
        run = pytrec_eval.parse_run(fh)
    with qrels_file.open() as fh:
        judged = pytrec_eval.parse_qrel(fh)
    evaluator = pytrec_eval.RelevanceEvaluator(judged, {"success_5", "recip_rank", "ndcg_cut_10"})
    per_query = evaluator.evaluate(run)
    ours = measure(lab, "test", RetrievalSettings("bm25"))
    n = len(judged)
    assert n == 26
    # Questions BM25 retrieves nothing for are absent from the run and score 0 in both.
    assert sum(v["success_5"] for v in per_query.values()) / n == pytest.approx(
        ours["recall@5"], abs=1e-9
    )
    assert sum(v["recip_rank"] for v in per_query.values()) / n == pytest.approx(
        ours["mrr"], abs=1e-9
    )
    assert sum(v["ndcg_cut_10"] for v in per_query.values()) / n == pytest.approx(
        ours["ndcg@10"], abs=1e-9
    )


def test_an_exported_run_read_back_as_external_equals_the_ranker(
    tmp_path: Path, lab: Lab, capsys: pytest.CaptureFixture[str]
) -> None:
    run_file = tmp_path / "rrf.txt"
    assert main(["trec", "export", "--retriever", "rrf", "--run", str(run_file)]) == 0
    capsys.readouterr()
    assert main(["trec", "eval", str(run_file), "--name", "mine", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # With no option the export fuses as the lab's table does (the settings' fusion depth), so
    # read back it measures exactly as the table's RRF row.
    assert data["rankers"]["mine"] == data["rankers"]["RRF"]
    assert data["rankers"]["RRF"] == measure(lab, "test", RetrievalSettings("rrf"))
    assert data["end_to_end"]["funnel"]["correct"] >= 1


def test_page_level_runs_expand_to_chunks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_file = tmp_path / "pages.txt"
    assert main(["trec", "export", "--level", "page", "--run", str(run_file)]) == 0
    first = run_file.read_text().splitlines()[0].split()
    assert "#" not in first[2] and first[3] == "1"
    capsys.readouterr()
    assert main(["trec", "eval", str(run_file), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert 0 < data["rankers"]["external"]["recall@10"] <= 1


def test_bad_runs_are_named_by_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text(
        "q01 Q0 returns-policy 1 2.0 x\nq99 Q0 returns-policy 1 2.0 x\nq02 Q0 no-such-page 1 1.0 x\n"
    )
    assert main(["trec", "eval", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:2" in err and "q99" in err and f"{bad}:3" in err and "no-such-page" in err
    assert "Traceback" not in err


def test_export_refuses_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "run.txt"
    target.write_text("mine\n")
    assert main(["trec", "export", "--run", str(target)]) == 1
    assert "already exists" in capsys.readouterr().err
    assert target.read_text() == "mine\n"


@pytest.mark.parametrize("qrels_at", ["a folder", "missing/ours.qrels"])
def test_a_qrels_file_that_cannot_be_written_leaves_the_run_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], qrels_at: str
) -> None:
    """The run and its qrels are written as one: a qrels path that cannot be written stops the
    export (exit 1, one line naming it) before the run is replaced. Oracle: the run's bytes
    before and after."""
    run_file, qrels_file = tmp_path / "ours.run", tmp_path / qrels_at
    run_file.write_text("q1 Q0 old 1 1.0 earlier-export\n")
    if qrels_at == "a folder":
        qrels_file.mkdir()
    argv = ["trec", "export", "--retriever", "bm25", "--run", str(run_file), "--force"]
    assert main([*argv, "--qrels", str(qrels_file)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"raglab trec: {qrels_file}: cannot be written: ")
    assert len(err.splitlines()) == 1
    assert run_file.read_text() == "q1 Q0 old 1 1.0 earlier-export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        {"ours.run", qrels_at.split("/")[0]} - {"missing"}
    )
    # Given a path it can write, the same export replaces both.
    good = tmp_path / "ours.qrels"
    good.write_text("q1 0 earlier-export 1\n")
    assert main([*argv, "--qrels", str(good)]) == 0
    capsys.readouterr()
    assert "earlier-export" not in run_file.read_text() + good.read_text()


@pytest.mark.parametrize("kind", ["missing", "folder"])
def test_trec_eval_checks_its_run_file_before_loading_the_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """A run file that is not there is named at once, before the data: the corpus given here
    does not exist either, and the error names the run file, not the corpus (exit 1, bad input)."""
    run = tmp_path / "engine.run" if kind == "missing" else tmp_path
    corpus = tmp_path / "no-such-corpus"
    code = main(["trec", "eval", str(run), "--corpus", str(corpus), "--questions", "q.jsonl"])
    err = capsys.readouterr().err
    assert code == 1
    assert str(run) in err and ("does not exist" if kind == "missing" else "is a folder") in err
    assert "no-such-corpus" not in err
