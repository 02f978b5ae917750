"""The stage commands print what the library computes, as tables and as JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from raglab.cli.main import main
from raglab.pipeline.chunking_report import chunking_report
from raglab.pipeline.end_to_end import run_pipeline
from raglab.pipeline.grid import bm25_grid
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import choose_weight, ranker_table
from raglab.run_settings import ChunkingKey, RunSettings


@pytest.fixture(scope="module")
def lab(handbook_lab: Lab) -> Lab:
    return handbook_lab


def as_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_chunk(capsys: pytest.CaptureFixture[str], lab: Lab) -> None:
    data = as_json(capsys, "chunk", "--size", "150", "--overlap", "10")
    report = chunking_report(lab, ChunkingKey("fixed", 150, 10))
    assert (data["n_chunks"], data["expected_chunks"], data["intact"]) == (
        report.n_chunks,
        report.expected_chunks,
        report.intact,
    )
    assert main(["chunk", "--method", "heading"]) == 0
    assert "answers intact on test" in capsys.readouterr().out


def test_bm25_search_explains_every_score(capsys: pytest.CaptureFixture[str]) -> None:
    data = as_json(capsys, "bm25", "search", "E-4107 motor stall", "--top", "3")
    assert data["tokens"] == ["e-4107", "motor", "stall"]
    for row in data["results"]:
        assert sum(t["contribution"] for t in row["terms"]) == pytest.approx(
            row["score"], rel=1e-12
        )


def test_bm25_grid(capsys: pytest.CaptureFixture[str], lab: Lab) -> None:
    data = as_json(capsys, "bm25", "grid")
    grid = bm25_grid(lab, k=5)
    assert data["best"] == {
        "k1": grid.best_k1,
        "b": grid.best_b,
        "train_recall@5": grid.best_recall,
        "train_hits@5": round(grid.best_recall * grid.questions),
    }
    assert len(data["train_recall@5"]) == 16 and len(data["train_recall@5"][0]) == 11


def test_lsa_commands(capsys: pytest.CaptureFixture[str], lab: Lab) -> None:
    info = as_json(capsys, "lsa", "info")
    assert info["rank"] == 48 and info["windows"] == 100
    assert info["singular_values"] == lab.indexes.lsa.singular_values.tolist()
    near = as_json(capsys, "lsa", "neighbours", "tripod", "--top", "4")
    assert [n["word"] for n in near["neighbours"]] == [
        w for w, _ in lab.indexes.lsa.neighbours("tripod", k=4)
    ]
    found = as_json(capsys, "lsa", "search", "telescope too heavy")
    assert len(found["results"]) == 5


def test_fuse_table_equals_library(capsys: pytest.CaptureFixture[str], lab: Lab) -> None:
    data = as_json(capsys, "fuse")
    assert data["train_chosen_weight"] == choose_weight(lab)
    assert data["rankers"] == ranker_table(lab, weight=data["weight"])


def test_rerank(capsys: pytest.CaptureFixture[str]) -> None:
    data = as_json(capsys, "rerank")
    assert set(data["weights"]) == {
        "bm25",
        "cosine",
        "identifier_match",
        "title_match",
        "page_age",
        "position",
    }
    assert [(r["split"], r["order"]) for r in data["rows"]][:3] == [
        ("train", "fusion"),
        ("train", "reranked"),
        ("train", "reranked + MMR"),
    ]


def test_run_equals_library_and_takes_every_setting(
    capsys: pytest.CaptureFixture[str], lab: Lab
) -> None:
    data = as_json(capsys, "run")
    result = run_pipeline(lab, RunSettings())
    assert (data["correct"], data["n"], data["bound"]) == (result.correct, result.n, result.bound)
    custom = as_json(
        capsys,
        "run",
        "--chunker",
        "fixed",
        "--size",
        "120",
        "--overlap",
        "20",
        "--retriever",
        "bm25",
        "--no-rerank",
        "--budget",
        "300",
        "--threshold",
        "0.4",
    )
    assert custom["settings"]["chunker"] == "fixed" and custom["threshold"] == 0.4
    assert custom["mmr_lambda"] is None


def test_bad_settings_exit_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", "--budget", "0"])
    assert info.value.code == 2
    assert "--budget: budget must be at least 1, not 0" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["chunk", "--method", "paragraph"])
    assert info.value.code == 2


def test_refused_settings_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chunk", "--size", "100", "--overlap", "100"]) == 2
    err = capsys.readouterr().err
    assert "raglab chunk:" in err and "overlap" in err and "Traceback" not in err


def test_stage_commands_run_on_a_users_own_data(
    tmp_path: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """--corpus and --questions reach every stage command."""
    from pathlib import Path

    root = Path(str(tmp_path))
    pages = root / "pages"
    pages.mkdir()
    lines = []
    for i in range(6):
        (pages / f"p{i}.md").write_text(
            f"# Page {i}\n\n## Part\n\nThe widget W-{i}00 weighs {i + 2} kg and ships in a box.\n",
            encoding="utf-8",
        )
        lines.append(
            json.dumps(
                {
                    "id": f"q{i}",
                    "split": "train" if i % 2 else "test",
                    "kind": "identifier",
                    "question": f"How much does the W-{i}00 weigh?",
                    "answer": f"The widget W-{i}00 weighs {i + 2} kg and ships in a box.",
                }
            )
        )
    (root / "q.jsonl").write_text("\n".join(lines), encoding="utf-8")
    data = ["--corpus", str(pages), "--questions", str(root / "q.jsonl")]
    fused = as_json(capsys, "fuse", *data)
    assert fused["rankers"]["bm25"]["recall@1"] == 1.0
    assert as_json(capsys, "chunk", "--method", "heading", *data)["intact"] == 3
    assert as_json(capsys, "run", "--no-rerank", "--retriever", "bm25", *data)["n"] == 3


def _run_in_terminal(argv: list[str]) -> str:
    """Run the real command line with a pseudo-terminal as its stdout and stderr."""
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "raglab", *argv], stdout=follower, stderr=follower
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


def test_progress_bars_show_on_a_terminal_and_never_with_quiet() -> None:
    shown = _run_in_terminal(["fuse"])
    assert "Chunking and indexing" in shown and "Score fusion" in shown
    hidden = _run_in_terminal(["fuse", "--quiet"])
    assert "Chunking and indexing" not in hidden and "Score fusion" in hidden


def test_run_prints_the_right_answers_by_kind(capsys: pytest.CaptureFixture[str], lab: Lab) -> None:
    """Oracle: the library's run, its outcomes counted by kind here."""
    from collections import Counter

    assert main(["run", "--no-rerank", "--retriever", "bm25"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    result = run_pipeline(lab, RunSettings(retriever="bm25", rerank=False, mmr=False))
    n = Counter(o.kind for o in result.outcomes)
    right = Counter(o.kind for o in result.outcomes if o.outcome == "correct")
    assert "Right by kind:" in out
    for kind in ("paraphrase", "identifier"):
        assert f"{kind} {right[kind]} of {n[kind]}" in out
