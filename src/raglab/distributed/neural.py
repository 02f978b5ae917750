"""Neural chunk vectors encoded on Dask workers, a group of batches a task, into the on-disk cache.

What runs where, for the chunks of a command's partitions (futures of
:class:`~raglab.distributed.chunking.ChunkedPartition`, chunked on the workers):

1. **Workers, one task per partition** (:func:`missing_pieces`): the partition's distinct chunk
   texts, first seen first, whose entry in the vector cache folder (the client's, which must be
   visible at the same path on every worker) is missing or damaged, tokenised there into word
   pieces; only each one's entry name, position and word-piece count come back, never a text.
2. **Client** (:func:`count_missing`, :func:`store_missing`): the names joined in partition
   order, first seen first (the order the single machine encodes its missing texts in), and the
   single machine's batches planned from the counts alone
   (:func:`raglab.embedding.neural.encoder.length_batches`: sorted by count, cut every 32), then
   cut into groups of ``CLUSTER_NEURAL_BATCHES_A_TASK`` = 64 batches, 2,048 chunks, a task's
   worth. The client tokenises no chunk text: it holds a name, a position and a count a missing
   chunk.
3. **Workers, one small task per partition a group draws from** (:func:`pick_pieces`): the
   group's texts of that partition tokenised again, from the partition alone, so a group's task
   fetches its own 2,048 rows of word pieces from the other workers, never a whole partition,
   and a task run again after a lost worker picks the same texts.
4. **Workers, one task per group** (:func:`store_pieces`): load the model once per worker process
   (:func:`raglab.pipeline.dense.load`; the installed package, or the folder the lab names, which
   must exist on every worker), run each batch of the group through the network on its own, one
   after the other (:func:`raglab.embedding.neural.encoder.pooled_batch`), so every vector is its
   batch's, as on one machine, and write the vectors into the cache folder; only a count comes
   back. A task per batch would put 3.1 million tasks through the scheduler at 100M chunks; a task
   per group, 64 times fewer (and at most partitions x groups picks, each a few kilobytes).

A vector depends on its batch (BLAS rounds by the batch's shape), so running the single
machine's batches makes the vectors, and so every neural score, ranking and output, the single
machine's bit for bit on workers with the same CPU, BLAS and BLAS thread count (a LocalCluster
against a machine whose BLAS runs one thread, as Dask starts its workers; tested). OpenBLAS may
split a product differently over more threads, and workers on other hardware may differ too,
by float rounding (about 5e-7), as the single machine's own vectors do between batch
compositions.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from raglab.embedding.svd import check_positive_int
from raglab.settings import CLUSTER_NEURAL_BATCHES_A_TASK

if TYPE_CHECKING:
    from raglab.base.ranking import IntArray
    from raglab.distributed.chunking import ChunkedPartition
    from raglab.embedding.neural.encoder import Float32Array

__all__ = [
    "MissingCounts",
    "count_missing",
    "encode_batches",
    "encode_rows",
    "missing_pieces",
    "pick_pieces",
    "plan_groups",
    "store_missing",
    "store_pieces",
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


def _distinct(part: ChunkedPartition) -> list[str]:
    """The partition's distinct chunk texts, first seen first: what a position names."""
    return list(dict.fromkeys(c.text for c in part.chunks))


def missing_pieces(
    model_path: str | None, folder: str, part: ChunkedPartition
) -> tuple[list[str], list[int], list[int], int]:
    """Task: of the partition's distinct chunk texts, first seen first, those whose entry in the
    vector cache ``folder`` is missing or damaged: their entry names, positions among the
    distinct texts, word-piece counts (tokenised here, truncated as
    :meth:`~raglab.embedding.neural.model.NeuralModel.token_ids` does), and how many entries were
    damaged. No text goes back."""
    from raglab.embedding.neural.cache import entry_path, read_entry
    from raglab.pipeline import dense

    model = dense.load(model_path)
    where = Path(folder)
    names: list[str] = []
    positions: list[int] = []
    texts: list[str] = []
    damaged = 0
    for j, text in enumerate(_distinct(part)):
        path = entry_path(model, text, where)
        vector = read_entry(path, model.dim)
        if vector is None or vector is False:
            names.append(path.name)
            positions.append(j)
            texts.append(text)
            damaged += vector is False
    counts = [len(row) for row in model.token_ids(texts)] if texts else []
    return names, positions, counts, damaged


def pick_pieces(
    model_path: str | None, folder: str, part: ChunkedPartition, positions: Sequence[int]
) -> tuple[list[str], list[list[int]]]:
    """Task: the entry names and word-piece ids of the partition's distinct texts at
    ``positions``. Made from the partition alone, not from what the cache held: a task run
    again (a worker lost) picks the same texts whatever the other tasks wrote meanwhile."""
    from raglab.embedding.neural.cache import entry_path
    from raglab.pipeline import dense

    model = dense.load(model_path)
    distinct = _distinct(part)
    texts = [distinct[j] for j in positions]
    return [entry_path(model, t, Path(folder)).name for t in texts], model.token_ids(texts)


def plan_groups(
    lengths: Sequence[int], batch_size: int = 32, batches_a_task: int | None = None
) -> list[list[IntArray]]:
    """The single machine's batches of texts of word-piece counts ``lengths``
    (:func:`raglab.embedding.neural.encoder.length_batches`: positions, longest first, cut every
    ``batch_size``), cut into groups of ``batches_a_task`` (None: ``CLUSTER_NEURAL_BATCHES_A_TASK``),
    a task's worth each: ceil(ceil(len(lengths) / batch_size) / batches_a_task) groups."""
    from raglab.embedding.neural.encoder import length_batches

    if batches_a_task is None:
        batches_a_task = CLUSTER_NEURAL_BATCHES_A_TASK
    check_positive_int("batches_a_task", batches_a_task)
    batches = length_batches(lengths, batch_size)
    return [batches[g : g + batches_a_task] for g in range(0, len(batches), batches_a_task)]


def store_pieces(
    model_path: str | None,
    folder: str,
    sizes: Sequence[int],
    picks: Sequence[tuple[list[str], list[list[int]]]],
    where: Sequence[tuple[int, int]],
) -> int:
    """Task: a group of batches (``sizes`` rows each, their rows ``where`` says: (pick, row in
    it) of ``picks``, in batch order) through the model (:func:`encode_batches`), each vector
    written on the worker into the vector cache ``folder`` under its entry name
    (:func:`raglab.embedding.neural.cache.write_entry`); returns how many were written."""
    from raglab.embedding.neural.cache import write_entry

    names = [picks[i][0][k] for i, k in where]
    rows = [picks[i][1][k] for i, k in where]
    starts = np.cumsum([0, *sizes]).tolist()
    batches = [rows[a:b] for a, b in itertools.pairwise(starts)]
    vectors = encode_batches(model_path, batches)
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    for name, vector in zip(names, vectors, strict=True):
        write_entry(target / name, vector)
    return len(names)


class MissingCounts:
    """What the client plans from (:func:`count_missing`): for each distinct missing text, in the
    single machine's order, its (partition, position among the partition's distinct texts) and
    word-piece count; and how many entries were damaged."""

    def __init__(self, owner: list[tuple[int, int]], lengths: list[int], damaged: int) -> None:
        self.owner = owner
        self.lengths = lengths
        self.damaged = damaged

    def __len__(self) -> int:
        return len(self.lengths)


def count_missing(
    client: Any, model_path: str | None, folder: str, parts: Sequence[Any]
) -> MissingCounts:
    """The word-piece counts of the partitions' (futures of
    :class:`~raglab.distributed.chunking.ChunkedPartition`) chunk texts the vector cache
    ``folder`` lacks (:func:`missing_pieces`), joined in partition order, first seen first: the
    order the single machine encodes its missing texts in (a text in two partitions is encoded
    once, where it is first seen). Only entry names, positions and counts come here, never a
    text."""
    found = client.gather(
        [client.submit(missing_pieces, model_path, folder, p, pure=False) for p in parts]
    )
    seen: set[str] = set()
    owner: list[tuple[int, int]] = []
    lengths: list[int] = []
    for p, (names, positions, counts, _) in enumerate(found):
        for name, j, count in zip(names, positions, counts, strict=True):
            if name not in seen:
                seen.add(name)
                owner.append((p, j))
                lengths.append(count)
    return MissingCounts(owner, lengths, sum(n for *_, n in found))


def store_missing(
    client: Any,
    model_path: str | None,
    folder: str,
    parts: Sequence[Any],
    counts: MissingCounts | None = None,
    *,
    batch_size: int = 32,
    batches_a_task: int | None = None,
) -> int:
    """Encode on the workers the partitions' chunk texts the vector cache ``folder`` lacks
    (``counts``, None: :func:`count_missing`), in the single machine's batches planned from
    their word-piece counts (:func:`plan_groups`), the vectors written into the cache folder by
    the workers (it must be visible at the same path on every worker): no text and no vector
    passes through this process. Returns how many texts were encoded."""
    if counts is None:
        counts = count_missing(client, model_path, folder, parts)
    futures = []
    for group in plan_groups(counts.lengths, batch_size, batches_a_task):
        taken: dict[int, list[int]] = {}
        where: list[tuple[int, int]] = []
        for u in np.concatenate(group).tolist():
            p, j = counts.owner[u]
            rows = taken.setdefault(p, [])
            where.append((p, len(rows)))
            rows.append(j)
        order = {p: i for i, p in enumerate(taken)}
        picks = [
            client.submit(pick_pieces, model_path, folder, parts[p], rows, pure=False)
            for p, rows in taken.items()
        ]
        futures.append(
            client.submit(
                store_pieces,
                model_path,
                folder,
                [len(batch) for batch in group],
                picks,
                [(order[p], k) for p, k in where],
                pure=False,
            )
        )
    return int(sum(client.gather(futures)))
