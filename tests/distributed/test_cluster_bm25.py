"""BM25 and evaluation on a 2-process LocalCluster equal the single machine's, bit for bit.

Oracles: ``raglab.bm25.BM25Index`` over the lab's chunks (the single-machine index), and
``raglab.metrics.evaluate`` / ``raglab.pipeline.retrieval.measure`` (the single-machine
measures), on the bundled handbook and on Cranfield.
"""

from __future__ import annotations

from typing import Any

import pytest
from cluster_fixtures import WHOLE_PAGES, client, cranfield, cranfield_dir, handbook

from raglab.bm25 import BM25Index
from raglab.distributed.bm25 import DistributedBM25
from raglab.distributed.evaluation import evaluate_on_cluster, measure_on_cluster
from raglab.distributed.pipeline import index_lab, prime_bm25
from raglab.metrics import evaluate
from raglab.pipeline.lab import ChunkingKey, Lab
from raglab.pipeline.retrieval import RetrievalSettings, rank, rank_split, relevance_of

__all__ = ["client", "cranfield", "cranfield_dir", "handbook"]  # fixtures, used by name


def _check_index(lab: Lab, index: DistributedBM25, local: BM25Index, *, k: int) -> None:
    queries = [lab.query_tokens(q) for q in lab.questions]
    assert len(index.sizes) > 1  # really sharded
    assert index.n_docs == local.n_docs and index.avgdl == local.avgdl
    for tokens in queries:
        assert index.scores(tokens).tobytes() == local.scores(tokens).tobytes()
    docs, scores = index.search_many(queries, k=k)
    for row, tokens in enumerate(queries):
        want = local.search(tokens, k=k)
        assert docs[row].tolist() == want.indices.tolist()
        assert scores[row].tobytes() == want.scores.tobytes()


def test_handbook_scores_and_top_k_equal_one_index(client: Any, handbook: Lab) -> None:
    """Oracle: BM25Index.scores and .search on the handbook's heading chunks."""
    index = index_lab(client, handbook)
    _check_index(handbook, index, handbook.chunk_set().bm25, k=10)


def test_handbook_fixed_chunks_at_other_parameters(client: Any, handbook: Lab) -> None:
    """Oracle: BM25Index at k1 = 0.6, b = 0.3 on fixed windows of 50 words, overlap 10."""
    key = ChunkingKey("fixed", 50, 10)
    index = index_lab(client, handbook, key, partitions=5)
    local = handbook.chunk_set(key).bm25.with_params(k1=0.6, b=0.3)
    queries = [handbook.query_tokens(q) for q in handbook.questions]
    docs, scores = index.search_many(queries, k=100, k1=0.6, b=0.3)
    for row, tokens in enumerate(queries):
        want = local.search(tokens, k=100)
        assert docs[row].tolist() == want.indices.tolist()
        assert scores[row].tobytes() == want.scores.tobytes()


def test_cranfield_scores_and_top_k_equal_one_index(client: Any, cranfield: Lab) -> None:
    """Oracle: BM25Index over Cranfield's 1,400 stemmed abstracts, 225 queries, top 100."""
    index = index_lab(client, cranfield, WHOLE_PAGES)
    _check_index(cranfield, index, cranfield.chunk_set(WHOLE_PAGES).bm25, k=100)


def test_tokens_sent_from_the_client_index_the_same(client: Any, cranfield: Lab) -> None:
    """Oracle: BM25Index over the same tokens, cut into three uneven partitions."""
    tokens = cranfield.chunk_set(WHOLE_PAGES).tokens
    index = DistributedBM25.from_partitions(client, [tokens[:1], tokens[1:900], tokens[900:]])
    _check_index(cranfield, index, BM25Index(tokens), k=10)


@pytest.mark.parametrize("retriever", ["bm25", "rrf", "score"])
def test_primed_rankings_are_the_single_machine_rankings(
    client: Any, handbook: Lab, retriever: str
) -> None:
    """Oracle: rank() on a fresh lab with its own BM25 index. The primed lab must read the
    cluster's lists (the very objects stored) and never build a BM25 index of its own."""
    primed = Lab(handbook.corpus, handbook.questions)
    settings = RetrievalSettings(retriever, depth=50, fusion_depth=50)
    index = index_lab(client, primed)
    assert prime_bm25(primed, index, settings) == len(primed.questions)
    component = RetrievalSettings("bm25", depth=50)
    for q in primed.questions:
        stored = primed.per_question.find(("rank", component, q.id))
        assert stored is not None and rank(primed, q, component) is stored
        ours, theirs = rank(primed, q, settings), rank(handbook, q, settings)
        assert ours.indices.tolist() == theirs.indices.tolist()
        assert ours.scores.tobytes() == theirs.scores.tobytes()
    assert "bm25" not in primed.chunk_set().__dict__


@pytest.mark.parametrize("retriever", ["bm25", "rrf"])
def test_metrics_measured_on_the_workers_equal_evaluate(
    client: Any, handbook: Lab, retriever: str
) -> None:
    """Oracle: raglab.metrics.evaluate and measure() on the single machine."""
    settings = RetrievalSettings(retriever)
    rankings = rank_split(handbook, "test", settings)
    relevant = relevance_of(handbook, "test")
    assert evaluate_on_cluster(client, rankings, relevant, partitions=3) == evaluate(
        rankings, relevant
    )
    from raglab.pipeline.retrieval import measure

    assert measure_on_cluster(client, handbook, "train", settings) == measure(
        handbook, "train", settings
    )


def test_cranfield_metrics_on_the_workers(client: Any, cranfield: Lab) -> None:
    """Oracle: raglab.metrics.evaluate over Cranfield's graded page labels."""
    settings = RetrievalSettings("bm25", chunking=WHOLE_PAGES)
    rankings = rank_split(cranfield, "test", settings)
    relevant = relevance_of(cranfield, "test", WHOLE_PAGES)
    assert evaluate_on_cluster(client, rankings, relevant) == evaluate(rankings, relevant)
