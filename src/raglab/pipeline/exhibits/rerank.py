"""Exhibit V's views: the fitted reranker, its weights, every order measured.

Exhibit V: :func:`fitted_reranker` (the reranker and the MMR lambda chosen on train),
:func:`reranker_summary` (its features and standardised weights), :func:`rerank_rows` (every
split and order measured), :func:`lambda_sweep` (MMR at every lambda of the grid, on both splits,
beside the bar the lambda rule must clear) and :func:`version_demo` (a question whose superseded
copy MMR pushes out of the top 3).

``raglab rerank`` and the web lab's ``/api/rerank`` routes both show these, so they agree.
"""

from __future__ import annotations

from typing import Any

from raglab.corpus.questions import Question
from raglab.pipeline.cache import CacheKind
from raglab.pipeline.exhibits._shared import question
from raglab.pipeline.lab import Lab
from raglab.pipeline.reranking import (
    ORDERS,
    Reranker,
    choose_lambda,
    measure_order,
    rerank,
    superseded_in_top,
    train_reranker,
    with_mmr,
)
from raglab.pipeline.retrieval import ranked_chunks, resolve
from raglab.rerank.features import FEATURES
from raglab.run_settings import RetrievalSettings
from raglab.settings import CACHE_SIZE, MMR_LAMBDAS, RERANK_DEPTH

#: Each first stage's questions whose reranked top 3 holds a superseded chunk.
VERSION_CANDIDATES: CacheKind[RetrievalSettings, list[dict[str, Any]]] = CacheKind(
    "version candidates", CACHE_SIZE
)


def fitted_reranker(lab: Lab, first_stage: RetrievalSettings) -> tuple[Reranker, float]:
    """The reranker trained on the training split over ``first_stage`` (a score fusion's weight
    chosen on that split first), and the MMR lambda chosen on it
    (:func:`~raglab.pipeline.reranking.choose_lambda`)."""
    reranker = train_reranker(lab, resolve(lab, first_stage))
    return reranker, float(choose_lambda(lab, reranker))


def reranker_summary(reranker: Reranker, chosen_lambda: float) -> dict[str, Any]:
    """The trained reranker as exhibit V shows it: its features, their standardised weights,
    the bias, how many training rows (candidates) it learned from and how many held the answer,
    the candidate depth, the lambda chosen on train and the lambdas it was chosen from."""
    return {
        "features": list(FEATURES),
        "weights": dict(reranker.weights),
        "bias": float(reranker.model.bias),
        "rows": reranker.rows,
        "positives": reranker.positives,
        "depth": RERANK_DEPTH,
        "chosen_lambda": float(chosen_lambda),
        "lambdas": [float(v) for v in MMR_LAMBDAS],
    }


def rerank_rows(lab: Lab, reranker: Reranker, lam: float) -> list[dict[str, Any]]:
    """Exhibit V's table: every split and order, at MMR ``lam``."""
    return [
        {"split": split, "order": order, **measure_order(lab, split, reranker, order, lam)}
        for split in ("train", "test")
        for order in ORDERS
    ]


def lambda_sweep(lab: Lab, reranker: Reranker) -> dict[str, Any]:
    """MMR after the reranker at every lambda of MMR_LAMBDAS, measured on train and on test.

    Returns ``{"points": [{"lambda", "split", "top1", "p@3", "recall@5", "mrr", ...}], "reference":
    {split: the reranked order without MMR, measured}, "chosen_lambda", "rule_metric"}``; the chosen
    lambda is :func:`~raglab.pipeline.reranking.choose_lambda`'s, the smallest lambda whose
    training ``rule_metric`` (recall@5) is no lower than the reference's on train. Only the chosen
    lambda's test point is a test figure chosen on train; the others show what choosing on test
    would have flattered.
    """
    return {
        "points": [
            {
                "lambda": float(lam),
                "split": split,
                **measure_order(lab, split, reranker, ORDERS[2], lam),
            }
            for split in ("train", "test")
            for lam in MMR_LAMBDAS
        ],
        "reference": {
            split: measure_order(lab, split, reranker, ORDERS[1], 1.0)
            for split in ("train", "test")
        },
        "chosen_lambda": float(choose_lambda(lab, reranker)),
        "rule_metric": "recall@5",
    }


def _top_rows(lab: Lab, ranking: Any, q: Question, reranker: Reranker) -> list[dict[str, Any]]:
    cs = lab.indexes.chunk_set(reranker.first_stage.chunking)
    rel = cs.relevance(q)
    rows = ranked_chunks(lab, ranking, k=3, chunking=reranker.first_stage.chunking)
    for row in rows:
        row["relevant"] = int(row["index"]) in rel
        row["superseded"] = row["status"] == "superseded"
    return rows


def _leaves_at(lab: Lab, q: Question, reranker: Reranker) -> float | None:
    """The largest lambda on the grid at which no superseded chunk is left in the top 3."""
    reranked = rerank(lab, q, reranker)
    for lam in sorted(MMR_LAMBDAS, reverse=True):
        if not superseded_in_top(
            lab, with_mmr(lab, reranked, lam=lam, reranker=reranker), reranker
        ):
            return float(lam)
    return None


def version_candidates(lab: Lab, reranker: Reranker) -> list[dict[str, Any]]:
    """Answerable questions whose reranked top 3 holds a superseded chunk, best demo first.

    Best: questions of kind ``version`` first, then those whose superseded copies leave the top
    3 at the largest lambda, then test before train, then file order.
    """

    def build() -> list[dict[str, Any]]:
        found = []
        for order, q in enumerate(lab.questions):
            if not q.answerable or q.labels != "passage":
                continue
            if not superseded_in_top(lab, rerank(lab, q, reranker), reranker):
                continue
            leaves = _leaves_at(lab, q, reranker)
            found.append(
                (
                    q.kind != "version",
                    -(leaves if leaves is not None else -1.0),
                    q.split != "test",
                    order,
                    {
                        "id": q.id,
                        "split": q.split,
                        "kind": q.kind,
                        "question": q.question,
                        "leaves_at": leaves,
                    },
                )
            )
        return [row for *_, row in sorted(found, key=lambda r: r[:4])]

    return lab.caches.of(VERSION_CANDIDATES).get(reranker.first_stage, build)


def version_demo(
    lab: Lab, reranker: Reranker, lam: float, question_id: str | None = None
) -> dict[str, Any]:
    """A question's reranked top 3 beside its top 3 after MMR at ``lam``, superseded marked."""
    candidates = version_candidates(lab, reranker)
    if question_id is None:
        if not candidates:
            return {"candidates": [], "question": None}
        question_id = str(candidates[0]["id"])
    q = question(lab, question_id)
    reranked = rerank(lab, q, reranker)
    diversified = with_mmr(lab, reranked, lam=lam, reranker=reranker)
    return {
        "candidates": candidates,
        "question": {"id": q.id, "split": q.split, "question": q.question, "answer": q.answer},
        "lambda": lam,
        "leaves_at": _leaves_at(lab, q, reranker) if q.answerable else None,
        "reranked": _top_rows(lab, reranked, q, reranker),
        "mmr": _top_rows(lab, diversified, q, reranker),
        "superseded_reranked": superseded_in_top(lab, reranked, reranker),
        "superseded_mmr": superseded_in_top(lab, diversified, reranker),
    }
