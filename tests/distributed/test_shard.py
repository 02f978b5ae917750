"""BM25 shards scored with global statistics equal one index bit for bit (no cluster needed).

Oracle throughout: ``raglab.bm25.index.BM25Index`` over the whole collection (the single machine).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from raglab.bm25.index import BM25Index
from raglab.distributed.shard import (
    ScoredShard,
    ShardCounts,
    global_statistics,
    merge_top_k,
    shard_top_k,
)
from raglab.pipeline.lab import Lab

PARAMS = ((1.2, 0.75), (0.0, 0.75), (2.0, 0.0), (0.5, 1.0))


def shards_of(docs: list[list[str]], cuts: list[int]) -> list[ScoredShard]:
    """Shards of ``docs`` cut at ``cuts`` (uneven on purpose), with global statistics."""
    bounds = [0, *cuts, len(docs)]
    counts = [ShardCounts.from_tokens(docs[a:z]) for a, z in itertools.pairwise(bounds)]
    stats = global_statistics(c.summary() for c in counts)
    return [ScoredShard(c, stats, a) for c, a in zip(counts, bounds, strict=False)]


def test_global_statistics_are_the_single_index_statistics(handbook: Lab) -> None:
    """Oracle: BM25Index's N, avgdl and IDFs."""
    docs = handbook.indexes.chunk_set().tokens
    index = BM25Index(docs, k1=1.2, b=0.75)
    shards = shards_of(docs, [7, 100, 101])
    stats = global_statistics(s.counts.summary() for s in shards)
    assert stats.n_docs == index.n_docs
    assert stats.avgdl == index.avgdl
    idf = dict(zip(index.vocabulary.terms, index.idf.tolist(), strict=True))
    for shard in shards:
        assert shard.idf.tolist() == [idf[t] for t in shard.counts.terms]


@pytest.mark.parametrize(("k1", "b"), PARAMS)
def test_shard_scores_equal_the_single_index_bit_for_bit(
    handbook: Lab, k1: float, b: float
) -> None:
    """Oracle: BM25Index.scores of every question, compared as bytes."""
    docs = handbook.indexes.chunk_set().tokens
    index = BM25Index(docs, k1=k1, b=b)
    shards = shards_of(docs, [7, 100, 101])
    for q in handbook.questions:
        tokens = handbook.indexes.query_tokens(q)
        ours = np.concatenate([s.scores(tokens, k1, b) for s in shards])
        assert ours.tobytes() == index.scores(tokens).tobytes(), q.id


def test_per_shard_idf_would_differ(handbook: Lab) -> None:
    """The classic mistake, shown: a shard indexed on its own (its own N, avgdl, n_t) scores its
    documents differently from the whole index, so the global rule above is what makes the
    equality hold. Oracle: BM25Index over the whole collection."""
    docs = handbook.indexes.chunk_set().tokens
    whole = BM25Index(docs, k1=1.2, b=0.75)
    alone = BM25Index(docs[:100], k1=1.2, b=0.75)
    tokens = handbook.indexes.query_tokens(next(iter(handbook.questions)))
    assert not np.array_equal(alone.scores(tokens), whole.scores(tokens)[:100])


@pytest.mark.parametrize("k", [1, 5, 10, 100, 1000])
def test_merged_top_k_is_the_single_index_search(handbook: Lab, k: int) -> None:
    """Oracle: BM25Index.search (order by score, then chunk index; zeros fill by index)."""
    docs = handbook.indexes.chunk_set().tokens
    index = BM25Index(docs, k1=1.2, b=0.75)
    shards = shards_of(docs, [3, 4, 120])
    queries = [handbook.indexes.query_tokens(q) for q in handbook.questions]
    got_docs, got_scores = merge_top_k(
        [s.search_many(queries, k=k, k1=1.2, b=0.75) for s in shards], k
    )
    for row, tokens in enumerate(queries):
        want = index.search(tokens, k=k)
        assert got_docs[row].tolist() == want.indices.tolist()
        assert got_scores[row].tobytes() == want.scores.tobytes()


def test_shard_top_k_orders_ties_by_index() -> None:
    """Oracle: a full stable sort by (-score, index), on scores full of ties."""
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 4, size=200).astype(np.float64)
    for k in (1, 3, 50, 199, 200, 500):
        want = np.lexsort((np.arange(200), -scores))[:k]
        assert shard_top_k(scores, k).tolist() == want.tolist()


def test_a_shard_without_documents_or_terms_is_harmless() -> None:
    """Oracle: BM25Index over the same documents, one of them empty, with an empty shard."""
    docs = [["a", "b"], [], ["b", "c", "c"]]
    counts = [ShardCounts.from_tokens([]), ShardCounts.from_tokens(docs)]
    stats = global_statistics(c.summary() for c in counts)
    shard = ScoredShard(counts[1], stats, 0)
    assert (
        shard.scores(["c", "zzz"], 1.2, 0.75).tobytes()
        == BM25Index(docs, k1=1.2, b=0.75).scores(["c", "zzz"]).tobytes()
    )
    assert shard.scores([], 1.2, 0.75).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize(("k1", "b"), PARAMS)
def test_compiled_and_numpy_shard_search_agree_with_the_index(
    handbook: Lab, k1: float, b: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: BM25Index.search_many over the whole collection. Each shard's top 10 comes from
    the single index's compiled kernel when numba imports, and from numpy scoring when it does
    not; both paths, merged, give the index's lists bit for bit. Postings are stored as the
    index stores them (int32 documents, uint8 frequencies)."""
    from raglab.bm25 import compiled as _bm25_compiled

    docs = handbook.indexes.chunk_set().tokens
    queries = [handbook.indexes.tokens(q.question) for q in handbook.questions]
    want = BM25Index(docs, k1=k1, b=b).search_many(queries, k=10, backend="numpy")
    shards = shards_of(docs, [41, 150])
    assert shards[0].counts.docs.dtype == np.int32 and shards[0].counts.tf.dtype == np.uint8
    assert _bm25_compiled.available()  # the test extra installs numba
    for compiled in (True, False):
        monkeypatch.setattr(_bm25_compiled, "available", lambda on=compiled: on)
        got = merge_top_k([s.search_many(queries, k=10, k1=k1, b=b) for s in shards], 10)
        assert got[0].tolist() == want[0].tolist()
        assert got[1].tobytes() == want[1].tobytes()


def test_a_shard_needs_only_its_own_terms_frequencies(handbook: Lab) -> None:
    """Oracle: BM25Index over the whole collection. A shard given N, L and the n_t of its own
    terms only (the table cut by term, as DistributedBM25 sends it) has the single index's IDFs
    and answers bit for bit; each part is a strict subset of the whole table here."""
    docs = handbook.indexes.chunk_set().tokens
    index = BM25Index(docs, k1=1.2, b=0.75)
    bounds = [0, 60, 150, len(docs)]
    counts = [ShardCounts.from_tokens(docs[a:z]) for a, z in itertools.pairwise(bounds)]
    stats = global_statistics(c.summary() for c in counts)
    idf = dict(zip(index.vocabulary.terms, index.idf.tolist(), strict=True))
    for c, offset in zip(counts, bounds, strict=False):
        part = stats.for_terms(c.terms)
        assert set(part.df) == set(c.terms) and len(part.df) < len(stats.df)
        assert (part.n_docs, part.total_length) == (stats.n_docs, stats.total_length)
        shard = ScoredShard(c, part, offset)
        assert shard.idf.tolist() == [idf[t] for t in c.terms]
        for q in list(handbook.questions)[:20]:
            tokens = handbook.indexes.query_tokens(q)
            np.testing.assert_array_equal(
                shard.scores(tokens, 1.2, 0.75).view(np.int64),
                index.scores(tokens)[offset : offset + c.n_docs].view(np.int64),
            )
