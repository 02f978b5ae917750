"""The BM25 formula over flattened postings: Lucene's IDF, and scores at one or many (k1, b).

One job: turn postings (query, document, tf, idf x query count) into BM25 scores, for one query at
one (k1, b) (:func:`query_scores`) or for a batch of queries over a whole (k1, b) grid
(:func:`cell_scores`), the two summing the same products in the same order so that they agree bit
for bit; the streamed build of the postings themselves (:func:`build_postings`) and reductions
over them (:func:`per_term_reduce`); plus the checks of k1, b, k and a query. Private:
:mod:`raglab.bm25.index` is the public face (see its docstring for the formula and the tie-breaking).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
import scipy.sparse as sp  # type: ignore[import-untyped]

from raglab.base.ranking import FloatArray, IntArray
from raglab.bm25.maxscore import saturation


def lucene_idf(df: IntArray | int, n_docs: int) -> FloatArray:
    """Lucene's IDF, ln(1 + (N - n_t + 0.5) / (n_t + 0.5)), elementwise."""
    n_t = np.asarray(df, dtype=np.float64)
    out: FloatArray = np.log1p((n_docs - n_t + 0.5) / (n_t + 0.5))
    return out


@dataclass(frozen=True, slots=True)
class Postings:
    """Flattened postings of a batch of queries: one entry per (query, query term, document)."""

    query: IntArray  # (P,) position of the query in the batch
    doc: IntArray  # (P,) document index
    tf: FloatArray  # (P,) frequency of the term in the document
    weight: FloatArray  # (P,) idf(t) * query count of t


# Indexing reads the documents a block at a time: at most this many tokens, and at most this
# many documents (so a block-local document number fits in uint16).
_BUILD_BLOCK_TOKENS = 1 << 22
_BUILD_BLOCK_DOCS = (1 << 16) - 1
# A collection of fewer tokens is still read in about this many blocks (of at least
# _BUILD_MIN_BLOCK_TOKENS), so that a block's temporaries (about 40 bytes a token) stay below
# the postings kept: one block of a small collection would outweigh its index.
_BUILD_BLOCKS = 8
_BUILD_MIN_BLOCK_TOKENS = 1 << 15
# Reductions over every posting (a term's largest saturation) work on this many at a time, so
# no temporary the size of all the postings is made.
_REDUCE_BLOCK = 1 << 22


def _uint_for(largest: int) -> np.dtype[Any]:
    """The smallest unsigned integer type holding 0..largest."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if largest <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.uint64)


def build_postings(
    docs: Sequence[Sequence[str]],
) -> tuple[tuple[str, ...], IntArray, np.ndarray, np.ndarray, FloatArray]:
    """The postings of ``docs``, term by term: (terms, indptr, doc_ids, tf, doc_lengths).

    ``terms`` (V,) sorted; term t's documents are ``doc_ids[indptr[t]:indptr[t + 1]]``
    (ascending; int32 while N < 2^31) with frequencies ``tf`` (same slice; the smallest unsigned
    type holding the largest); ``doc_lengths`` (N,) float64 token counts.

    Streamed, a block of documents at a time: tokens become ids (numbered by first appearance)
    through one dict, and each block's distinct (term, document) pairs are counted by a sort
    of ``id * block_docs + local_doc`` and kept as run-length terms, uint16 local documents and
    small counts (about 3 bytes a posting). At the end the runs are laid out in sorted-term
    order. The largest temporaries are a block's, never every posting's.
    """
    n_docs = len(docs)
    lengths = np.fromiter(map(len, docs), dtype=np.int64, count=n_docs)
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if n_docs else 0
    block_tokens = min(_BUILD_BLOCK_TOKENS, max(_BUILD_MIN_BLOCK_TOKENS, total // _BUILD_BLOCKS))
    mapping: dict[str, int] = {}
    df = np.zeros(0, dtype=np.int64)
    blocks: list[tuple[int, IntArray, IntArray, np.ndarray, np.ndarray]] = []
    start, largest_tf = 0, 0
    while start < n_docs:
        before = int(ends[start - 1]) if start else 0
        stop = int(np.searchsorted(ends, before + block_tokens, side="right"))
        stop = min(max(stop, start + 1), start + _BUILD_BLOCK_DOCS, n_docs)
        block = docs[start:stop]
        n_tokens = int(ends[stop - 1]) - before
        # New terms first (a C loop over the block's tokens), then every token's id.
        new = [t for t in dict.fromkeys(chain.from_iterable(block)) if t not in mapping]
        mapping.update(zip(new, range(len(mapping), len(mapping) + len(new)), strict=True))
        ids = np.fromiter(
            map(mapping.__getitem__, chain.from_iterable(block)), dtype=np.int64, count=n_tokens
        )
        width = stop - start
        local = np.repeat(np.arange(width, dtype=np.int64), lengths[start:stop])
        keys, counts = np.unique(ids * width + local, return_counts=True)
        del ids, local
        term = keys // width
        doc = (keys - term * width).astype(np.uint16)
        run_at = np.flatnonzero(np.diff(term, prepend=-1))
        run_term = term[run_at]
        run_len = np.diff(np.append(run_at, term.shape[0]))
        if df.shape[0] < len(mapping):
            df = np.concatenate((df, np.zeros(len(mapping) - df.shape[0], dtype=np.int64)))
        df[run_term] += run_len
        top = int(counts.max()) if counts.size else 0
        largest_tf = max(largest_tf, top)
        blocks.append((start, run_term, run_len, doc, counts.astype(_uint_for(top))))
        start = stop
    terms = tuple(sorted(mapping))
    # rank[id]: the term's column in sorted order.
    by_rank = np.fromiter(map(mapping.__getitem__, terms), dtype=np.int64, count=len(terms))
    del mapping
    rank = np.empty(len(terms), dtype=np.int64)
    rank[by_rank] = np.arange(len(terms), dtype=np.int64)
    indptr = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(df[by_rank], out=indptr[1:])
    doc_type = np.int32 if n_docs < np.iinfo(np.int32).max else np.int64
    doc_ids = np.empty(int(indptr[-1]), dtype=doc_type)
    tf = np.empty(int(indptr[-1]), dtype=_uint_for(largest_tf))
    cursor = indptr[:-1].copy()
    blocks.reverse()
    while blocks:  # in document order, so each term's documents arrive ascending
        first, run_term, run_len, doc, counts = blocks.pop()
        col = rank[run_term]
        offset = np.repeat(cursor[col] - (np.cumsum(run_len) - run_len), run_len)
        at = offset + np.arange(doc.shape[0], dtype=np.int64)
        doc_ids[at] = doc.astype(doc_type) + first
        tf[at] = counts
        cursor[col] += run_len
    return terms, indptr, doc_ids, tf, lengths.astype(np.float64)


def per_term_reduce(
    indptr: IntArray, values: Callable[[int, int], np.ndarray], ufunc: np.ufunc
) -> FloatArray:
    """``ufunc.reduce`` of every term's slice of a per-posting quantity, shape (V,) float64.

    ``values(a, z)`` gives the quantity for postings a..z-1; it is asked for blocks of about
    ``_REDUCE_BLOCK`` postings, and a term split between blocks is combined with ``ufunc``.
    Every term has at least one posting.
    """
    n_terms = indptr.shape[0] - 1
    out = np.zeros(n_terms, dtype=np.float64)
    nnz = int(indptr[-1])
    for a in range(0, nnz, _REDUCE_BLOCK):
        z = min(nnz, a + _REDUCE_BLOCK)
        # Terms meeting [a, z): t0 starts at or before a, t1 is the first starting at z or later.
        t0 = int(np.searchsorted(indptr, a, side="right")) - 1
        t1 = int(np.searchsorted(indptr, z, side="left"))
        part_starts = np.maximum(indptr[t0:t1], a) - a
        part = ufunc.reduceat(np.asarray(values(a, z), dtype=np.float64), part_starts)
        first_block = indptr[t0:t1] >= a
        out[t0:t1] = np.where(first_block, part, ufunc(out[t0:t1], part))
    return out


def check_params(k1: float, b: float) -> None:
    if not (math.isfinite(k1) and k1 >= 0):
        raise ValueError(f"k1 must be a finite number >= 0, got {k1}")
    if not (math.isfinite(b) and 0 <= b <= 1):
        raise ValueError(f"b must lie in [0, 1], got {b}")


def check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def check_query(query_tokens: Sequence[str]) -> None:
    if isinstance(query_tokens, str | bytes):
        raise ValueError("query_tokens must be a list of tokens, not a string")


def cell_scores(
    postings: Postings,
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
    and the scores are M G, one cell at a time. Single queries take :func:`query_scores`, which
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


def query_scores(
    postings: Postings, length_ratio: FloatArray, k1: float, b: float, n_docs: int
) -> FloatArray:
    """Scores of one query at one (k1, b), shape (n_docs,): the one-cell case of
    :func:`cell_scores`, without its pair table and sparse product.

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


__all__ = [
    "Postings",
    "build_postings",
    "cell_scores",
    "check_k",
    "check_params",
    "check_query",
    "lucene_idf",
    "per_term_reduce",
    "query_scores",
]
