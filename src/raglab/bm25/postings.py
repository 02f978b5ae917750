"""The postings of a tokenised collection: built once, term by term, and read by every scoring path.

One job: the inverted lists. :func:`build_postings` streams token lists into postings held term
by term (CSC-style: ``indptr`` (V + 1,), ``docs`` (nnz,) ascending within a term, ``tf`` (nnz,)
small unsigned counts, about 5 bytes a posting); :class:`Columns` is how the kernels read them
(with each document's ``|d| / avgdl``); :class:`Postings` is a batch of queries' postings
flattened for exhaustive scoring; :func:`per_term_reduce` reduces a per-posting quantity (a
term's largest saturation) term by term without a temporary the size of every posting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from raglab.base.ranking import FloatArray, IntArray

__all__ = ["Columns", "Postings", "build_postings", "per_term_reduce"]


@dataclass(frozen=True, slots=True)
class Columns:
    """The postings of a collection, column (term) by column, as every kernel reads them.

    ``indptr`` (V + 1,) int64 and ``docs`` (nnz,) int32: the documents of term t are
    ``docs[indptr[t]:indptr[t + 1]]``, ascending. ``tf`` (nnz,) unsigned integers: their
    frequencies (exact in float64, so every saturation computed from them is exact).
    ``ratio`` (N,) float64: |d| / avgdl. Nothing per term but the pointers: per-term bounds
    depend on k1 and b and are the index's (see :class:`raglab.bm25.index.BM25Index`).
    """

    indptr: IntArray
    docs: np.ndarray
    tf: FloatArray
    ratio: FloatArray

    @property
    def n_docs(self) -> int:
        return int(self.ratio.shape[0])


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
