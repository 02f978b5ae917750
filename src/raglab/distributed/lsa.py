"""LSA fitted with the TF-IDF term x window matrix in row blocks on Dask workers.

:func:`raglab.embedding.lsa.fit_lsa` computes A ~ U diag(s) Vt for the TF-IDF term x window matrix A
(m terms x n windows) by :func:`raglab.embedding.svd.randomized_svd`. :func:`fit_lsa_on_cluster` runs the
same algorithm with A cut into row blocks A_1, ..., A_r of consecutive terms (of the sorted
vocabulary), each built and held by a worker:

0. **Workers, the windows** (:func:`cut_windows`): each partition of the page files is read on
   a worker (or was read there already for the command's other stages, and is cut where it
   is), which sends back its pages' word counts; the client numbers the corpus's words
   from them (O(pages)) and computes the windows' word ranges, as the single machine does
   (:func:`raglab.embedding.lsa.window_ranges`); each worker tokenises the pieces of the windows
   lying in its pages (:func:`raglab.pipeline.indexes.window_pieces`, the lab's tokeniser) and
   sends its sorted terms to a task that merges them into the sorted vocabulary; the
   workers number their pieces' tokens in it, and one task joins each window's pieces in
   partition order. The client never holds a window's tokens (token lists given on the
   client are sent as their columns instead, :class:`WindowColumns`).
1. **Workers** (:func:`term_block`): every block's task receives the windows once, as the columns
   of their tokens in the sorted vocabulary (:func:`window_ids`, int32: 4 bytes a token where
   Python strings held about 60); block b weights its own terms, ``tfidf_matrix`` over the windows restricted to them. A term's idf is
   ln(n / df), and its df counts the windows in its row, so a block needs no other block's
   statistics: its rows are the single-machine A's rows, bit for bit.
2. **A worker**: Omega (n, l) from ``seed`` (:func:`raglab.embedding.sketch.seeded_matrix`), as there.
3. **Products per block**: Y = A X is the blocks' A_b X stacked (each row's sum is the single
   product's, bit for bit). Z = A^T Y adds, for each window, its terms' a_tk y_t in ascending
   term order; the single product (scipy's ``csr_matvecs``) adds them one by one into the
   output row. So block b's task continues block b - 1's output with its own terms, through the
   same kernel (:func:`chain_transpose_times`): the blocks' additions run in the single
   product's order, and Z is its value bit for bit. The chain is sequential over the blocks;
   the l columns are cut into as many slices as there are blocks, each slice its own chain, so
   that while block b works on slice j, block b - 1 already works on slice j + 1 (a pipeline).
4. **A worker, the small dense problems**: the LU normaliser between power passes
   (:func:`raglab.embedding.svd._lu_basis` on the thin m x l and n x l sketches, the blocks'
   rows or the column slices joined in one task), the Householder QR at the end
   (:func:`raglab.embedding.svd._orthonormal`), the l x l eigenproblem of B B^T, the signs
   (:func:`raglab.embedding.svd.small_problem`): each a task of the whole sketch, since LU with
   partial pivoting, the QR and B B^T are not sums of per-block pieces bit for bit. LAPACK's
   rounding may depend on BLAS's threads, so each such task runs with this process's count
   (:func:`raglab.base.threads.blas_threads`; with threadpoolctl installed, as the
   single machine would run it here).
5. ||A||_F^2: each block's squares added exactly (:func:`raglab.base.exact.scaled_sum_of_squares`),
   integers summed on the client, rounded once, as :func:`raglab.embedding.lsa.fit_lsa` does.

Every step is the single machine's, in the same order, so the model (U, s, Vt, idf and
||A||_F^2) equals :func:`raglab.embedding.lsa.fit_lsa`'s bit for bit (``tests/distributed``), and the
command line's ``--workers`` fits LSA here.

What moves: each page's word count to the client and the windows' ranges back; each
partition's sorted terms to a worker, which merges them into the vocabulary (the client
receives its length); the windows' token columns once to each worker; then only between
workers: per product A X, the (n, l) sketch to every block and each block's (m_b, l) rows to
the task that joins them; per product A^T Y, each block's piece of Y and the (n, l) running
sums from block to block. :func:`fit_held_lsa` leaves the model there too, U's rows and the idf
by A's term blocks, Vt's columns in slices (:class:`raglab.distributed.lsa_held.HeldLSA`): the
client receives s, ||A||_F^2 and each block's first term, and never holds the vocabulary, a
sketch, U, Vt or A. :func:`fit_lsa_on_cluster` gathers the model whole.

What a worker lost in the middle of the fit takes with it, Dask computes again: the blocks from
the windows (and those from the page files), the products from the blocks, the sketches and the
pieces of Y from the tasks that made them, all of which the scheduler keeps with their tasks
(:func:`raglab.distributed.cluster.share`), never scattered.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from raglab.base.exact import rounded, scaled_sum_of_squares
from raglab.base.ranking import FloatArray, IntArray
from raglab.base.threads import blas_thread_count, blas_threads
from raglab.distributed.chunking import PagesRead, page_digest, read_partitions, same_pages
from raglab.distributed.cluster import shards, share, submit_beside
from raglab.distributed.lsa_held import HeldLSA
from raglab.embedding.lsa import LSAModel, power_iterations_for
from raglab.embedding.sketch import seeded_matrix
from raglab.embedding.svd import _lu_basis, _orthonormal, check_positive_int, small_problem
from raglab.embedding.vectors import SparseMatrix, Vocabulary, check_token_lists, tfidf_matrix
from raglab.pipeline.indexes import window_bounds, window_pieces
from raglab.text.tokens import count_words, tokenize

#: Token columns as they travel: 4 bytes each.
Int32Array = npt.NDArray[np.int32]

__all__ = [
    "BlockedTermMatrix",
    "WindowColumns",
    "chain_transpose_times",
    "cut_window_pieces",
    "cut_windows",
    "fit_held_lsa",
    "fit_lsa_on_cluster",
    "term_block",
    "term_ranges",
    "window_ids",
    "window_piece_ids",
]


def term_ranges(n_terms: int, n_blocks: int) -> list[tuple[int, int]]:
    """At most ``n_blocks`` contiguous, non-empty ranges of term indices of about equal size."""
    n = max(1, min(int(n_blocks), n_terms))
    cuts = [n_terms * i // n for i in range(n + 1)]
    return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]


def term_block(
    ids: Int32Array, offsets: IntArray, start: int, terms: Sequence[str]
) -> tuple[SparseMatrix, FloatArray]:
    """Task: the rows of A for ``terms`` (CSC, len(terms) x n_windows, the single A's layout)
    and their idf.

    The windows arrive as :func:`window_ids`: every token's column in the sorted vocabulary,
    window after window (``ids``, int32), and each window's first token (``offsets``, n + 1).
    ``terms`` are the columns ``start`` .. ``start + len(terms) - 1``. Each window is rebuilt as
    the list of its tokens among ``terms``, in their order, and weighted by ``tfidf_matrix`` with
    ``terms`` as the vocabulary, which ignores every other token: the same counts, idf and
    products as the whole windows give, bit for bit."""
    stop = start + len(terms)
    ours = (ids >= start) & (ids < stop)
    kept = np.zeros(ids.shape[0] + 1, dtype=np.int64)
    np.cumsum(ours, out=kept[1:])
    bounds = kept[offsets]
    local = ids[ours] - start
    windows = [
        [terms[i] for i in local[int(a) : int(z)].tolist()] for a, z in itertools.pairwise(bounds)
    ]
    weighted, idf = tfidf_matrix(windows, vocabulary=Vocabulary(tuple(terms)))
    return weighted.T, idf


def window_ids(
    windows: Sequence[Sequence[str]], vocabulary: Vocabulary
) -> tuple[Int32Array, IntArray]:
    """The windows as the workers receive them: every token's column in ``vocabulary`` (which
    holds every token), window after window, int32 (4 bytes a token, where a list of Python
    strings costs about 60), and each window's first position, (n + 1,) int64."""
    get = vocabulary.mapping.__getitem__
    offsets = np.zeros(len(windows) + 1, dtype=np.int64)
    np.cumsum([len(w) for w in windows], out=offsets[1:])
    ids = np.fromiter((get(t) for w in windows for t in w), dtype=np.int32, count=int(offsets[-1]))
    return ids, offsets


@dataclass(frozen=True, slots=True)
class WindowColumns:
    """The LSA windows as :func:`window_ids` gives them, held on the cluster: futures of
    ``ids`` (int32), ``offsets`` ((n + 1,) int64) and ``terms``, the sorted vocabulary of every
    token (a tuple of strings, on the workers); ``n_terms`` terms and ``n`` windows."""

    ids: Any
    offsets: Any
    terms: Any
    n_terms: int
    n: int

    @classmethod
    def of(cls, client: Any, windows: Sequence[Sequence[str]]) -> WindowColumns:
        """Windows at hand on the client, sent as their columns (4 bytes a token)."""
        check_token_lists(windows, what="windows")
        vocabulary = Vocabulary.from_docs(windows)
        ids, offsets = window_ids(windows, vocabulary)
        return cls(
            share(client, ids),
            share(client, offsets),
            share(client, vocabulary.terms),
            len(vocabulary),
            len(windows),
        )


#: A partition's window pieces on its worker: (window index, its tokens), in the order
#: :func:`raglab.pipeline.indexes.window_pieces` gives them.
Pieces = list[tuple[int, list[str]]]


def _page_words(read: PagesRead) -> tuple[tuple[int, bytes], IntArray]:
    """Task: the partition's pages as :func:`~raglab.distributed.chunking.same_pages` compares
    them (their number, their ids' digest) and each page's word count (``count_words``)."""
    counts = np.array([count_words(p.text) for p in read.pages], dtype=np.int64)
    return (len(read.pages), page_digest(p.id for p in read.pages)), counts


def _words_in_all(words: tuple[tuple[int, bytes], IntArray]) -> tuple[tuple[int, bytes], int]:
    """Task: :func:`_page_words`' answer with its words summed: what the client needs of it."""
    return words[0], int(words[1].sum())


def cut_window_pieces(
    read: PagesRead,
    words: tuple[tuple[int, bytes], IntArray],
    first_word: int,
    bounds: IntArray,
    analyzer: str,
    stem: bool,
) -> Pieces:
    """Task: the partition's pieces of the windows (``bounds``:
    :func:`raglab.pipeline.indexes.window_bounds`), tokenised as ``Indexes.tokens`` does, its
    pages' word counts those :func:`_page_words` found on this worker (they stay here: the
    client never holds an integer a page)."""
    counts = words[1]

    def tokens(text: str) -> list[str]:
        return tokenize(text, stem=stem, analyzer=analyzer)

    texts = [p.text for p in read.pages]
    return list(window_pieces(texts, counts, first_word, bounds, tokens))


def _piece_terms(pieces: Pieces) -> list[str]:
    """Task: the partition's distinct window tokens, sorted."""
    return sorted({t for _, tokens in pieces for t in tokens})


def _merged_terms(*term_sets: list[str]) -> tuple[str, ...]:
    """Task: the partitions' sorted terms merged into the sorted vocabulary."""
    return tuple(k for k, _ in itertools.groupby(heapq.merge(*term_sets)))


def _count(terms: Sequence[str]) -> int:
    return len(terms)


def window_piece_ids(pieces: Pieces, terms: Sequence[str]) -> tuple[IntArray, Int32Array, IntArray]:
    """Task: a partition's pieces as columns of the sorted vocabulary ``terms``: each piece's
    window (k,), the tokens' columns (int32) and each piece's first position (k + 1,)."""
    vocabulary = Vocabulary(tuple(terms))
    ids, offsets = window_ids([tokens for _, tokens in pieces], vocabulary)
    return np.array([w for w, _ in pieces], dtype=np.int64), ids, offsets


def _joined_ids(*parts: tuple[IntArray, Int32Array, IntArray]) -> Int32Array:
    """Task: the windows' columns, window after window, each window's pieces in partition
    order (a stable sort by window keeps it), as :func:`window_ids` gives the whole windows."""
    pieces = [
        (int(w), ids[int(a) : int(z)])
        for windows, ids, offsets in parts
        for w, a, z in zip(
            windows.tolist(), offsets[:-1].tolist(), offsets[1:].tolist(), strict=True
        )
    ]
    pieces.sort(key=lambda piece: piece[0])  # stable: a window's pieces stay in partition order
    out: Int32Array = np.concatenate([p for _, p in pieces] + [np.zeros(0, dtype=np.int32)])
    return out


def _joined_offsets(n: int, *parts: tuple[IntArray, Int32Array, IntArray]) -> IntArray:
    """Task: each window's first position in :func:`_joined_ids`' columns, (n + 1,)."""
    sizes = np.zeros(n, dtype=np.int64)
    for windows, _, offsets in parts:
        np.add.at(sizes, windows, np.diff(offsets))
    out = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=out[1:])
    return out


def cut_windows(
    client: Any,
    files: Sequence[Path],
    page_ids: Sequence[str],
    plan: Callable[[int], list[range]],
    *,
    analyzer: str,
    stem: bool,
    encoding: str | None = None,
    partitions: int | None = None,
    read: Sequence[Any] | None = None,
) -> WindowColumns:
    """The LSA windows of the corpus of page ``files`` cut and tokenised on the workers, as
    :attr:`raglab.pipeline.indexes.Indexes.lsa_windows` cuts them, held there as their columns.

    Each partition of the files (default: two per worker) is read on a worker
    (:func:`raglab.distributed.chunking.read_partitions`; ``read``: partitions of ``files``
    already read there for another stage, which are cut where they are, no file read again;
    ``partitions`` and ``encoding`` are then theirs), which sends
    back its number of pages, their ids' digest and its words in all (its pages' word counts
    stay there); ``plan(n_words)`` gives the windows' word
    ranges (``Indexes.lsa_ranges``); each worker tokenises the pieces of the windows lying in
    its pages and sends its sorted terms to a task that merges them into the vocabulary (the
    client receives its length only), and the workers number the tokens and join each window's pieces in partition order. The client
    never holds a window's tokens. Raises ValueError when the workers read other pages than
    ``page_ids``."""
    pages = (
        read_partitions(client, files, partitions=partitions, encoding=encoding)
        if read is None
        else list(read)
    )
    # Each task goes to its partition's pages (submit_beside), never they to it.
    words = [submit_beside(client, _page_words, p) for p in pages]
    summed = client.gather([submit_beside(client, _words_in_all, w) for w in words])
    if not same_pages(page_ids, [seen for seen, _ in summed]):
        raise ValueError(
            "the Dask workers read other pages than this machine did: the corpus folder must be "
            "at the same path, with the same files, on every worker"
        )
    firsts = np.cumsum([0] + [n for _, n in summed])
    planned = plan(int(firsts[-1]))
    n = len(planned)
    # As two arrays, not range objects: the scheduler keeps what is shared while it is needed.
    bounds = share(client, window_bounds(planned))
    del planned
    pieces = [
        submit_beside(client, cut_window_pieces, p, w, int(f), bounds, analyzer, stem)
        for p, w, f in zip(pages, words, firsts[:-1].tolist(), strict=True)
    ]
    term_sets = [client.submit(_piece_terms, p, pure=False) for p in pieces]
    # Merged on a worker: the vocabulary (a string a term) never comes to the client.
    terms = client.submit(_merged_terms, *term_sets, pure=False)
    parts = [client.submit(window_piece_ids, p, terms, pure=False) for p in pieces]
    ids = client.submit(_joined_ids, *parts, pure=False)
    offsets = client.submit(_joined_offsets, n, *parts, pure=False)
    n_terms = int(client.submit(_count, terms, pure=False).result())
    return WindowColumns(ids, offsets, terms, n_terms, n)


def _times(block: tuple[SparseMatrix, FloatArray], X: FloatArray) -> FloatArray:
    """Task: A_b X, (m_b, l)."""
    out: FloatArray = np.asarray(block[0] @ X)
    return out


def _piece(Y: FloatArray, rows: tuple[int, int], columns: tuple[int, int]) -> FloatArray:
    """Task: the contiguous copy of ``Y[rows, columns]`` a block's chain step takes."""
    out: FloatArray = np.ascontiguousarray(Y[rows[0] : rows[1], columns[0] : columns[1]])
    return out


def _stacked(parts: Sequence[FloatArray], axis: int) -> FloatArray:
    out: FloatArray = np.concatenate(parts, axis=axis)
    return out


def _lu_of_rows(threads: int, *parts: FloatArray) -> FloatArray:
    """Task: :func:`raglab.embedding.svd._lu_basis` of the blocks' rows stacked, (m, l), BLAS on
    the client's ``threads`` (LAPACK's rounding may depend on them)."""
    with blas_threads(threads):
        return _lu_basis(_stacked(parts, 0))


def _lu_of_columns(threads: int, *parts: FloatArray) -> FloatArray:
    """Task: :func:`raglab.embedding.svd._lu_basis` of the column slices side by side, (n, l)."""
    with blas_threads(threads):
        return _lu_basis(_stacked(parts, 1))


def _orthonormal_rows(threads: int, *parts: FloatArray) -> FloatArray:
    """Task: Q, :func:`raglab.embedding.svd._orthonormal` of the blocks' rows stacked, (m, l)."""
    with blas_threads(threads):
        return _orthonormal(_stacked(parts, 0))


def _small_problem(
    threads: int, rank: int, Q: FloatArray, *parts: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Task: :func:`raglab.embedding.svd.small_problem` of Q and B = (A^T Q)^T, whose column
    slices are ``parts``: U (m, rank), s (rank,) and Vt (rank, n)."""
    with blas_threads(threads):
        return small_problem(Q, _stacked(parts, 1).T, rank)


def _seeded(n: int, width: int, seed: int) -> FloatArray:
    """Task: Omega (n, l), :func:`raglab.embedding.sketch.seeded_matrix`."""
    return seeded_matrix(n, width, seed)


def chain_transpose_times(
    block: tuple[SparseMatrix, FloatArray], Y: FloatArray, running: FloatArray | None
) -> FloatArray:
    """Task: ``running + A_b^T Y_b`` added as the single product adds it, (n, l).

    A_b^T is CSR (n windows x m_b terms, columns in ascending term order); scipy's
    ``csr_matvecs`` adds each stored a_tk y_t into output row k, one after the other, which is
    how ``A.T @ Y`` computes every row from zeros. Started from the previous blocks' sums
    (``running``; None: zeros, the first block) instead of zeros, each row's additions are
    those of the single product, in its order. ``running`` is copied, never changed: the
    scheduler may run a task again from the same inputs."""
    from scipy.sparse import _sparsetools  # type: ignore[import-untyped]

    transposed = block[0].T.tocsr()  # a view of the CSC block's arrays: no copy
    n, m_b = transposed.shape
    right = np.ascontiguousarray(Y, dtype=np.float64)
    if right.shape[0] != m_b:
        raise ValueError(f"Y has {right.shape[0]} rows, the block {m_b} terms")
    width = right.shape[1]
    out: FloatArray = (
        np.zeros((n, width), dtype=np.float64) if running is None else np.array(running)
    )
    _sparsetools.csr_matvecs(
        n,
        m_b,
        width,
        transposed.indptr,
        transposed.indices,
        transposed.data,
        right.ravel(),
        out.ravel(),
    )
    return out


def _term_slice(terms: Sequence[str], a: int, b: int) -> tuple[str, ...]:
    """Task: terms ``a`` .. ``b - 1`` of the sorted vocabulary."""
    return tuple(terms[a:b])


def _scaled_frobenius_sq(block: tuple[SparseMatrix, FloatArray]) -> int:
    return scaled_sum_of_squares(block[0].data)


class BlockedTermMatrix:
    """A, the TF-IDF term x window matrix, as row blocks held on a Dask cluster's workers."""

    def __init__(self, client: Any, windows: WindowColumns, *, blocks: int) -> None:
        self._client = client
        self.shape = (windows.n_terms, windows.n)
        self.ranges = term_ranges(self.shape[0], blocks)
        # Held as long as the blocks: a block lost with its worker is built again from them.
        self._windows = windows
        #: Each block's terms, a task cutting the vocabulary on the workers.
        self.terms = [
            client.submit(_term_slice, windows.terms, a, b, pure=False) for a, b in self.ranges
        ]
        self.blocks = [
            client.submit(term_block, windows.ids, windows.offsets, a, terms, pure=False)
            for (a, _), terms in zip(self.ranges, self.terms, strict=True)
        ]
        self._blocks = self.blocks

    def times(self, X: Any) -> list[Any]:
        """A X for X (n, l), a future: each block's product A_b X, (m_b, l), left on the
        workers as a future, in block order (stacked, they are A X bit for bit)."""
        return [self._client.submit(_times, b, X, pure=False) for b in self._blocks]

    def transpose_times(self, Y: Any, width: int) -> list[Any]:
        """A^T Y for Y (m, ``width``), a future: every window's sum in the single product's
        order, block after block (:func:`chain_transpose_times`), pipelined over slices of the
        columns; the slices' futures, (n, l_j) each, left on the workers."""
        ends = []
        for c, d in term_ranges(width, len(self._blocks)):
            running = None
            for (a, b), blk in zip(self.ranges, self._blocks, strict=True):
                # Each piece of Y is a task of its own: lost with its worker, it is cut again.
                piece = self._client.submit(_piece, Y, (a, b), (c, d), pure=False)
                running = self._client.submit(
                    chain_transpose_times, blk, piece, running, pure=False
                )
            ends.append(running)
        return ends

    def frobenius_sq(self) -> float:
        """||A||_F^2, the blocks' squares added exactly: :func:`raglab.embedding.lsa.fit_lsa`'s value."""
        parts = self._client.gather(
            [self._client.submit(_scaled_frobenius_sq, b, pure=False) for b in self._blocks]
        )
        return rounded(sum(parts))


def fit_held_lsa(
    client: Any,
    windows: Sequence[Sequence[str]] | WindowColumns,
    *,
    rank: int,
    oversample: int,
    power_iterations: int | None = None,
    seed: int,
    blocks: int | None = None,
) -> HeldLSA:
    """:func:`raglab.embedding.lsa.fit_lsa` with A in ``blocks`` row blocks on the workers (default:
    two per worker), the model left there: U's rows and the idf by A's term blocks, Vt's columns
    in as many slices (:class:`raglab.distributed.lsa_held.HeldLSA`); the client receives s,
    ||A||_F^2 and each block's first term. The same model, bit for bit (see the module
    docstring). ``windows``: token lists on the client, or :class:`WindowColumns` already on
    the workers (:func:`cut_windows`)."""
    n_windows = windows.n if isinstance(windows, WindowColumns) else len(windows)
    if n_windows == 0:
        raise ValueError("fit_lsa needs at least one window")
    if power_iterations is None:
        power_iterations = power_iterations_for(n_windows)
    check_positive_int("rank", rank)
    check_positive_int("oversample", oversample, minimum=0)
    check_positive_int("power_iterations", power_iterations, minimum=0)
    n_blocks = blocks if blocks is not None else shards(client)
    columns = windows if isinstance(windows, WindowColumns) else WindowColumns.of(client, windows)
    A = BlockedTermMatrix(client, columns, blocks=max(1, n_blocks))
    m, n = A.shape
    if m == 0:
        raise ValueError("the windows hold no tokens")
    if rank > min(m, n):
        raise ValueError(
            f"rank {rank} exceeds min(terms, windows) = min{A.shape}; fit fewer dimensions"
        )
    width = min(rank + oversample, m, n)
    submit = partial(client.submit, pure=False)
    # The dense steps run on a worker with this process's BLAS threads, so that LAPACK
    # rounds as the single machine here would.
    threads = blas_thread_count()
    # Every sketch stays on the workers as a future, and so does the model: only s comes back.
    Y = A.times(submit(_seeded, n, width, seed))
    for _ in range(power_iterations):
        Z = A.transpose_times(submit(_lu_of_rows, threads, *Y), width)
        Y = A.times(submit(_lu_of_columns, threads, *Z))
    Q = submit(_orthonormal_rows, threads, *Y)
    del Y
    usv = submit(_small_problem, threads, rank, Q, *A.transpose_times(Q, width))
    return HeldLSA.of(
        client,
        usv,
        A.blocks,
        A.terms,
        A.ranges,
        term_ranges(n, len(A.blocks)),
        frobenius_sq=A.frobenius_sq(),
    )


def fit_lsa_on_cluster(
    client: Any,
    windows: Sequence[Sequence[str]] | WindowColumns,
    *,
    rank: int,
    oversample: int,
    power_iterations: int | None = None,
    seed: int,
    blocks: int | None = None,
) -> LSAModel:
    """:func:`fit_held_lsa`'s model gathered whole onto the client: :func:`raglab.embedding.lsa.fit_lsa`'s,
    bit for bit."""
    return fit_held_lsa(
        client,
        windows,
        rank=rank,
        oversample=oversample,
        power_iterations=power_iterations,
        seed=seed,
        blocks=blocks,
    ).whole()
