"""The lab's shared structures: chunk sets, relevance, LSA on the handbook, caching."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from raglab.embedding.lsa import term_window_matrix
from raglab.embedding.svd import randomized_svd
from raglab.errors import DataLimit
from raglab.pipeline.cache import BoundedCache
from raglab.pipeline.chunking_report import chunking_report
from raglab.pipeline.lab import Lab
from raglab.run_settings import ChunkingKey
from raglab.settings import LSA_OVERSAMPLE, LSA_POWER_ITERATIONS


def test_relevant_chunks_contain_the_answer_span(lab: Lab) -> None:
    """Oracle: the definition in docs/design.md#spans, checked span by span."""
    cs = lab.indexes.chunk_set()
    for q in lab.questions:
        for i in cs.relevance(q):
            c = cs.chunks[i]
            assert any(
                s.page_id == c.page_id and c.start <= s.start and s.end <= c.end for s in q.spans
            )
        if not q.answerable:
            assert not cs.relevance(q)


def test_fixed_chunk_count_equals_the_closed_form_on_the_handbook(lab: Lab) -> None:
    """Oracle: sum over pages of ceil((N - o) / (s - o)), one chunk when N <= s."""
    for size, overlap in ((200, 0), (120, 30), (64, 63), (500, 100)):
        report = chunking_report(lab, ChunkingKey("fixed", size, overlap))
        by_hand = sum(
            1 if p.n_words <= size else -(-(p.n_words - overlap) // (size - overlap))
            for p in lab.corpus
        )
        assert report.n_chunks == report.expected_chunks == by_hand


def test_lsa_on_the_handbook_matches_numpy_exact_svd(lab: Lab) -> None:
    """Oracle: numpy.linalg.svd of the same TF-IDF term x window matrix; every seed within 0.5%."""
    A, _, _ = term_window_matrix(lab.indexes.lsa_windows)
    exact = np.linalg.svd(A.toarray(), compute_uv=False)[:48]
    assert len(lab.indexes.lsa_windows) == 100
    np.testing.assert_allclose(lab.indexes.lsa.singular_values, exact, rtol=5e-3)
    for seed in range(3):
        _, s, _ = randomized_svd(
            A, rank=48, seed=seed, oversample=LSA_OVERSAMPLE, power_iterations=LSA_POWER_ITERATIONS
        )
        np.testing.assert_allclose(s, exact, rtol=5e-3)


def test_a_second_lab_gives_identical_numbers(lab: Lab) -> None:
    """Seeded and deterministic: the embedding of a fresh lab equals the first, bit for bit."""
    other = Lab.load()
    np.testing.assert_array_equal(
        other.indexes.chunk_set().lsa_projections, lab.indexes.chunk_set().lsa_projections
    )


def test_equal_settings_share_one_chunk_set(lab: Lab) -> None:
    assert lab.indexes.chunk_set(ChunkingKey("fixed")) is lab.indexes.chunk_set(
        ChunkingKey("fixed", 200, 0)
    )
    with pytest.raises(ValueError, match="chunker must be one of"):
        lab.indexes.chunk_set(ChunkingKey("paragraph"))


def test_bounded_cache_evicts_the_least_recently_used() -> None:
    cache: BoundedCache[int, int] = BoundedCache(2)
    calls: list[int] = []

    def build(k: int) -> int:
        calls.append(k)
        return k * 10

    for k in (1, 2, 1, 3, 1, 2):
        assert cache.get(k, lambda k=k: build(k)) == k * 10
    # 1 and 2 built, 1 hit, 3 built (evicts 2), 1 hit, 2 built again.
    assert calls == [1, 2, 3, 2]


def test_a_sentences_terms_are_its_tokens_read_piece_by_piece(lab: Lab) -> None:
    """Oracle: ``frozenset(tokenize(text, stem=True, analyzer="raglab"))`` over the whole text at once, on every
    sentence of the handbook and on one sentence of 3 MB inside a page (three pieces of about 1 MB)."""
    from raglab.pipeline.lab import _stemmed_terms
    from raglab.text.tokens import BLOCK, sentence_spans, tokenize

    for page in lab.corpus:
        for a, b in sentence_spans(page.text):
            piece = page.text[a:b]
            assert _stemmed_terms(page.text, a, b) == frozenset(
                tokenize(piece, stem=True, analyzer="raglab")
            )
    words = ["charging", "E-4107", "isn't", "1,200", "o'clock", "U.S.", "pumps", "e.g."]
    long = " ".join(words[i % len(words)] + str(i % 997) for i in range(400_000))
    assert len(long) > 3 * BLOCK
    page = f"# Title\n\n{long}\n\nThe pump runs."
    a = page.index(long)
    assert _stemmed_terms(page, a, a + len(long)) == frozenset(
        tokenize(long, stem=True, analyzer="raglab")
    )


def test_sentences_within_bounds_are_the_pages_sentences_inside_them(lab: Lab) -> None:
    """Oracle: every quotable sentence of the page (``Lab.sentences``: whole, headings left
    out) filtered here to those lying whole inside one of the bounds, in page order; a fresh
    lab asked for a few bounds gives the same (start, end, terms) as one that split the page."""
    fresh = Lab(lab.corpus, lab.questions)
    for page in list(lab.corpus)[:12]:
        every = lab.sentences(page.id)
        n = len(page.text)
        for bounds in ([(0, n)], [(0, n // 3)], [(n // 2, n), (n // 5, n // 4)], [(5, 5)]):
            want = [s for s in every if any(a <= s[0] and s[1] <= b for a, b in bounds)]
            assert fresh.sentences_within(page.id, bounds) == want
            assert lab.sentences_within(page.id, bounds) == want


def test_a_corpus_alone_makes_a_lab_without_questions(tmp_path: Path) -> None:
    """Lab.load(folder) reads the pages alone; what needs labels raises DataLimit naming it."""
    (tmp_path / "valve.md").write_text("# Valve\n\nThe valve closes at two bar.\n", "utf-8")
    alone = Lab.load(tmp_path)
    assert (len(alone.questions), alone.labelled, len(alone.corpus)) == (0, False, 1)
    assert alone.indexes.chunk_set().bm25 is not None  # search needs no labels
    with pytest.raises(DataLimit) as refused:
        alone.require("train", "choosing the fusion weight (or give one: --weight)")
    assert str(refused.value) == (
        "choosing the fusion weight needs labelled questions: give --questions FILE"
    )
