"""A worker killed during indexing changes nothing: Dask reruns the lost tasks.

Oracle: ``raglab.bm25.index.BM25Index`` on the single machine (scores and top k of every question).
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any

from raglab.distributed.bm25 import DistributedBM25
from raglab.distributed.chunking import count_chunks, submit_files
from raglab.pipeline.lab import Lab
from raglab.run_settings import ChunkingKey
from raglab.settings import default
from tests.distributed.cluster_fixtures import client

__all__ = ["client"]  # a fixture, used by name: a cluster of its own


def test_killing_a_worker_mid_index_gives_the_same_answers(client: Any, handbook: Lab) -> None:
    """The partitions are read, chunked and counted on the workers; one worker process is then
    killed (SIGKILL) while it holds some of the counts, before the statistics are reduced.
    Dask recomputes what died with it from the files, and every answer is the single index's."""
    from pathlib import Path

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
