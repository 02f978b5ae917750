"""A chunking's rows for chosen chunks (the reranker's and MMR's): the whole tables' rows, bit for
bit, without building any whole table.

Oracle: the whole tables of the handbook's default chunking (:attr:`ChunkSet.tokens`,
``lsa_projections``, ``tfidf``, ``identifiers``, ``title_terms``) built on one lab; the rows are
asked of a second lab over the same pages, whose TF-IDF N and df come from a count written here
(each term's chunks, in plain Python, over the first lab's token lists).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pytest

from raglab.chunking.chunkers import chunk_pages
from raglab.chunking.table import ChunkTable
from raglab.corpus.questions import Question, QuestionSet
from raglab.pipeline.indexes import ChunkSet, TermStatistics
from raglab.pipeline.lab import Lab
from raglab.run_settings import ChunkingKey

WHOLE_TABLES = ("tokens", "lsa_projections", "tfidf", "identifiers", "title_terms")


def _lookup(whole: ChunkSet) -> TermStatistics:
    chunks_of: dict[str, int] = {}
    for tokens in whole.tokens:
        for term in set(tokens):
            chunks_of[term] = chunks_of.get(term, 0) + 1
    column = {term: j for j, term in enumerate(sorted(chunks_of))}

    def lookup(
        chunking: ChunkingKey, terms: Sequence[str]
    ) -> tuple[int, int, np.ndarray, np.ndarray]:
        assert chunking == whole.key
        columns = np.array([column[t] for t in terms], dtype=np.int64)
        return len(whole), len(column), columns, np.array([chunks_of[t] for t in terms])

    return lookup


@pytest.fixture(scope="module")
def whole(handbook_lab: Lab) -> ChunkSet:
    cs = handbook_lab.indexes.chunk_set()
    for name in WHOLE_TABLES:
        getattr(cs, name)
    return cs


def test_chosen_rows_equal_the_whole_tables_without_building_them(
    handbook_lab: Lab, whole: ChunkSet
) -> None:
    thin = Lab(handbook_lab.corpus, handbook_lab.questions)
    thin.indexes.term_statistics = _lookup(whole)
    cs = thin.indexes.chunk_set()
    rng = np.random.default_rng(0)
    for size in (1, 7, 20, len(cs)):
        idx = rng.choice(len(cs), size=size, replace=False)
        rows, want = cs.tfidf_rows(idx), whole.tfidf[idx]
        assert rows.shape == want.shape
        assert rows.indices.tolist() == want.indices.tolist()
        assert rows.indptr.tolist() == want.indptr.tolist()
        assert rows.data.tobytes() == want.data.tobytes()
        assert cs.lsa_rows(idx).tobytes() == whole.lsa_projections[idx].tobytes()
        assert cs.identifiers_of(idx) == [whole.identifiers[i] for i in idx]
        assert cs.title_terms_of(idx) == [whole.title_terms[i] for i in idx]
        assert cs.token_rows(idx) == [whole.tokens[i] for i in idx]
    assert not set(WHOLE_TABLES) & set(vars(cs))


def test_chosen_rows_tokenise_each_chunk_once(
    handbook_lab: Lab, whole: ChunkSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: the whole token table. Without it, rows read again (a question's candidates, by
    its features, its MMR and its packing) are the same tokens, each chunk tokenised once,
    and a chunk set that holds its whole table tokenises nothing more."""
    thin = Lab(handbook_lab.corpus, handbook_lab.questions)
    thin.indexes.term_statistics = _lookup(whole)
    cs = thin.indexes.chunk_set()
    texts: list[str] = []
    tokens = thin.indexes.tokens

    def counted(text: str) -> list[str]:
        texts.append(text)
        return tokens(text)

    monkeypatch.setattr(thin.indexes, "tokens", counted)
    first, second = np.array([5, 2, 9]), np.array([9, 5, 2, 11])
    for idx in (first, first, second, second, first):
        assert cs.token_rows(idx) == [whole.tokens[i] for i in idx]
    assert len(texts) == len(first) + len(second)  # the second's first read took all four
    assert "tokens" not in vars(cs)


def test_without_term_statistics_the_rows_come_from_the_whole_table(handbook_lab: Lab) -> None:
    thin = Lab(handbook_lab.corpus, handbook_lab.questions)
    cs = thin.indexes.chunk_set()
    idx = np.array([3, 1, 4], dtype=np.int64)
    rows = cs.tfidf_rows(idx)
    assert "tfidf" in vars(cs)
    assert (rows != cs.tfidf[idx]).nnz == 0


def test_a_chunking_holds_offsets_and_its_relevance_is_a_pass_over_every_chunk(
    handbook_lab: Lab,
) -> None:
    """Oracle: the relevance a pass over every chunk of ``chunk_pages`` gives (each chunk of a
    relevant page at the page's grade, in chunk order; each chunk holding a span whole), for
    page-labelled questions on the handbook's pages and for its own passage-labelled ones. The
    chunking holds no chunk object (ChunkTable)."""
    pages = list(handbook_lab.corpus)[::3]
    graded = [
        Question(f"p{i}", "test", "keyword", "what?", None, pages={p.id: i % 3 + 1 for p in pick})
        for i, pick in enumerate([pages[:1], pages[4:7], [pages[2], pages[0]], []])
    ]
    lab = Lab(handbook_lab.corpus, QuestionSet((*graded, *handbook_lab.questions)))
    for key in (ChunkingKey().resolved(), ChunkingKey("fixed", 40, 10).resolved()):
        cs = lab.indexes.chunk_set(key)
        assert isinstance(cs.chunks, ChunkTable)
        made = chunk_pages(lab.corpus, method=key.method, size=key.size, overlap=key.overlap)
        for q in lab.questions:
            if q.pages is not None:
                expected = {
                    c.index: float(q.pages[c.page_id]) for c in made if c.page_id in q.pages
                }
            else:
                expected = {
                    c.index: 1.0
                    for c in made
                    if any(
                        s.page_id == c.page_id and c.start <= s.start and s.end <= c.end
                        for s in q.spans
                    )
                }
            got = cs.relevance(q)
            assert list(got.items()) == list(expected.items()), q.id


def test_the_chunks_ages_come_off_their_pages_without_making_a_chunk(
    handbook_lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: ``page_age_years`` of every chunk's own date, a chunk made by ``chunk_pages``
    (the handbook's pages are dated unevenly and hold several chunks each, so the median that
    fills a missing date is the chunks', not the pages'). A chunking held as offsets reads the
    dates off its pages: no chunk is made, so no page text held elsewhere is fetched."""
    from raglab.rerank.features import page_age_years

    lab = Lab(handbook_lab.corpus, handbook_lab.questions)
    for key in (ChunkingKey().resolved(), ChunkingKey("fixed", 40, 10).resolved()):
        made = chunk_pages(lab.corpus, method=key.method, size=key.size, overlap=key.overlap)
        want = page_age_years([c.updated for c in made])
        cs = lab.indexes.chunk_set(key)
        assert isinstance(cs.chunks, ChunkTable)
        with monkeypatch.context() as m:
            m.setattr(ChunkTable, "_make", lambda *a, **k: pytest.fail("made a chunk"))
            got = cs.age_years
        assert got.tobytes() == want.tobytes()
        assert len({float(a) for a in got}) > 1


@pytest.mark.parametrize("undated", [1, 2, 3, 7])
def test_the_candidates_ages_come_off_their_pages_without_an_array_of_every_chunk(
    handbook_lab: Lab, undated: int
) -> None:
    """Oracle: ``page_age_years`` of every chunk's own date (chunks made by ``chunk_pages``),
    on the handbook with the dates of every ``undated``-th page removed, so that undated chunks
    take the median of the dated chunks' ages (an even and an odd number of them among the
    cases: the mean of the two middle ages, or the middle one), and the pages hold unequal
    numbers of chunks (the median is the chunks', not the pages'). ``ages_of`` gives any
    chunks' ages, bit for bit, without building the array of every chunk's age."""
    from raglab.corpus.pages import Corpus
    from raglab.rerank.features import page_age_years

    pages = [
        dataclasses.replace(page, updated=None) if p % undated == 0 else page
        for p, page in enumerate(handbook_lab.corpus)
    ]
    lab = Lab(Corpus(tuple(pages)), handbook_lab.questions)
    parities = set()
    for key in (ChunkingKey().resolved(), ChunkingKey("fixed", 40, 10).resolved()):
        made = chunk_pages(lab.corpus, method=key.method, size=key.size, overlap=key.overlap)
        want = page_age_years([c.updated for c in made])
        parities.add(sum(c.updated is not None for c in made) % 2)
        cs = lab.indexes.chunk_set(key)
        idx = np.arange(len(made))[::-1].copy()
        assert cs.ages_of(idx).tobytes() == want[idx].tobytes()
        assert "age_years" not in cs.__dict__
        assert cs.age_years.tobytes() == want.tobytes()
        if undated > 1:
            assert len({float(a) for a in want}) > 2
    if undated in (3, 7):
        assert parities == {0, 1}  # an even and an odd number of dated chunks


def test_a_questions_features_take_its_candidates_once(
    handbook_lab: Lab, whole: ChunkSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reranker's features read each candidate's tokens, identifiers and title terms: on a
    chunking without whole tables, the candidates are made once a question (one round trip to
    held pages' holders past the text budget; the old code took them three times: tokens,
    identifiers and title terms), and the
    matrix equals the one computed from the whole tables, bit for bit. A question with other
    candidates takes its own."""
    from raglab.pipeline.reranking import (
        CANDIDATE_BM25,
        candidate_bm25,
        candidate_bm25_key,
        candidates,
        features,
    )
    from raglab.run_settings import RetrievalSettings

    thin = Lab(handbook_lab.corpus, handbook_lab.questions)
    thin.indexes.term_statistics = _lookup(whole)
    cs = thin.indexes.chunk_set()
    taken: list[list[int]] = []
    take = ChunkTable.take

    def counted(table: ChunkTable, rows: Sequence[int]) -> list:  # type: ignore[type-arg]
        if table is cs.chunks:
            taken.append(list(rows))
        return take(table, rows)

    monkeypatch.setattr(ChunkTable, "take", counted)
    first_stage = RetrievalSettings(retriever="bm25")
    for n, q in enumerate(handbook_lab.questions.split("train")[:2], start=1):
        cand = candidates(handbook_lab, q, first_stage)
        # The candidates' BM25 scores kept as a cluster's client keeps them, so no whole table
        # of tokens is built here for BM25.
        scores = candidate_bm25(handbook_lab, whole, q, cand.indices, first_stage)
        kept = thin.caches.of(CANDIDATE_BM25).setdefault(candidate_bm25_key(first_stage, q.id), {})
        kept.update(zip(cand.indices.tolist(), scores.tolist(), strict=True))
        got = features(thin, cs, q, cand, first_stage)
        want = features(handbook_lab, whole, q, cand, first_stage)
        assert got.tobytes() == want.tobytes()
        assert taken[-1] == cand.indices.tolist() and len(taken) == n
        assert cs._held is None  # the chunks went with the question's features
    assert not set(WHOLE_TABLES) & set(vars(cs))


def test_window_bounds_hold_the_ranges_in_sixteen_bytes_a_window() -> None:
    """oracle: the ranges themselves, and tracemalloc. ``window_bounds`` of the windows over
    1,000,000 words (the even windows of ``window_ranges``, 3,907 of them) gives back every
    range as (start, stop); unpickled (as Dask's scheduler holds a shared value while tasks
    need it) it weighs 16 bytes a window and a fixed header, where the list of ranges a
    cluster's LSA cut used to share weighed 151 (a ``range`` and two int objects a
    window). An empty or a one-window corpus keeps its shape."""
    import pickle
    import tracemalloc

    from raglab.embedding.lsa import window_count, window_ranges
    from raglab.pipeline.indexes import window_bounds

    ranges = window_ranges(1_000_000, count=window_count(1_000_000), cap=1_000_000)
    assert len(ranges) == 3_907
    bounds = window_bounds(ranges)
    assert bounds.shape == (2, 3_907) and bounds.dtype == np.int64
    assert [
        range(a, b) for a, b in zip(bounds[0].tolist(), bounds[1].tolist(), strict=True)
    ] == ranges

    def unpickled_bytes(value: object) -> int:
        data = pickle.dumps(value)
        tracemalloc.start()
        try:
            held = pickle.loads(data)
            size = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        del held
        return size

    assert unpickled_bytes(bounds) <= 16 * len(ranges) + 1_000
    assert unpickled_bytes(ranges) > 100 * len(ranges)
    assert window_bounds([]).shape == (2, 0)
    assert window_bounds([range(7)]).tolist() == [[0], [7]]
