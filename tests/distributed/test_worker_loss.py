"""A worker killed in any phase of the work changes nothing: Dask reruns the lost tasks.

Oracles: ``raglab.bm25.index.BM25Index`` on the single machine (scores and top k of every
question), and the report ``raglab report`` writes on one machine.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import dask
import pytest

from raglab.cli.main import main
from raglab.distributed.bm25 import DistributedBM25
from raglab.distributed.chunking import count_chunks, submit_files
from raglab.distributed.cluster import connect
from raglab.pipeline.lab import Lab
from raglab.run_settings import ChunkingKey
from raglab.settings import default
from tests.distributed.cluster_fixtures import KillOnce, SingleMachine, client, killed

__all__ = ["client"]  # a fixture, used by name: a cluster of its own


def test_killing_a_worker_mid_index_gives_the_same_answers(client: Any, handbook: Lab) -> None:
    """The partitions are read, chunked and counted on the workers; one worker process is then
    killed (SIGKILL) while it holds some of the counts, before the statistics are reduced.
    Dask recomputes what died with it from the files, and every answer is the single index's."""

    from distributed import wait

    key = ChunkingKey().resolved()
    files = [Path(p.source) for p in handbook.corpus]
    parts = submit_files(client, files, key, partitions=6)
    counts = [client.submit(count_chunks, p, "raglab", False, pure=False) for p in parts]
    wait(counts)
    holders = {addr for addrs in client.who_has(counts).values() for addr in addrs}
    victim = sorted(holders)[0]
    pid = client.run(os.getpid, workers=[victim])[victim]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while victim in client.scheduler_info()["workers"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert victim not in client.scheduler_info()["workers"]  # it really died
    index = DistributedBM25.from_counts(client, counts)
    local = handbook.indexes.chunk_set().bm25
    queries = [handbook.indexes.query_tokens(q) for q in handbook.questions]
    docs, scores = index.search_many(queries, k=10, k1=default("k1"), b=default("b"))
    for row, tokens in enumerate(queries):
        want = local.search(tokens, k=10)
        assert docs[row].tolist() == want.indices.tolist()
        assert scores[row].tobytes() == want.scores.tobytes()


def _total(values: list[int]) -> int:
    """Task: the sum of ``values``."""
    return sum(values)


def test_workers_of_a_local_cluster_restarting_slowly_all_come_back() -> None:
    """Oracle: the workers' count and a task's hand-worked result (1 + 2 + 3 = 6). Dask's
    LocalCluster closes the nanny of a lost worker for good when, ``lost-worker-timeout``
    after the loss (15 s by default), no worker of its name has registered again: a restart
    slower than that (a new process importing numpy, scipy, numba and RAG lab on a loaded
    machine) cost the cluster that nanny, and two such losses every worker, and the command
    stopped on --no-workers-timeout. Here the timer is 0.2 s, shorter than any restart, and
    both workers of :func:`connect`'s cluster are killed 1 s apart: both nannies restart
    theirs, and the work goes on."""
    with (
        dask.config.set({"distributed.deploy.lost-worker-timeout": "200ms"}),
        connect(workers=2) as c,
    ):
        lost = set(c.scheduler_info()["workers"])
        for pid in sorted(c.run(os.getpid).values()):
            os.kill(pid, signal.SIGKILL)
            time.sleep(1)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            now = set(c.scheduler_info()["workers"])
            if len(now) == 2 and not now & lost:
                break
            time.sleep(0.2)
        assert len(now) == 2 and not now & lost, now
        assert c.submit(_total, [1, 2, 3], pure=False).result(timeout=60) == 6


#: The first task of each phase of ``raglab report`` on a cluster, by its function's name:
#: reading the pages (once, for every stage), locating the answer passages, cutting the LSA
#: windows, chunking, counting the terms, the LSA fit's product A^T Y block after block, encoding
#: the neural vectors into the cache, the k1 x b grid, measuring.
PHASES = (
    "read_range",
    "locate_in_pages",
    "cut_window_pieces",
    "chunk_partition",
    "count_chunks",
    "chain_transpose_times",
    "store_pieces",
    "search_shard_grid",
    "per_query_values",
)


def test_a_worker_killed_in_every_phase_changes_no_byte_of_the_report(
    client: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    single_machine: SingleMachine,
) -> None:
    """Oracle: the report ``raglab report`` writes on one machine (SOURCE_DATE_EPOCH set). On
    the cluster a worker process kills itself as it starts the first task of each phase
    (:class:`KillOnce`), the neural vectors encoded on the workers from an empty cache: the
    command succeeds, every phase lost a worker, the cluster kept both nannies, and the report
    is the same bytes."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    single = single_machine("report", "--out", "OUT.json", "--json")
    assert single.status == 0
    marks = tmp_path / "killed"
    marks.mkdir()
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(tmp_path / "empty-cache"))
    client.register_plugin(KillOnce(PHASES, marks), name="kill-once")
    try:
        clustered = tmp_path / "cluster.json"
        argv = ["report", "--out", str(clustered), "--quiet"]
        assert main([*argv, "--scheduler", client.scheduler.address]) == 0
    finally:
        client.unregister_worker_plugin("kill-once")
    capsys.readouterr()
    assert killed(marks) == set(PHASES)
    # Each lost worker's nanny restarted it, however long that took: none was closed.
    assert len(client.cluster.workers) == 2
    assert clustered.read_bytes() == single.file


def test_a_worker_killed_counting_the_readers_terms_changes_no_byte(
    client: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    single_machine: SingleMachine,
) -> None:
    """Oracle: ``raglab run --reader-scoring idf --json`` on one machine. On the cluster a
    worker kills itself as it starts counting a partition's reader terms (the IDF-weighted
    coverage's document frequencies, :mod:`raglab.distributed.reading`): the run succeeds, a
    worker was lost there, and the output is the same bytes."""
    argv = ["run", "--reader-scoring", "idf", "--retriever", "bm25", "--json"]
    single = single_machine(*argv)
    assert single.status == 0
    marks = tmp_path / "killed"
    marks.mkdir()
    client.register_plugin(KillOnce(("count_reader_terms",), marks), name="kill-once")
    try:
        assert main([*argv, "--scheduler", client.scheduler.address]) == 0
    finally:
        client.unregister_worker_plugin("kill-once")
    assert killed(marks) == {"count_reader_terms"}
    assert capsys.readouterr().out == single.out
