"""Dense retrieval over chunk texts by sentence vectors (Reimers and Gurevych 2019).

Every chunk is encoded once into a unit vector d_j (:func:`raglab.embedding.neural.cache.encode_cached`,
all-MiniLM-L6-v2 by default); a query q is encoded the same way and each chunk scores

    cos(q, d_j) = q . d_j          (both of unit length), clipped to [-1, 1]

The ranking takes the best k by :func:`raglab.base.topk.top_k`: higher score first, ties to the lower
chunk index, as every ranker of RAG lab. The vectors are float32; their products are taken in
float64, each row's summed on its own (:func:`row_cosines`: a chunk's score is the same bits
whatever other rows are scored with it, a shard's or the whole collection's), so any engine
summing in float64 reaches the same scores to about 1e-16 whatever its order, and returned as
float64, as in a
:class:`~raglab.base.ranking.Ranking`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from raglab.base.ranking import FloatArray, IntArray, Ranking
from raglab.base.topk import top_k
from raglab.embedding.neural.cache import encode_cached
from raglab.embedding.neural.encoder import Float32Array, Progress, check_texts
from raglab.embedding.neural.model import NeuralModel

__all__ = ["NeuralIndex", "row_cosines"]

# Chunk vectors widened to float64 at a time when scoring (8,192 x 384 x 8 bytes = 25 MB).
_SCORE_BLOCK_ROWS = 8_192


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")


def _check_query(query_text: str) -> None:
    if not isinstance(query_text, str):
        raise ValueError(f"query_text must be a string, got {type(query_text).__name__}")


def row_cosines(vectors: Float32Array, queries: Float32Array) -> FloatArray:
    """cos of each query (Q, dim) with each row of ``vectors`` (n, dim), both unit: (Q, n)
    float64, clipped to [-1, 1]. Each cosine depends on its own row alone, bit for bit: the
    products taken in float64 and summed along the row by numpy's pairwise sum, so the scores
    of any subset of the rows (a shard's, the reranker's candidates') equal the whole's."""
    # In float64: a float32 product's rounding depends on BLAS's order of summation, and
    # the tab's engine (engine/exhibits/neural.js) must reach the same cosines to 1e-9. Not
    # BLAS's gemv either: OpenBLAS rounds a row's dot product by where it lies in the block
    # (measured: 183 of 254 slices of 1 to 20,000 rows differed from the whole by up to
    # 1e-16), which would make a shard's scores depend on how the collection was split.
    # A block of chunks at a time, so the float64 copy is bounded (not 8 bytes x n x dim).
    q = np.asarray(queries, dtype=np.float64)
    out: FloatArray = np.empty((q.shape[0], vectors.shape[0]), dtype=np.float64)
    for start in range(0, vectors.shape[0], _SCORE_BLOCK_ROWS):
        block = vectors[start : start + _SCORE_BLOCK_ROWS].astype(np.float64)
        products = np.empty_like(block)
        for row, query in enumerate(q):
            np.multiply(block, query, out=products)
            np.add.reduce(products, axis=1, out=out[row, start : start + block.shape[0]])
    np.clip(out, -1.0, 1.0, out=out)
    return out


class NeuralIndex:
    """The unit sentence vectors of ``texts`` (the chunks), searchable by cosine.

    ``cache`` (default on) reads and writes the vectors in the on-disk cache of
    :mod:`raglab.embedding.neural.cache` (``cache_dir``: its folder; None: the default one), so that
    another process finds them; ``cache=False`` encodes everything and writes nothing.
    ``batch_size`` and ``progress`` go to the encoder; ``encoder`` encodes the texts the cache
    lacks instead of ``model`` (:func:`raglab.embedding.neural.cache.encode_cached`).
    """

    def __init__(
        self,
        model: NeuralModel,
        texts: Sequence[str],
        *,
        cache: bool = True,
        cache_dir: str | Path | None = None,
        batch_size: int = 32,
        progress: Progress | None = None,
        encoder: Callable[[list[str]], Float32Array] | None = None,
    ) -> None:
        check_texts(texts)
        if cache:
            vectors = encode_cached(
                model,
                texts,
                cache_dir=cache_dir,
                batch_size=batch_size,
                progress=progress,
                encoder=encoder,
            )
        else:
            vectors = model.encode(texts, batch_size=batch_size, progress=progress)
        self._model = model
        self._vectors = vectors
        self._vectors.flags.writeable = False

    @classmethod
    def from_vectors(cls, model: NeuralModel, vectors: Float32Array) -> NeuralIndex:
        """An index over vectors already encoded by ``model`` (n, dim); rows are made unit."""
        array = np.asarray(vectors, dtype=np.float32)
        if array.ndim != 2 or array.shape[1] != model.dim:
            raise ValueError(f"vectors must have shape (n, {model.dim}), got {array.shape}")
        self = cls.__new__(cls)
        norms = np.linalg.norm(array, axis=1, keepdims=True)
        self._model = model
        self._vectors = (array / np.maximum(norms, np.float32(1e-12))).astype(np.float32)
        self._vectors.flags.writeable = False
        return self

    @property
    def model(self) -> NeuralModel:
        return self._model

    @property
    def vectors(self) -> Float32Array:
        """The chunks' unit vectors, (n, dim) float32, read-only."""
        return self._vectors

    def __len__(self) -> int:
        return int(self._vectors.shape[0])

    def _scores(self, queries: Float32Array) -> FloatArray:
        """cos of each query (Q, dim) with each chunk: (Q, n), float64, clipped to [-1, 1]."""
        return row_cosines(self._vectors, queries)

    def scores(self, query_text: str) -> FloatArray:
        """cos(query, chunk) for every chunk, shape (n,), float64."""
        _check_query(query_text)
        row: FloatArray = self._scores(self._model.encode([query_text]))[0]
        return row

    def search(self, query_text: str, *, k: int) -> Ranking:
        """The ``min(k, n)`` chunks closest to the query by cosine, best first, ties by ascending
        chunk index."""
        _check_k(k)
        scores = self.scores(query_text)
        order = top_k(scores, int(k))
        return Ranking(order, scores[order])

    def search_vector(self, vector: Float32Array, *, k: int) -> Ranking:
        """:meth:`search` for a query already encoded by this index's model (unit, shape (dim,)):
        what a caller that keeps each question's vector uses, so a question is encoded once."""
        _check_k(k)
        query = np.asarray(vector, dtype=np.float32)
        if query.shape != (self._model.dim,):
            raise ValueError(f"vector must have shape ({self._model.dim},), got {query.shape}")
        scores: FloatArray = self._scores(query[None, :])[0]
        order = top_k(scores, int(k))
        return Ranking(order, scores[order])

    def search_many(
        self, queries: Sequence[str], *, k: int, batch_size: int = 32
    ) -> tuple[IntArray, FloatArray]:
        """:meth:`search` for every query at once: (chunks, scores), both (Q, min(k, n)).

        The queries are encoded in batches, so a score can differ from :meth:`search`'s by float
        rounding (about 1e-7); the order follows the scores of this call.
        """
        _check_k(k)
        check_texts(queries)
        width = min(int(k), len(self))
        indices = np.zeros((len(queries), width), dtype=np.int64)
        values = np.zeros((len(queries), width), dtype=np.float64)
        if len(queries) == 0:
            return indices, values
        scores = self._scores(self._model.encode(queries, batch_size=batch_size))
        for q, row in enumerate(scores):
            indices[q] = top_k(row, width)
            values[q] = row[indices[q]]
        return indices, values

    def cosine(self, text_a: str, text_b: str) -> float:
        """cos of the two texts' sentence vectors, in [-1, 1] (encoded now, not looked up)."""
        _check_query(text_a)
        _check_query(text_b)
        a, b = self._model.encode([text_a, text_b])
        return float(np.clip(np.dot(a.astype(np.float64), b.astype(np.float64)), -1.0, 1.0))
