"""Tests for raglab.bm25.compiled: the numba kernel behind BM25Index.search_many.

The oracle is exhaustive scoring with numpy (``BM25Index.scores`` sorted by (-score, index)):
the compiled kernel must return the same documents and bitwise the same scores on each of its
three paths (dense accumulator, touched list, MaxScore), which the tests force in turn through
the kernel's thresholds. numba is installed with the test extra; without it these tests fail
rather than skip, as a missing backend is a broken test environment.
"""

from __future__ import annotations

import numpy as np
import pytest

import raglab.bm25.compiled as compiled
import raglab.bm25.dense as dense
import raglab.bm25.maxscore as maxscore
from raglab.bm25.index import BM25Index
from tests.bm25.cases import PARAMS, exhaustive
from tests.bm25.cases import zipf_corpus as zipf_corpus_of

# Thresholds that send every query down one path: (MaxScore's minimum postings, dense factor).
PATHS = {
    "dense accumulator": (10**12, 10**12),
    "touched list": (10**12, 0),
    "MaxScore": (0, 0),
}


@pytest.fixture(scope="module")
def zipf_corpus() -> tuple[list[list[str]], list[list[str]]]:
    return zipf_corpus_of(808, n_terms=300, n_docs=500, max_len=50, n_queries=50)


def test_numba_is_installed_with_the_test_extra() -> None:
    assert compiled.available()


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("k", [1, 3, 10, 499, 600])
def test_every_compiled_path_equals_exhaustive_scoring(
    zipf_corpus: tuple[list[list[str]], list[list[str]]],
    monkeypatch: pytest.MonkeyPatch,
    path: str,
    k: int,
) -> None:
    """oracle: exhaustive numpy scoring, sorted by (-score, index); scores bit for bit (the
    kernel adds the same products in the same order), ties and zero-filled tails included."""
    docs, queries = zipf_corpus
    min_postings, dense_factor = PATHS[path]
    monkeypatch.setattr(compiled, "MAXSCORE_MIN_POSTINGS", min_postings)
    monkeypatch.setattr(compiled, "DENSE_FACTOR", dense_factor)
    base = BM25Index(docs, k1=1.2, b=0.75)
    for k1, b in PARAMS:
        index = base.with_params(k1=k1, b=b)
        found, scores = index.search_many(queries, k=k, backend="numba")
        assert found.shape == (len(queries), min(k, len(docs)))
        for q, query in enumerate(queries):
            want_docs, want_scores = exhaustive(index, query, k)
            np.testing.assert_array_equal(found[q], want_docs)
            np.testing.assert_array_equal(scores[q].view(np.int64), want_scores.view(np.int64))


@pytest.mark.parametrize("probe", [0, 1, 5, 10_000])
def test_maxscore_probe_size_never_changes_the_answer(
    zipf_corpus: tuple[list[list[str]], list[list[str]]],
    monkeypatch: pytest.MonkeyPatch,
    probe: int,
) -> None:
    """oracle: exhaustive scoring. Probed documents are scored once and held out of the walk;
    the probe size (none, fewer than k, every document of the shortest lists) only moves where
    pruning starts. The size is MaxScore's own constant, read by the kernel at every call."""
    docs, queries = zipf_corpus
    monkeypatch.setattr(compiled, "MAXSCORE_MIN_POSTINGS", 0)
    monkeypatch.setattr(maxscore, "PROBE_DOCS", probe)
    index = BM25Index(docs, k1=1.2, b=0.75)
    found, scores = index.search_many(queries, k=10, backend="numba")
    for q, query in enumerate(queries):
        want_docs, want_scores = exhaustive(index, query, 10)
        np.testing.assert_array_equal(found[q], want_docs)
        np.testing.assert_array_equal(scores[q], want_scores)


@pytest.mark.parametrize("k", [1, 3, 6, 10])
def test_maxscore_probe_over_several_short_lists_sharing_documents(
    monkeypatch: pytest.MonkeyPatch, k: int
) -> None:
    """oracle: exhaustive scoring. The probe takes the shortest lists' documents, shortest
    first, until k: here two rare lists that share documents (2 and 3, probed once each) and
    hold fewer than k between them for the larger k, so the probe runs into the frequent lists
    too, or stops inside the second list for the smaller."""
    monkeypatch.setattr(compiled, "MAXSCORE_MIN_POSTINGS", 0)
    docs = [["common", "often"] + ["filler"] * (d % 7) for d in range(60)]
    for d in (1, 2, 3):
        docs[d].append("rare")
    for d in (2, 3, 4, 5):
        docs[d].append("scarce")
    for d in range(0, 60, 3):
        docs[d].append("often")
    index = BM25Index(docs, k1=1.2, b=0.75)
    queries = [["rare", "scarce", "common", "often"], ["scarce", "rare"], ["rare", "often"]]
    found, scores = index.search_many(queries, k=k, backend="numba")
    for q, query in enumerate(queries):
        want_docs, want_scores = exhaustive(index, query, k)
        np.testing.assert_array_equal(found[q], want_docs)
        np.testing.assert_array_equal(scores[q].view(np.int64), want_scores.view(np.int64))


@pytest.mark.parametrize(
    "walk_factor", [0.0, 3.0, 1e9], ids=["always-walk", "default", "never-walk"]
)
def test_maxscore_falls_back_to_term_at_a_time_with_the_same_answers(
    zipf_corpus: tuple[list[list[str]], list[list[str]]],
    monkeypatch: pytest.MonkeyPatch,
    walk_factor: float,
) -> None:
    """oracle: exhaustive scoring, bit for bit. A query whose essential lists still hold more
    than 1 / WALK_FACTOR of its postings after the probe is added term at a time (the probe's
    marks cleared and its buffer refilled); walking anyway, or never, gives the same lists.
    Queries pairing a frequent term with rare ones of fewer than k documents between them are
    the case the fallback is for."""
    docs, queries = zipf_corpus
    index = BM25Index(docs, k1=1.2, b=0.75)
    lengths = np.diff(index.stats.columns.indptr)
    terms = index.vocabulary.terms
    rare = [terms[t] for t in np.argsort(lengths, kind="stable")[:6].tolist()]
    assert lengths[[index.vocabulary.mapping[t] for t in rare[:3]]].sum() < 10
    frequent = terms[int(np.argmax(lengths))]
    queries = [*queries[:30], [rare[0], frequent], [rare[1], rare[2], frequent], [*rare, frequent]]
    monkeypatch.setattr(compiled, "MAXSCORE_MIN_POSTINGS", 0)
    monkeypatch.setattr(maxscore, "WALK_FACTOR", walk_factor)
    found, scores = index.search_many(queries, k=10, backend="numba")
    for q, query in enumerate(queries):
        want_docs, want_scores = exhaustive(index, query, 10)
        np.testing.assert_array_equal(found[q], want_docs)
        np.testing.assert_array_equal(scores[q].view(np.int64), want_scores.view(np.int64))


def test_compiled_equals_numpy_on_cranfield(
    cranfield_doc_tokens: list[list[str]], cranfield_query_tokens: list[list[str]]
) -> None:
    """oracle: the numpy backend (checked against exhaustive scoring in test_bm25_topk.py), on
    all 225 Cranfield queries, with the kernel's own thresholds and with MaxScore forced."""
    index = BM25Index(cranfield_doc_tokens, k1=1.2, b=0.75)
    want = index.search_many(cranfield_query_tokens, k=100, backend="numpy")
    got = index.search_many(cranfield_query_tokens, k=100, backend="numba")
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1].view(np.int64), want[1].view(np.int64))
    default = compiled.MAXSCORE_MIN_POSTINGS
    try:
        compiled.MAXSCORE_MIN_POSTINGS = 0
        forced = index.search_many(cranfield_query_tokens, k=100, backend="numba")
    finally:
        compiled.MAXSCORE_MIN_POSTINGS = default
    np.testing.assert_array_equal(forced[0], want[0])
    np.testing.assert_array_equal(forced[1], want[1])


def test_auto_takes_numba_when_it_imports_and_numpy_otherwise(
    zipf_corpus: tuple[list[list[str]], list[list[str]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same answers either way; asking for numba without it is a clear error."""
    docs, queries = zipf_corpus
    index = BM25Index(docs, k1=1.2, b=0.75)
    with_numba = index.search_many(queries, k=5)
    monkeypatch.setattr(compiled, "available", lambda: False)
    without = index.search_many(queries, k=5)
    np.testing.assert_array_equal(with_numba[0], without[0])
    np.testing.assert_array_equal(with_numba[1], without[1])
    with pytest.raises(ValueError, match="needs numba"):
        index.search_many(queries, k=5, backend="numba")


def test_the_kernel_compiles_without_a_writable_cache(
    zipf_corpus: tuple[list[list[str]], list[list[str]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where numba finds no cache directory (it raises RuntimeError when asked to cache), the
    kernel is compiled without one and answers the same."""
    import numba

    real_njit = numba.njit

    def no_cache_njit(*args: object, **kwargs: object) -> object:
        if kwargs.get("cache"):
            raise RuntimeError("cannot cache function: no locator available")
        return real_njit(*args, **kwargs)

    docs, queries = zipf_corpus
    index = BM25Index(docs, k1=1.2, b=0.75)
    want = index.search_many(queries, k=10, backend="numba")
    monkeypatch.setattr(numba, "njit", no_cache_njit)
    compiled._kernel.cache_clear()
    dense.compiled.cache_clear()
    try:
        got = index.search_many(queries, k=10, backend="numba")
    finally:
        monkeypatch.undo()
        compiled._kernel.cache_clear()
        dense.compiled.cache_clear()
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("k", [1, 10, 33, 64, 65, 200])
def test_dense_selection_breaks_ties_across_blocks_by_document(
    monkeypatch: pytest.MonkeyPatch, k: int
) -> None:
    """oracle: exhaustive scoring. Identical documents every third position, so equal top
    scores straddle the selection's blocks of ``SELECT_BLOCK`` documents and the k-th best is
    one of many ties: the lowest-indexed of the tied documents must win, as everywhere else."""
    monkeypatch.setattr(compiled, "MAXSCORE_MIN_POSTINGS", 10**12)
    monkeypatch.setattr(compiled, "DENSE_FACTOR", 10**12)
    docs = [
        ["motor", "stall"] if i % 3 == 0 else ["motor", "belt", "belt", "cable"][: 2 + i % 3]
        for i in range(3 * dense.SELECT_BLOCK + 7)
    ]
    index = BM25Index(docs, k1=1.2, b=0.75)
    queries = [["motor", "stall"], ["stall"], ["belt", "cable"], ["absent"]]
    found, scores = index.search_many(queries, k=k, backend="numba")
    for q, query in enumerate(queries):
        want_docs, want_scores = exhaustive(index, query, k)
        np.testing.assert_array_equal(found[q], want_docs)
        np.testing.assert_array_equal(scores[q].view(np.int64), want_scores.view(np.int64))
