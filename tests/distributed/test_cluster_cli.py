"""``raglab fuse --json`` and ``raglab trec export`` print and write the same bytes with
``--workers 2`` or ``--scheduler`` as without it; the cluster's options; what is checked
before any cluster work, and what is not done at all (no neural vectors for BM25).

Oracle: the same command without ``--workers`` (the single machine), on the handbook and on
Cranfield; the constants of raglab.settings for the options' defaults.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import socket
import time
import weakref
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import raglab.corpus.pages as pages_module
import raglab.pipeline.retrieval as retrieval_module
from raglab.chunking.chunk import Chunk
from raglab.chunking.chunkers import chunk_pages
from raglab.cli._cluster import add_cluster_options, cluster_lab, connect_options
from raglab.cli.main import build_parser, main
from raglab.cli.run import settings_from, split_from
from raglab.corpus.pages import load_corpus
from raglab.corpus.questions import bundled_questions_path
from raglab.pipeline.end_to_end import run_pipeline
from raglab.pipeline.lab import Lab
from raglab.settings import (
    CLUSTER_CONNECT_TIMEOUT,
    CLUSTER_NO_WORKERS_TIMEOUT,
    CLUSTER_SHARDS_PER_WORKER,
)
from tests.distributed.cluster_fixtures import recorded_labs


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


def test_handbook_trec_export_is_byte_identical(
    capsys: pytest.CaptureFixture[str], client: Any, tmp_path: Path
) -> None:
    """Oracle: the run, qrels and summary ``raglab trec export --retriever rrf`` (BM25's and
    LSA's lists fused) writes on one machine."""
    outputs = []
    for extra in ([], _address(client)):
        run, qrels = tmp_path / f"{len(extra)}.run", tmp_path / f"{len(extra)}.qrels"
        argv = ["trec", "export", "--retriever", "rrf", "--run", str(run)]
        printed = _stdout(capsys, [*argv, "--qrels", str(qrels), *extra])
        outputs.append((run.read_bytes(), qrels.read_bytes(), printed.replace(str(tmp_path), "")))
    assert outputs[0][0].count(b"\n") > 1000
    assert outputs[1][0] == outputs[0][0] and outputs[1][1] == outputs[0][1]


def test_cranfield_bm25_export_is_byte_identical(
    capsys: pytest.CaptureFixture[str],
    cranfield_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Oracle: ``trec export --retriever bm25`` on one machine, Cranfield (225 queries, top
    100). ``fuse`` on Cranfield is left to the handbook's test: on one machine it takes minutes
    (every ranker, the fusion weight over eleven values), too long for each CI run. The run
    names chunks by id, which needs no page's text: the client fetches none (it fetched 1,399
    pages, one round trip each)."""
    data = _cranfield_options(cranfield_dir)
    runs = []
    labs = recorded_labs(monkeypatch)
    for extra in ([], ["--workers", "2"]):
        run = tmp_path / f"cran{len(extra)}.run"
        _stdout(capsys, ["trec", "export", "--retriever", "bm25", "--run", str(run), *data, *extra])
        runs.append(run.read_bytes())
    assert runs[0].count(b"\n") == 225 * 100
    assert runs[1] == runs[0]
    (lab,) = labs
    # The pages stay on the workers, gone with the cluster: their texts' source is asked.
    held = lab.corpus.pages.texts  # type: ignore[attr-defined]
    assert held.round_trips == 0 and held.fetched == 0


def test_workers_and_scheduler_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    """Oracle: argparse's usage error (exit 2) for two exclusive options, and for 0 workers."""
    with pytest.raises(SystemExit) as both:
        main(["fuse", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"])
    with pytest.raises(SystemExit) as zero:
        main(["fuse", "--workers", "0"])
    assert both.value.code == 2 and zero.value.code == 2
    assert "not allowed with" in capsys.readouterr().err


def _address(client: Any) -> list[str]:
    return ["--scheduler", str(client.scheduler.address)]


def test_a_relative_corpus_is_read_from_the_same_folder_by_the_workers(
    capsys: pytest.CaptureFixture[str],
    client: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Oracle: the run ``trec export`` writes on one machine, the client in a folder of its own
    and ``--corpus`` relative to it; the workers, in another folder, read the same files."""
    shutil.copytree(bundled_questions_path().parent, tmp_path / "handbook")
    monkeypatch.chdir(tmp_path)
    data = ["--corpus", "handbook", "--questions", "handbook/questions.jsonl"]
    for name, extra in (("single.run", []), ("cluster.run", _address(client))):
        _stdout(capsys, ["trec", "export", "--retriever", "bm25", "--run", name, *data, *extra])
    single = (tmp_path / "single.run").read_bytes()
    assert single.count(b"\n") > 1000
    assert (tmp_path / "cluster.run").read_bytes() == single


def test_a_bm25_run_on_the_cluster_encodes_no_chunk_and_reads_no_page_here(
    capsys: pytest.CaptureFixture[str],
    client: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Oracle: ``raglab run --retriever bm25`` on one machine, which encodes no neural vector
    (its vector cache stays empty) and reads each page file once (one call of
    ``read_page_file`` a page); with the cluster, the same bytes, the cache as empty, no
    encoding stage on stderr (before, every chunk was encoded on the workers) and no page file
    read in this process: the workers read them (before, this process read each one too)."""
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(tmp_path / "cache"))
    read: list[Path] = []
    reader = pages_module.read_page_file

    def spied(path: Path, **options: Any) -> Any:
        read.append(path)
        return reader(path, **options)

    n_pages = len(load_corpus())
    monkeypatch.setattr(pages_module, "read_page_file", spied)
    single = _stdout(capsys, ["run", "--retriever", "bm25"])
    assert not list((tmp_path / "cache").rglob("*.npy"))
    assert len(read) == n_pages > 0
    read.clear()
    assert main(["run", "--retriever", "bm25", *_address(client)]) == 0
    captured = capsys.readouterr()
    assert captured.out == single
    assert "fit LSA" in captured.err and "(neural)" not in captured.err
    assert not list((tmp_path / "cache").rglob("*.npy"))
    assert read == []


def _reachable(root: object) -> list[object]:
    """Every object reachable from ``root`` by references (gc's referents), ``root`` included."""
    seen = {id(root)}
    todo, found = [root], [root]
    while todo:
        for child in gc.get_referents(todo.pop()):
            # A weak proxy whose object is gone raises on any use, isinstance included.
            if type(child) in weakref.ProxyTypes:
                continue
            if id(child) not in seen and not isinstance(child, type | ModuleType):
                seen.add(id(child))
                todo.append(child)
                found.append(child)
    return found


def test_a_bm25_run_on_the_cluster_holds_no_chunk_or_table_of_every_chunk_on_the_client(
    client: Any, handbook: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: ``run_pipeline`` with the default settings but the BM25 retriever on the
    handbook's lab on one machine (the same result), and the chunks the chunker makes of the
    handbook (``chunk_pages``). Once the run with the reranker is done on the cluster:

    - the client's chunking holds none of the tables of every chunk that the reranker's
      features and MMR built before (tokens, LSA projections, TF-IDF rows, identifiers, title
      terms): it read only its candidates' rows (ChunkSet.tfidf_rows and the like);
    - nothing the client's lab holds is a chunk or a chunk's text (a str equal to one, that is
      not a whole page's text): its chunking holds offsets and word counts (ChunkTable), and
      the chunks the run read were made and let go."""
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(tmp_path / "cache"))
    args = build_parser("run").parse_args(["run", "--retriever", "bm25", *_address(client)])
    settings = settings_from(args)
    split = split_from(args)
    first = settings.retrieval
    with cluster_lab(args, first, rerank=first, run=(settings, split)) as lab:
        result = run_pipeline(lab, settings, split=split)
        tables = set(vars(lab.indexes.chunk_set()))
        gc.collect()
        held = _reachable(lab)
    whole = {"tokens", "lsa_projections", "tfidf", "identifiers", "title_terms"}
    assert tables & whole == set()
    assert result == run_pipeline(Lab(handbook.corpus, handbook.questions), settings, split=split)
    key = first.chunking.resolved()
    # The handbook read here: the lab's pages hold no text once the cluster is closed.
    corpus = load_corpus()
    assert [page.id for page in corpus] == [page.id for page in lab.corpus]
    made = chunk_pages(corpus, method=key.method, size=key.size, overlap=key.overlap)
    pages = {page.text for page in corpus}
    texts = {c.text for c in made} - pages
    assert len(lab.indexes.chunk_set(first.chunking)) == len(made)
    assert [o for o in held if isinstance(o, Chunk)] == []
    assert [o for o in held if isinstance(o, str) and o in texts] == []


def test_a_run_the_questions_cannot_feed_stops_before_the_cluster_works(
    capsys: pytest.CaptureFixture[str], client: Any, cranfield_dir: Path
) -> None:
    """Oracle: the line one machine gives for an end-to-end run on questions labelled by pages
    (exit 2); with the cluster it comes before the LSA fit and the BM25 index (no stage line of
    theirs), after only the locating of the (no) answer passages."""
    data = _cranfield_options(cranfield_dir)
    assert main(["run", *data]) == 2
    single = capsys.readouterr().err.splitlines()[-1]
    assert "needs answer passages" in single
    assert main(["run", *data, *_address(client)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1] == single
    stages = [line for line in lines if line.startswith("cluster: ")]
    assert len(stages) == 1 and stages[0].startswith("cluster: locate 0 answer passages"), lines


def test_a_missing_questions_file_is_said_before_the_scheduler_is_reached(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Oracle: the exit status and lines naming the missing file, which one machine gives; the
    scheduler's address leads nowhere, and is never tried."""
    missing = tmp_path / "nowhere.jsonl"
    argv = ["trec", "export", "--retriever", "bm25", "--run", str(tmp_path / "a.run")]
    data = ["--corpus", str(bundled_questions_path().parent), "--questions", str(missing)]
    status = main([*argv, *data])
    single = capsys.readouterr().err
    assert status != 0 and f"{missing}: cannot be read" in single
    assert main([*argv, *data, "--scheduler", "tcp://127.0.0.1:1"]) == status
    assert capsys.readouterr().err == single


def test_shards_per_worker_cuts_the_work_and_changes_no_byte(
    capsys: pytest.CaptureFixture[str], client: Any, tmp_path: Path
) -> None:
    """Oracle: the run ``trec export`` writes on one machine; with three shards per worker on
    the two workers the pages and the BM25 index come in 6 pieces (the stage lines say so),
    and the run is the same bytes."""
    runs = []
    for extra in ([], [*_address(client), "--shards-per-worker", "3"]):
        run = tmp_path / f"{len(extra)}.run"
        assert main(["trec", "export", "--retriever", "bm25", "--run", str(run), *extra]) == 0
        runs.append(run.read_bytes())
    err = capsys.readouterr().err
    assert "chunks in 6 shards" in err and "passages in 58 page files" in err
    assert runs[1] == runs[0]


def test_the_cluster_options_default_to_the_settings_and_exclude_each_other(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Oracle: raglab.settings' constants for the options left out; argparse's usage error
    (exit 2) for --scheduler with --scheduler-file, and for 0 shards or seconds."""
    parser = argparse.ArgumentParser()
    add_cluster_options(parser)
    options = connect_options(parser.parse_args(["--scheduler-file", "s.json"]))
    assert options == {
        "workers": None,
        "scheduler": None,
        "scheduler_file": "s.json",
        "shards_per_worker": CLUSTER_SHARDS_PER_WORKER,
        "connect_timeout": CLUSTER_CONNECT_TIMEOUT,
        "no_workers_timeout": CLUSTER_NO_WORKERS_TIMEOUT,
    }
    given = parser.parse_args(
        ["--workers", "1", "--shards-per-worker", "5", "--connect-timeout", "2.5"]
    )
    assert connect_options(given)["shards_per_worker"] == 5
    assert connect_options(given)["connect_timeout"] == 2.5
    for bad in (
        ["--scheduler", "tcp://127.0.0.1:1", "--scheduler-file", "s.json"],
        ["--workers", "1", "--shards-per-worker", "0"],
        ["--workers", "1", "--no-workers-timeout", "0"],
    ):
        with pytest.raises(SystemExit) as exit_:
            main(["fuse", *bad])
        assert exit_.value.code == 2
    assert "not allowed with" in capsys.readouterr().err


def test_a_scheduler_out_of_reach_is_given_up_on_after_the_connect_timeout(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Oracle: exit 2 and one line naming the address and --connect-timeout, within that
    time (1 s) and a margin for a loaded machine, from a port that takes the connection and
    never answers; and a scheduler file that does not exist."""
    argv = ["trec", "export", "--retriever", "bm25", "--run", str(tmp_path / "a.run")]
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        start = time.monotonic()
        assert main([*argv, "--scheduler", address, "--connect-timeout", "1"]) == 2
        assert time.monotonic() - start < 20
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and f"cannot reach the Dask scheduler at {address}" in err[0], err
    assert "within 1 s (--connect-timeout)" in err[0]
    missing = tmp_path / "none.json"
    assert main([*argv, "--scheduler-file", str(missing)]) == 2
    assert f"the Dask scheduler file {missing} does not exist" in capsys.readouterr().err
