"""Neural rankings searched per shard on Dask workers, the chunk vectors kept where they are read.

What runs where, for one chunking:

1. **Workers, one task per partition**: the partition's pages chunked
   (:func:`raglab.distributed.chunking.submit_files`), or, from a command line, the very
   partitions its BM25 shards were cut from for the same chunking (``parts``), so no page is
   chunked twice.
2. **Workers** (:func:`raglab.distributed.neural.missing_pieces`): each shard reads its chunks'
   entries in the lab's vector cache folder (:mod:`raglab.embedding.neural.cache`, the folder
   this process would use, which must be visible at the same path on every worker, as the corpus
   is) and tokenises the texts whose entry is missing or damaged there; only their entry names,
   positions and word-piece counts come to the client
   (:func:`raglab.distributed.neural.count_missing`).
3. **Workers** (:func:`raglab.distributed.neural.store_missing`): those texts encoded in the
   single machine's batches, which the client plans from the counts alone, and written into the
   cache folder by the workers; no text and no vector passes through the client.
4. **Workers** (:func:`load_neural_shard`): each shard reads its chunks' vectors from the cache and
   keeps them, unit rows, as a :class:`~raglab.embedding.neural.index.NeuralIndex` of its own:
   the single machine's rows bit for bit (a row is made from its own entry alone).
5. **Queries** (:meth:`ShardedNeural.search`): the client encodes each question alone
   (:meth:`~raglab.pipeline.indexes.Indexes.query_vector`, O(questions)), every shard returns
   each question's exact top k by cosine (:func:`search_neural_shard`), and the client merges them by
   (-score, global index) (:func:`~raglab.distributed.shard.merge_top_k`), the order of
   :func:`raglab.base.topk.top_k` over every chunk. A cosine depends on its own row alone
   (:func:`~raglab.embedding.neural.index.row_cosines`), so every score, and so every ranking,
   ties included, equals the single machine's bit for bit.
6. **Chosen rows** (:meth:`ShardedNeural.rows`): the reranker's neural cosine feature reads its
   candidates' vectors only, fetched from the shards holding them (:func:`neural_shard_rows`).

The client holds the questions' vectors, the merged rankings and the candidates' rows:
O(questions x depth), and, while a cold cache is filled, a name and a count a missing chunk;
never a chunk's text or the (chunks, 384) matrix. A worker lost with a shard is Dask's to
handle: the shard's task reads its partition again and its vectors from the cache.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np

from raglab.base.ranking import FloatArray, IntArray, Ranking
from raglab.corpus.questions import Question
from raglab.distributed.chunking import ChunkedPartition, page_files, submit_files
from raglab.distributed.cluster import share
from raglab.distributed.neural import count_missing, store_missing
from raglab.distributed.shard import merge_top_k
from raglab.run_settings import ChunkingKey

if TYPE_CHECKING:
    from raglab.embedding.neural.encoder import Float32Array
    from raglab.embedding.neural.index import NeuralIndex
    from raglab.pipeline.lab import Lab

__all__ = [
    "NeuralShard",
    "ShardedNeural",
    "load_neural_shard",
    "neural_shard_rows",
    "search_neural_shard",
]


@contextlib.contextmanager
def _no_stage(what: str) -> Iterator[None]:
    yield


class NeuralShard:
    """One shard's unit chunk vectors (a :class:`NeuralIndex`) and its first chunk's global
    index; lives on a worker."""

    def __init__(self, index: NeuralIndex, offset: int) -> None:
        self.index = index
        self.offset = offset

    def __len__(self) -> int:
        return len(self.index)


def _texts(part: ChunkedPartition) -> list[str]:
    return [c.text for c in part.chunks]


def _size(part: ChunkedPartition) -> int:
    return len(part.chunks)


def load_neural_shard(
    model_path: str | None, folder: str, part: ChunkedPartition, offset: int
) -> NeuralShard:
    """Task: the partition's chunk vectors read from the cache ``folder`` into a shard. Raises
    ValueError when an entry is not there (a worker that does not see the folder the client
    filled)."""
    from raglab.embedding.neural.index import NeuralIndex
    from raglab.pipeline import dense

    def refuse(missing: list[str]) -> Float32Array:
        raise ValueError(
            f"{len(missing)} chunk vectors are not in the vector cache {folder} as this worker "
            "sees it: the cache folder (RAGLAB_CACHE_DIR) must be at the same path, shared, "
            "on every worker"
        )

    index = NeuralIndex(dense.load(model_path), _texts(part), cache_dir=folder, encoder=refuse)
    return NeuralShard(index, offset)


def search_neural_shard(
    shard: NeuralShard, queries: Float32Array, k: int
) -> tuple[IntArray, FloatArray]:
    """Task: the shard's exact top ``min(k, n_s)`` of each unit query vector (Q, dim), by
    cosine, ties to the lower index: (global indices, scores), both (Q, min(k, n_s))."""
    width = min(int(k), len(shard))
    docs = np.zeros((queries.shape[0], width), dtype=np.int64)
    scores = np.zeros((queries.shape[0], width), dtype=np.float64)
    for row, query in enumerate(queries):
        ranking = shard.index.search_vector(query, k=width)
        docs[row] = ranking.indices + shard.offset
        scores[row] = ranking.scores
    return docs, scores


def neural_shard_rows(shard: NeuralShard, chunks: IntArray) -> tuple[IntArray, Float32Array]:
    """Task: the unit vectors of those of ``chunks`` (global indices) this shard holds:
    (positions in ``chunks``, their rows (m, dim) float32)."""
    lo, hi = shard.offset, shard.offset + len(shard)
    here = np.flatnonzero((chunks >= lo) & (chunks < hi))
    rows: Float32Array = shard.index.vectors[chunks[here] - lo]
    return here, rows


class ShardedNeural:
    """The neural index of one chunking of ``lab``, its vectors in shards on the workers.

    Build it with :meth:`build`; :meth:`search` ranks questions on it and :meth:`rows` fetches
    chosen chunks' vectors. :meth:`ranking` serves :attr:`raglab.pipeline.indexes.Indexes.neural_search`:
    the first time a depth is asked for, every labelled question is ranked at that depth in
    one batch and kept, so the lab's later questions cost no round trip."""

    def __init__(self, client: Any, lab: Lab, shards: Sequence[Any], sizes: Sequence[int]) -> None:
        self._client = client
        self._lab = lab
        self._shards = list(shards)
        self.sizes = tuple(int(n) for n in sizes)
        self._rankings: dict[int, dict[str, Ranking]] = {}
        self._rows: dict[int, Float32Array] = {}

    @classmethod
    def build(
        cls,
        client: Any,
        lab: Lab,
        chunking: ChunkingKey,
        *,
        model_path: str | None,
        stage: Callable[[str], AbstractContextManager[Any]] = _no_stage,
        encoding: str | None = None,
        partitions: int | None = None,
        read: Sequence[Any] | None = None,
        parts: Sequence[Any] | None = None,
    ) -> ShardedNeural:
        """Chunk ``lab``'s page files on the workers, encode there the texts the vector cache
        lacks into it (:func:`raglab.distributed.neural.store_missing`, its batches planned here
        from word-piece counts), and load each partition's vectors into a shard on its worker.
        ``model_path``: the model's folder as the workers see it (None: the installed package).
        ``stage(what)`` wraps the encoding (a context manager; the command line's prints a line).
        ``read``: the pages already read on the workers
        (:func:`raglab.distributed.chunking.read_partitions`), chunked where they are without
        reading a file again. ``parts``: the partitions already chunked under ``chunking``
        (:func:`raglab.distributed.chunking.submit_files`' futures, the BM25 shards' own), used
        as they are. Raises ValueError when the workers' chunks are not the lab's."""
        from raglab.embedding.neural.cache import cache_folder, warn_damaged

        key = chunking.resolved()
        folder = str(cache_folder(lab.indexes.neural_model).absolute())
        if parts is None:
            parts = submit_files(
                client,
                page_files(lab.corpus),
                key,
                partitions=partitions,
                encoding=encoding,
                read=read,
            )
        sizes = client.gather([client.submit(_size, p, pure=False) for p in parts])
        if sum(sizes) != len(lab.indexes.chunk_set(key)):
            raise ValueError(
                "the Dask workers read other pages than this machine did: the corpus folder must "
                "be at the same path, with the same files, on every worker"
            )
        counts = count_missing(client, model_path, folder, parts)
        if len(counts):
            with stage(
                f"encode {len(counts)} chunks the vector cache lacks (neural) on the workers"
            ):
                store_missing(client, model_path, folder, parts, counts)
        warn_damaged(counts.damaged, folder)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist()
        shards = [
            client.submit(load_neural_shard, model_path, folder, p, int(offset), pure=False)
            for p, n, offset in zip(parts, sizes, offsets, strict=True)
            if n > 0
        ]
        return cls(client, lab, shards, [n for n in sizes if n > 0])

    @property
    def n_docs(self) -> int:
        return sum(self.sizes)

    def search(self, queries: Float32Array, *, k: int) -> tuple[IntArray, FloatArray]:
        """Every unit query vector's (Q, dim) top ``min(k, N)`` by cosine: (chunks, scores),
        both (Q, min(k, N)), equal to ``NeuralIndex(every chunk).search_vector`` bit for bit."""
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        batch = np.asarray(queries, dtype=np.float32)
        if batch.shape[0] == 0:
            width = min(int(k), self.n_docs)
            return np.zeros((0, width), dtype=np.int64), np.zeros((0, width), dtype=np.float64)
        sent = share(self._client, batch)
        parts = self._client.gather(
            [
                self._client.submit(search_neural_shard, s, sent, int(k), pure=False)
                for s in self._shards
            ]
        )
        return merge_top_k(parts, int(k))

    def ranked(self, k: int) -> bool:
        """Whether the labelled questions are ranked at depth ``k`` already."""
        return k in self._rankings

    def ranking(self, q: Question | str, k: int) -> Ranking:
        """One question's first ``k`` chunks by cosine (:func:`raglab.pipeline.retrieval.neural_ranking`'s
        list); every labelled question is ranked at ``k`` on first use and kept."""
        if isinstance(q, str):
            docs, scores = self.search(self._lab.indexes.query_vector(q)[None, :], k=k)
            return Ranking(docs[0], scores[0])
        if k not in self._rankings:
            questions = list(self._lab.questions)
            vectors = np.stack([self._lab.indexes.query_vector(one) for one in questions])
            docs, scores = self.search(vectors, k=k)
            self._rankings[k] = {
                one.id: Ranking(docs[row], scores[row]) for row, one in enumerate(questions)
            }
        kept = self._rankings[k].get(q.id)
        return kept if kept is not None else self.ranking(q.question, k)

    def rows(self, chunks: IntArray) -> Float32Array:
        """The unit vectors of ``chunks`` (global indices), (len(chunks), dim) float32: the
        whole index's rows bit for bit, fetched from the shards holding them (those fetched
        before are kept)."""
        wanted = np.asarray(chunks, dtype=np.int64)
        if wanted.size and (wanted.min() < 0 or wanted.max() >= self.n_docs):
            raise ValueError(f"chunk indices must lie in 0..{self.n_docs - 1}")
        self.fetch(wanted)
        dim = self._lab.indexes.neural_model.dim
        out = np.zeros((wanted.shape[0], dim), dtype=np.float32)
        for i, chunk in enumerate(wanted.tolist()):
            out[i] = self._rows[chunk]
        return out

    def fetch(self, chunks: IntArray) -> int:
        """Fetch and keep the rows of those ``chunks`` not kept yet (one batch to every shard);
        returns how many were fetched."""
        new = np.array(
            sorted({int(c) for c in np.asarray(chunks).tolist()} - self._rows.keys()),
            dtype=np.int64,
        )
        if new.size == 0:
            return 0
        sent = share(self._client, new)
        parts = self._client.gather(
            [self._client.submit(neural_shard_rows, s, sent, pure=False) for s in self._shards]
        )
        for positions, rows in parts:
            for position, row in zip(positions.tolist(), rows, strict=True):
                self._rows[int(new[position])] = row
        return int(new.size)
