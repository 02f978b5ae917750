"""What a BM25 index knows of its collection: counts, lengths, IDFs, bounds and postings.

One job: hold the statistics of a tokenised collection (:class:`BM25Statistics`): the term
counts (a scipy.sparse CSC matrix, documents x terms), document lengths, Lucene IDFs, each term's
MaxScore bounds and every posting's saturation at the index's k1 and b; gather the postings of a
batch of queries; and explain a score term by term (:class:`TermContribution`). Searching is
:class:`raglab.bm25.BM25Index`'s job, on top of this. Private: import from :mod:`raglab.bm25`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Self

import numpy as np
import scipy.sparse as sp  # type: ignore[import-untyped]

from raglab._bm25_scoring import Postings, check_params, check_query, lucene_idf
from raglab._bm25_topk import Columns, saturation
from raglab._config import BM25_B, BM25_K1
from raglab._types import FloatArray, IntArray
from raglab.vectors import SparseMatrix, Vocabulary, check_token_lists, count_matrix


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
    """

    __slots__ = (
        "_avgdl",
        "_b",
        "_columns",
        "_counts",
        "_df",
        "_doc_len",
        "_idf",
        "_k1",
        "_max_impacts",
        "_ratio",
        "_saturations",
        "_vocab",
    )

    def __init__(
        self, docs: Sequence[Sequence[str]], *, k1: float = BM25_K1, b: float = BM25_B
    ) -> None:
        check_token_lists(docs)
        if len(docs) == 0:
            raise ValueError("BM25Index needs at least one document")
        check_params(k1, b)
        vocab = Vocabulary.from_docs(docs)
        counts = sp.csc_matrix(count_matrix(docs, vocabulary=vocab))
        counts.sort_indices()
        doc_len = np.fromiter((len(d) for d in docs), dtype=np.float64, count=len(docs))
        df = np.diff(counts.indptr).astype(np.int64)
        avgdl = float(doc_len.mean())
        self._vocab = vocab
        self._counts: SparseMatrix = counts
        self._doc_len = doc_len
        self._avgdl = avgdl
        self._df = df
        self._idf = lucene_idf(df, len(docs))
        # |d| / avgdl; when every document is empty no term can match, so any finite value does.
        self._ratio = doc_len / avgdl if avgdl > 0 else np.ones_like(doc_len)
        self._k1 = float(k1)
        self._b = float(b)
        # Per term, the largest tf and the smallest |d| / avgdl among its documents: MaxScore's
        # bound of the term's saturation at any (k1, b). Every vocabulary term has a document.
        first = counts.indptr[:-1]
        self._columns = Columns(
            indptr=counts.indptr.astype(np.int64),
            docs=counts.indices,
            tf=np.asarray(counts.data, dtype=np.float64),
            ratio=self._ratio,
            max_tf=np.maximum.reduceat(np.asarray(counts.data, dtype=np.float64), first),
            min_ratio=np.minimum.reduceat(self._ratio[counts.indices], first),
        )
        self._saturations: sp.csr_matrix | None = None
        self._max_impacts: FloatArray | None = None
        # Every posting's saturation at (k1, b) and each term's largest, for search_many: part
        # of indexing, as bm25s precomputes its scores (a clone at other k1, b builds its own on
        # first use).
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
        clone._saturations = None  # they depend on k1 and b
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
    def doc_lengths(self) -> FloatArray:
        """|d| for every document, shape (n_docs,)."""
        return self._doc_len.copy()

    @property
    def idf(self) -> FloatArray:
        """Lucene IDF of every vocabulary term, shape (n_terms,)."""
        return self._idf.copy()

    def _postings(self, queries: Sequence[Sequence[str]]) -> Postings:
        index = self._vocab.mapping
        q_ids: list[int] = []
        t_ids: list[int] = []
        t_counts: list[int] = []
        for qi, query in enumerate(queries):
            check_query(query)
            # Distinct known terms in ascending column order, with their query counts (plain
            # Python: queries are short, and numpy's per-call overhead would dominate).
            counts = Counter(index[t] for t in query if t in index)
            terms = sorted(counts)
            q_ids.extend([qi] * len(terms))
            t_ids.extend(terms)
            t_counts.extend([counts[t] for t in terms])
        terms_arr = np.array(t_ids, dtype=np.int64)
        return self._gather(
            np.array(q_ids, dtype=np.int64),
            terms_arr,
            self._idf[terms_arr] * np.array(t_counts, dtype=np.int64),
        )

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
            doc=self._counts.indices[pos].astype(np.int64),
            tf=self._columns.tf[pos],
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

    def _query_terms_many(
        self, queries: Sequence[Sequence[str]]
    ) -> tuple[IntArray, IntArray, FloatArray]:
        """Every query's distinct known terms and weights, as :meth:`_query_terms` gives them,
        flattened: query q's are ``terms[ptr[q]:ptr[q + 1]]``. Returns (ptr, terms, weights)."""
        mapping = self._vocab.mapping
        n_terms = len(self._vocab)
        ids = np.array([mapping.get(t, -1) for q in queries for t in q], dtype=np.int64)
        owner = np.repeat(np.arange(len(queries), dtype=np.int64), [len(q) for q in queries])
        known = ids >= 0
        keys, counts = np.unique(owner[known] * n_terms + ids[known], return_counts=True)
        owners = keys // n_terms
        terms = keys - owners * n_terms
        ptr = np.searchsorted(owners, np.arange(len(queries) + 1)).astype(np.int64)
        weights = self._idf[terms] * counts.astype(np.int64)
        return ptr, terms, weights

    def _max_impact(self) -> FloatArray:
        """Each term's largest saturation at this index's k1 and b, shape (V,)."""
        if self._max_impacts is None:
            sat = self._saturation_matrix()
            self._max_impacts = np.maximum.reduceat(sat.data, self._columns.indptr[:-1])
        return self._max_impacts

    def _saturation_matrix(self) -> sp.csr_matrix:
        """Every posting's saturation at this index's k1 and b, terms x documents (V, N)."""
        if self._saturations is None:
            cols = self._columns
            sat = saturation(cols.tf, cols.ratio[cols.docs], self._k1, self._b)
            self._saturations = sp.csr_matrix(
                (sat, cols.docs, cols.indptr), shape=(len(self._vocab), self.n_docs)
            )
        return self._saturations

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
                tf = int(self._counts[doc, col])
                df = int(self._df[col])
                idf = float(self._idf[col])
            contribution = (
                count * idf * (tf * (self._k1 + 1.0)) / (tf + self._k1 * length_factor)
                if tf > 0
                else 0.0
            )
            out.append(TermContribution(term, tf, df, idf, length_factor, contribution, count))
        return out


__all__ = ["BM25Statistics", "TermContribution"]
