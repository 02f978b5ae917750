"""Packing a question's context: the word counts of a prefix of its ranking, then its packed chunks
taken at once. Past the page-text budget of a Dask client (pages held elsewhere,
:class:`~raglab.corpus.pages.HeldPage`), their pages come in one round trip a question, not one
a chunk, and only the prefix's pages are read for their word counts.

Oracle: the same stage on the handbook's own pages (texts at hand), whose inputs the held lab's
must equal; and the round trips counted by the fetcher against a bound worked from the pages'
lengths: a question's batch stops only when its next page would pass the budget, so each batch
but its last carries more than ``budget - longest page`` characters; and ``pack`` over the
whole ranking's word counts.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np

from raglab.base.ranking import Ranking
from raglab.chunking.held_table import HeldChunkTable
from raglab.corpus.pages import Corpus, HeldPage, PageTexts
from raglab.pipeline.lab import Lab
from raglab.pipeline.reading import PACK_PREFIX, packed_count, prepared_questions
from raglab.pipeline.resolve import resolve_read
from raglab.pipeline.retrieval import ranked_questions
from raglab.reading.reader import pack
from raglab.run_settings import RunSettings

#: Characters kept on the held lab's client: a few of the handbook's pages (58, 80,000 in all).
BUDGET = 12_000


def test_a_questions_packed_pages_come_in_one_round_trip(handbook_lab: Lab) -> None:
    """The test split's reading inputs (BM25, no reranker) equal the full lab's; packing them
    fetched at most the bound's round trips, fewer than one a packed chunk's page (the old
    code's count)."""
    read = resolve_read(handbook_lab, RunSettings(retriever="bm25", rerank=False, mmr=False))
    qs = handbook_lab.questions.split("test")
    want = prepared_questions(handbook_lab, read, qs, None)

    texts = PageTexts(BUDGET)
    full = handbook_lab.corpus
    texts.fetch = lambda ids: [full.page(i).text for i in ids]
    lab = Lab(Corpus(tuple(HeldPage.of(p, texts) for p in full)), handbook_lab.questions)
    cs = lab.indexes.chunk_set(read.chunking)
    rankings = ranked_questions(lab, cs, qs, read.first_stage)  # BM25's tables built first
    before = texts.round_trips
    assert prepared_questions(lab, read, qs, None) == want
    trips = texts.round_trips - before

    longest = max(len(p.text) for p in full)
    bound, per_page = 0, 0
    for r in rankings:
        rows = r.indices[: packed_count(cs, r, read)].tolist()
        pages = [cs.chunks.page_id(i) for i in rows]
        chars = sum(len(full.page(p).text) for p in dict.fromkeys(pages))
        bound += 1 + chars // (BUDGET - longest)
        per_page += len(pages)
    assert 0 < trips <= bound < per_page


def test_packing_reads_the_word_counts_of_a_prefix_and_packs_as_the_whole_ranking(
    handbook_lab: Lab,
) -> None:
    """Oracle: ``pack`` over the whole ranking's word counts. ``packed_count`` reads a prefix
    that doubles from PACK_PREFIX until a chunk in it does not fit, and gives the same k at
    every budget from 0 to past the whole ranking's words; on a held table it reads the pages
    of that prefix only (at most twice the packed chunks, and PACK_PREFIX), not of the whole
    ranking."""
    read = resolve_read(handbook_lab, RunSettings(retriever="bm25", rerank=False, mmr=False))
    cs = handbook_lab.indexes.chunk_set(read.chunking)
    idx = np.random.default_rng(1).permutation(len(cs)).astype(np.int64)
    ranking = Ranking(idx, np.linspace(1.0, 0.0, len(idx)))
    words = cs.chunks.n_words[idx]
    budgets = sorted({0, 1, *words.cumsum()[:40].tolist(), int(words.sum()) + 1, 137, 1000})
    for budget in budgets:
        at = dataclasses.replace(read, budget=budget)
        assert packed_count(cs, ranking, at) == pack(words, budget=budget)

    texts = PageTexts(10**9)
    full = handbook_lab.corpus
    asked: list[str] = []

    def fetch(ids: list[str]) -> list[str]:
        asked.extend(ids)
        return [full.page(i).text for i in ids]

    texts.fetch = fetch
    held = Corpus(tuple(HeldPage.of(p, texts) for p in full))
    table = HeldChunkTable.of_counts(
        held.pages,
        np.diff(cs.chunks.first),
        cs.chunks.total_words,
        method=read.chunking.method,
        size=read.chunking.size,
        overlap=read.chunking.overlap,
    )
    cs_held = copy.copy(cs)
    cs_held.chunks = table
    for budget in (300, read.budget):
        asked.clear()
        at = dataclasses.replace(read, budget=budget)
        k = packed_count(cs_held, ranking, at)
        assert k == pack(words, budget=budget)
        read_rows = max(PACK_PREFIX, 2 * (k + 1))
        assert set(asked) <= {cs.chunks.page_id(i) for i in idx[:read_rows].tolist()}
