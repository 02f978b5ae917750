"""BM25 over whole pages: which pages a query finds, in what order, and the empty query.

Oracles: the pages of tests/labelling_corpus.py read by hand (which page holds which word), and
BM25's own rule that a page holding more of the query's rare terms ranks above one holding fewer.
"""

from __future__ import annotations

from pathlib import Path

from raglab.corpus.pages import load_corpus
from raglab.pipeline.page_search import PageSearch
from tests.labelling_corpus import PAGES, write_corpus


def test_a_query_finds_the_pages_holding_its_words_best_first(tmp_path: Path) -> None:
    search = PageSearch(load_corpus(write_corpus(tmp_path / "pages")))
    assert [h.page_id for h in search.search("grease", 10)] == ["gamma"]
    # "seam" and "packing" are on alpha alone; "box" is on alpha and beta.
    hits = search.search("packing seam box", 10)
    assert [h.page_id for h in hits] == ["alpha", "beta"]
    assert hits[0].score > hits[1].score > 0
    assert hits[0].title == "Returns"
    assert search.search("pizza", 10) == []
    assert len(search.search("box", 1)) == 1


def test_a_query_without_a_token_lists_the_pages_in_corpus_order(tmp_path: Path) -> None:
    corpus = load_corpus(write_corpus(tmp_path / "pages"))
    hits = PageSearch(corpus).search("  ", 10)
    assert [h.page_id for h in hits] == [p.id for p in corpus]
    assert sorted(h.page_id for h in hits) == sorted(PAGES)
    assert [h.page_id for h in PageSearch(corpus).search("", 2)] == [p.id for p in corpus][:2]
