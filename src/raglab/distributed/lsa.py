"""LSA fitted with the TF-IDF term x window matrix in row blocks on Dask workers.

:func:`raglab.lsa.fit_lsa` computes A ~ U diag(s) Vt for the TF-IDF term x window matrix A
(m terms x n windows) by :func:`raglab._svd.randomized_svd`. :func:`fit_lsa_on_cluster` runs the
same algorithm with A cut into row blocks A_1, ..., A_r of consecutive terms (of the sorted
vocabulary), each built and held by a worker:

1. **Workers** (:func:`term_block`): every worker receives the windows once; block b weights
   its own terms, ``tfidf_matrix`` over the windows restricted to them. A term's idf is
   ln(n / df), and its df counts the windows in its row, so a block needs no other block's
   statistics: its rows are the single-machine A's rows, bit for bit.
2. **Client**: Omega ~ N(0, 1), (n, l), from ``numpy.random.default_rng(seed)``, as there.
3. **Products per block**: Y = A X is the blocks' A_b X stacked (each row's sum is the single
   product's, bit for bit); Z = A^T Y is the sum over blocks of A_b^T Y_b.
4. **Client, the small dense problems**: the LU normaliser between power passes
   (:func:`raglab._svd._lu_basis` on the thin m x l and n x l sketches), the Householder QR at
   the end (:func:`raglab._svd._orthonormal`), the l x l eigenproblem of B B^T, the signs.

The only difference from the single machine is the order in which A^T Y's sum over terms is
added (block by block, then across blocks), so the result agrees to rounding, not bit for bit:
the tests hold the singular values to 1e-6 relative (they agree far closer) and the rankings
equal wherever two scores are not within that of each other. That is why the command line does
not use it: ``--workers`` promises the single machine's output byte for byte.

What moves: the windows' tokens once to each worker; per product, the thin sketch's rows of a
block to its worker and back (m x l in all, and r copies of the n x l one). The client holds A's
vocabulary and the thin sketches, never A.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from raglab._config import LSA_OVERSAMPLE, LSA_RANK, SEED
from raglab._svd import _lu_basis, _orthonormal, check_positive_int, small_problem
from raglab._types import FloatArray
from raglab.lsa import LSAModel, power_iterations_for
from raglab.vectors import SparseMatrix, Vocabulary, check_token_lists, tfidf_matrix

__all__ = ["BlockedTermMatrix", "fit_lsa_on_cluster", "term_block", "term_ranges"]


def term_ranges(n_terms: int, n_blocks: int) -> list[tuple[int, int]]:
    """At most ``n_blocks`` contiguous, non-empty ranges of term indices of about equal size."""
    n = max(1, min(int(n_blocks), n_terms))
    cuts = [n_terms * i // n for i in range(n + 1)]
    return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]


def term_block(
    windows: Sequence[Sequence[str]], terms: Sequence[str]
) -> tuple[SparseMatrix, FloatArray]:
    """Task: the rows of A for ``terms`` (CSC, len(terms) x n_windows, the single A's layout)
    and their idf."""
    weighted, idf = tfidf_matrix(windows, vocabulary=Vocabulary(tuple(terms)))
    return weighted.T, idf


def _times(block: tuple[SparseMatrix, FloatArray], X: FloatArray) -> FloatArray:
    """Task: A_b X, (m_b, l)."""
    out: FloatArray = np.asarray(block[0] @ X)
    return out


def _transpose_times(block: tuple[SparseMatrix, FloatArray], Y: FloatArray) -> FloatArray:
    """Task: A_b^T Y_b, (n, l)."""
    out: FloatArray = np.asarray(block[0].T @ Y)
    return out


def _idf(block: tuple[SparseMatrix, FloatArray]) -> FloatArray:
    return block[1]


def _frobenius_sq(block: tuple[SparseMatrix, FloatArray]) -> float:
    data = block[0].data
    return float(np.dot(data, data))


class BlockedTermMatrix:
    """A, the TF-IDF term x window matrix, as row blocks held on a Dask cluster's workers."""

    def __init__(self, client: Any, windows: Sequence[Sequence[str]], *, blocks: int) -> None:
        check_token_lists(windows, what="windows")
        self._client = client
        self.vocabulary = Vocabulary.from_docs(windows)
        self.shape = (len(self.vocabulary), len(windows))
        self.ranges = term_ranges(self.shape[0], blocks)
        (sent,) = client.scatter([[list(w) for w in windows]], broadcast=True)
        terms = self.vocabulary.terms
        self._blocks = [
            client.submit(term_block, sent, terms[a:b], pure=False) for a, b in self.ranges
        ]

    def times(self, X: FloatArray) -> FloatArray:
        """A X for X (n, l): the blocks' products stacked, (m, l)."""
        (sent,) = self._client.scatter([X], broadcast=True)
        parts = self._client.gather(
            [self._client.submit(_times, b, sent, pure=False) for b in self._blocks]
        )
        out: FloatArray = np.concatenate(parts, axis=0)
        return out

    def transpose_times(self, Y: FloatArray) -> FloatArray:
        """A^T Y for Y (m, l): the sum of the blocks' A_b^T Y_b, in block order, (n, l)."""
        pieces = self._client.scatter([Y[a:b] for a, b in self.ranges])
        parts = self._client.gather(
            [
                self._client.submit(_transpose_times, blk, piece, pure=False)
                for blk, piece in zip(self._blocks, pieces, strict=True)
            ]
        )
        out: FloatArray = parts[0].copy()
        for part in parts[1:]:
            out += part
        return out

    def idf(self) -> FloatArray:
        parts = self._client.gather(
            [self._client.submit(_idf, b, pure=False) for b in self._blocks]
        )
        out: FloatArray = np.concatenate(parts)
        return out

    def frobenius_sq(self) -> float:
        parts = self._client.gather(
            [self._client.submit(_frobenius_sq, b, pure=False) for b in self._blocks]
        )
        return float(sum(parts))


def fit_lsa_on_cluster(
    client: Any,
    windows: Sequence[Sequence[str]],
    *,
    rank: int = LSA_RANK,
    oversample: int = LSA_OVERSAMPLE,
    power_iterations: int | None = None,
    seed: int = SEED,
    blocks: int | None = None,
) -> LSAModel:
    """:func:`raglab.lsa.fit_lsa` with A in ``blocks`` row blocks on the workers (default: two
    per worker): the same model to rounding (see the module docstring)."""
    if len(windows) == 0:
        raise ValueError("fit_lsa needs at least one window")
    if power_iterations is None:
        power_iterations = power_iterations_for(len(windows))
    check_positive_int("rank", rank)
    check_positive_int("oversample", oversample, minimum=0)
    check_positive_int("power_iterations", power_iterations, minimum=0)
    n_blocks = blocks if blocks is not None else 2 * len(client.scheduler_info()["workers"])
    A = BlockedTermMatrix(client, windows, blocks=max(1, n_blocks))
    m, n = A.shape
    if m == 0:
        raise ValueError("the windows hold no tokens")
    if rank > min(m, n):
        raise ValueError(
            f"rank {rank} exceeds min(terms, windows) = min{A.shape}; fit fewer dimensions"
        )
    width = min(rank + oversample, m, n)
    rng = np.random.default_rng(seed)
    Y = A.times(rng.standard_normal((n, width)))
    for _ in range(power_iterations):
        Y = A.times(_lu_basis(A.transpose_times(_lu_basis(Y))))
    Q = _orthonormal(Y)
    B = A.transpose_times(Q).T  # (l, n) = Q^T A
    U, s, Vt = small_problem(Q, B, rank)
    return LSAModel(A.vocabulary, A.idf(), U, s, Vt, A.frobenius_sq())
