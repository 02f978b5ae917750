"""Tests for raglab.bm25.maxscore: MaxScore, the dense batch and their agreement with exhaustive
scoring, through BM25Index.search and BM25Index.search_many (numpy backend).

The oracle everywhere is exhaustive scoring: ``BM25Index.scores`` (itself checked against bm25s
in test_bm25.py) sorted by (-score, index) with numpy.lexsort. The pruned paths must return the
same documents and bitwise the same scores.
"""

from __future__ import annotations

import numpy as np
import pytest

import raglab.bm25.batch as batch_module
import raglab.bm25.index as bm25_module
import raglab.bm25.maxscore as topk_module
from raglab.bm25.index import BM25Index
from tests.bm25.cases import PARAMS, assert_same, exhaustive
from tests.bm25.cases import zipf_corpus as zipf_corpus_of

# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def zipf_corpus() -> tuple[list[list[str]], list[list[str]]]:
    return zipf_corpus_of(404, n_terms=400, n_docs=700, max_len=60, n_queries=60)


# ---------------------------------------------------------------- MaxScore (single queries)


@pytest.mark.parametrize("k", [1, 2, 5, 10, 40])
def test_maxscore_search_equals_exhaustive_scoring(
    zipf_corpus: tuple[list[list[str]], list[list[str]]],
    monkeypatch: pytest.MonkeyPatch,
    k: int,
) -> None:
    """oracle: exhaustive scores sorted by (-score, index). The pruning threshold is lowered so
    every query with two or more terms goes through MaxScore, at several k1, b (k1 = 0 makes
    every posting of a term tie)."""
    docs, queries = zipf_corpus
    monkeypatch.setattr(bm25_module, "_PRUNE_MIN_WORK", 0)
    calls = []
    real = topk_module.maxscore_top_k

    def counting(*args: object, **kwargs: object) -> object:
        result = real(*args, **kwargs)  # type: ignore[arg-type]
        calls.append(result is not None)
        return result

    monkeypatch.setattr(bm25_module, "maxscore_top_k", counting)
    base = BM25Index(docs, k1=1.2, b=0.75)
    for k1, b in PARAMS:
        index = base.with_params(k1=k1, b=b)
        for query in queries:
            ranking = index.search(query, k=k)
            assert_same((ranking.indices, ranking.scores), exhaustive(index, query, k))
    # The test is about the pruned path: most queries must have taken it to the end.
    assert sum(calls) > len(queries)


@pytest.mark.parametrize("probe", [1, 3, 256])
def test_maxscore_is_exact_whatever_the_probe_size(
    zipf_corpus: tuple[list[list[str]], list[list[str]]],
    monkeypatch: pytest.MonkeyPatch,
    probe: int,
) -> None:
    """oracle: exhaustive scoring; the probe only sets where pruning starts, never the answer."""
    docs, queries = zipf_corpus
    monkeypatch.setattr(bm25_module, "_PRUNE_MIN_WORK", 0)
    monkeypatch.setattr(topk_module, "PROBE_DOCS", probe)
    monkeypatch.setattr(topk_module, "_DENSE_PARTIAL_RATIO", 1 if probe == 3 else 10**9)
    index = BM25Index(docs, k1=1.2, b=0.75)
    for query in queries:
        ranking = index.search(query, k=10)
        assert_same((ranking.indices, ranking.scores), exhaustive(index, query, 10))


def test_maxscore_skips_documents_on_a_skewed_query() -> None:
    """A hand-built case: one rare term in three short documents and one very common term of
    small idf. The common term's bound (its weight times its largest saturation) is below the
    third-best score, so only the rare term's documents are candidates, and MaxScore's answer
    equals the exhaustive one."""
    docs = [["common"] * 3 for _ in range(300)]
    docs[7] = ["rare", "common"]
    docs[150] = ["rare"]
    docs[299] = ["rare", "rare", "common"]
    docs.append(["other"])  # one document without "common": its idf stays positive
    index = BM25Index(docs, k1=1.2, b=0.75)
    cols = index.stats.columns
    terms, weights = index.stats.query_terms(["rare", "common"])
    pruned = topk_module.maxscore_top_k(cols, terms, weights, index.k1, index.b, 3)
    assert pruned is not None
    assert sorted(pruned[0].tolist()) == [7, 150, 299]
    assert_same(pruned, exhaustive(index, ["rare", "common"], 3))


def test_the_probe_takes_the_shortest_lists_in_their_own_order_up_to_its_size() -> None:
    """oracle: hand-worked. "rare" is held by documents 4 and 9, "mid" by 1, 4, 6 and 8: the
    probe reads rare's list, then mid's in ascending order, until its size, and keeps each
    document once (4 is in both lists)."""
    docs = [["x"], ["mid"], ["x"], ["x"], ["rare", "mid"], ["x"], ["mid"], ["x"], ["mid"], ["rare"]]
    index = BM25Index(docs, k1=1.2, b=0.75)
    cols, vocab = index.stats.columns, index.vocabulary.mapping
    shortest = np.array([vocab["rare"], vocab["mid"]], dtype=np.int64)
    assert topk_module.probed(cols, shortest, 1).tolist() == [4]
    assert topk_module.probed(cols, shortest, 2).tolist() == [4, 9]
    assert topk_module.probed(cols, shortest, 4).tolist() == [1, 4, 9]
    assert topk_module.probed(cols, shortest, 100).tolist() == [1, 4, 6, 8, 9]


def test_maxscore_declines_when_the_shortest_lists_hold_too_few_documents() -> None:
    """With fewer than k documents in the probe lists, MaxScore hands back to exhaustive
    scoring (which fills the list with documents scoring 0)."""
    index = BM25Index([["a", "b"], ["b"], ["c"], ["c"]], k1=1.2, b=0.75)
    terms, weights = index.stats.query_terms(["a", "b"])
    assert topk_module.maxscore_top_k(index.stats.columns, terms, weights, 1.2, 0.75, 5) is None
    ranking = index.search(["a", "b"], k=4)
    assert ranking.indices.tolist() == [0, 1, 2, 3]
    assert ranking.scores[2] == ranking.scores[3] == 0.0


# ---------------------------------------------------------------- search_many, numpy backend


@pytest.mark.parametrize("k", [1, 7, 10, 701, 5000])
def test_search_many_numpy_equals_search(
    zipf_corpus: tuple[list[list[str]], list[list[str]]], k: int
) -> None:
    """oracle: exhaustive scoring per query; rows of search_many must be those lists, bit for
    bit, including k past the collection size and empty or unknown queries."""
    docs, queries = zipf_corpus
    base = BM25Index(docs, k1=1.2, b=0.75)
    for k1, b in PARAMS:
        index = base.with_params(k1=k1, b=b)
        found, scores = index.search_many(queries, k=k, backend="numpy")
        assert found.shape == scores.shape == (len(queries), min(k, len(docs)))
        for q, query in enumerate(queries):
            assert_same((found[q], scores[q]), exhaustive(index, query, k))


def test_search_many_numpy_mixes_batched_and_pruned_queries(
    zipf_corpus: tuple[list[list[str]], list[list[str]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a threshold between the queries' sizes, some go through the dense batch (in several
    blocks) and some through MaxScore; every row is still the exhaustive answer."""
    docs, queries = zipf_corpus
    monkeypatch.setattr(bm25_module, "_PRUNE_MIN_WORK", 900)
    monkeypatch.setattr(bm25_module, "_BATCH_BLOCK_ELEMENTS", 3 * len(docs))
    index = BM25Index(docs, k1=1.2, b=0.75)
    works = [index.stats.work(index.stats.query_terms(q)[0]) for q in queries]
    assert min(works) < 900 <= max(works)
    found, scores = index.search_many(queries, k=10, backend="numpy")
    for q, query in enumerate(queries):
        assert_same((found[q], scores[q]), exhaustive(index, query, 10))


@pytest.mark.parametrize(
    ("wide_ratio", "block"),
    [(4, 1 << 18), (10**9, 1 << 18), (1, 50), (4, 1)],
    ids=["wide-and-narrow", "every-term-wide", "every-term-narrow-small-blocks", "one-pair-blocks"],
)
def test_dense_batch_sums_equal_exhaustive_scoring(
    zipf_corpus: tuple[list[list[str]], list[list[str]]],
    monkeypatch: pytest.MonkeyPatch,
    wide_ratio: int,
    block: int,
) -> None:
    """oracle: exhaustive scoring per query, bit for bit. The dense batch adds wide terms as
    dense vectors and scatters the others' postings (by add.at, which adds in input order) in
    segments between them: with the default split, with every term wide, with every term narrow
    in chunks of about 50 postings, and in chunks of one pair; unknown and empty queries
    included, so some rows have no pair."""
    docs, queries = zipf_corpus
    queries = [*queries[:20], ["no-such-term"], [], *queries[20:40]]
    monkeypatch.setattr(batch_module, "_WIDE_RATIO", wide_ratio)
    monkeypatch.setattr(batch_module, "_SCATTER_BLOCK", block)
    base = BM25Index(docs, k1=1.2, b=0.75)
    for k1, b in PARAMS:
        index = base.with_params(k1=k1, b=b)
        found, scores = index.search_many(queries, k=10, backend="numpy")
        for q, query in enumerate(queries):
            assert_same((found[q], scores[q]), exhaustive(index, query, 10))


def test_dense_batch_interleaves_wide_and_narrow_terms_in_column_order() -> None:
    """oracle: exhaustive scoring, bit for bit, on a collection built so that a row's terms
    alternate between wide and narrow columns (c0 wide, r1 narrow, c2 wide, r3 narrow ...):
    each narrow segment must land between the wide terms around it. Weights of very different
    sizes make a wrong order of addition visible in the last bits."""
    rng = np.random.default_rng(11)
    docs = []
    for d in range(400):
        doc = [f"w{j}" for j in range(0, 8, 2) if rng.random() < 0.9]
        doc += [f"w{j}" for j in range(1, 8, 2) if d % 37 == j]
        doc += [f"f{int(x)}" for x in rng.integers(0, 50, size=int(rng.integers(1, 30)))]
        docs.append(doc or ["f0"])
    index = BM25Index(docs, k1=1.2, b=0.75)
    cols = [index.vocabulary.mapping[f"w{j}"] for j in range(8)]
    queries = [[f"w{j}" for j in range(8)] for _ in range(3)] + [["w1", "w2", "w3", "f7"]]
    # The interleaving only tests something if the columns alternate as the names do.
    wide = [index.stats.columns.indptr[c + 1] - index.stats.columns.indptr[c] >= 100 for c in cols]
    assert wide == [True, False] * 4
    found, scores = index.search_many(queries, k=15, backend="numpy")
    for q, query in enumerate(queries):
        assert_same((found[q], scores[q]), exhaustive(index, query, 15))


@pytest.mark.parametrize("argmax_elements", [1 << 19, 0], ids=["argmax-up-to-8", "block-bounds"])
def test_dense_row_selection_equals_lexsort(
    monkeypatch: pytest.MonkeyPatch, argmax_elements: int
) -> None:
    """oracle: numpy.lexsort by (-score, column) on rows with runs of ties and of zeros, rows of
    fewer matches than k and all-zero rows; for k from 2 to 8 both by repeated argmax and by
    block bounds (the way a block too large for the cache goes)."""
    monkeypatch.setattr(batch_module, "_ARGMAX_MAX_ELEMENTS", argmax_elements)
    rng = np.random.default_rng(3)
    for trial in range(200):
        n = int(rng.integers(1, 80))
        rows = int(rng.integers(1, 6))
        if trial % 3 == 0:
            scores = rng.integers(0, 3, size=(rows, n)).astype(np.float64)
        elif trial % 3 == 1:
            scores = np.where(rng.random((rows, n)) < 0.1, rng.random((rows, n)), 0.0)
        else:
            scores = rng.random((rows, n))
        for k in (1, 2, 5, 10, n, n + 4):
            cols, vals = batch_module.top_k_rows(scores, k)
            for r in range(rows):
                want = np.lexsort((np.arange(n), -scores[r]))[: min(k, n)]
                np.testing.assert_array_equal(cols[r], want)
                np.testing.assert_array_equal(vals[r], scores[r, want])


def test_search_many_on_cranfield_equals_search(
    cranfield_doc_tokens: list[list[str]], cranfield_query_tokens: list[list[str]]
) -> None:
    """oracle: BM25Index.search (itself equal to bm25s's rankings, test_bm25.py) on all 225
    Cranfield queries, at k = 10 and k = 100."""
    index = BM25Index(cranfield_doc_tokens, k1=1.2, b=0.75)
    for k in (10, 100):
        found, scores = index.search_many(cranfield_query_tokens, k=k, backend="numpy")
        for q, query in enumerate(cranfield_query_tokens):
            ranking = index.search(query, k=k)
            assert_same((found[q], scores[q]), (ranking.indices, ranking.scores))


def test_search_many_rejects_bad_arguments() -> None:
    index = BM25Index([["a"], ["b"]], k1=1.2, b=0.75)
    with pytest.raises(ValueError, match="backend must be one of"):
        index.search_many([["a"]], k=1, backend="fortran")
    with pytest.raises(ValueError, match="k must be a positive integer"):
        index.search_many([["a"]], k=0)
    with pytest.raises(ValueError, match=r"queries\[0\] is a string"):
        index.search_many(["a b"], k=1)
