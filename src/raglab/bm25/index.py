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

The index's statistics and postings live in :mod:`raglab.bm25.statistics`, the formula over postings
in :mod:`raglab.bm25.scoring` and the exact top-k kernels in :mod:`raglab.bm25.maxscore`; this
module searches (:class:`BM25Index`) and sweeps the (k1, b) grid (:func:`grid_top_k`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from raglab.base.ranking import FloatArray, IntArray, Ranking
from raglab.base.topk import top_k as _top_k
from raglab.bm25 import compiled as _bm25_compiled
from raglab.bm25.batch import batch_top_k, top_k_rows
from raglab.bm25.maxscore import maxscore_top_k
from raglab.bm25.scoring import cell_scores as _cell_scores
from raglab.bm25.scoring import check_k as _check_k
from raglab.bm25.scoring import check_params as _check_params
from raglab.bm25.scoring import check_query as _check_query
from raglab.bm25.scoring import query_scores as _query_scores
from raglab.bm25.statistics import BM25Statistics
from raglab.embedding.vectors import check_token_lists
from raglab.settings import GRID_B, GRID_K1, GRID_RECALL_K

__all__ = [
    "BM25Index",
    "grid_top_k",
]

# Largest (cells x queries x documents) score block grid_top_k holds in memory at once.
_GRID_BLOCK_ELEMENTS = 1 << 23
# A query whose postings plus documents number at least this goes through MaxScore: below it,
# scoring everything costs less than the pruning's own bookkeeping.
_PRUNE_MIN_WORK = 16_384
# search_many scores at most this many (query, document) pairs of a dense batch at a time (the
# batch's own temporaries are bounded per posting, see raglab.bm25.batch).
_BATCH_BLOCK_ELEMENTS = 1 << 21
# With numpy, search_many scores every query of a collection smaller than this in dense batches
# (vectorised over the whole batch, no per-query Python); from this size on, queries with
# enough work go through MaxScore one by one, which skips most postings of frequent terms.
_BATCH_PRUNE_MIN_DOCS = 65_536
_BACKENDS = ("auto", "numba", "numpy")


class BM25Index(BM25Statistics):
    """A sparse BM25 index over token lists.

    ``BM25Index(docs, k1=BM25_K1, b=BM25_B)`` counts term frequencies once, into postings
    held term by term (see :class:`raglab.bm25.statistics.BM25Statistics`); :meth:`with_params`
    shares them, so trying other k1 and b costs nothing. Documents are addressed by their
    position in ``docs``.
    """

    # Every field is the statistics' (:class:`raglab.bm25.statistics.BM25Statistics`).
    __slots__ = ()

    def scores(self, query_tokens: Sequence[str]) -> FloatArray:
        """BM25 score of every document for one query, shape (n_docs,), float64."""
        _check_query(query_tokens)
        return _query_scores(
            self._postings([query_tokens]), self._ratio, self._k1, self._b, self.n_docs
        )

    def _prunes(self, terms: IntArray) -> bool:
        """Whether a query of these terms goes through MaxScore (two terms or more, and enough
        work that skipping some of it pays)."""
        return terms.shape[0] > 1 and (
            self.n_docs >= _PRUNE_MIN_WORK or self._work(terms) >= _PRUNE_MIN_WORK
        )

    def _search_terms(self, terms: IntArray, weights: FloatArray, k: int) -> Ranking:
        """:meth:`search` for a query given as :meth:`_query_terms` returns it."""
        if self._prunes(terms):
            pruned = maxscore_top_k(
                self._columns, terms, weights, self._k1, self._b, k, self._max_impact()
            )
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
        documents that cannot reach the top k are skipped (MaxScore, see ``raglab.bm25.maxscore``)
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
        imports. With numpy, queries against a collection of fewer than 65,536 documents (and
        short queries against any) are scored together, a block of queries at a time, every
        posting by vectorised numpy into a dense (queries x N) block; the others go through
        MaxScore one by one. Saturations are computed from the stored frequencies as they are
        needed, in float64, so no per-posting float is stored.
        """
        _check_k(k)
        check_token_lists(queries, what="queries")
        if backend not in _BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(_BACKENDS)}, got {backend!r}")
        if backend == "numba" and not _bm25_compiled.available():
            raise ValueError("backend 'numba' needs numba installed (pip install numba)")
        k = int(k)
        if backend == "numba" or (backend == "auto" and _bm25_compiled.available()):
            ptr, ids = self._token_ids(queries)
            cols = self._columns
            return _bm25_compiled.search_many(
                cols.indptr, cols.docs, cols.tf, self._length_term(), self._k1,
                self._max_impact(), self._idf, self.n_docs, ptr, ids, k,
            )  # fmt: skip
        return self._search_many_numpy(queries, k)

    def _search_many_numpy(
        self, queries: Sequence[Sequence[str]], k: int
    ) -> tuple[IntArray, FloatArray]:
        ptr, terms, weights = self._query_terms_many(queries)
        n = self.n_docs
        k_eff = min(k, n)
        out_docs = np.zeros((len(queries), k_eff), dtype=np.int64)
        out_scores = np.zeros((len(queries), k_eff), dtype=np.float64)
        indptr = self._columns.indptr
        # Postings of each query: a running sum over its terms' list lengths.
        running = np.concatenate(([0], np.cumsum(indptr[terms + 1] - indptr[terms])))
        postings = running[ptr[1:]] - running[ptr[:-1]]
        n_terms = ptr[1:] - ptr[:-1]
        pruned = (n_terms > 1) & (postings + n >= _PRUNE_MIN_WORK)
        if n < _BATCH_PRUNE_MIN_DOCS:
            pruned[:] = False
        for qi in np.flatnonzero(pruned).tolist():
            a, z = int(ptr[qi]), int(ptr[qi + 1])
            ranking = self._search_terms(terms[a:z], weights[a:z], k)
            out_docs[qi], out_scores[qi] = ranking.indices, ranking.scores
        batched = np.flatnonzero(~pruned)
        max_rows = max(1, _BATCH_BLOCK_ELEMENTS // n)
        for start in range(0, batched.shape[0], max_rows):
            rows = batched[start : start + max_rows]
            lengths = n_terms[rows]
            local = np.zeros(rows.shape[0] + 1, dtype=np.int64)
            np.cumsum(lengths, out=local[1:])
            at = np.repeat(ptr[rows] - local[:-1], lengths) + np.arange(local[-1])
            pairs = (np.repeat(np.arange(rows.shape[0], dtype=np.int64), lengths), terms[at],
                     weights[at])  # fmt: skip
            out_docs[rows], out_scores[rows] = batch_top_k(
                self._columns, self._length_term(), self._k1, pairs, rows.shape[0], k
            )
        return out_docs, out_scores


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
