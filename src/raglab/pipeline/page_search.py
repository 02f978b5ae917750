"""BM25 search over whole pages (title and text), for finding the page that answers a question.

Each page is one document: its title and text tokenised with the retrieval tokens
(:func:`~raglab.text.tokens.tokenize`, the ``analyzer`` and ``stem`` settings' defaults) and
ranked with BM25 (:class:`~raglab.bm25.index.BM25Index`) at the ``k1`` and ``b`` settings'
defaults. Ties go to the earlier page, as in every BM25 ranking here.
"""

from __future__ import annotations

from dataclasses import dataclass

from raglab.bm25.index import BM25Index
from raglab.corpus.pages import Corpus
from raglab.settings import default
from raglab.text.tokens import tokenize


@dataclass(frozen=True, slots=True)
class PageHit:
    """One page found: its id, title and BM25 score."""

    page_id: str
    title: str
    score: float


class PageSearch:
    """BM25 over the pages of ``corpus``: :meth:`search` gives the best ``limit`` pages."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self._stem = bool(default("stem"))
        self._analyzer = str(default("analyzer"))
        docs = [self._tokens(f"{p.title}\n{p.text}") for p in corpus]
        self.index = BM25Index(docs, k1=float(default("k1")), b=float(default("b")))

    def _tokens(self, text: str) -> list[str]:
        return tokenize(text, stem=self._stem, analyzer=self._analyzer)

    def search(self, query: str, limit: int) -> list[PageHit]:
        """The pages matching ``query`` best, at most ``limit``, best first; every page in corpus
        order (score 0) when the query has no token."""
        pages = self.corpus.pages
        tokens = self._tokens(query)
        if not tokens:
            return [PageHit(p.id, p.title, 0.0) for p in pages[:limit]]
        ranking = self.index.search(tokens, k=min(limit, len(pages)))
        return [
            PageHit(pages[i].id, pages[i].title, s)
            for i, s in zip(ranking.indices.tolist(), ranking.scores.tolist(), strict=True)
            if s > 0
        ]
