"""The end-to-end run's questions read and diagnosed on Dask workers.

:func:`raglab.pipeline.end_to_end.run_pipeline` reads every question of a split
(:func:`raglab.pipeline.reading.read_question`) and lays the threshold over the readings. Here
the reading is cut in two (:mod:`raglab.pipeline.reading`): the client ranks and packs each
question with the lab (:func:`~raglab.pipeline.reading.prepare_reading`; the BM25 rankings
and the LSA model it reads come from the cluster too, :mod:`raglab.distributed.pipeline`), and
the workers read and diagnose contiguous slices of the questions
(:func:`~raglab.pipeline.reading.read_prepared`, a pure function of what the client sends:
the packed chunks' bounds, the sentences lying inside them and their texts, the term weights). The readings
come back in question order and are stored where the run looks for them
(:func:`~raglab.pipeline.end_to_end.readings_key`), so the outcomes, the funnel, the accuracy
and its Wilson interval are then gathered on the client from the workers' readings, equal to
the single machine's: each reading depends on its own question's input alone.

:func:`prime_readings` does this for the training split the threshold is chosen on (when it is
chosen) and for the run's split, in the run's order: values tuned on train first.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from raglab.base.sentinels import TUNED
from raglab.distributed.cluster import shards
from raglab.errors import InputError
from raglab.pipeline.lab import Lab
from raglab.pipeline.reading import READINGS, prepared_split
from raglab.pipeline.resolve import resolve_read, run_reranker
from raglab.reading.readings import Reading, ReadingInput, read_prepared
from raglab.run_settings import ReadSettings, RunSettings

__all__ = ["prime_readings", "read_on_cluster", "read_slice"]


def read_slice(inputs: Sequence[ReadingInput]) -> list[Reading]:
    """Task: read and diagnose a slice of prepared questions, in order."""
    return [read_prepared(inp) for inp in inputs]


def read_on_cluster(
    client: Any, inputs: Sequence[ReadingInput], *, partitions: int | None = None
) -> list[Reading]:
    """:func:`read_prepared` of every input, the inputs cut into contiguous slices (default:
    two per worker), each read on a worker; the readings in input order."""
    if not inputs:
        return []
    n = partitions if partitions is not None else shards(client)
    bounds = np.linspace(0, len(inputs), min(n, len(inputs)) + 1).round().astype(int).tolist()
    futures = [
        client.submit(read_slice, list(inputs[a:z]), pure=False)
        for a, z in itertools.pairwise(bounds)
    ]
    return [r for part in client.gather(futures) for r in part]


def _prime(client: Any, lab: Lab, split: str, read: ReadSettings) -> int:
    readings = lab.caches.of(READINGS)
    if readings.find((split, read)) is not None:
        return 0
    inputs = prepared_split(lab, read, split, run_reranker(lab, read))
    readings.setdefault((split, read), read_on_cluster(client, inputs))
    return len(inputs)


def prime_readings(client: Any, lab: Lab, s: RunSettings, split: str) -> int:
    """Read the questions :func:`~raglab.pipeline.end_to_end.run_pipeline` on ``split`` under
    ``s`` will read, on the workers, and keep the readings in the lab: the training split's
    when the threshold is chosen there, then ``split``'s. Returns how many questions were read.

    Nothing is read when the run cannot go ahead (questions labelled by pages, no question in
    the split, a value that cannot be chosen on train): the run then stops with its own
    message, as on one machine."""
    if any(q.labels == "pages" for q in lab.questions) or not lab.split(split):
        return 0
    count = 0
    try:
        read = resolve_read(lab, s)
        if s.threshold is TUNED and lab.split("train"):
            count += _prime(client, lab, "train", read)
        count += _prime(client, lab, split, read)
    except (InputError, ValueError):
        pass  # run_pipeline meets the same problem and reports it
    return count
