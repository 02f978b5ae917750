"""``raglab fuse --json`` and ``raglab trec export`` print and write the same bytes with
``--workers 2`` as without it.

Oracle: the same command without ``--workers`` (the single machine), on the handbook and on
Cranfield.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import raglab.pipeline.retrieval as retrieval_module
from raglab.cli.main import main


def _stdout(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


def _cranfield_options(folder: Path) -> list[str]:
    return [
        "--corpus", str(folder / "pages"), "--questions", str(folder / "questions.jsonl"),
        "--stem", "--chunker", "heading", "--size", "100000",
    ]  # fmt: skip


def test_handbook_fuse_json_is_byte_identical(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: ``raglab fuse --json`` on one machine. With the cluster every measure of the
    table (and of the weights chosen on train) is taken on the workers: the same bytes with
    the client's measuring made impossible."""
    argv = ["fuse", "--json", "--depth", "50"]
    single = _stdout(capsys, argv)
    assert '"rankers"' in single

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the client measured rankings")

    monkeypatch.setattr(retrieval_module, "evaluate", refused)
    assert _stdout(capsys, [*argv, "--workers", "2"]) == single


@pytest.mark.parametrize("retriever", ["bm25", "rrf"])
def test_handbook_trec_export_is_byte_identical(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, retriever: str
) -> None:
    """Oracle: the run, qrels and summary ``raglab trec export`` writes on one machine."""
    outputs = []
    for extra in ([], ["--workers", "2"]):
        run, qrels = tmp_path / f"{len(extra)}.run", tmp_path / f"{len(extra)}.qrels"
        argv = ["trec", "export", "--retriever", retriever, "--run", str(run)]
        printed = _stdout(capsys, [*argv, "--qrels", str(qrels), *extra])
        outputs.append((run.read_bytes(), qrels.read_bytes(), printed.replace(str(tmp_path), "")))
    assert outputs[0][0].count(b"\n") > 1000
    assert outputs[1][0] == outputs[0][0] and outputs[1][1] == outputs[0][1]


def test_cranfield_bm25_export_is_byte_identical(
    capsys: pytest.CaptureFixture[str], cranfield_dir: Path, tmp_path: Path
) -> None:
    """Oracle: ``trec export --retriever bm25`` on one machine, Cranfield (225 queries, top
    100). ``fuse`` on Cranfield is left to the handbook's test: on one machine it takes minutes
    (every ranker, the fusion weight over eleven values), too long for each CI run."""
    data = _cranfield_options(cranfield_dir)
    runs = []
    for extra in ([], ["--workers", "2"]):
        run = tmp_path / f"cran{len(extra)}.run"
        _stdout(capsys, ["trec", "export", "--retriever", "bm25", "--run", str(run), *data, *extra])
        runs.append(run.read_bytes())
    assert runs[0].count(b"\n") == 225 * 100
    assert runs[1] == runs[0]


def test_workers_and_scheduler_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    """Oracle: argparse's usage error (exit 2) for two exclusive options, and for 0 workers."""
    with pytest.raises(SystemExit) as both:
        main(["fuse", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"])
    with pytest.raises(SystemExit) as zero:
        main(["fuse", "--workers", "0"])
    assert both.value.code == 2 and zero.value.code == 2
    assert "not allowed with" in capsys.readouterr().err
