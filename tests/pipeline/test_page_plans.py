"""Packing a question's context takes its packed chunks at once: past the page-text budget of a
Dask client (pages held elsewhere, :class:`~raglab.corpus.pages.HeldPage`), their pages come in
one round trip a question, not one a chunk.

Oracle: the same stage on the handbook's own pages (texts at hand), whose inputs the held lab's
must equal; and the round trips counted by the fetcher against a bound worked from the pages'
lengths: a question's batch stops only when its next page would pass the budget, so each batch
but its last carries more than ``budget - longest page`` characters.
"""

from __future__ import annotations

from raglab.corpus.pages import Corpus, HeldPage, PageTexts
from raglab.pipeline.lab import Lab
from raglab.pipeline.reading import packed_count, prepared_questions
from raglab.pipeline.resolve import resolve_read
from raglab.pipeline.retrieval import ranked_questions
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
