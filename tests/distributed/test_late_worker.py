"""A worker that joins the cluster after the index is built changes no answer.

Oracles: ``raglab.bm25.index.BM25Index`` on the single machine (every question's top 10 and its
scores, and :func:`raglab.bm25.grid.grid_top_k` over exhibit II's k1 x b grid) and
:func:`raglab.embedding.lsa.fit_lsa`'s model (the lab's own ``lsa``), compared as bytes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from raglab.bm25.grid import grid_top_k
from raglab.distributed.lsa import fit_lsa_on_cluster
from raglab.distributed.pipeline import index_lab
from raglab.pipeline.lab import Lab
from raglab.run_settings import ChunkingKey
from raglab.settings import GRID_B, GRID_K1, LSA_OVERSAMPLE, SEED, default
from tests.distributed.cluster_fixtures import client

__all__ = ["client"]  # a fixture, used by name: a cluster of its own, which this test grows


def test_a_worker_joining_after_the_index_changes_nothing(client: Any, handbook: Lab) -> None:
    """The index is built on 2 workers; the LocalCluster is then scaled to 3 (as a deployment
    adds a worker mid-run) and the queries, the grid and the LSA fit (6 row blocks, two for
    each of the 3 workers) run with the newcomer among them: it runs some of the tasks, and
    every answer is the single machine's."""
    from distributed import get_task_stream

    index = index_lab(client, handbook, ChunkingKey())
    before = set(client.scheduler_info()["workers"])
    assert len(before) == 2
    client.cluster.scale(3)
    client.wait_for_workers(3, timeout=120)
    late = set(client.scheduler_info()["workers"]) - before
    assert len(late) == 1

    local = handbook.indexes.chunk_set().bm25
    queries = [handbook.indexes.query_tokens(q) for q in handbook.questions]
    train = [handbook.indexes.query_tokens(q) for q in handbook.split("train")]
    ref = handbook.indexes.lsa
    with get_task_stream(client) as stream:
        docs, scores = index.search_many(queries, k=10, k1=default("k1"), b=default("b"))
        grid_docs, _ = index.search_grid(train, k=5, k1s=GRID_K1, bs=GRID_B)
        model = fit_lsa_on_cluster(
            client,
            handbook.indexes.lsa_windows,
            rank=ref.rank,
            seed=SEED,
            oversample=LSA_OVERSAMPLE,
        )
    assert {t["worker"] for t in stream.data} & late  # the newcomer did some of the work

    for row, tokens in enumerate(queries):
        want = local.search(tokens, k=10)
        assert docs[row].tolist() == want.indices.tolist()
        assert scores[row].tobytes() == want.scores.tobytes()
    want_grid = grid_top_k(local, train, k1s=GRID_K1, bs=GRID_B, k=5)
    assert np.asarray(grid_docs).tobytes() == want_grid.tobytes()
    assert model.vocabulary == ref.vocabulary
    for name in ("idf", "U", "s", "Vt"):
        assert getattr(model, name).tobytes() == getattr(ref, name).tobytes(), name
    assert model.frobenius_sq == ref.frobenius_sq
