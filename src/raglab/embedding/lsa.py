"""Latent semantic analysis (Deerwester et al. 1990) by randomised SVD.

Latent semantic analysis (Deerwester et al. 1990) by randomised SVD (Halko, Martinsson and Tropp
2011).

The model is fitted on evenly spaced windows of 256 words (``LSA_WINDOW_WORDS``) over the whole
corpus, not on the chunks, so that the space does not change when the chunker does. The number of
windows follows the corpus (:func:`window_count`): max(100, ceil(n_words / 256)), one window for
every 256 words rounded up and never fewer than 100, so the windows cover every word; the
handbook's 14,067 words keep 100 windows, Cranfield's 1,400 abstracts (about 230,000 words) get
about 900. Past ``LSA_MAX_WINDOWS`` (1,000,000) windows the fit keeps that many of them, evenly
spaced by index (:func:`capped_windows`), so that its cost stops growing with the corpus. A is the TF-IDF term x window matrix (``raglab.embedding.vectors``, idf = ln(N / df) over the
windows) and A ~ U_k S_k V_k^T its rank-k truncated SVD (k = 48).

The randomised SVD (:func:`randomized_svd`, from ``raglab.embedding.svd``: subspace iteration normalised
by LU between the power passes and by a Householder QR at the end) keeps its sketch of k + 26
columns and makes three power passes at 100 windows or fewer, three more for each doubling of the
windows past 100 (:func:`power_iterations_for`):
a larger term x window matrix has a longer, flatter tail of singular values, which subspace
iteration needs more passes to separate from the leading k.

Fold-in: a query or chunk becomes its TF-IDF column q (with the windows' vocabulary and idf; other
terms are dropped) and is represented by ``U_k^T q`` (shape (k,)). The classical LSA coordinate is
q_hat = q^T U_k S_k^-1, and the similarity is the cosine of the s-weighted coordinates
q_hat S_k = q^T U_k: exactly the cosine of ``U_k^T q`` and ``U_k^T d`` used here. For a training
window a_j, ``U_k^T a_j = s * Vt[:, j]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

import numpy as np
import scipy.sparse as sp  # type: ignore[import-untyped]

from raglab.base.exact import exact_sum_of_squares
from raglab.base.ranking import FloatArray, IntArray, Ranking
from raglab.base.threads import check_threads, even_parts, resolve_threads, run_parts
from raglab.base.topk import top_k
from raglab.embedding import pairwise as _pairwise
from raglab.embedding.svd import check_positive_int, randomized_svd
from raglab.embedding.vectors import (
    SparseMatrix,
    Vocabulary,
    check_token_lists,
    count_matrix,
    tfidf_matrix,
)
from raglab.settings import LSA_POWER_ITERATIONS, LSA_WINDOW_WORDS, LSA_WINDOWS, THREADS

__all__ = [
    "LSAModel",
    "LSASpace",
    "Spectrum",
    "capped_windows",
    "even_windows",
    "fit_lsa",
    "power_iterations_for",
    "row_dots",
    "term_norms",
    "term_window_matrix",
    "unit_rows",
    "window_count",
    "window_ranges",
    "window_rule",
]

T = TypeVar("T")
# Word-neighbour cosines equal to this many decimals are ties (see LSAModel.neighbours).
_TIE_DECIMALS = 12
# Rows multiplied at once by row_dots with numpy: its (rows, k) product stays near 3 MB at k = 48.
_DOT_BLOCK_ROWS = 8192
# row_dots with numba spreads n rows over threads in runs of at least this many (a run costs the
# pool's hand-over, tens of microseconds; 16,384 rows of 48 take about half a millisecond).
_DOT_PART_ROWS = 16_384
_DOT_BACKENDS = ("auto", "numba", "numpy")
# Tokens weighted at once by LSAModel.project: its transient sparse matrices stay near 30 MB
# (about 28 bytes a token) whatever the size of the corpus.
_PROJECT_BLOCK_TOKENS = 1 << 20


def even_windows(items: Sequence[T], *, count: int, size: int) -> list[Sequence[T]]:
    """``count`` windows of ``size`` consecutive items with evenly spaced starts.

    Starts are ``round(linspace(0, N - size, count))`` (round half to even), so the first window
    opens the sequence and the last one closes it. Windows overlap when N < count * size, and
    repeat when N - size < count - 1. When N <= size there is one window holding everything.
    """
    check_positive_int("count", count)
    check_positive_int("size", size)
    n = len(items)
    if n <= size:
        return [items]
    starts = np.rint(np.linspace(0, n - size, count)).astype(np.int64)
    return [items[int(s) : int(s) + size] for s in starts]


def window_count(n_words: int) -> int:
    """How many LSA training windows a corpus of ``n_words`` words gets:
    max(LSA_WINDOWS, ceil(n_words / LSA_WINDOW_WORDS)) = max(100, ceil(n_words / 256)).

    One window of 256 words for every 256 words, rounded up, so that :func:`even_windows` leaves
    no word out: with count >= N / size the step (N - size) / (count - 1) is at most ``size``,
    rounding is monotone and ``size`` an integer, so consecutive starts are at most ``size``
    apart; the first window opens the corpus and the last one closes it. A corpus of up to
    100 x 256 = 25,600 words keeps 100 overlapping windows (the handbook's 14,067 words among
    them); past that the windows overlap by less than one window's worth of words in all.
    """
    check_positive_int("n_words", n_words, minimum=0)
    return max(LSA_WINDOWS, -(-int(n_words) // LSA_WINDOW_WORDS))


def capped_windows(count: int, cap: int) -> IntArray:
    """Which of ``count`` windows a fit capped at ``cap`` keeps, as ascending indices.

    Every one (0 .. count - 1) when count <= cap; otherwise ``round(linspace(0, count - 1, cap))``
    (round half to even): the first window, the last one, and cap - 2 between them evenly spaced
    by index. The indices are distinct, since the step (count - 1) / (cap - 1) exceeds 1. No
    randomness: one machine and a cluster keep the same windows.
    """
    check_positive_int("count", count)
    check_positive_int("cap", cap)
    if count <= cap:
        return np.arange(count, dtype=np.int64)
    out: IntArray = np.rint(np.linspace(0, count - 1, cap)).astype(np.int64)
    return out


def window_ranges(n_words: int, *, count: int, cap: int) -> list[range]:
    """The word ranges of the LSA training windows over a corpus of ``n_words`` words.

    :func:`even_windows` over ``range(n_words)`` (``count`` windows of ``LSA_WINDOW_WORDS``),
    of which those :func:`capped_windows` keeps under ``cap``: at most ``cap`` windows, each one
    of the uncapped windows. One range of every word when n_words <= LSA_WINDOW_WORDS."""
    check_positive_int("n_words", n_words, minimum=0)
    check_positive_int("count", count)
    if n_words <= LSA_WINDOW_WORDS:
        return [range(n_words)]
    starts = np.rint(np.linspace(0, n_words - LSA_WINDOW_WORDS, count)).astype(np.int64)
    return [range(int(s), int(s) + LSA_WINDOW_WORDS) for s in starts[capped_windows(count, cap)]]


def window_rule() -> str:
    """:func:`window_count`'s rule in one sentence of plain words (the page shows it)."""
    return (
        f"One window of {LSA_WINDOW_WORDS} words for every {LSA_WINDOW_WORDS} words of the corpus, "
        f"rounded up and never fewer than {LSA_WINDOWS}, so that the windows cover every word"
    )


def power_iterations_for(n_windows: int) -> int:
    """Power passes of the randomised SVD on ``n_windows`` windows: LSA_POWER_ITERATIONS (3) at
    100 windows or fewer, and 3 more for each doubling past 100, i.e.
    3 * (1 + ceil(log2(n_windows / 100))): 6 up to 200 windows, 9 up to 400, 12 up to 800 and 15
    up to 1,600 (Cranfield's abstracts).

    Why it grows: the k-th estimate converges like (s_{l+1} / s_k)^(2q+1) (l = k + 26), times a
    factor from the random start that grows with the number of columns (Halko et al. 2011,
    section 10.4). The handbook's spectrum has a wide gap (s_48 / s_75 = 1.90), so three passes
    give every value to 3e-5; on Cranfield the gap is 1.11 to 1.18 at any number of windows and
    three passes leave the 48th value 1.1 to 1.7% low at 100 windows and 1.5 to 5% low at 150 to
    2,000. Three passes per doubling hold all 48 within 0.8% over 101 to 2,000 windows (measured
    against numpy.linalg.svd, stemmed and unstemmed), within 0.03% at the rule's count; each pass
    costs two sparse products and two thin LU factorisations, so the fit stays a fraction of a
    second.
    """
    check_positive_int("n_windows", n_windows)
    doublings = (-(-int(n_windows) // LSA_WINDOWS) - 1).bit_length()
    return LSA_POWER_ITERATIONS * (1 + doublings)


def unit_rows(X: FloatArray) -> FloatArray:
    """Each row of X (m, k) divided by its Euclidean norm; a zero row stays zero. Shape (m, k).

    ``LSAModel.search(q, unit_rows(P), k=k, normalised=True)`` ranks exactly as
    ``LSAModel.search(q, P, k=k)`` (the same scores, bit for bit), without normalising every row
    again for each query: compute it once per set of projections.
    """
    norms = np.linalg.norm(X, axis=1)
    out: FloatArray = X / np.where(norms > 0, norms, 1.0)[:, None]
    return out


def row_dots(
    X: FloatArray, v: FloatArray, *, backend: str = "auto", threads: int | str | None = None
) -> FloatArray:
    """``X @ v`` for X (n, k) and v (k,), each row's k products added by numpy's pairwise sum,
    shape (n,): a row's dot product is the same bits whatever rows lie around it.

    BLAS's matrix-vector product (``X @ v``) rounds a row differently with its place in the
    matrix (rows are taken four at a time, the rest one by one) and with BLAS's thread count,
    so a shard of the rows (:mod:`raglab.distributed.lsa_held`), or the same rows on a machine
    with more cores, would score otherwise. For a C-ordered float64 X and a float64 v, every
    row is ``np.sum(X[i] * v)`` as numpy sums such a block along its rows, the same bits
    whichever the backend:

    ``backend``: ``"numpy"`` multiplies and sums a block of ``_DOT_BLOCK_ROWS`` rows at a time
    (the products held stay small whatever n); ``"numba"`` runs the compiled kernel of
    :mod:`raglab.embedding.pairwise` (numba must be installed; any other X is summed as its
    C-ordered float64 copy), which forms each product in a register and adds them in numpy's
    order, in about half of BLAS's one-thread time idle (benchmarks/RESULTS.md,
    section 11); ``"auto"`` (the default) takes numba when it imports and X and v are as above
    (numpy sums a Fortran-ordered block in another order, so such an X stays with numpy and
    keeps numpy's bits).

    ``threads`` (numba only): a whole number, or ``"auto"`` (None: the ``threads`` setting,
    :data:`raglab.settings.THREADS`; see :func:`raglab.base.threads.resolve_threads`). From
    ``_DOT_PART_ROWS`` rows, runs of consecutive rows are summed on that many threads at once;
    rows are independent, so the bits do not depend on the threads, and fewer rows run on the
    caller's thread without reading the machine's load.
    """
    if backend not in _DOT_BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(_DOT_BACKENDS)}, got {backend!r}")
    if backend == "numba" and not _pairwise.available():
        raise ValueError("backend 'numba' needs numba installed (pip install numba)")
    threads = check_threads(THREADS if threads is None else threads)
    compiled_fits = (
        X.dtype == np.float64 and v.dtype == np.float64 and X.ndim == 2 and X.flags.c_contiguous
    )
    if backend == "numba" or (backend == "auto" and compiled_fits and _pairwise.available()):
        return _row_dots_compiled(X, v, threads)
    out: FloatArray = np.empty(X.shape[0], dtype=np.float64)
    for start in range(0, X.shape[0], _DOT_BLOCK_ROWS):
        stop = start + _DOT_BLOCK_ROWS
        np.sum(X[start:stop] * v, axis=1, out=out[start:stop])
    return out


def _row_dots_compiled(X: FloatArray, v: FloatArray, threads: int | str) -> FloatArray:
    """:func:`row_dots` by the compiled kernel, on up to ``threads`` threads."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    v = np.ascontiguousarray(v, dtype=np.float64)
    if X.ndim != 2 or v.shape != (X.shape[1],):
        raise ValueError(f"row_dots needs X (n, k) and v (k,), got {X.shape} and {v.shape}")
    n = X.shape[0]
    out: FloatArray = np.empty(n, dtype=np.float64)
    rows, steps = _pairwise.compiled(), _pairwise.plan(X.shape[1])
    count = resolve_threads(threads) if n >= 2 * _DOT_PART_ROWS else 1
    bounds = even_parts(n, count, _DOT_PART_ROWS)
    run_parts(len(bounds) - 1, count, lambda i: rows(X, v, steps, out, bounds[i], bounds[i + 1]))
    return out


def term_norms(U: FloatArray, s: FloatArray) -> FloatArray:
    """The norm of each row of U_k S_k, (m,) for U (m, k) and s (k,); each row's the same bits
    whatever rows lie around it (numpy reduces each row of the contiguous product alone)."""
    out: FloatArray = np.linalg.norm(U * s[None, :], axis=1)
    return out


def _blocks(token_lists: Sequence[Sequence[str]], tokens: int) -> list[int]:
    """The ends of consecutive blocks of ``token_lists`` holding at least ``tokens`` tokens each
    (the last block may hold fewer); the last end is len(token_lists), and there is none when
    there are no lists."""
    ends, held = [], 0
    for i, tokens_of_one in enumerate(token_lists):
        held += len(tokens_of_one)
        if held >= tokens:
            ends.append(i + 1)
            held = 0
    n = len(token_lists)
    if n and (not ends or ends[-1] < n):
        ends.append(n)
    return ends


def _ranking(scores: FloatArray, k: int) -> Ranking:
    """The first ``k`` of ``scores`` (n,) by :func:`raglab.base.topk.top_k`: higher score first, ties
    to the lower index, NaN last."""
    order = top_k(scores, k)
    return Ranking(order, scores[order])


class Spectrum:
    """What a fitted LSA space's s (k,) and ||A||_F^2 tell of it: its rank, its singular values
    and the share of A's squared norm each dimension keeps, for :class:`LSAModel` and for a
    model held elsewhere alike."""

    __slots__ = ()
    s: FloatArray
    frobenius_sq: float

    @property
    def rank(self) -> int:
        """k, the number of dimensions kept."""
        return int(self.s.shape[0])

    @property
    def singular_values(self) -> FloatArray:
        """s_1 >= ... >= s_k, shape (k,)."""
        return self.s.copy()

    @property
    def variance_share(self) -> FloatArray:
        """s_i^2 / ||A||_F^2: the share of A's squared norm each dimension keeps; sums to <= 1."""
        if self.frobenius_sq <= 0:
            return np.zeros_like(self.s)
        out: FloatArray = self.s**2 / self.frobenius_sq
        return out


@dataclass(frozen=True, slots=True, eq=False)
class LSAModel(Spectrum):
    """A fitted LSA space.

    ``vocabulary`` and ``idf`` (n_terms,) weight new text exactly as the windows were weighted;
    ``U`` (n_terms, k) holds the term directions, ``s`` (k,) the singular values in descending
    order, ``Vt`` (k, n_windows) the windows' right singular vectors and ``frobenius_sq`` the total
    ||A||_F^2 of the term x window matrix (its squares added exactly, :mod:`raglab.base.exact`).
    """

    vocabulary: Vocabulary
    idf: FloatArray
    U: FloatArray
    s: FloatArray
    Vt: FloatArray
    frobenius_sq: float

    def project(self, token_lists: Sequence[Sequence[str]]) -> FloatArray:
        """Fold-in: ``U_k^T q`` for the TF-IDF vector q of each token list. Shape (m, k).

        Tokens outside the windows' vocabulary are dropped; a list with none left projects to 0.
        The lists are weighted a block of about ``_PROJECT_BLOCK_TOKENS`` tokens at a time, and a
        longer list a piece of that size at a time, so the transient sparse matrices stay small
        whatever the corpus; each row depends on its own list only, and counts add exactly, so
        the result is bit for bit that of weighting everything at once.
        """
        check_token_lists(token_lists, what="token_lists")
        out: FloatArray = np.zeros((len(token_lists), self.rank), dtype=np.float64)
        start = 0
        for stop in _blocks(token_lists, _PROJECT_BLOCK_TOKENS):
            block = list(token_lists[start:stop])
            long = [i for i, tokens in enumerate(block) if len(tokens) > _PROJECT_BLOCK_TOKENS]
            for i in long:
                block[i] = []  # its row is computed below, piece by piece
            weighted = tfidf_matrix(block, vocabulary=self.vocabulary, idf=self.idf).matrix
            out[start:stop] = np.asarray(weighted @ self.U, dtype=np.float64)
            for i in long:
                out[start + i] = self._project_long(token_lists[start + i])
            start = stop
        return out

    def _project_long(self, tokens: Sequence[str]) -> FloatArray:
        """``U_k^T q`` (k,) for one list longer than a block. Its term counts are summed piece by
        piece (whole numbers, so exactly), then weighted and multiplied as ``tfidf_matrix`` and
        a CSR product do for the whole list: the same stored entries in the same column order,
        hence the same bits, without an array of every token's column."""
        n_terms = len(self.vocabulary)
        counts = np.zeros(n_terms, dtype=np.float64)
        for at in range(0, len(tokens), _PROJECT_BLOCK_TOKENS):
            piece = tokens[at : at + _PROJECT_BLOCK_TOKENS]
            row = count_matrix([piece], vocabulary=self.vocabulary)
            counts[row.indices] += row.data
        cols = np.flatnonzero(counts)
        weighted = sp.csr_matrix(
            (counts[cols] * self.idf[cols], cols, np.array([0, cols.size])), shape=(1, n_terms)
        )
        out: FloatArray = np.asarray(weighted @ self.U, dtype=np.float64)[0]
        return out

    def search(
        self,
        query_tokens: Sequence[str],
        doc_projections: FloatArray,
        *,
        k: int,
        normalised: bool = False,
    ) -> Ranking:
        """The ``min(k, m)`` rows of ``doc_projections`` (m, k_dims) closest to the query by cosine.

        Cosine of ``U_k^T q`` and each row; a zero vector (query or document) scores 0. Ties are
        broken by ascending row index. With ``normalised=True`` the rows are taken as already
        divided by their norms by :func:`unit_rows` (done once per set of projections instead of
        once per query); the ranking and scores are then bitwise those of the raw projections.
        """
        if isinstance(query_tokens, str | bytes):
            raise ValueError("query_tokens must be a list of tokens, not a string")
        check_positive_int("k", k)
        docs = np.asarray(doc_projections, dtype=np.float64)
        if docs.ndim != 2 or docs.shape[1] != self.rank:
            raise ValueError(f"doc_projections must have shape (m, {self.rank}), got {docs.shape}")
        query = unit_rows(self.project([query_tokens]))[0]
        unit = docs if normalised else unit_rows(docs)
        # Row by row (row_dots): a shard of the rows scores them with the same bits.
        scores = np.clip(row_dots(unit, query), -1.0, 1.0)
        return _ranking(scores, min(int(k), docs.shape[0]))

    @property
    def shape(self) -> tuple[int, int]:
        """(terms, windows): the shape of the term x window matrix A the model was fitted on."""
        return int(self.U.shape[0]), int(self.Vt.shape[1])

    def strongest_terms(self, count: int, keep: Callable[[str], bool]) -> list[str]:
        """The first ``count`` terms ``keep`` accepts, by the norm of their row of U_k S_k,
        longest first, ties to vocabulary order: the words the kept dimensions express most
        strongly. Each row's norm depends on that row alone (:func:`term_norms`)."""
        terms = self.vocabulary.terms
        longest_first = top_k(term_norms(self.U, self.s)).tolist()
        return [terms[i] for i in longest_first if keep(terms[i])][:count]

    def neighbours(self, word: str, *, k: int = 10) -> list[tuple[str, float]]:
        """The ``k`` terms nearest to ``word``: cosine of the rows of U_k S_k, the word excluded.

        A word outside the vocabulary, or whose row is zero (a term in every window weighs 0),
        has no direction and gets an empty list rather than an error. Cosines equal to 12
        decimals are ties, broken by the terms' (sorted) vocabulary order; the cosines returned
        are the unrounded ones. Each cosine is added along its own row (:func:`row_dots`), so a
        block of the terms scores them with the same bits (:mod:`raglab.distributed.lsa_held`).
        """
        check_positive_int("k", k)
        col = self.vocabulary.get(word)
        if col is None:
            return []
        terms = unit_rows(self.U * self.s[None, :])
        if not np.any(terms[col]):
            return []
        scores = np.clip(row_dots(terms, terms[col]), -1.0, 1.0)
        scores[col] = -np.inf
        # Terms with proportional rows of A (in the same windows in the same proportions) have
        # equal cosines in exact arithmetic, but the factorisation's rounding leaves them a few
        # ulps apart, in an order that changes with the solver's rounding. Ranking on rounded
        # cosines makes such ties fall to vocabulary order, as documented.
        order = top_k(np.round(scores, _TIE_DECIMALS), min(int(k), scores.shape[0] - 1))
        return [(self.vocabulary.terms[int(i)], float(scores[i])) for i in order]


class LSASpace(Protocol):
    """What a lab reads of a fitted LSA space: :class:`LSAModel`, held whole, or a model whose
    term rows and window columns stay where they were fitted
    (:class:`raglab.distributed.lsa_held.HeldLSA`), which fetches only the rows a fold-in needs.
    Every member means what :class:`LSAModel`'s does, with the same values bit for bit."""

    @property
    def vocabulary(self) -> Vocabulary: ...
    @property
    def idf(self) -> FloatArray: ...
    @property
    def U(self) -> FloatArray: ...
    @property
    def s(self) -> FloatArray: ...
    @property
    def Vt(self) -> FloatArray: ...
    @property
    def frobenius_sq(self) -> float: ...
    @property
    def rank(self) -> int: ...
    @property
    def singular_values(self) -> FloatArray: ...
    @property
    def variance_share(self) -> FloatArray: ...
    @property
    def shape(self) -> tuple[int, int]: ...
    def strongest_terms(self, count: int, keep: Callable[[str], bool]) -> list[str]: ...
    def project(self, token_lists: Sequence[Sequence[str]]) -> FloatArray: ...
    def search(
        self,
        query_tokens: Sequence[str],
        doc_projections: FloatArray,
        *,
        k: int,
        normalised: bool = False,
    ) -> Ranking: ...
    def neighbours(self, word: str, *, k: int = 10) -> list[tuple[str, float]]: ...


def term_window_matrix(
    windows: Sequence[Sequence[str]],
) -> tuple[SparseMatrix, Vocabulary, FloatArray]:
    """A = TF-IDF term x window matrix (n_terms x n_windows), its vocabulary and idf (n_terms,).

    A is scipy CSC: the transposed view of the window x term CSR matrix that
    :func:`raglab.embedding.vectors.tfidf_matrix` builds, so that it shares that matrix's arrays and is held
    once (a CSR copy would double its memory, about 12 bytes a non-zero)."""
    check_token_lists(windows, what="windows")
    vocabulary = Vocabulary.from_docs(windows)
    weighted, idf = tfidf_matrix(windows, vocabulary=vocabulary)
    return weighted.T, vocabulary, idf


def fit_lsa(
    windows: Sequence[Sequence[str]],
    *,
    rank: int,
    oversample: int,
    power_iterations: int | None = None,
    seed: int,
) -> LSAModel:
    """Fit LSA on token windows (see ``even_windows``): truncated SVD of the TF-IDF term x window
    matrix by :func:`randomized_svd`. ``rank`` must not exceed min(n_terms, n_windows).
    ``power_iterations`` None: :func:`power_iterations_for` the number of windows (3 at 100)."""
    if len(windows) == 0:
        raise ValueError("fit_lsa needs at least one window")
    if power_iterations is None:
        power_iterations = power_iterations_for(len(windows))
    A, vocabulary, idf = term_window_matrix(windows)
    if A.shape[0] == 0:
        raise ValueError("the windows hold no tokens")
    if isinstance(rank, int) and rank > min(A.shape):
        raise ValueError(
            f"rank {rank} exceeds min(terms, windows) = min{A.shape}; fit fewer dimensions"
        )
    U, s, Vt = randomized_svd(
        A, rank=rank, oversample=oversample, power_iterations=power_iterations, seed=seed
    )
    # Added exactly (raglab.base.exact): the same total whether A is held whole or in row blocks.
    frobenius_sq = exact_sum_of_squares(A.data)
    return LSAModel(vocabulary, idf, U, s, Vt, frobenius_sq)
