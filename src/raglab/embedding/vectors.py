"""Term-document matrices: counts, TF-IDF weights and cosine similarities.

Shared by BM25 (term counts), LSA (the TF-IDF term-window matrix and the fold-in of queries and
chunks) and the reranker's MMR step (TF-IDF cosine between chunks, its redundancy measure).

Every matrix here has one row per document (token list) and one column per vocabulary term, and is
a ``scipy.sparse.csr_matrix`` of float64. TF-IDF follows Salton and Buckley (1988) in its plainest
form::

    w(t, d) = tf(t, d) * idf(t),    idf(t) = ln(N / df(t))

with N the number of documents and df(t) the number holding t at least once. A term found in every
document weighs 0 (it cannot tell documents apart); a vocabulary term found in none gets idf 0 too,
rather than an infinite weight.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp  # type: ignore[import-untyped]

from raglab.base.ranking import FloatArray, IntArray

# scipy ships no type information, so sparse matrices are typed as Any; this alias names them.
SparseMatrix = Any

__all__ = [
    "SparseMatrix",
    "TfIdf",
    "Vocabulary",
    "check_token_lists",
    "cosine_matrix",
    "count_matrix",
    "document_frequencies",
    "idf_weights",
    "tfidf_matrix",
]


def check_token_lists(docs: Sequence[Sequence[str]], *, what: str = "docs") -> None:
    """Raise ValueError unless ``docs`` is a sequence of token lists.

    A bare string is a sequence of one-letter strings, so passing text where tokens were meant
    would silently index characters; it is rejected here instead.
    """
    if isinstance(docs, str | bytes):
        raise ValueError(f"{what} must be a sequence of token lists, not a string")
    for i, doc in enumerate(docs):
        if isinstance(doc, str | bytes):
            raise ValueError(
                f"{what}[{i}] is a string; pass a list of tokens (tokenise the text first)"
            )


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """An ordered set of terms: term -> column index.

    Built by :meth:`from_docs` in **sorted** (code-point) order, so the columns do not depend on the
    order of the documents: permuting documents permutes the rows of every matrix and nothing else.
    ``terms[i]`` is the term of column ``i``.
    """

    terms: tuple[str, ...]
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index = {t: i for i, t in enumerate(self.terms)}
        if len(index) != len(self.terms):
            raise ValueError("vocabulary terms must be distinct")
        object.__setattr__(self, "_index", index)

    @classmethod
    def from_docs(cls, docs: Sequence[Sequence[str]]) -> Vocabulary:
        """Every distinct token of ``docs``, sorted."""
        check_token_lists(docs)
        seen: set[str] = set()
        for doc in docs:
            seen.update(doc)
        return cls(tuple(sorted(seen)))

    def __len__(self) -> int:
        return len(self.terms)

    def __contains__(self, term: object) -> bool:
        return term in self._index

    def __getitem__(self, term: str) -> int:
        return self._index[term]

    def __iter__(self) -> Iterator[str]:
        return iter(self.terms)

    def get(self, term: str) -> int | None:
        """Column of ``term``, or None when it is not in the vocabulary."""
        return self._index.get(term)

    @property
    def mapping(self) -> Mapping[str, int]:
        """Read-only view of term -> column."""
        return self._index

    def ids(self, tokens: Iterable[str]) -> IntArray:
        """Columns of the known tokens, in order (repeats kept, unknown tokens dropped)."""
        index = self._index
        return np.fromiter((index[t] for t in tokens if t in index), dtype=np.int64)


def _counts(docs: Sequence[Sequence[str]], vocabulary: Vocabulary) -> SparseMatrix:
    # The column of every token occurrence, row after row, straight into one integer array (-1 for
    # a token outside the vocabulary); a CSR matrix of ones over these columns, with duplicates
    # summed, holds the frequencies. No Python list of ints and no COO row array: on 20 million
    # tokens that is the difference between about 1.2 GB and 0.25 GB at the peak.
    get = vocabulary.mapping.get
    lengths = np.fromiter((len(doc) for doc in docs), dtype=np.int64, count=len(docs))
    indptr = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    total = int(indptr[-1])
    col_dtype = np.int32 if len(vocabulary) < np.iinfo(np.int32).max else np.int64
    cols: npt.NDArray[np.signedinteger[Any]] = np.fromiter(
        (get(t, -1) for t in chain.from_iterable(docs)), dtype=col_dtype, count=total
    )
    known = cols >= 0
    if not known.all():
        # Drop unknown tokens and move each row's end back by the number dropped before it.
        kept = np.zeros(total + 1, dtype=np.int64)
        np.cumsum(known, out=kept[1:])
        indptr = kept[indptr]
        cols = cols[known]
    matrix = sp.csr_matrix(
        (np.ones(cols.shape[0], dtype=np.float64), cols, indptr),
        shape=(len(docs), len(vocabulary)),
        dtype=np.float64,
    )
    matrix.sum_duplicates()
    matrix.sort_indices()
    return matrix


def count_matrix(
    docs: Sequence[Sequence[str]], *, vocabulary: Vocabulary | None = None
) -> SparseMatrix:
    """Term frequencies as a sparse (len(docs), len(vocabulary)) float64 CSR matrix.

    ``X[d, t]`` counts the occurrences of term ``t`` in document ``d`` (integral values). Without
    a vocabulary, ``Vocabulary.from_docs(docs)`` is used; with one, tokens outside it are ignored.
    Empty documents give empty rows.
    """
    check_token_lists(docs)
    vocab = Vocabulary.from_docs(docs) if vocabulary is None else vocabulary
    return _counts(docs, vocab)


def document_frequencies(counts: SparseMatrix) -> IntArray:
    """df(t): how many rows of a (docs x terms) count matrix hold term t. Shape (n_terms,)."""
    csc = sp.csc_matrix(counts)
    csc.eliminate_zeros()
    out: IntArray = np.diff(csc.indptr).astype(np.int64)
    return out


def idf_weights(df: IntArray, n_docs: int) -> FloatArray:
    """idf(t) = ln(N / df(t)), and 0 where df(t) = 0. Shape (n_terms,)."""
    if n_docs < 0:
        raise ValueError("n_docs must be non-negative")
    df = np.asarray(df, dtype=np.int64)
    if np.any(df < 0) or np.any(df > n_docs):
        raise ValueError("document frequencies must lie in 0..n_docs")
    out = np.zeros(df.shape, dtype=np.float64)
    seen = df > 0
    out[seen] = np.log(n_docs / df[seen])
    return out


class TfIdf(NamedTuple):
    """The weighted matrix (docs x terms, CSR float64) and the idf vector (n_terms,) used."""

    matrix: SparseMatrix
    idf: FloatArray


#: Stored entries scaled at once by :func:`tfidf_matrix` (8 MB of float64 weights a block).
_SCALE_BLOCK = 1 << 20


def tfidf_matrix(
    docs: Sequence[Sequence[str]],
    *,
    vocabulary: Vocabulary | None = None,
    idf: FloatArray | None = None,
) -> TfIdf:
    """TF-IDF weights ``w(t, d) = tf(t, d) * ln(N / df(t))`` (Salton and Buckley 1988).

    Returns ``(matrix, idf)``: a CSR (len(docs), n_terms) matrix and the idf vector (n_terms,).
    With ``idf=None`` the idf is computed from ``docs`` themselves (N = len(docs)); pass the idf
    of a fitted collection (with its vocabulary, which is then required) to weight new documents
    the same way, as the LSA fold-in does. A term in every document gets weight 0.
    """
    check_token_lists(docs)
    if idf is not None and vocabulary is None:
        raise ValueError("idf needs the vocabulary it was computed with")
    vocab = Vocabulary.from_docs(docs) if vocabulary is None else vocabulary
    counts = _counts(docs, vocab)
    if idf is None:
        weights = idf_weights(document_frequencies(counts), len(docs))
    else:
        weights = np.asarray(idf, dtype=np.float64)
        if weights.shape != (len(vocab),):
            raise ValueError(
                f"idf has shape {weights.shape}, expected ({len(vocab)},) to match the vocabulary"
            )
    # Scaling columns of a CSR matrix: multiply each stored value by its column's weight, in
    # place (the counts are this call's own) and a block at a time, so that neither a copy of
    # the matrix nor an array of every entry's weight is ever held: the same products, bit for
    # bit, at a peak of one block.
    data, columns = counts.data, counts.indices
    for start in range(0, data.size, _SCALE_BLOCK):
        stop = start + _SCALE_BLOCK
        data[start:stop] *= weights[columns[start:stop]]
    return TfIdf(counts, weights)


def _dense(X: Any) -> FloatArray:
    out: FloatArray = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    return out


def cosine_matrix(X: SparseMatrix | FloatArray) -> FloatArray:
    """Cosine similarities between the rows of ``X`` (dense or sparse, shape (m, n)).

    Returns a dense (m, m) float64 array ``C[i, j] = x_i . x_j / (||x_i|| ||x_j||)``, clipped to
    [-1, 1] against rounding. A zero row has cosine 0 with every row, itself included. Meant for
    small m (the chunks of one ranking), since the result is dense. A sparse ``X`` is made dense
    over the columns its rows hold only: a column no row holds adds nothing to a norm or a dot
    product, and the whole width is the vocabulary, which identifiers make grow with the chunks
    (m x V x 8 bytes, twice, was the largest transient of a million-chunk run's client).
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        used, held = np.unique(X.indices, return_inverse=True)
        X = sp.csr_matrix((X.data, held.ravel(), X.indptr), shape=(X.shape[0], used.size))
    dense = _dense(X)
    if dense.ndim != 2:
        raise ValueError(f"X must be 2-d, got shape {dense.shape}")
    norms = np.linalg.norm(dense, axis=1)
    safe = np.where(norms > 0, norms, 1.0)
    unit = dense / safe[:, None]
    gram = unit @ unit.T
    out: FloatArray = np.clip(gram, -1.0, 1.0)
    return out
