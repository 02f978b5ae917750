"""What a BM25 index knows of its collection: counts, lengths, IDFs, bounds and postings.

One job: hold the statistics of a tokenised collection (:class:`BM25Statistics`): one copy of
the postings term by term (int32 documents and small unsigned frequencies, about 5 bytes a
posting), document lengths, Lucene IDFs, and at the index's k1 and b each term's largest
saturation (MaxScore's bound) and each document's length term; gather the postings of a batch of
queries; and explain a score term by term (:class:`TermContribution`). Searching is
:class:`raglab.bm25.index.BM25Index`'s job, on top of this. Private: import from :mod:`raglab.bm25.index`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from typing import Self

import numpy as np

from raglab.base.ranking import FloatArray, IntArray
from raglab.bm25.maxscore import Columns, impacts
from raglab.bm25.scoring import (
    Postings,
    build_postings,
    check_params,
    check_query,
    lucene_idf,
    per_term_reduce,
)
from raglab.embedding.vectors import Vocabulary, check_token_lists
from raglab.settings import default


@dataclass(frozen=True, slots=True)
class TermContribution:
    """One query term's share of a document's BM25 score.

    ``contribution = query_count * idf * tf (k1 + 1) / (tf + k1 * length_factor)`` with
    ``length_factor = 1 - b + b |d| / avgdl``. A term absent from the document has tf 0 and
    contributes 0; a term absent from the collection also has df 0.
    """

    term: str
    tf: int
    df: int
    idf: float
    length_factor: float
    contribution: float
    query_count: int


class BM25Statistics:
    """The statistics of a BM25 index over token lists, shared by every (k1, b) of it.

    ``BM25Statistics(docs, k1=BM25_K1, b=BM25_B)`` counts term frequencies once;
    :meth:`with_params` shares those counts, so trying other k1 and b costs nothing. Documents
    are addressed by their position in ``docs``.

    One copy of the postings, term by term (:class:`raglab.bm25.maxscore.Columns`): the documents of
    term t are ``docs[indptr[t]:indptr[t + 1]]`` (int32, ascending) and their frequencies ``tf``
    (the smallest unsigned integer type that holds the largest). Every saturation is computed
    from these in float64 when it is needed, so scores are exact; per (k1, b) only N + V floats
    are kept (``k1 * length_factor`` of every document, the largest saturation of every term).
    """

    __slots__ = (
        "_avgdl",
        "_b",
        "_columns",
        "_doc_len",
        "_idf",
        "_k1",
        "_klf",
        "_max_impacts",
        "_ratio",
        "_vocab",
    )

    def __init__(
        self, docs: Sequence[Sequence[str]], *, k1: float = default("k1"), b: float = default("b")
    ) -> None:
        check_token_lists(docs)
        if len(docs) == 0:
            raise ValueError("BM25Index needs at least one document")
        check_params(k1, b)
        terms, indptr, doc_ids, tf, doc_len = build_postings(docs)
        avgdl = float(doc_len.mean())
        self._vocab = Vocabulary(terms)
        self._doc_len = doc_len
        self._avgdl = avgdl
        self._idf = lucene_idf(np.diff(indptr), len(docs))
        # |d| / avgdl; when every document is empty no term can match, so any finite value does.
        self._ratio = doc_len / avgdl if avgdl > 0 else np.ones_like(doc_len)
        self._k1 = float(k1)
        self._b = float(b)
        self._columns = Columns(indptr=indptr, docs=doc_ids, tf=tf, ratio=self._ratio)
        self._klf: FloatArray | None = None
        self._max_impacts: FloatArray | None = None
        # Each term's largest saturation at (k1, b), for search_many's bounds: part of indexing,
        # as bm25s precomputes its scores (a clone at other k1, b computes its own on first use).
        self._max_impact()

    def with_params(self, *, k1: float | None = None, b: float | None = None) -> Self:
        """The same index with other k1 and/or b (None keeps the current value).

        The counts, lengths and IDFs are shared, not copied, so this costs nothing.
        """
        new_k1 = self._k1 if k1 is None else float(k1)
        new_b = self._b if b is None else float(b)
        check_params(new_k1, new_b)
        clone = object.__new__(type(self))
        for name in BM25Statistics.__slots__:
            setattr(clone, name, getattr(self, name))
        clone._k1 = new_k1
        clone._b = new_b
        clone._klf = None  # they depend on k1 and b
        clone._max_impacts = None
        return clone

    @property
    def n_docs(self) -> int:
        """Number of documents N."""
        return int(self._doc_len.shape[0])

    @property
    def avgdl(self) -> float:
        """Mean document length in tokens."""
        return self._avgdl

    @property
    def k1(self) -> float:
        return self._k1

    @property
    def b(self) -> float:
        return self._b

    @property
    def vocabulary(self) -> Vocabulary:
        """The collection's terms (sorted)."""
        return self._vocab

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays the index holds: postings (documents and frequencies), pointers,
        per-document and per-term arrays. The vocabulary's terms and dict are not counted."""
        arrays = {id(a): a for a in self._arrays()}
        return sum(int(a.nbytes) for a in arrays.values())

    def _arrays(self) -> list[np.ndarray]:
        cols = self._columns
        held = [cols.indptr, cols.docs, cols.tf, self._doc_len, self._ratio, self._idf]
        return held + [a for a in (self._klf, self._max_impacts) if a is not None]

    @property
    def doc_lengths(self) -> FloatArray:
        """|d| for every document, shape (n_docs,)."""
        return self._doc_len.copy()

    @property
    def idf(self) -> FloatArray:
        """Lucene IDF of every vocabulary term, shape (n_terms,)."""
        return self._idf.copy()

    def _postings(self, queries: Sequence[Sequence[str]]) -> Postings:
        """The postings of every query's distinct known terms, query by query, terms in
        ascending column (the order every score is summed in)."""
        ptr, terms, weights = self._query_terms_many(queries)
        owner = np.repeat(np.arange(len(queries), dtype=np.int64), np.diff(ptr))
        return self._gather(owner, terms, weights)

    def _gather(self, owner: IntArray, terms: IntArray, weights: FloatArray) -> Postings:
        """The postings of (query, term) pairs: ``owner`` (T,) the query of each pair, ``terms``
        (T,) its column and ``weights`` (T,) its ``idf * query count``."""
        if terms.shape[0] == 0:
            empty_i = np.zeros(0, dtype=np.int64)
            return Postings(empty_i, empty_i, np.zeros(0), np.zeros(0))
        indptr = self._columns.indptr
        starts = indptr[terms]
        lengths = indptr[terms + 1] - starts
        # Positions of every posting of every term, laid out term after term.
        ends = np.cumsum(lengths)
        pos = np.repeat(starts - (ends - lengths), lengths) + np.arange(ends[-1], dtype=np.int64)
        return Postings(
            query=np.repeat(owner, lengths),
            doc=self._columns.docs[pos].astype(np.int64),
            tf=self._columns.tf[pos].astype(np.float64),
            weight=np.repeat(weights, lengths),
        )

    def _query_terms(self, query: Sequence[str]) -> tuple[IntArray, FloatArray]:
        """A query's distinct known terms (ascending columns) and their ``idf * query count``."""
        check_query(query)
        index = self._vocab.mapping
        counts = Counter(index[t] for t in query if t in index)
        terms = np.array(sorted(counts), dtype=np.int64)
        # The same expression as _postings' weights, so every path multiplies the same floats.
        weights = self._idf[terms] * np.array([counts[t] for t in terms.tolist()], dtype=np.int64)
        return terms, weights

    def _work(self, terms: IntArray) -> int:
        """Postings of ``terms`` plus documents: what scoring a query exhaustively touches."""
        indptr = self._columns.indptr
        return int((indptr[terms + 1] - indptr[terms]).sum()) + self.n_docs

    def _token_ids(self, queries: Sequence[Sequence[str]]) -> tuple[IntArray, IntArray]:
        """Every token's column (-1 outside the vocabulary), flattened: query q's are
        ``ids[ptr[q]:ptr[q + 1]]``, repeats kept. Returns (ptr, ids)."""
        ptr = np.zeros(len(queries) + 1, dtype=np.int64)
        np.cumsum([len(q) for q in queries], out=ptr[1:])
        ids = np.fromiter(
            map(self._vocab.mapping.get, chain.from_iterable(queries), repeat(-1)),
            dtype=np.int64,
            count=int(ptr[-1]),
        )
        return ptr, ids

    def _query_terms_many(
        self, queries: Sequence[Sequence[str]]
    ) -> tuple[IntArray, IntArray, FloatArray]:
        """Every query's distinct known terms and weights, as :meth:`_query_terms` gives them,
        flattened: query q's are ``terms[ptr[q]:ptr[q + 1]]``. Returns (ptr, terms, weights)."""
        n_terms = len(self._vocab)
        token_ptr, ids = self._token_ids(queries)
        owner = np.repeat(np.arange(len(queries), dtype=np.int64), np.diff(token_ptr))
        known = ids >= 0
        keys, counts = np.unique(owner[known] * n_terms + ids[known], return_counts=True)
        owners = keys // n_terms
        terms = keys - owners * n_terms
        ptr = np.searchsorted(owners, np.arange(len(queries) + 1)).astype(np.int64)
        weights = self._idf[terms] * counts.astype(np.int64)
        return ptr, terms, weights

    def _length_term(self) -> FloatArray:
        """``k1 * ((1 - b) + b |d| / avgdl)`` of every document, shape (N,): the saturation's
        denominator less tf, formed as :func:`raglab.bm25.maxscore.saturation` forms it."""
        if self._klf is None:
            self._klf = self._k1 * ((1.0 - self._b) + self._b * self._ratio)
        return self._klf

    def _max_impact(self) -> FloatArray:
        """Each term's largest saturation at this index's k1 and b, shape (V,)."""
        if self._max_impacts is None:
            cols, klf, k1 = self._columns, self._length_term(), self._k1
            self._max_impacts = per_term_reduce(
                cols.indptr,
                lambda a, z: impacts(cols.tf[a:z], klf[cols.docs[a:z]], k1),
                np.maximum,
            )
        return self._max_impacts

    def _tf_of(self, doc: int, col: int) -> int:
        """The frequency of term ``col`` in document ``doc`` (0 when absent): a binary search in
        the term's postings."""
        cols = self._columns
        start, end = int(cols.indptr[col]), int(cols.indptr[col + 1])
        at = start + int(np.searchsorted(cols.docs[start:end], doc))
        return int(cols.tf[at]) if at < end and int(cols.docs[at]) == doc else 0

    def explain(self, query_tokens: Sequence[str], doc: int) -> list[TermContribution]:
        """Term-by-term breakdown of ``scores(query_tokens)[doc]``.

        One entry per distinct query token in order of first appearance; the contributions sum
        to the score.
        """
        check_query(query_tokens)
        if isinstance(doc, bool) or not isinstance(doc, int | np.integer):
            raise ValueError(f"doc must be an integer index, got {doc!r}")
        if not 0 <= doc < self.n_docs:
            raise ValueError(f"doc {doc} is out of range for {self.n_docs} documents")
        length_factor = float((1.0 - self._b) + self._b * self._ratio[doc])
        out: list[TermContribution] = []
        for term, count in Counter(query_tokens).items():
            col = self._vocab.get(term)
            if col is None:
                tf, df = 0, 0
                idf = float(lucene_idf(0, self.n_docs))
            else:
                tf = self._tf_of(doc, col)
                df = int(self._columns.indptr[col + 1] - self._columns.indptr[col])
                idf = float(self._idf[col])
            contribution = (
                count * idf * (tf * (self._k1 + 1.0)) / (tf + self._k1 * length_factor)
                if tf > 0
                else 0.0
            )
            out.append(TermContribution(term, tf, df, idf, length_factor, contribution, count))
        return out


__all__ = ["BM25Statistics", "TermContribution"]
