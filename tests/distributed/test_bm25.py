"""BM25 and evaluation on a 2-process LocalCluster equal the single machine's, bit for bit.

Oracles: ``raglab.bm25.index.BM25Index`` over the lab's chunks (the single-machine index, and its
``grid_top_k`` over exhibit II's k1 x b grid), and
``raglab.metrics.measures.evaluate`` / ``raglab.pipeline.retrieval.measure`` (the single-machine
measures), on the bundled handbook and on Cranfield.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from distributed import get_task_stream
from raglab.bm25.grid import grid_top_k
from raglab.bm25.index import BM25Index
from raglab.distributed.bm25 import TREE_ARITY, DistributedBM25, count_partition, reduce_tree
from raglab.distributed.evaluation import evaluate_on_cluster, measure_on_cluster
from raglab.distributed.pipeline import index_lab, prime_bm25, prime_grid
from raglab.metrics.measures import evaluate
from raglab.pipeline.grid import bm25_grid
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import RANKINGS, rank, rank_split, relevance_of, resolve
from raglab.run_settings import ChunkingKey, RetrievalSettings
from raglab.settings import GRID_B, GRID_K1, default
from tests.distributed.cluster_fixtures import WHOLE_PAGES


def _check_index(lab: Lab, index: DistributedBM25, local: BM25Index, *, k: int) -> None:
    queries = [lab.indexes.query_tokens(q) for q in lab.questions]
    assert len(index.sizes) > 1  # really sharded
    assert index.n_docs == local.n_docs and index.avgdl == local.avgdl
    for tokens in queries:
        assert (
            index.scores(tokens, k1=default("k1"), b=default("b")).tobytes()
            == local.scores(tokens).tobytes()
        )
    docs, scores = index.search_many(queries, k=k, k1=default("k1"), b=default("b"))
    for row, tokens in enumerate(queries):
        want = local.search(tokens, k=k)
        assert docs[row].tolist() == want.indices.tolist()
        assert scores[row].tobytes() == want.scores.tobytes()


def test_handbook_scores_and_top_k_equal_one_index(client: Any, handbook: Lab) -> None:
    """Oracle: BM25Index.scores and .search on the handbook's heading chunks."""
    index = index_lab(client, handbook)
    _check_index(handbook, index, handbook.indexes.chunk_set().bm25, k=10)


def test_term_columns_are_the_sorted_vocabulary_and_df_of_every_chunk(
    client: Any, handbook: Lab
) -> None:
    """Oracle: the sorted set of the handbook chunks' tokens (a term's column is its place
    there) and each term's chunks counted here, in plain Python."""
    index = index_lab(client, handbook)
    tokens = handbook.indexes.chunk_set().tokens
    vocabulary = sorted({t for doc in tokens for t in doc})
    terms = vocabulary[:3] + vocabulary[len(vocabulary) // 2 :][:5] + vocabulary[-2:]
    n_docs, n_terms, columns, df = index.term_columns(terms)
    assert (n_docs, n_terms) == (len(tokens), len(vocabulary))
    assert columns.tolist() == [vocabulary.index(t) for t in terms]
    assert df.tolist() == [sum(t in doc for doc in tokens) for t in terms]
    with pytest.raises(ValueError, match="not in the collection"):
        index.term_columns(["zzz-no-chunk-holds-this"])


def test_term_columns_asked_ahead_are_answered_without_a_task(client: Any, handbook: Lab) -> None:
    """Oracle: the same index's term_columns asked of the worker. Once ``ahead`` has looked up
    a set of terms, any sorted subset is answered from it, equal value for value and dtype for
    dtype, with no task; a term outside the set is asked of the worker again."""
    index = index_lab(client, handbook)
    vocabulary = sorted({t for doc in handbook.indexes.chunk_set().tokens for t in doc})
    kept = vocabulary[::7]
    wanted = [kept[1:9], kept[-3:], [kept[0]]]
    expected = [index.term_columns(terms) for terms in wanted]
    index.ahead(kept)
    with get_task_stream(client) as stream:
        got = [index.term_columns(terms) for terms in wanted]
    assert stream.data == []
    for (n, v, columns, df), (n_want, v_want, columns_want, df_want) in zip(
        got, expected, strict=True
    ):
        assert (n, v) == (n_want, v_want)
        assert columns.tolist() == columns_want.tolist() and columns.dtype == columns_want.dtype
        assert df.tolist() == df_want.tolist() and df.dtype == df_want.dtype
    with get_task_stream(client) as stream:
        index.term_columns([vocabulary[1]])
    assert len(stream.data) == 1


def test_handbook_fixed_chunks_at_other_parameters(client: Any, handbook: Lab) -> None:
    """Oracle: BM25Index at k1 = 0.6, b = 0.3 on fixed windows of 50 words, overlap 10."""
    key = ChunkingKey("fixed", 50, 10)
    index = index_lab(client, handbook, key, partitions=5)
    local = handbook.indexes.chunk_set(key).bm25.with_params(k1=0.6, b=0.3)
    queries = [handbook.indexes.query_tokens(q) for q in handbook.questions]
    docs, scores = index.search_many(queries, k=100, k1=0.6, b=0.3)
    for row, tokens in enumerate(queries):
        want = local.search(tokens, k=100)
        assert docs[row].tolist() == want.indices.tolist()
        assert scores[row].tobytes() == want.scores.tobytes()


def test_cranfield_scores_and_top_k_equal_one_index(client: Any, cranfield: Lab) -> None:
    """Oracle: BM25Index over Cranfield's 1,400 stemmed abstracts, 225 queries, top 100."""
    index = index_lab(client, cranfield, WHOLE_PAGES)
    _check_index(cranfield, index, cranfield.indexes.chunk_set(WHOLE_PAGES).bm25, k=100)


def test_tokens_sent_from_the_client_index_the_same(client: Any, cranfield: Lab) -> None:
    """Oracle: BM25Index over the same tokens, cut into three uneven partitions."""
    tokens = cranfield.indexes.chunk_set(WHOLE_PAGES).tokens
    index = DistributedBM25.from_partitions(client, [tokens[:1], tokens[1:900], tokens[900:]])
    _check_index(cranfield, index, BM25Index(tokens, k1=1.2, b=0.75), k=10)


def test_frequencies_reduced_in_a_tree_on_the_workers(client: Any, cranfield: Lab) -> None:
    """Oracle: BM25Index's own document frequencies over the same tokens (7 uneven partitions,
    an empty one among them, so a tree of 2 or 3 tables a task has three or two levels, and
    the default's one), and its scores and top k through the deepest tree's table. The client
    holds N and L only; the table comes from the worker that reduced it."""
    tokens = cranfield.indexes.chunk_set(WHOLE_PAGES).tokens
    cuts = [0, 1, 1, 200, 450, 451, 1000, len(tokens)]
    parts = [tokens[a:z] for a, z in itertools.pairwise(cuts)]
    futures = client.scatter(parts, hash=False)
    counts = [client.submit(count_partition, f, pure=False) for f in futures]
    local = BM25Index(tokens, k1=1.2, b=0.75)
    indptr = local.stats.columns.indptr
    want = dict(zip(local.vocabulary.terms, np.diff(indptr).tolist(), strict=True))
    for arity in (TREE_ARITY, 3, 2):
        index = DistributedBM25.from_counts(client, counts, arity=arity)
        assert index.stats.df == {}
        assert index.document_frequencies() == want, arity
    _check_index(cranfield, index, local, k=10)


def test_a_tree_needs_two_tables_a_task(client: Any) -> None:
    with pytest.raises(ValueError, match="arity must be at least 2"):
        reduce_tree(client, [], arity=1)


@pytest.mark.parametrize("retriever", ["bm25", "rrf", "score"])
def test_primed_rankings_are_the_single_machine_rankings(
    client: Any, handbook: Lab, retriever: str
) -> None:
    """Oracle: rank() on a fresh lab with its own BM25 index. The primed lab must read the
    cluster's lists (the very objects stored) and never build a BM25 index of its own."""
    primed = Lab(handbook.corpus, handbook.questions)
    # Ranking never chooses a weight: score fusion's is chosen once, on the single machine.
    settings = resolve(handbook, RetrievalSettings(retriever, depth=50, fusion_depth=50))
    index = index_lab(client, primed)
    assert prime_bm25(primed, index, settings) == len(primed.questions)
    component = RetrievalSettings("bm25", depth=50)
    for q in primed.questions:
        stored = primed.caches.of(RANKINGS).find((component, q.id))
        assert stored is not None and rank(primed, q, component) is stored
        ours, theirs = rank(primed, q, settings), rank(handbook, q, settings)
        assert ours.indices.tolist() == theirs.indices.tolist()
        assert ours.scores.tobytes() == theirs.scores.tobytes()
    assert "bm25" not in primed.indexes.chunk_set().__dict__


@pytest.mark.parametrize("retriever", ["bm25", "rrf"])
def test_metrics_measured_on_the_workers_equal_evaluate(
    client: Any, handbook: Lab, retriever: str
) -> None:
    """Oracle: raglab.metrics.measures.evaluate and measure() on the single machine."""
    settings = RetrievalSettings(retriever)
    rankings = rank_split(handbook, "test", settings)
    relevant = relevance_of(handbook, "test")
    assert evaluate_on_cluster(client, rankings, relevant, partitions=3) == evaluate(
        rankings, relevant, ks=(1, 3, 5, 10), ndcg_k=10, precision_k=3
    )
    from raglab.pipeline.retrieval import measure

    assert measure_on_cluster(client, handbook, "train", settings) == measure(
        handbook, "train", settings
    )


def test_cranfield_metrics_on_the_workers(client: Any, cranfield: Lab) -> None:
    """Oracle: raglab.metrics.measures.evaluate over Cranfield's graded page labels."""
    settings = RetrievalSettings("bm25", chunking=WHOLE_PAGES)
    rankings = rank_split(cranfield, "test", settings)
    relevant = relevance_of(cranfield, "test", WHOLE_PAGES)
    assert evaluate_on_cluster(client, rankings, relevant) == evaluate(
        rankings, relevant, ks=(1, 3, 5, 10), ndcg_k=10, precision_k=3
    )


def test_grid_cells_on_the_shards_equal_grid_top_k(client: Any, cranfield: Lab) -> None:
    """Oracle: :func:`raglab.bm25.grid.grid_top_k` on the single index, every one of the 176 cells
    of exhibit II's grid, Cranfield's training questions; and the whole :class:`Grid` (recall,
    hits, best cell, ties) of :func:`bm25_grid` from the lab's own index."""
    index = index_lab(client, cranfield, WHOLE_PAGES)
    queries = [cranfield.indexes.query_tokens(q) for q in cranfield.split("train")]
    local = cranfield.indexes.chunk_set(WHOLE_PAGES).bm25
    docs, scores = index.search_grid(queries, k=5, k1s=GRID_K1, bs=GRID_B)
    want = grid_top_k(local, queries, k1s=GRID_K1, bs=GRID_B, k=5)
    assert docs.shape == want.shape == (16, 11, len(queries), 5)
    assert docs.tobytes() == want.tobytes()
    for i, k1 in enumerate(GRID_K1[::5]):
        for j, b in enumerate(GRID_B[::5]):
            tops = local.with_params(k1=k1, b=b).search_many(queries, k=5)[1]
            assert scores[5 * i, 5 * j].tobytes() == tops.tobytes()

    fresh = Lab(cranfield.corpus, cranfield.questions, stem=True)
    clustered = prime_grid(fresh, index, WHOLE_PAGES)
    single = bm25_grid(cranfield, chunking=WHOLE_PAGES, k=5)
    assert clustered is not None
    assert clustered.hits.tobytes() == single.hits.tobytes()
    assert (clustered.best_k1, clustered.best_b, clustered.tied) == (
        single.best_k1,
        single.best_b,
        single.tied,
    )
    best = RetrievalSettings("bm25", k1=single.best_k1, b=single.best_b, chunking=WHOLE_PAGES)
    for q in list(cranfield.questions)[:40]:
        got, ref = rank(fresh, q, best), rank(cranfield, q, best)
        assert got.indices.tolist() == ref.indices.tolist()
