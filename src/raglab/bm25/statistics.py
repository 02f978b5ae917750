"""What a BM25 index knows of its collection: postings, lengths and IDFs, whatever k1 and b.

One job: hold the statistics of a tokenised collection (:class:`BM25Statistics`) and answer the
questions every search asks of them: one copy of the postings term by term
(:class:`raglab.bm25.postings.Columns`: int32 documents, small unsigned frequencies, about 5
bytes a posting), each document's length |d| and ``|d| / avgdl``, each term's Lucene IDF
(:func:`raglab.bm25.formula.lucene_idf`), a query's known terms and weights, and the postings of
a batch of queries. Nothing here depends on k1 or b, so every (k1, b) of
:class:`raglab.bm25.index.BM25Index` shares one instance.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import chain, repeat

import numpy as np

from raglab.base.ranking import FloatArray, IntArray
from raglab.bm25.formula import check_query, lucene_idf
from raglab.bm25.postings import Columns, Postings, build_postings
from raglab.embedding.vectors import Vocabulary, check_token_lists

__all__ = ["BM25Statistics"]


class BM25Statistics:
    """The statistics of a collection of token lists, shared by every (k1, b) of an index.

    ``BM25Statistics(docs)`` counts term frequencies once (:func:`raglab.bm25.postings.build_postings`);
    documents are addressed by their position in ``docs``, terms by their column in the sorted
    ``vocabulary``. Read-only attributes:

    - ``columns``: the postings, term by term; the documents of term t are
      ``columns.docs[indptr[t]:indptr[t + 1]]`` (ascending) and their frequencies ``columns.tf``;
      ``columns.ratio`` (N,) float64 is ``|d| / avgdl`` (1.0 everywhere when every document is
      empty: no term can match, so any finite value does);
    - ``doc_len`` (N,) float64 token counts |d|, ``avgdl`` their mean;
    - ``idf`` (V,) float64 Lucene IDF of every term;
    - ``vocabulary``: the terms (sorted) and their columns.
    """

    __slots__ = ("avgdl", "columns", "doc_len", "idf", "vocabulary")

    def __init__(self, docs: Sequence[Sequence[str]]) -> None:
        check_token_lists(docs)
        if len(docs) == 0:
            raise ValueError("BM25Index needs at least one document")
        terms, indptr, doc_ids, tf, doc_len = build_postings(docs)
        avgdl = float(doc_len.mean())
        self.vocabulary = Vocabulary(terms)
        self.doc_len: FloatArray = doc_len
        self.avgdl = avgdl
        self.idf: FloatArray = lucene_idf(np.diff(indptr), len(docs))
        ratio = doc_len / avgdl if avgdl > 0 else np.ones_like(doc_len)
        self.columns = Columns(indptr=indptr, docs=doc_ids, tf=tf, ratio=ratio)

    @property
    def n_docs(self) -> int:
        """Number of documents N."""
        return int(self.doc_len.shape[0])

    def arrays(self) -> list[np.ndarray]:
        """The arrays held: postings (documents and frequencies), pointers, lengths, ratios and
        IDFs."""
        cols = self.columns
        return [cols.indptr, cols.docs, cols.tf, self.doc_len, cols.ratio, self.idf]

    def postings(self, queries: Sequence[Sequence[str]]) -> Postings:
        """The postings of every query's distinct known terms, query by query, terms in
        ascending column (the order every score is summed in)."""
        ptr, terms, weights = self.query_terms_many(queries)
        owner = np.repeat(np.arange(len(queries), dtype=np.int64), np.diff(ptr))
        return self.gather(owner, terms, weights)

    def gather(self, owner: IntArray, terms: IntArray, weights: FloatArray) -> Postings:
        """The postings of (query, term) pairs: ``owner`` (T,) the query of each pair, ``terms``
        (T,) its column and ``weights`` (T,) its ``idf * query count``."""
        if terms.shape[0] == 0:
            empty_i = np.zeros(0, dtype=np.int64)
            return Postings(empty_i, empty_i, np.zeros(0), np.zeros(0))
        indptr = self.columns.indptr
        starts = indptr[terms]
        lengths = indptr[terms + 1] - starts
        # Positions of every posting of every term, laid out term after term.
        ends = np.cumsum(lengths)
        pos = np.repeat(starts - (ends - lengths), lengths) + np.arange(ends[-1], dtype=np.int64)
        return Postings(
            query=np.repeat(owner, lengths),
            doc=self.columns.docs[pos].astype(np.int64),
            tf=self.columns.tf[pos].astype(np.float64),
            weight=np.repeat(weights, lengths),
        )

    def query_terms(self, query: Sequence[str]) -> tuple[IntArray, FloatArray]:
        """A query's distinct known terms (ascending columns) and their ``idf * query count``."""
        check_query(query)
        index = self.vocabulary.mapping
        counts = Counter(index[t] for t in query if t in index)
        terms = np.array(sorted(counts), dtype=np.int64)
        # The same expression as query_terms_many's weights, so every path multiplies the same floats.
        weights = self.idf[terms] * np.array([counts[t] for t in terms.tolist()], dtype=np.int64)
        return terms, weights

    def work(self, terms: IntArray) -> int:
        """Postings of ``terms`` plus documents: what scoring a query exhaustively touches."""
        indptr = self.columns.indptr
        return int((indptr[terms + 1] - indptr[terms]).sum()) + self.n_docs

    def token_ids(self, queries: Sequence[Sequence[str]]) -> tuple[IntArray, IntArray]:
        """Every token's column (-1 outside the vocabulary), flattened: query q's are
        ``ids[ptr[q]:ptr[q + 1]]``, repeats kept. Returns (ptr, ids)."""
        ptr = np.zeros(len(queries) + 1, dtype=np.int64)
        np.cumsum([len(q) for q in queries], out=ptr[1:])
        ids = np.fromiter(
            map(self.vocabulary.mapping.get, chain.from_iterable(queries), repeat(-1)),
            dtype=np.int64,
            count=int(ptr[-1]),
        )
        return ptr, ids

    def query_terms_many(
        self, queries: Sequence[Sequence[str]]
    ) -> tuple[IntArray, IntArray, FloatArray]:
        """Every query's distinct known terms and weights, as :meth:`query_terms` gives them,
        flattened: query q's are ``terms[ptr[q]:ptr[q + 1]]``. Returns (ptr, terms, weights)."""
        n_terms = len(self.vocabulary)
        token_ptr, ids = self.token_ids(queries)
        owner = np.repeat(np.arange(len(queries), dtype=np.int64), np.diff(token_ptr))
        known = ids >= 0
        keys, counts = np.unique(owner[known] * n_terms + ids[known], return_counts=True)
        owners = keys // n_terms
        terms = keys - owners * n_terms
        ptr = np.searchsorted(owners, np.arange(len(queries) + 1)).astype(np.int64)
        weights = self.idf[terms] * counts.astype(np.int64)
        return ptr, terms, weights

    def tf_of(self, doc: int, col: int) -> int:
        """The frequency of term ``col`` in document ``doc`` (0 when absent): a binary search in
        the term's postings."""
        cols = self.columns
        start, end = int(cols.indptr[col]), int(cols.indptr[col + 1])
        at = start + int(np.searchsorted(cols.docs[start:end], doc))
        return int(cols.tf[at]) if at < end and int(cols.docs[at]) == doc else 0
