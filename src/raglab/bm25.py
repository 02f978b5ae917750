"""BM25 ranking over token lists (Robertson and Zaragoza 2009), with Lucene's IDF.

For a query q and a document d of |d| tokens, in a collection of N documents of mean length avgdl::

    score(q, d) = sum over query terms t of  IDF(t) * f (k1 + 1) / (f + k1 (1 - b + b |d| / avgdl))
    IDF(t)      = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))          (Lucene; always positive)

with f the frequency of t in d and n_t the number of documents holding t. Defaults k1 = 1.2 and
b = 0.75 come from ``raglab._config``. k1 = 0 scores the mere presence of a term; b = 0 ignores
document length.

A term repeated in the query counts once per occurrence (its contribution is multiplied by its
query count), as in bm25s and in a Lucene query made of one clause per token. Tokens that are not in
the collection contribute nothing.

Ties are broken by ascending document index everywhere (``search`` and ``grid_top_k``), so every
ranking is deterministic.

The scores equal bm25s's ``method="lucene"`` scores times (k1 + 1): bm25s drops the constant
numerator factor, which changes no ranking but makes our k1 = 0 scores count matching terms.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, repeat

import numpy as np
import scipy.sparse as sp  # type: ignore[import-untyped]

from raglab import _bm25_compiled
from raglab._bm25_topk import (
    Columns,
    batch_top_k,
    maxscore_top_k,
    saturation,
    top_k_rows,
)
from raglab._bm25_topk import top_k as _top_k
from raglab._config import BM25_B, BM25_K1, GRID_B, GRID_K1, GRID_RECALL_K
from raglab._types import FloatArray, IntArray, Ranking
from raglab.vectors import SparseMatrix, Vocabulary, check_token_lists, count_matrix

__all__ = ["BM25Index", "TermContribution", "grid_top_k", "lucene_idf"]

# Largest (cells x queries x documents) score block grid_top_k holds in memory at once.
_GRID_BLOCK_ELEMENTS = 1 << 23
# A query whose postings plus documents number at least this goes through MaxScore: below it,
# scoring everything costs less than the pruning's own bookkeeping.
_PRUNE_MIN_WORK = 16_384
# search_many scores at most this many (query, document) pairs of a dense batch at a time.
_BATCH_BLOCK_ELEMENTS = 1 << 21
_BACKENDS = ("auto", "numba", "numpy")


def lucene_idf(df: IntArray | int, n_docs: int) -> FloatArray:
    """Lucene's IDF, ln(1 + (N - n_t + 0.5) / (n_t + 0.5)), elementwise."""
    n_t = np.asarray(df, dtype=np.float64)
    out: FloatArray = np.log1p((n_docs - n_t + 0.5) / (n_t + 0.5))
    return out


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


@dataclass(frozen=True, slots=True)
class _Postings:
    """Flattened postings of a batch of queries: one entry per (query, query term, document)."""

    query: IntArray  # (P,) position of the query in the batch
    doc: IntArray  # (P,) document index
    tf: FloatArray  # (P,) frequency of the term in the document
    weight: FloatArray  # (P,) idf(t) * query count of t


def _check_params(k1: float, b: float) -> None:
    if not (math.isfinite(k1) and k1 >= 0):
        raise ValueError(f"k1 must be a finite number >= 0, got {k1}")
    if not (math.isfinite(b) and 0 <= b <= 1):
        raise ValueError(f"b must lie in [0, 1], got {b}")


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def _check_query(query_tokens: Sequence[str]) -> None:
    if isinstance(query_tokens, str | bytes):
        raise ValueError("query_tokens must be a list of tokens, not a string")


def _cell_scores(
    postings: _Postings,
    length_ratio: FloatArray,
    k1s: FloatArray,
    bs: FloatArray,
    n_queries: int,
    n_docs: int,
) -> FloatArray:
    """Scores of every (k1, b) cell for a batch of queries: shape (len(k1s), len(bs), Q, N).

    The saturation ``tf (k1 + 1) / (tf + k1 (1 - b + b |d| / avgdl))`` depends on the posting
    only through the pair (tf, d), so it is tabulated once per distinct pair and cell (G, pairs x
    cells); a sparse matrix M (query-document x pairs) holds the idf weights times query counts,
    and the scores are M G, one cell at a time. Single queries take :func:`_query_scores`, which
    forms the same products and sums them in the same order, so ``scores``, ``search`` and
    ``grid_top_k`` agree bitwise.
    """
    n_cells = len(k1s) * len(bs)
    if postings.doc.size == 0:
        return np.zeros((len(k1s), len(bs), n_queries, n_docs), dtype=np.float64)
    # Distinct (tf, document) pairs; tf values are small integers, so the key is exact.
    pair_key = postings.tf.astype(np.int64) * n_docs + postings.doc
    pairs, pair_of = np.unique(pair_key, return_inverse=True)
    tf = (pairs // n_docs).astype(np.float64)[None, :]
    ratio = length_ratio[pairs % n_docs][None, :]
    k1 = np.repeat(k1s, len(bs))[:, None]
    b = np.tile(bs, len(k1s))[:, None]
    length_factor = (1.0 - b) + b * ratio
    table = (tf * (k1 + 1.0)) / (tf + k1 * length_factor)  # (cells, pairs)
    # Rows of M in query-document order, each row's entries in ascending term order (postings
    # arrive term by term and the sort is stable). Built directly, not through COO, which would
    # merge and reorder entries: every score is then summed term by term, so two documents with
    # the same per-term contributions tie exactly.
    rows = postings.query * n_docs + postings.doc
    order = np.argsort(rows, kind="stable")
    indptr = np.zeros(n_queries * n_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_queries * n_docs), out=indptr[1:])
    weights = sp.csr_matrix(
        (postings.weight[order], pair_of.reshape(-1)[order].astype(np.int64), indptr),
        shape=(n_queries * n_docs, pairs.size),
    )
    out = np.empty((n_cells, n_queries * n_docs), dtype=np.float64)
    # One sparse mat-vec per cell writes a contiguous row: no transpose of the result needed.
    for cell in range(n_cells):
        out[cell] = weights @ table[cell]
    scores: FloatArray = out.reshape(len(k1s), len(bs), n_queries, n_docs)
    return scores


def _query_scores(
    postings: _Postings, length_ratio: FloatArray, k1: float, b: float, n_docs: int
) -> FloatArray:
    """Scores of one query at one (k1, b), shape (n_docs,): the one-cell case of
    :func:`_cell_scores`, without its pair table and sparse product.

    Each posting's saturation is computed with the same expression as the table, and
    ``bincount`` adds the weighted saturations into each document's score in posting order, which
    is ascending term order: the same products summed in the same order as a row of M G, so both
    paths give bitwise the same scores (``grid_top_k`` relies on it).
    """
    if postings.doc.size == 0:
        return np.zeros(n_docs, dtype=np.float64)
    sat = saturation(postings.tf, length_ratio[postings.doc], k1, b)
    # With float weights bincount returns float64 (the cast only informs the type checker).
    out: FloatArray = np.bincount(
        postings.doc, weights=postings.weight * sat, minlength=n_docs
    ).astype(np.float64, copy=False)
    return out


class BM25Index:
    """A sparse BM25 index over token lists.

    ``BM25Index(docs, k1=BM25_K1, b=BM25_B)`` counts term frequencies once (a scipy.sparse CSC
    matrix, documents x terms); :meth:`with_params` shares those counts, so trying other k1 and b
    costs nothing. Documents are addressed by their position in ``docs``.
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
        _check_params(k1, b)
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

    def with_params(self, *, k1: float | None = None, b: float | None = None) -> BM25Index:
        """The same index with other k1 and/or b (None keeps the current value).

        The counts, lengths and IDFs are shared, not copied, so this costs nothing.
        """
        new_k1 = self._k1 if k1 is None else float(k1)
        new_b = self._b if b is None else float(b)
        _check_params(new_k1, new_b)
        clone = object.__new__(BM25Index)
        for name in BM25Index.__slots__:
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

    def _postings(self, queries: Sequence[Sequence[str]]) -> _Postings:
        index = self._vocab.mapping
        q_ids: list[int] = []
        t_ids: list[int] = []
        t_counts: list[int] = []
        for qi, query in enumerate(queries):
            _check_query(query)
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

    def _gather(self, owner: IntArray, terms: IntArray, weights: FloatArray) -> _Postings:
        """The postings of (query, term) pairs: ``owner`` (T,) the query of each pair, ``terms``
        (T,) its column and ``weights`` (T,) its ``idf * query count``."""
        if terms.shape[0] == 0:
            empty_i = np.zeros(0, dtype=np.int64)
            return _Postings(empty_i, empty_i, np.zeros(0), np.zeros(0))
        indptr = self._columns.indptr
        starts = indptr[terms]
        lengths = indptr[terms + 1] - starts
        # Positions of every posting of every term, laid out term after term.
        ends = np.cumsum(lengths)
        pos = np.repeat(starts - (ends - lengths), lengths) + np.arange(ends[-1], dtype=np.int64)
        return _Postings(
            query=np.repeat(owner, lengths),
            doc=self._counts.indices[pos].astype(np.int64),
            tf=self._columns.tf[pos],
            weight=np.repeat(weights, lengths),
        )

    def scores(self, query_tokens: Sequence[str]) -> FloatArray:
        """BM25 score of every document for one query, shape (n_docs,), float64."""
        _check_query(query_tokens)
        return _query_scores(
            self._postings([query_tokens]), self._ratio, self._k1, self._b, self.n_docs
        )

    def _query_terms(self, query: Sequence[str]) -> tuple[IntArray, FloatArray]:
        """A query's distinct known terms (ascending columns) and their ``idf * query count``."""
        _check_query(query)
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

    def _prunes(self, terms: IntArray) -> bool:
        """Whether a query of these terms goes through MaxScore (two terms or more, and enough
        work that skipping some of it pays)."""
        return terms.shape[0] > 1 and (
            self.n_docs >= _PRUNE_MIN_WORK or self._work(terms) >= _PRUNE_MIN_WORK
        )

    def _search_terms(self, terms: IntArray, weights: FloatArray, k: int) -> Ranking:
        """:meth:`search` for a query given as :meth:`_query_terms` returns it."""
        if self._prunes(terms):
            pruned = maxscore_top_k(self._columns, terms, weights, self._k1, self._b, k)
            if pruned is not None:
                return Ranking(*pruned)
        postings = self._gather(np.zeros(terms.shape[0], dtype=np.int64), terms, weights)
        scores = _query_scores(postings, self._ratio, self._k1, self._b, self.n_docs)
        idx = _top_k(scores, k)
        return Ranking(idx, scores[idx])

    def search(self, query_tokens: Sequence[str], *, k: int) -> Ranking:
        """The ``min(k, n_docs)`` best documents, best first, ties by ascending document index.

        Documents matching no query term (score 0) fill the list when fewer than k match. The
        result equals sorting :meth:`scores` by (-score, index): on a large collection the
        documents that cannot reach the top k are skipped (MaxScore, see ``raglab._bm25_topk``)
        without changing a bit of the answer.
        """
        _check_k(k)
        _check_query(query_tokens)
        return self._search_terms(*self._query_terms(query_tokens), int(k))

    def search_many(
        self, queries: Sequence[Sequence[str]], *, k: int, backend: str = "auto"
    ) -> tuple[IntArray, FloatArray]:
        """:meth:`search` for every query at once: (documents, scores), both (Q, min(k, N)).

        Row q equals ``search(queries[q], k=k)`` bit for bit, whichever the backend.
        ``backend``: ``"numba"`` runs a compiled kernel (numba must be installed; it compiles on
        first use), ``"numpy"`` does not, and ``"auto"`` (the default) takes numba when it
        imports. With numpy, queries against a small collection are scored together, a block at
        a time, by one sparse product of their term weights (Q, V) with every posting's
        saturation (V, N); the others are searched one by one. Both backends precompute every
        posting's saturation once per index (nnz floats).
        """
        _check_k(k)
        check_token_lists(queries, what="queries")
        if backend not in _BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(_BACKENDS)}, got {backend!r}")
        if backend == "numba" and not _bm25_compiled.available():
            raise ValueError("backend 'numba' needs numba installed (pip install numba)")
        k = int(k)
        if backend == "numba" or (backend == "auto" and _bm25_compiled.available()):
            ptr = np.zeros(len(queries) + 1, dtype=np.int64)
            np.cumsum([len(q) for q in queries], out=ptr[1:])
            ids = np.fromiter(
                map(self._vocab.mapping.get, chain.from_iterable(queries), repeat(-1)),
                dtype=np.int64,
                count=int(ptr[-1]),
            )
            cols = self._columns
            impact = self._saturation_matrix()
            return _bm25_compiled.search_many(
                cols.indptr, cols.docs, impact.data, self._max_impact(), self._idf,
                self.n_docs, ptr, ids, k,
            )  # fmt: skip
        return self._search_many_numpy(queries, k)

    def _search_many_numpy(
        self, queries: Sequence[Sequence[str]], k: int
    ) -> tuple[IntArray, FloatArray]:
        ptr, terms, weights = self._query_terms_many(queries)
        k_eff = min(k, self.n_docs)
        out_docs = np.zeros((len(queries), k_eff), dtype=np.int64)
        out_scores = np.zeros((len(queries), k_eff), dtype=np.float64)
        small: list[int] = []
        for qi in range(len(queries)):
            q_terms = terms[ptr[qi] : ptr[qi + 1]]
            if self._prunes(q_terms):
                ranking = self._search_terms(q_terms, weights[ptr[qi] : ptr[qi + 1]], k)
                out_docs[qi], out_scores[qi] = ranking.indices, ranking.scores
            else:
                small.append(qi)
        block = max(1, _BATCH_BLOCK_ELEMENTS // self.n_docs)
        for start in range(0, len(small), block):
            rows = np.array(small[start : start + block], dtype=np.int64)
            lengths = ptr[rows + 1] - ptr[rows]
            indptr = np.zeros(rows.shape[0] + 1, dtype=np.int64)
            np.cumsum(lengths, out=indptr[1:])
            at = np.repeat(ptr[rows] - indptr[:-1], lengths) + np.arange(indptr[-1])
            query_weights = sp.csr_matrix(
                (weights[at], terms[at], indptr), shape=(rows.shape[0], len(self._vocab))
            )
            out_docs[rows], out_scores[rows] = batch_top_k(
                self._saturation_matrix(), query_weights, k
            )
        return out_docs, out_scores

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
        _check_query(query_tokens)
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


def grid_top_k(
    index: BM25Index,
    queries: Sequence[Sequence[str]],
    *,
    k1s: Sequence[float] = GRID_K1,
    bs: Sequence[float] = GRID_B,
    k: int = GRID_RECALL_K,
) -> IntArray:
    """Top-k document indices for every (k1, b) pair of a grid, all queries at once.

    Returns an int64 array of shape (len(k1s), len(bs), len(queries), min(k, n_docs)); entry
    ``[i, j, q]`` equals ``index.with_params(k1=k1s[i], b=bs[j]).search(queries[q], k=k).indices``
    exactly (same scores, same tie-breaking by ascending document index). The postings of every
    query are gathered once and all cells are scored with numpy; queries are processed in blocks
    so that at most about 8 million scores are held at a time.
    """
    _check_k(k)
    check_token_lists(queries, what="queries")
    k1_arr = np.asarray(k1s, dtype=np.float64).reshape(-1)
    b_arr = np.asarray(bs, dtype=np.float64).reshape(-1)
    if k1_arr.size == 0 or b_arr.size == 0:
        raise ValueError("k1s and bs must not be empty")
    for k1 in k1_arr:
        for b in b_arr:
            _check_params(float(k1), float(b))
    n_docs = index.n_docs
    k_eff = min(int(k), n_docs)
    n_cells = k1_arr.size * b_arr.size
    out = np.zeros((k1_arr.size, b_arr.size, len(queries), k_eff), dtype=np.int64)
    block = max(1, _GRID_BLOCK_ELEMENTS // (n_cells * n_docs))
    for start in range(0, len(queries), block):
        batch = queries[start : start + block]
        scores = _cell_scores(
            index._postings(batch), index._ratio, k1_arr, b_arr, len(batch), n_docs
        )
        idx, _ = top_k_rows(scores.reshape(-1, n_docs), k_eff, overwrite=True)
        out[:, :, start : start + len(batch)] = idx.reshape(
            k1_arr.size, b_arr.size, len(batch), k_eff
        )
    return out
