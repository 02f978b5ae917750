"""BM25 search over token lists (Robertson and Zaragoza 2009, Lucene's variant) at one (k1, b).

One job: answer queries with BM25 at one (k1, b) (:class:`BM25Index`: scores, exact top k of one
query or of a batch, a score explained term by term). The formula is :mod:`raglab.bm25.formula`'s::

    score(q, d) = sum over query terms t of  IDF(t) * f (k1 + 1) / (f + k1 (1 - b + b |d| / avgdl))
    IDF(t)      = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))          (Lucene; always positive)

with f the frequency of t in d, n_t the number of documents holding t, N documents of mean
length avgdl. k1 and b are the caller's (no default here): k1 = 0 scores the mere presence of a
term; b = 0 ignores document length.

A term repeated in the query counts once per occurrence (its contribution is multiplied by its
query count), as in bm25s and in a Lucene query made of one clause per token. Tokens that are not in
the collection contribute nothing.

Ties are broken by ascending document index everywhere (``search``, ``search_many`` and
:func:`raglab.bm25.grid.grid_top_k`), so every ranking is deterministic.

The scores equal bm25s's ``method="lucene"`` scores times (k1 + 1): bm25s drops the constant
numerator factor, which changes no ranking but makes our k1 = 0 scores count matching terms.

The collection's statistics live in :mod:`raglab.bm25.statistics` (held, not inherited: every
(k1, b) of an index shares one :class:`raglab.bm25.statistics.BM25Statistics`); the exact top-k
paths this module chooses between are exhaustive scoring (:mod:`raglab.bm25.scoring`), MaxScore
(:mod:`raglab.bm25.maxscore`), the numpy batch (:mod:`raglab.bm25.batch`) and the compiled kernel
(:mod:`raglab.bm25.compiled`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from raglab.base.ranking import FloatArray, IntArray, Ranking
from raglab.base.threads import check_threads, even_parts, resolve_threads, run_parts
from raglab.base.topk import top_k as _top_k
from raglab.bm25 import compiled as _bm25_compiled
from raglab.bm25.batch import batch_top_k
from raglab.bm25.formula import check_k as _check_k
from raglab.bm25.formula import check_params as _check_params
from raglab.bm25.formula import check_query as _check_query
from raglab.bm25.formula import impact, length_factor, length_term, lucene_idf
from raglab.bm25.maxscore import maxscore_top_k
from raglab.bm25.postings import per_term_reduce
from raglab.bm25.scoring import query_scores as _query_scores
from raglab.bm25.statistics import BM25Statistics
from raglab.embedding.vectors import Vocabulary, check_token_lists
from raglab.settings import THREADS

__all__ = ["BM25Index", "TermContribution", "numpy_threads"]

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
# With threads, the numpy search_many cuts a batch into runs of at least this many queries, up
# to this many a thread (fewer and larger than the compiled kernel's: each run pays Python's
# own steps per dense block, which hold the GIL).
_NUMPY_PART_QUERIES = 16
_NUMPY_PARTS_PER_THREAD = 2
# With numpy, a batch is spread over threads only against fewer documents than this, where every
# query is scored in dense blocks whose array loops release the GIL. From here on long queries
# go through MaxScore one by one, whose Python steps hold it. Measured alone on an idle 2-core
# machine (benchmarks/RESULTS.md, section 9), two threads against one: 1.01 to 1.56 times from
# 10,000 to 50,000 documents, 0.76 to 0.95 at 65,536 and 100,000.
_NUMPY_THREADS_BELOW_DOCS = _BATCH_PRUNE_MIN_DOCS


def numpy_threads(threads: int | str, *, n_docs: int, n_queries: int) -> int:
    """The threads the numpy ``search_many`` spreads a batch of ``n_queries`` over, against a
    collection of ``n_docs`` documents: one from 65,536 documents on (MaxScore answers long
    queries one by one, and threads slow it down) and for a batch too small to cut into two
    runs of 16 queries; otherwise ``threads`` resolved (:func:`raglab.base.threads.
    resolve_threads`; ``"auto"``: the cores free now). The machine's load is read only when
    threads may be used."""
    if n_docs >= _NUMPY_THREADS_BELOW_DOCS or n_queries < 2 * _NUMPY_PART_QUERIES:
        check_threads(threads)
        return 1
    return resolve_threads(threads)


@dataclass(frozen=True, slots=True)
class TermContribution:
    """One query term's share of a document's BM25 score.

    ``contribution = (idf * query_count) * tf (k1 + 1) / (tf + k1 * length_factor)`` with
    ``length_factor = 1 - b + b |d| / avgdl``: the product the score adds for this term. A term
    absent from the document has tf 0 and contributes 0; a term absent from the collection also
    has df 0.
    """

    term: str
    tf: int
    df: int
    idf: float
    length_factor: float
    contribution: float
    query_count: int


class BM25Index:
    """A sparse BM25 index over token lists at one (k1, b).

    ``BM25Index(docs, k1=..., b=...)`` (both required) counts term frequencies once into
    ``stats`` (:class:`raglab.bm25.statistics.BM25Statistics`); :meth:`with_params` shares them,
    so trying other k1 and b costs nothing. Documents are addressed by their position in
    ``docs``.

    Per (k1, b) only N + V floats are kept: each document's length term ``k1 ((1 - b) + b |d| /
    avgdl)`` and each term's largest saturation (MaxScore's bound); every saturation is computed
    from the stored frequencies in float64 when it is needed, so scores are exact.
    """

    __slots__ = ("_b", "_k1", "_klf", "_max_impacts", "stats")

    def __init__(self, docs: Sequence[Sequence[str]], *, k1: float, b: float) -> None:
        _check_params(k1, b)
        self._set(BM25Statistics(docs), k1, b)
        # Each term's largest saturation at (k1, b), for search_many's bounds: part of indexing,
        # as bm25s precomputes its scores (a clone at other k1, b computes its own on first use).
        self._max_impact()

    def _set(self, stats: BM25Statistics, k1: float, b: float) -> None:
        self.stats = stats
        self._k1 = float(k1)
        self._b = float(b)
        self._klf: FloatArray | None = None
        self._max_impacts: FloatArray | None = None

    def with_params(self, *, k1: float | None = None, b: float | None = None) -> BM25Index:
        """The same index with other k1 and/or b (None keeps the current value).

        The statistics (counts, lengths, IDFs) are shared, not copied, so this costs nothing.
        """
        new_k1 = self._k1 if k1 is None else float(k1)
        new_b = self._b if b is None else float(b)
        _check_params(new_k1, new_b)
        clone = object.__new__(BM25Index)
        clone._set(self.stats, new_k1, new_b)
        return clone

    @property
    def n_docs(self) -> int:
        """Number of documents N."""
        return self.stats.n_docs

    @property
    def avgdl(self) -> float:
        """Mean document length in tokens."""
        return self.stats.avgdl

    @property
    def k1(self) -> float:
        return self._k1

    @property
    def b(self) -> float:
        return self._b

    @property
    def vocabulary(self) -> Vocabulary:
        """The collection's terms (sorted)."""
        return self.stats.vocabulary

    @property
    def doc_lengths(self) -> FloatArray:
        """|d| for every document, shape (n_docs,)."""
        return self.stats.doc_len.copy()

    @property
    def idf(self) -> FloatArray:
        """Lucene IDF of every vocabulary term, shape (n_terms,)."""
        return self.stats.idf.copy()

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays the index holds: postings (documents and frequencies), pointers,
        per-document and per-term arrays. The vocabulary's terms and dict are not counted."""
        held = self.stats.arrays() + [a for a in (self._klf, self._max_impacts) if a is not None]
        arrays = {id(a): a for a in held}
        return sum(int(a.nbytes) for a in arrays.values())

    def _length_term(self) -> FloatArray:
        """Each document's :func:`raglab.bm25.formula.length_term` at this k1 and b, (N,)."""
        if self._klf is None:
            self._klf = length_term(self.stats.columns.ratio, self._k1, self._b)
        return self._klf

    def _max_impact(self) -> FloatArray:
        """Each term's largest saturation at this index's k1 and b, shape (V,)."""
        if self._max_impacts is None:
            cols, klf, k1 = self.stats.columns, self._length_term(), self._k1
            self._max_impacts = per_term_reduce(
                cols.indptr,
                lambda a, z: impact(cols.tf[a:z], klf[cols.docs[a:z]], k1),
                np.maximum,
            )
        return self._max_impacts

    def scores(self, query_tokens: Sequence[str]) -> FloatArray:
        """BM25 score of every document for one query, shape (n_docs,), float64."""
        _check_query(query_tokens)
        return _query_scores(
            self.stats.postings([query_tokens]),
            self.stats.columns.ratio,
            self._k1,
            self._b,
            self.n_docs,
        )

    def _prunes(self, terms: IntArray) -> bool:
        """Whether a query of these terms goes through MaxScore (two terms or more, and enough
        work that skipping some of it pays)."""
        return terms.shape[0] > 1 and (
            self.n_docs >= _PRUNE_MIN_WORK or self.stats.work(terms) >= _PRUNE_MIN_WORK
        )

    def _search_terms(self, terms: IntArray, weights: FloatArray, k: int) -> Ranking:
        """:meth:`search` for a query given as :meth:`BM25Statistics.query_terms` returns it."""
        if self._prunes(terms):
            pruned = maxscore_top_k(
                self.stats.columns, terms, weights, self._k1, self._b, k, self._max_impact()
            )
            if pruned is not None:
                return Ranking(*pruned)
        postings = self.stats.gather(np.zeros(terms.shape[0], dtype=np.int64), terms, weights)
        scores = _query_scores(postings, self.stats.columns.ratio, self._k1, self._b, self.n_docs)
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
        return self._search_terms(*self.stats.query_terms(query_tokens), int(k))

    def search_many(
        self,
        queries: Sequence[Sequence[str]],
        *,
        k: int,
        backend: str = "auto",
        threads: int | str | None = None,
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

        ``threads``: a whole number, or ``"auto"`` (None: the ``threads`` setting,
        :data:`raglab.settings.THREADS`), the cores free now (see
        :func:`raglab.base.threads.resolve_threads`). A batch is cut into runs of consecutive
        queries answered on that many threads at once (the compiled kernel runs without the
        GIL; numpy releases it in its loops over arrays); every query is answered on its own,
        so the lists do not depend on the threads. A small batch (or a single query) runs on
        the caller's thread without reading the machine's load, and so does numpy's batch
        against 65,536 documents or more (:func:`numpy_threads`: there threads slow it).
        """
        _check_k(k)
        check_token_lists(queries, what="queries")
        if backend not in _BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(_BACKENDS)}, got {backend!r}")
        if backend == "numba" and not _bm25_compiled.available():
            raise ValueError("backend 'numba' needs numba installed (pip install numba)")
        k = int(k)
        threads = check_threads(THREADS if threads is None else threads)
        if backend == "numba" or (backend == "auto" and _bm25_compiled.available()):
            ptr, ids = self.stats.token_ids(queries)
            cols = self.stats.columns
            return _bm25_compiled.search_many(
                cols.indptr, cols.docs, cols.tf, self._length_term(), self._k1,
                self._max_impact(), self.stats.idf, self.n_docs, ptr, ids, k, threads,
            )  # fmt: skip
        return self._search_many_numpy(queries, k, threads)

    def _search_many_numpy(
        self, queries: Sequence[Sequence[str]], k: int, threads: int | str
    ) -> tuple[IntArray, FloatArray]:
        ptr, terms, weights = self.stats.query_terms_many(queries)
        n = self.n_docs
        k_eff = min(k, n)
        out_docs = np.zeros((len(queries), k_eff), dtype=np.int64)
        out_scores = np.zeros((len(queries), k_eff), dtype=np.float64)
        indptr = self.stats.columns.indptr
        # Postings of each query: a running sum over its terms' list lengths.
        running = np.concatenate(([0], np.cumsum(indptr[terms + 1] - indptr[terms])))
        postings = running[ptr[1:]] - running[ptr[:-1]]
        n_terms = ptr[1:] - ptr[:-1]
        pruned = (n_terms > 1) & (postings + n >= _PRUNE_MIN_WORK)
        if n < _BATCH_PRUNE_MIN_DOCS:
            pruned[:] = False
        # Formed once here, not by the threads (each would form its own copy); the bounds only
        # where MaxScore will read them.
        self._length_term()
        if pruned.any():
            self._max_impact()
        n_queries = len(queries)
        count = numpy_threads(threads, n_docs=n, n_queries=n_queries)
        bounds = (
            even_parts(n_queries, count * _NUMPY_PARTS_PER_THREAD, _NUMPY_PART_QUERIES)
            if count > 1
            else [0, n_queries]  # one thread: the whole batch in one run, as before
        )

        def answer(i: int) -> None:
            lo, hi = bounds[i], bounds[i + 1]
            self._numpy_rows(ptr, terms, weights, k, pruned, lo, hi, out_docs, out_scores)

        run_parts(len(bounds) - 1, count, answer)
        return out_docs, out_scores

    def _numpy_rows(
        self,
        ptr: IntArray,
        terms: IntArray,
        weights: FloatArray,
        k: int,
        pruned: np.ndarray,
        lo: int,
        hi: int,
        out_docs: IntArray,
        out_scores: FloatArray,
    ) -> None:
        """Answer queries ``lo`` to ``hi`` of a batch (``ptr``, ``terms``, ``weights`` as
        :meth:`BM25Statistics.query_terms_many` gives them) into their rows of the outputs:
        those marked ``pruned`` by MaxScore one by one, the others in dense blocks."""
        n = self.n_docs
        n_terms = ptr[1:] - ptr[:-1]
        for qi in (np.flatnonzero(pruned[lo:hi]) + lo).tolist():
            a, z = int(ptr[qi]), int(ptr[qi + 1])
            ranking = self._search_terms(terms[a:z], weights[a:z], k)
            out_docs[qi], out_scores[qi] = ranking.indices, ranking.scores
        batched = np.flatnonzero(~pruned[lo:hi]) + lo
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
                self.stats.columns, self._length_term(), self._k1, pairs, rows.shape[0], k
            )

    def explain(self, query_tokens: Sequence[str], doc: int) -> list[TermContribution]:
        """Term-by-term breakdown of ``scores(query_tokens)[doc]``.

        One entry per distinct query token in order of first appearance. Each contribution is
        the very product the score adds for its term (``weight * saturation``, the weight being
        ``idf * query count``), so added from 0.0 in ascending term column they give the score
        bit for bit (in another order, to the last bit or so).
        """
        _check_query(query_tokens)
        if isinstance(doc, bool) or not isinstance(doc, int | np.integer):
            raise ValueError(f"doc must be an integer index, got {doc!r}")
        if not 0 <= doc < self.n_docs:
            raise ValueError(f"doc {doc} is out of range for {self.n_docs} documents")
        stats = self.stats
        factor = float(length_factor(stats.columns.ratio[doc : doc + 1], self._b)[0])
        klf = float(self._length_term()[doc])
        out: list[TermContribution] = []
        for term, count in Counter(query_tokens).items():
            col = stats.vocabulary.get(term)
            if col is None:
                tf, df = 0, 0
                idf = float(lucene_idf(0, self.n_docs))
            else:
                tf = stats.tf_of(doc, col)
                df = int(stats.columns.indptr[col + 1] - stats.columns.indptr[col])
                idf = float(stats.idf[col])
            contribution = float((idf * count) * impact(float(tf), klf, self._k1)) if tf else 0.0
            out.append(TermContribution(term, tf, df, idf, factor, contribution, count))
        return out
