"""Neural chunk vectors encoded on Dask workers, a group of batches a task, into the on-disk cache.

What runs where:

1. **Client**: the texts' word pieces, and the batches the single machine would run
   (:func:`raglab.embedding.neural.encoder.plan_batches`: sorted by length, cut every 32). Only the texts
   the on-disk cache lacks are planned (:func:`raglab.embedding.neural.cache.encode_cached`).
2. **Workers, one task per group of batches** (:func:`encode_batches`: consecutive batches of the
   plan, ``CLUSTER_NEURAL_BATCHES_A_TASK`` = 64 of them, 2,048 chunks, a task): load the model
   once per worker process (:func:`raglab.pipeline.dense.load`; the installed package, or the
   folder the lab names, which must exist on every worker) and run each batch of the group
   through the network on its own, one after the other
   (:func:`raglab.embedding.neural.encoder.pooled_batch`), so every vector is its batch's, as on
   one machine. Only word-piece ids go out and (rows, 384) float32 vectors come back. A task per
   batch would put 3.1 million tasks through the scheduler at 100M chunks; a task per group, 64
   times fewer.
3. **Client** (:func:`encode_on_cluster`): the vectors are gathered and written to the cache,
   where the lab then reads them as if it had encoded them itself. Or, **workers**
   (:func:`store_on_cluster`, what the command line's neural shards use,
   :mod:`raglab.distributed.neural_shards`): each task writes its vectors into the cache folder
   itself (shared, at the same path on every worker), and no vector comes back.

A vector depends on its batch (BLAS rounds by the batch's shape), so running the single
machine's batches makes the vectors, and so every neural score, ranking and output, the single
machine's bit for bit on workers with the same CPU, BLAS and BLAS thread count (a LocalCluster
against a machine whose BLAS runs one thread, as Dask starts its workers; tested). OpenBLAS may
split a product differently over more threads, and workers on other hardware may differ too,
by float rounding (about 5e-7), as the single machine's own vectors do between batch
compositions.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from raglab.embedding.svd import check_positive_int
from raglab.settings import CLUSTER_NEURAL_BATCHES_A_TASK

if TYPE_CHECKING:
    from raglab.base.ranking import IntArray
    from raglab.embedding.neural.encoder import Float32Array
    from raglab.embedding.neural.model import NeuralModel
    from raglab.pipeline.lab import Lab
    from raglab.run_settings import ChunkingKey

__all__ = [
    "encode_batches",
    "encode_on_cluster",
    "encode_rows",
    "prime_neural_cache",
    "store_batches",
    "store_on_cluster",
]


def encode_rows(model_path: str | None, rows: Sequence[Sequence[int]]) -> Float32Array:
    """Task: one batch of word-piece rows through the model at ``model_path`` (None: the
    installed package), pooled, not normalised: (len(rows), dim) float32."""
    from raglab.embedding.neural.encoder import pooled_batch
    from raglab.pipeline import dense

    return pooled_batch(dense.load(model_path), rows)


def encode_batches(
    model_path: str | None, batches: Sequence[Sequence[Sequence[int]]]
) -> Float32Array:
    """Task: several batches of word-piece rows, each through the model on its own
    (:func:`encode_rows`), their vectors stacked in order: (sum of the batches' rows, dim)."""
    out: Float32Array = np.concatenate([encode_rows(model_path, rows) for rows in batches])
    return out


def _plan_groups(
    model: NeuralModel, texts: Sequence[str], batch_size: int, batches_a_task: int | None
) -> tuple[list[list[int]], list[list[IntArray]]]:
    """The single machine's batches of ``texts`` (:func:`raglab.embedding.neural.encoder.plan_batches`:
    each text's word-piece ids, and the batches as index arrays), cut into groups of
    ``batches_a_task`` (None: ``CLUSTER_NEURAL_BATCHES_A_TASK``), a task's worth each."""
    from raglab.embedding.neural.encoder import plan_batches

    if batches_a_task is None:
        batches_a_task = CLUSTER_NEURAL_BATCHES_A_TASK
    check_positive_int("batches_a_task", batches_a_task)
    ids, batches = plan_batches(model, texts, batch_size)
    return ids, [batches[g : g + batches_a_task] for g in range(0, len(batches), batches_a_task)]


def encode_on_cluster(
    client: Any,
    model: NeuralModel,
    model_path: str | None,
    texts: Sequence[str],
    *,
    batch_size: int = 32,
    batches_a_task: int | None = None,
) -> Float32Array:
    """``model.encode(texts, batch_size=batch_size, normalize=False)``, the same batches run
    ``batches_a_task`` to a task on the workers (None: ``CLUSTER_NEURAL_BATCHES_A_TASK``, 64):
    (len(texts), dim) float32, rows in the order of ``texts``.
    ceil(ceil(len(texts) / batch_size) / batches_a_task) tasks."""
    ids, groups = _plan_groups(model, texts, batch_size, batches_a_task)
    futures = [
        client.submit(
            encode_batches,
            model_path,
            [[ids[i] for i in batch.tolist()] for batch in group],
            pure=False,
        )
        for group in groups
    ]
    out = np.zeros((len(texts), model.dim), dtype=np.float32)
    for group, vectors in zip(groups, client.gather(futures), strict=True):
        out[np.concatenate(group)] = vectors
    return out


def store_batches(
    model_path: str | None,
    folder: str,
    batches: Sequence[Sequence[Sequence[int]]],
    texts: Sequence[str],
) -> int:
    """Task: :func:`encode_batches`, each vector then written on the worker into the vector
    cache ``folder`` as ``texts`` (the batches' texts, in order) name it
    (:func:`raglab.embedding.neural.cache.write_entry`); returns how many were written."""
    from raglab.embedding.neural.cache import entry_path, write_entry
    from raglab.pipeline import dense

    vectors = encode_batches(model_path, batches)
    model = dense.load(model_path)
    where = Path(folder)
    where.mkdir(parents=True, exist_ok=True)
    for text, vector in zip(texts, vectors, strict=True):
        write_entry(entry_path(model, text, where), vector)
    return len(texts)


def store_on_cluster(
    client: Any,
    model: NeuralModel,
    model_path: str | None,
    texts: Sequence[str],
    folder: str,
    *,
    batch_size: int = 32,
    batches_a_task: int | None = None,
) -> int:
    """:func:`encode_on_cluster`'s batches, the vectors written into the vector cache ``folder``
    by the workers themselves (:func:`store_batches`; the folder must be visible at the same
    path on every worker): none comes back to this process. Returns how many were written."""
    ids, groups = _plan_groups(model, texts, batch_size, batches_a_task)
    futures = [
        client.submit(
            store_batches,
            model_path,
            folder,
            [[ids[i] for i in batch.tolist()] for batch in group],
            [texts[i] for batch in group for i in batch.tolist()],
            pure=False,
        )
        for group in groups
    ]
    return int(sum(client.gather(futures)))


def prime_neural_cache(client: Any, lab: Lab, chunking: ChunkingKey | None = None) -> int:
    """Encode on the workers the chunks under ``chunking`` whose vectors the on-disk cache lacks,
    and write them there; returns how many texts the cluster encoded (0 when all were cached)."""
    from raglab.embedding.neural.cache import encode_cached

    model = lab.indexes.neural_model
    texts = [c.text for c in lab.indexes.chunk_set(chunking).chunks]
    encoded = [0]

    def on_cluster(missing: list[str]) -> Float32Array:
        encoded[0] = len(missing)
        return encode_on_cluster(client, model, lab.model, missing)

    encode_cached(model, texts, encoder=on_cluster)
    return encoded[0]
