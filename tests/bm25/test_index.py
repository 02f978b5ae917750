"""Tests for raglab.bm25.index: scores, rankings, explanations and the (k1, b) grid."""

from __future__ import annotations

import math

import bm25s
import numpy as np
import pytest

import raglab.bm25.compiled as compiled_module
import raglab.bm25.grid as grid_module
import raglab.bm25.index as bm25_module
import raglab.bm25.scoring as scoring_module
from raglab.base.threads import usable_cores
from raglab.bm25.formula import lucene_idf
from raglab.bm25.grid import grid_top_k
from raglab.bm25.index import BM25Index, TermContribution, numpy_threads
from raglab.settings import GRID_B, GRID_K1, GRID_RECALL_K, default
from tests.bm25.cases import assert_same, query_mixes
from tests.conftest import Cranfield

# ---------------------------------------------------------------- fixtures

# Hand-worked corpus: N = 3, |d| = 3, 2, 1, avgdl = 2.
HAND_DOCS = [["mount", "lock", "mount"], ["lock", "leg"], ["leg"]]


@pytest.fixture(scope="module")
def random_corpus() -> tuple[list[list[str]], list[list[str]]]:
    """Seeded documents (with an empty one) and queries (with repeats and unknown terms)."""
    rng = np.random.default_rng(2024)
    terms = [f"w{i:03d}" for i in range(80)]
    p = 1.0 / np.arange(1, 81) ** 1.1
    p /= p.sum()
    docs = [list(rng.choice(terms, size=int(rng.integers(1, 60)), p=p)) for _ in range(150)]
    docs[17] = []
    queries = [list(rng.choice(terms, size=int(rng.integers(1, 7)))) for _ in range(40)]
    queries[3] = ["w001", "w001", "w050"]  # a repeated term
    queries[4] = ["w002", "unseen"]  # a term outside the collection
    return docs, queries


@pytest.fixture(scope="module")
def tie_corpus() -> tuple[list[list[str]], list[list[str]]]:
    """Few terms and short documents: many exact score ties, to test tie-breaking."""
    rng = np.random.default_rng(5)
    terms = ["a", "b", "c", "d"]
    docs = [list(rng.choice(terms, size=int(rng.integers(0, 4)))) for _ in range(60)]
    queries = [list(rng.choice(terms, size=int(rng.integers(1, 3)))) for _ in range(12)]
    return docs, queries


def bm25s_scores(
    docs: list[list[str]], queries: list[list[str]], *, k1: float, b: float
) -> np.ndarray:
    """bm25s "lucene" scores in float64 (queries must not be empty), shape (Q, N)."""
    retriever = bm25s.BM25(method="lucene", k1=k1, b=b, dtype="float64")
    retriever.index(docs, show_progress=False)
    return np.stack([retriever.get_scores(list(q)) for q in queries])


def brute_ranking(scores: np.ndarray, k: int) -> list[int]:
    """Sort by (-score, index) in plain Python, scores rounded to 1e-9 first: sums of the same
    terms added in another order differ in the last bits, and must still tie."""
    rounded = np.round(scores, 9)
    return sorted(range(len(scores)), key=lambda i: (-rounded[i], i))[:k]


# ---------------------------------------------------------------- the fixture itself


def test_cranfield_fixture_matches_the_collection_readme(cranfield: Cranfield) -> None:
    """oracle: the counts in the collection's README (1,400 documents, 225 queries, 1,837
    judgements, documents 471 and 995 without abstract)."""
    assert len(cranfield.docs) == 1400
    assert [d.id for d in cranfield.docs] == list(range(1, 1401))
    assert [d.id for d in cranfield.docs if not d.body] == [471, 995]
    assert len(cranfield.queries) == 225 and all(cranfield.queries)
    assert cranfield.query_ids[:3] == (1, 2, 4)
    assert sorted(cranfield.qrels) == list(range(1, 226))
    assert sum(len(v) for v in cranfield.qrels.values()) == 1837
    assert cranfield.qrels[1][184] == 2


# ---------------------------------------------------------------- hand-worked


def test_hand_worked_three_document_corpus() -> None:
    """oracle: hand-worked BM25 with k1 = 1.2, b = 0.75.

    N = 3, avgdl = (3 + 2 + 1) / 3 = 2.
    IDF(mount) = ln(1 + (3 - 1 + 0.5) / (1 + 0.5)) = ln(1 + 2.5 / 1.5) = ln(8/3)
    IDF(lock)  = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln(1 + 1.5 / 2.5) = ln(1.6)
    length factors: d0 1 - 0.75 + 0.75 * 3/2 = 1.375; d1 1; d2 0.625.
    query [mount, lock]:
      d0 = ln(8/3) * 2 * 2.2 / (2 + 1.2 * 1.375) + ln 1.6 * 1 * 2.2 / (1 + 1.2 * 1.375)
         = ln(8/3) * 4.4 / 3.65 + ln 1.6 * 2.2 / 2.65  (about 1.18237 + 0.39019 = 1.57256)
      d1 = ln 1.6 * 2.2 / (1 + 1.2) = ln 1.6  (about 0.47000)
      d2 = 0
    """
    index = BM25Index(HAND_DOCS, k1=1.2, b=0.75)
    assert index.n_docs == 3 and index.avgdl == 2.0
    d0 = math.log(8 / 3) * 4.4 / 3.65 + math.log(1.6) * 2.2 / 2.65
    d1 = math.log(1.6)
    np.testing.assert_allclose(index.scores(["mount", "lock"]), [d0, d1, 0.0], rtol=1e-14)
    assert d0 == pytest.approx(1.57256, abs=1e-5)
    ranking = index.search(["mount", "lock"], k=3)
    assert ranking.indices.tolist() == [0, 1, 2]
    np.testing.assert_allclose(ranking.scores, [d0, d1, 0.0], rtol=1e-14)


def test_explain_hand_worked_rows() -> None:
    """oracle: hand-worked (see the three-document example): d0 for [mount, lock, stand]."""
    index = BM25Index(HAND_DOCS, k1=1.2, b=0.75)
    rows = index.explain(["mount", "lock", "stand"], 0)
    assert [r.term for r in rows] == ["mount", "lock", "stand"]
    mount, lock, stand = rows
    assert (mount.tf, mount.df, lock.tf, lock.df, stand.tf, stand.df) == (2, 1, 1, 2, 0, 0)
    assert mount.idf == pytest.approx(math.log(8 / 3), rel=1e-14)
    assert mount.length_factor == pytest.approx(1.375, rel=1e-15)
    assert mount.contribution == pytest.approx(math.log(8 / 3) * 4.4 / 3.65, rel=1e-14)
    assert lock.contribution == pytest.approx(math.log(1.6) * 2.2 / 2.65, rel=1e-14)
    assert stand.contribution == 0.0
    assert stand.idf == pytest.approx(math.log(1 + 3.5 / 0.5), rel=1e-14)


def test_lucene_idf_is_positive_even_for_a_term_in_every_document() -> None:
    """oracle: closed form; n_t = N gives ln(1 + 0.5 / (N + 0.5)) > 0."""
    assert float(lucene_idf(10, 10)) == pytest.approx(math.log(1 + 0.5 / 10.5), rel=1e-15)
    assert float(lucene_idf(10, 10)) > 0


# ---------------------------------------------------------------- oracle bm25s


@pytest.mark.parametrize(("k1", "b"), [(default("k1"), default("b")), (2.0, 1.0)])
def test_scores_match_bm25s_on_cranfield(
    cranfield_doc_tokens: list[list[str]],
    cranfield_query_tokens: list[list[str]],
    k1: float,
    b: float,
) -> None:
    """oracle: bm25s BM25(method="lucene") on the same tokens; ours = bm25s * (k1 + 1) to 1e-6
    relative, and the top 20 of every query (ties by ascending index) is identical."""
    expected = bm25s_scores(cranfield_doc_tokens, cranfield_query_tokens, k1=k1, b=b) * (k1 + 1)
    index = BM25Index(cranfield_doc_tokens, k1=k1, b=b)
    ours = np.stack([index.scores(q) for q in cranfield_query_tokens])
    np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-12)
    for q, query in enumerate(cranfield_query_tokens):
        assert index.search(query, k=20).indices.tolist() == brute_ranking(expected[q], 20)


def test_scores_match_bm25s_on_the_handbook() -> None:
    """oracle: bm25s BM25(method="lucene") on the bundled handbook's heading chunks and its 80
    questions, tokenised by raglab.text.tokens; ours = bm25s * (k1 + 1), rankings identical."""
    from raglab.pipeline.lab import Lab

    lab = Lab.load()
    cs = lab.indexes.chunk_set()
    queries = [lab.indexes.query_tokens(q) for q in lab.questions]
    expected = bm25s_scores(cs.tokens, queries, k1=default("k1"), b=default("b")) * (
        default("k1") + 1
    )
    ours = np.stack([cs.bm25.scores(q) for q in queries])
    np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-12)
    for q, query in enumerate(queries):
        assert cs.bm25.search(query, k=20).indices.tolist() == brute_ranking(expected[q], 20)


def test_scores_match_bm25s_on_a_seeded_random_corpus(
    random_corpus: tuple[list[list[str]], list[list[str]]],
) -> None:
    """oracle: bm25s BM25(method="lucene"), including an empty document, a repeated query term
    (counted per occurrence on both sides) and a term outside the collection."""
    docs, queries = random_corpus
    for k1, b in [(default("k1"), default("b")), (0.0, 0.5), (3.0, 0.0)]:
        expected = bm25s_scores(docs, queries, k1=k1, b=b) * (k1 + 1)
        index = BM25Index(docs, k1=k1, b=b)
        ours = np.stack([index.scores(q) for q in queries])
        np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-12)
        for q in range(len(queries)):
            assert index.search(queries[q], k=15).indices.tolist() == brute_ranking(expected[q], 15)


# ---------------------------------------------------------------- parameters


def test_k1_zero_scores_presence_only(
    random_corpus: tuple[list[list[str]], list[list[str]]],
) -> None:
    """oracle: closed form; with k1 = 0 each matching term adds exactly IDF(t) times its query
    count, whatever tf and |d|."""
    docs, queries = random_corpus
    index = BM25Index(docs, k1=0.0, b=0.75)
    for query in queries[:10]:
        expected = np.zeros(len(docs))
        for term in query:
            if term in index.vocabulary:
                idf = index.idf[index.vocabulary[term]]
                expected += idf * np.array([term in d for d in docs])
        np.testing.assert_allclose(index.scores(query), expected, rtol=1e-12, atol=1e-15)


def test_b_zero_ignores_document_length() -> None:
    """oracle: closed form; with b = 0 a document padded with non-query words keeps its score,
    f (k1 + 1) / (f + k1)."""
    docs = [["lock", "leg"], ["lock", "leg", "pad", "pad", "pad", "pad"], ["mount"]]
    index = BM25Index(docs, k1=1.2, b=0.0)
    scores = index.scores(["lock"])
    assert scores[0] == scores[1]
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    assert scores[0] == pytest.approx(idf * 2.2 / 2.2, rel=1e-15)
    # With b > 0 the longer document is penalised.
    assert index.with_params(b=0.75).scores(["lock"])[1] < scores[0]


def test_repeated_query_term_counts_per_occurrence(
    random_corpus: tuple[list[list[str]], list[list[str]]],
) -> None:
    """oracle: the documented convention (bm25s's): [t, t] scores exactly twice [t]."""
    docs, _ = random_corpus
    index = BM25Index(docs, k1=1.2, b=0.75)
    np.testing.assert_allclose(
        index.scores(["w003", "w003"]), 2 * index.scores(["w003"]), rtol=1e-15
    )


def test_with_params_equals_a_fresh_index(
    random_corpus: tuple[list[list[str]], list[list[str]]],
) -> None:
    """oracle: a fresh BM25Index built with the same parameters (bitwise)."""
    docs, queries = random_corpus
    base = BM25Index(docs, k1=1.2, b=0.75)
    other = base.with_params(k1=0.4, b=0.2)
    fresh = BM25Index(docs, k1=0.4, b=0.2)
    assert (other.k1, other.b, base.k1, base.b) == (0.4, 0.2, default("k1"), default("b"))
    for query in queries:
        np.testing.assert_array_equal(other.scores(query), fresh.scores(query))
    assert other.with_params().k1 == 0.4


def test_scores_follow_a_permutation_of_documents(
    random_corpus: tuple[list[list[str]], list[list[str]]],
) -> None:
    """oracle: invariance; BM25 of a document does not depend on the others' order."""
    docs, queries = random_corpus
    perm = np.random.default_rng(11).permutation(len(docs))
    index = BM25Index(docs, k1=1.2, b=0.75)
    permuted = BM25Index([docs[i] for i in perm], k1=1.2, b=0.75)
    for query in queries[:10]:
        np.testing.assert_allclose(permuted.scores(query), index.scores(query)[perm], rtol=1e-12)


# ---------------------------------------------------------------- search and explain


def test_search_breaks_ties_by_ascending_index_and_caps_k() -> None:
    """oracle: hand-worked; documents 1 and 3 are identical, so they tie and 1 comes first;
    k beyond the collection returns every document."""
    docs = [["leg"], ["lock", "leg"], ["mount"], ["lock", "leg"]]
    ranking = BM25Index(docs, k1=1.2, b=0.75).search(["lock"], k=10)
    assert ranking.indices.tolist() == [1, 3, 0, 2]
    assert ranking.scores[0] == ranking.scores[1] > 0 == ranking.scores[2] == ranking.scores[3]
    assert ranking.indices.dtype == np.int64 and ranking.scores.dtype == np.float64


@pytest.mark.parametrize("k", [1, 3, 8, 9, 10, 25, 59, 60, 100])
def test_search_equals_a_full_sort_by_score_then_index_with_ties(
    tie_corpus: tuple[list[list[str]], list[list[str]]], k: int
) -> None:
    """oracle: Python's sorted() of every document by (-score, index) on the same scores; the
    tie corpus puts runs of equal scores (and of zeros) across the k-th place."""
    docs, queries = tie_corpus
    for k1, b in ((1.2, 0.75), (0.0, 0.5), (1.5, 0.0)):
        index = BM25Index(docs, k1=k1, b=b)
        for query in queries:
            scores = index.scores(query)
            expected = sorted(range(len(docs)), key=lambda i: (-scores[i], i))[:k]
            ranking = index.search(query, k=k)
            assert ranking.indices.tolist() == expected
            np.testing.assert_array_equal(ranking.scores, scores[expected])


def test_top_k_selection_equals_numpy_lexsort() -> None:
    """oracle: numpy.lexsort by (-score, index), the full sort the selection replaces, on seeded
    score vectors made of a few repeated values (negative, zero and positive) and of distinct
    values, for every k from 1 to past the end."""
    rng = np.random.default_rng(11)
    for trial in range(300):
        n = int(rng.integers(1, 40))
        if trial % 2:
            scores = rng.integers(-2, 3, size=n).astype(np.float64)
        else:
            scores = rng.standard_normal(n)
        full = np.lexsort((np.arange(n), -scores))
        for k in range(1, n + 3):
            top = bm25_module._top_k(scores, k)
            assert top.dtype == np.int64
            np.testing.assert_array_equal(top, full[:k])


def test_single_query_scores_equal_the_grid_kernel_bitwise(
    random_corpus: tuple[list[list[str]], list[list[str]]],
    tie_corpus: tuple[list[list[str]], list[list[str]]],
) -> None:
    """oracle: the (k1, b) grid's kernel (pair table times a sparse matrix) for a one-cell grid;
    the single-query path adds the same products in the same order, so the scores are equal
    bit for bit, which is what lets grid_top_k and search agree on every tie."""
    for docs, queries in (random_corpus, tie_corpus):
        index = BM25Index(docs, k1=1.2, b=0.75)
        for k1, b in ((1.2, 0.75), (0.0, 0.3), (2.0, 1.0)):
            fitted = index.with_params(k1=k1, b=b)
            for query in queries:
                cell = scoring_module.cell_scores(
                    index.stats.postings([query]),
                    index.stats.columns.ratio,
                    np.array([k1]),
                    np.array([b]),
                    1,
                    index.n_docs,
                )[0, 0, 0]
                ours = fitted.scores(query)
                assert ours.dtype == np.float64
                np.testing.assert_array_equal(ours.view(np.int64), cell.view(np.int64))


def test_empty_and_unknown_queries_score_zero() -> None:
    """oracle: the definition; no matching term, no score."""
    index = BM25Index(HAND_DOCS, k1=1.2, b=0.75)
    np.testing.assert_array_equal(index.scores([]), np.zeros(3))
    np.testing.assert_array_equal(index.scores(["stand"]), np.zeros(3))
    assert index.search([], k=2).indices.tolist() == [0, 1]


def test_explain_sums_to_the_score(
    random_corpus: tuple[list[list[str]], list[list[str]]],
) -> None:
    """oracle: the definition of the score as a sum over query terms; every row's contribution
    is recomputed from its own fields."""
    docs, queries = random_corpus
    index = BM25Index(docs, k1=1.2, b=0.75)
    k1, b = index.k1, index.b
    for query in queries:
        scores = index.scores(query)
        for doc in (0, 17, int(np.argmax(scores))):
            rows = index.explain(query, doc)
            assert len(rows) == len(set(query))
            assert sum(r.contribution for r in rows) == pytest.approx(
                scores[doc], rel=1e-12, abs=1e-15
            )
            for r in rows:
                assert isinstance(r, TermContribution)
                assert r.length_factor == pytest.approx(
                    1 - b + b * len(docs[doc]) / index.avgdl, rel=1e-14
                )
                assert r.tf == docs[doc].count(r.term)
                assert r.query_count == query.count(r.term)
                expected = r.query_count * r.idf * r.tf * (k1 + 1) / (r.tf + k1 * r.length_factor)
                assert r.contribution == pytest.approx(expected, rel=1e-14)


# ---------------------------------------------------------------- grid


def loop_grid(
    index: BM25Index,
    queries: list[list[str]],
    k1s: tuple[float, ...],
    bs: tuple[float, ...],
    k: int,
) -> np.ndarray:
    return np.array(
        [
            [[index.with_params(k1=k1, b=b).search(q, k=k).indices for q in queries] for b in bs]
            for k1 in k1s
        ]
    )


def test_grid_top_k_equals_searching_every_cell_with_ties(
    tie_corpus: tuple[list[list[str]], list[list[str]]],
) -> None:
    """oracle: looping BM25Index.with_params(...).search over every cell of the default grid,
    on a corpus full of exact ties (and empty documents)."""
    docs, queries = tie_corpus
    index = BM25Index(docs, k1=1.2, b=0.75)
    grid = grid_top_k(index, queries, k1s=GRID_K1, bs=GRID_B, k=GRID_RECALL_K)
    assert grid.shape == (len(GRID_K1), len(GRID_B), len(queries), GRID_RECALL_K)
    assert grid.dtype == np.int64
    np.testing.assert_array_equal(grid, loop_grid(index, queries, GRID_K1, GRID_B, GRID_RECALL_K))
    # Larger k takes the partition path instead of repeated argmax.
    np.testing.assert_array_equal(
        grid_top_k(index, queries, k1s=(0.0, 1.2), bs=(0.0, 0.75), k=25),
        loop_grid(index, queries, (0.0, 1.2), (0.0, 0.75), 25),
    )


def test_grid_top_k_equals_searching_every_cell_on_cranfield(
    cranfield_doc_tokens: list[list[str]], cranfield_query_tokens: list[list[str]]
) -> None:
    """oracle: looping search over the default grid; 500 Cranfield documents, 6 queries."""
    index = BM25Index(cranfield_doc_tokens[:500], k1=1.2, b=0.75)
    queries = cranfield_query_tokens[:6]
    np.testing.assert_array_equal(
        grid_top_k(index, queries, k1s=GRID_K1, bs=GRID_B, k=GRID_RECALL_K),
        loop_grid(index, queries, GRID_K1, GRID_B, GRID_RECALL_K),
    )


def test_grid_top_k_processes_queries_in_blocks_without_changing_results(
    random_corpus: tuple[list[list[str]], list[list[str]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """oracle: the same grid computed in one block (invariance to the memory block size)."""
    docs, queries = random_corpus
    index = BM25Index(docs, k1=1.2, b=0.75)
    whole = grid_top_k(index, queries, k1s=GRID_K1, bs=GRID_B, k=7)
    monkeypatch.setattr(grid_module, "_GRID_BLOCK_ELEMENTS", 1)
    np.testing.assert_array_equal(grid_top_k(index, queries, k1s=GRID_K1, bs=GRID_B, k=7), whole)


# ---------------------------------------------------------------- validation


def test_bad_arguments_are_clear_errors() -> None:
    """oracle: the contract; each bad argument raises ValueError naming it."""
    with pytest.raises(ValueError, match="at least one document"):
        BM25Index([], k1=1.2, b=0.75)
    with pytest.raises(ValueError, match="string"):
        BM25Index(["a text, not tokens"], k1=1.2, b=0.75)
    with pytest.raises(ValueError, match="k1"):
        BM25Index(HAND_DOCS, k1=-0.1, b=0.75)
    with pytest.raises(ValueError, match="b must"):
        BM25Index(HAND_DOCS, k1=1.2, b=1.5)
    index = BM25Index(HAND_DOCS, k1=1.2, b=0.75)
    with pytest.raises(ValueError, match="string"):
        index.scores("mount lock")
    with pytest.raises(ValueError, match="k must"):
        index.search(["mount"], k=0)
    with pytest.raises(ValueError, match="out of range"):
        index.explain(["mount"], 3)
    with pytest.raises(ValueError, match="b must"):
        grid_top_k(index, [["mount"]], k1s=(1.2,), bs=(0.5, 2.0), k=10)


# ---------------------------------------------------------------- the postings


def test_postings_equal_the_count_matrix_whatever_the_build_blocks(
    random_corpus: tuple[list[list[str]], list[list[str]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """oracle: raglab.embedding.vectors.count_matrix (documents x sorted terms) read column by column. The
    streamed build gives the same postings whether the documents come in one block or in blocks
    of a few tokens and documents (terms split across blocks, new terms in every block)."""
    import scipy.sparse as sp

    import raglab.bm25.postings as postings
    from raglab.embedding.vectors import Vocabulary, count_matrix

    docs, queries = random_corpus
    vocab = Vocabulary.from_docs(docs)
    want = sp.csc_matrix(count_matrix(docs, vocabulary=vocab))
    want.sort_indices()
    whole = BM25Index(docs, k1=1.2, b=0.75)
    monkeypatch.setattr(postings, "_BUILD_BLOCK_TOKENS", 37)
    monkeypatch.setattr(postings, "_BUILD_BLOCK_DOCS", 5)
    monkeypatch.setattr(postings, "_REDUCE_BLOCK", 7)
    blocked = BM25Index(docs, k1=1.2, b=0.75)
    for index in (whole, blocked):
        cols = index.stats.columns
        assert index.vocabulary.terms == vocab.terms
        assert cols.docs.dtype == np.int32 and cols.tf.dtype == np.uint8
        np.testing.assert_array_equal(cols.indptr, want.indptr)
        np.testing.assert_array_equal(cols.docs, want.indices)
        np.testing.assert_array_equal(cols.tf, want.data)
    # The per-term maxima, reduced over blocks of 7 postings, against one reduction per term.
    for index in (whole, blocked):
        cols = index.stats.columns
        direct = [
            float(np.max(_saturations(index, int(a), int(z))))
            for a, z in zip(cols.indptr[:-1], cols.indptr[1:], strict=True)
        ]
        np.testing.assert_array_equal(index._max_impact(), direct)
    for query in queries:
        np.testing.assert_array_equal(whole.scores(query), blocked.scores(query))


def _saturations(index: BM25Index, a: int, z: int) -> np.ndarray:
    cols = index.stats.columns
    length = (1.0 - index.b) + index.b * cols.ratio[cols.docs[a:z]]
    return (cols.tf[a:z] * (index.k1 + 1.0)) / (cols.tf[a:z] + index.k1 * length)


def test_large_frequencies_take_a_wider_type_and_explain_reads_them() -> None:
    """oracle: the definition; a term repeated 300 times in one document needs uint16, and the
    scores and explanations use the exact count."""
    docs = [["lock"] * 300 + ["leg"], ["leg", "mount"], ["mount"]]
    index = BM25Index(docs, k1=1.2, b=0.75)
    assert index.stats.columns.tf.dtype == np.uint16
    assert [r.tf for r in index.explain(["lock", "leg", "mount"], 0)] == [300, 1, 0]
    lock = index.explain(["lock"], 0)[0]
    assert index.scores(["lock"])[0] == pytest.approx(lock.contribution, rel=1e-15)
    assert index.nbytes > 0


# ---------------------------------------------------------------- search_many on threads


@pytest.fixture(scope="module")
def handbook_tokens() -> tuple[list[list[str]], list[list[str]]]:
    """The bundled handbook's default chunks and its questions, as retrieval tokens."""
    from raglab.pipeline.lab import Lab

    lab = Lab.load()
    cs = lab.indexes.chunk_set()
    return list(cs.tokens), [lab.indexes.query_tokens(q) for q in lab.questions]


@pytest.mark.parametrize("collection", ["handbook", "cranfield"])
@pytest.mark.parametrize("mix", ["questions", "zipf", "chunk"])
@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("pruned", [False, True])
def test_search_many_on_threads_equals_one_thread_bit_for_bit(
    handbook_tokens: tuple[list[list[str]], list[list[str]]],
    cranfield_doc_tokens: list[list[str]],
    cranfield_query_tokens: list[list[str]],
    monkeypatch: pytest.MonkeyPatch,
    collection: str,
    mix: str,
    backend: str,
    pruned: bool,
) -> None:
    """oracle: the same batch on one thread (and, for the numpy backend, the compiled kernel's
    lists, and each query searched alone): a batch cut into runs answered on 2, 3, 7 threads or
    "auto" gives the same documents and the same scores bit for bit. ``pruned`` sends the
    numpy backend's long queries through MaxScore one by one (as from 65,536 documents on), and
    the kernel's through its document-at-a-time walk. The numpy backend's ceiling for threads
    (65,536 documents) is raised so that MaxScore's runs take threads too."""
    monkeypatch.setattr(bm25_module, "_NUMPY_THREADS_BELOW_DOCS", 10**9)
    docs, questions = (
        handbook_tokens
        if collection == "handbook"
        else (cranfield_doc_tokens, cranfield_query_tokens)
    )
    queries = questions if mix == "questions" else query_mixes(docs, 33, 150)[mix]
    if pruned:
        monkeypatch.setattr(bm25_module, "_BATCH_PRUNE_MIN_DOCS", 0)
        monkeypatch.setattr(compiled_module, "MAXSCORE_MIN_POSTINGS", 0)
    index = BM25Index(docs, k1=1.2, b=0.75)
    want = index.search_many(queries, k=10, backend=backend, threads=1)
    for threads in (2, 3, 7, "auto"):
        assert_same(index.search_many(queries, k=10, backend=backend, threads=threads), want)
    if backend == "numpy":
        assert_same(index.search_many(queries, k=10, backend="numba", threads=1), want)
        for q in range(0, len(queries), 17):
            ranking = index.search(queries[q], k=10)
            assert_same((ranking.indices, ranking.scores), (want[0][q], want[1][q]))


def test_search_many_threads_setting_is_checked() -> None:
    """A bad thread count is refused whatever the batch, even one too small to be spread."""
    index = BM25Index(HAND_DOCS, k1=1.2, b=0.75)
    for n_queries in (1, 40):
        for backend in ("numpy", "numba"):
            for bad in (0, -2, 1.5, True, "many"):
                with pytest.raises(ValueError, match="threads must be 'auto' or a positive whole"):
                    index.search_many(
                        [["lock"]] * n_queries,
                        k=2,
                        backend=backend,
                        threads=bad,  # type: ignore[arg-type]
                    )


def test_numpy_batch_spreads_over_threads_only_where_dense_blocks_run() -> None:
    """oracle: the rule as measured (benchmarks/RESULTS.md, section 9): against fewer than
    65,536 documents every query is scored in dense blocks, which two threads answered 1.01 to
    1.56 times as fast as one, so a batch of at least two runs of 16 queries takes the count
    asked; from 65,536 documents on MaxScore's runs went 0.76 to 0.95 times as fast, so one
    thread whatever is asked; a bad count is refused either way."""
    assert numpy_threads(2, n_docs=10_000, n_queries=1_000) == 2
    assert numpy_threads(7, n_docs=65_535, n_queries=32) == 7
    assert numpy_threads(7, n_docs=65_535, n_queries=31) == 1
    assert numpy_threads(2, n_docs=65_536, n_queries=1_000) == 1
    assert numpy_threads(7, n_docs=1_000_000, n_queries=1_000) == 1
    assert 1 <= numpy_threads("auto", n_docs=10_000, n_queries=1_000) <= usable_cores()
    for bad in (0, "many"):
        with pytest.raises(ValueError, match="threads must be"):
            numpy_threads(bad, n_docs=10, n_queries=1)
