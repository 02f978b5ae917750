"""Measuring rankings on Dask workers: questions spread over the workers, metrics gathered.

Each worker computes the per-question values of its questions with :mod:`raglab.metrics.measures`'
``*_per_query`` functions; the client puts them back in question order and takes each mean as
:func:`raglab.metrics.measures.evaluate` does (``math.fsum`` of the values, divided by their number),
so the means equal the single machine's bit for bit. Per-question values depend on that
question's ranking and labels alone, so how the questions are split changes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from raglab.base.ranking import FloatArray, Ranking
from raglab.metrics.measures import (
    hit_rate_at_k_per_query,
    ndcg_at_k_per_query,
    precision_at_k_per_query,
    reciprocal_rank_per_query,
    top1_accuracy_per_query,
)
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import rank_split, relevance_of, resolve
from raglab.run_settings import RetrievalSettings
from raglab.settings import NDCG_K, PRECISION_K, RECALL_KS

__all__ = ["evaluate_on_cluster", "measure_on_cluster", "per_query_values"]

Relevance = Mapping[int, float]


def per_query_values(
    rankings: Sequence[Ranking], relevant: Sequence[Relevance]
) -> dict[str, FloatArray]:
    """Task: every headline measure per question, each (Q,), under ``evaluate``'s keys."""
    out = {f"recall@{k}": hit_rate_at_k_per_query(rankings, relevant, k=k) for k in RECALL_KS}
    out["mrr"] = reciprocal_rank_per_query(rankings, relevant)
    out[f"ndcg@{NDCG_K}"] = ndcg_at_k_per_query(rankings, relevant, k=NDCG_K)
    out[f"p@{PRECISION_K}"] = precision_at_k_per_query(rankings, relevant, k=PRECISION_K)
    out["top1"] = top1_accuracy_per_query(rankings, relevant)
    return out


def evaluate_on_cluster(
    client: Any,
    rankings: Sequence[Ranking],
    relevant: Sequence[Relevance],
    *,
    partitions: int | None = None,
) -> dict[str, float]:
    """:func:`raglab.metrics.measures.evaluate` (default cut-offs) with the questions split into
    contiguous partitions (default: one per worker), each measured on a worker."""
    if not rankings:
        raise ValueError("no questions to average over")
    if len(rankings) != len(relevant):
        raise ValueError("rankings and relevant must have the same length")
    n = partitions if partitions is not None else max(1, len(client.scheduler_info()["workers"]))
    bounds = np.linspace(0, len(rankings), min(n, len(rankings)) + 1).round().astype(int)
    futures = [
        client.submit(
            per_query_values,
            list(rankings[a:z]),
            [dict(r) for r in relevant[a:z]],
            pure=False,
        )
        for a, z in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)
    ]
    parts: list[dict[str, FloatArray]] = client.gather(futures)
    out: dict[str, float] = {}
    for key in parts[0]:
        values = np.concatenate([p[key] for p in parts])
        out[key] = math.fsum(values.tolist()) / values.size
    return out


def measure_on_cluster(
    client: Any, lab: Lab, split: str, settings: RetrievalSettings
) -> dict[str, float]:
    """:func:`raglab.pipeline.retrieval.measure` with the measuring on the workers (the
    rankings come from the lab: primed from the cluster by
    :func:`raglab.distributed.pipeline.prime_bm25`, or its own)."""
    lab.require(split, "measuring the rankings")
    settings = resolve(lab, settings)
    return evaluate_on_cluster(
        client, rank_split(lab, split, settings), relevance_of(lab, split, settings.chunking)
    )
