"""The sections of a report, one builder per exhibit, measured by the pipeline.

One job: build each section dict of :func:`raglab.pipeline.report.build_report` (chunking, BM25,
rankers, reranker, end to end, and the data summary) from a lab; nothing here computes a measure
of its own. :func:`chunker_label` names a chunker setting in words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from raglab.corpus.questions import SPLITS
from raglab.pipeline.chunking_report import ChunkingReport, chunking_report
from raglab.pipeline.end_to_end import run_pipeline
from raglab.pipeline.exhibits.bm25 import grid_view
from raglab.pipeline.exhibits.end_to_end import funnel
from raglab.pipeline.exhibits.rerank import rerank_rows
from raglab.pipeline.gate import RECALL_K
from raglab.pipeline.lab import Lab
from raglab.pipeline.reranking import choose_lambda, train_reranker
from raglab.pipeline.resolve import lab_tuning, resolve_read
from raglab.pipeline.retrieval import (
    choose_weight,
    first_rank_rows,
    measure,
    neural_unavailable,
    ranker_settings,
    resolve,
)
from raglab.run_settings import ChunkingKey, RetrievalSettings, RunSettings
from raglab.settings import CHUNK_SIZES, FIXED_OVERLAP, default

#: The chunkers shown beside the run's chunker in section I.
REFERENCE_CHUNKERS = (
    ChunkingKey("heading"),
    ChunkingKey("sentence"),
    ChunkingKey("fixed", CHUNK_SIZES["fixed"], FIXED_OVERLAP),
)

_NO_PASSAGES = (
    "the questions of this split are labelled by relevant pages, not by answer passages: "
    "whether an answer survives a cut, and whether the reader quoted it, needs the passage"
)
_PAGES_RUN = (
    "the end-to-end run needs answer passages: these questions are labelled by relevant pages, "
    "which say where an answer is but not which sentence states it"
)


def chunker_label(key: ChunkingKey) -> str:
    """A chunker setting in words: "heading, cap 300", "sentence, 120", "fixed, 200/0"."""
    k = key.resolved()
    if k.method == "fixed":
        return f"fixed, {k.size}/{k.overlap}"
    if k.method == "heading":
        return f"heading, cap {k.size}"
    return f"sentence, {k.size}"


def lab_key(key: ChunkingKey) -> ChunkingKey:
    """The key the lab's exhibits use for this chunker.

    The exhibits name the default heading chunker ``ChunkingKey()``; the report names it the
    same way, so that it finds the rankings and measures the lab has already cached.
    """
    return ChunkingKey() if key.resolved() == ChunkingKey().resolved() else key.resolved()


def _passage_split(lab: Lab, split: str) -> bool:
    return any(q.spans for q in lab.split(split))


def _chunker_row(report: ChunkingReport, role: str, supported: bool) -> dict[str, Any]:
    k = report.key
    return {
        "role": role,
        "label": chunker_label(k),
        "method": k.method,
        "size": k.size,
        "overlap": k.overlap,
        "chunks": report.n_chunks,
        "expected_chunks": report.expected_chunks,
        "mean_words": report.mean_words,
        "intact": report.intact if supported else None,
        "total": report.total if supported else None,
        "intact_rate": report.intact_rate if supported else None,
        "predicted_intact": report.predicted_intact if supported else None,
    }


def chunking_section(lab: Lab, key: ChunkingKey, split: str) -> dict[str, Any]:
    supported = _passage_split(lab, split)
    keys = [("chosen", key), *(("reference", k) for k in REFERENCE_CHUNKERS)]
    reports = [(role, chunking_report(lab, k, split=split)) for role, k in keys]
    section: dict[str, Any] = {
        "supported": supported,
        "reason": None if supported else _NO_PASSAGES,
        "split": split,
        "chunkers": [_chunker_row(r, role, supported) for role, r in reports],
        "answers": [],
    }
    if supported:
        per_chunker = [{a.id: a for a in r.answers} for _, r in reports]
        section["answers"] = [
            {
                "id": a.id,
                "kind": a.kind,
                "words": a.words,
                "intact": [by_id[a.id].intact for by_id in per_chunker],
                "predicted_cut": [by_id[a.id].predicted_cut for by_id in per_chunker],
            }
            for a in reports[0][1].answers
            if a.split == split
        ]
    return section


def bm25_section(lab: Lab, key: ChunkingKey, split: str) -> dict[str, Any]:
    # The same view the command line and the web lab show (pipeline.exhibits.grid_view).
    view = grid_view(lab, split=split, chunking=key)
    return {
        "chunker": chunker_label(key),
        "tuned_on": view.tuned_on,
        "k": view.k,
        "split": split,
        "k1s": list(view.k1s),
        "bs": list(view.bs),
        "train_recall": [list(row) for row in view.recall],
        # The counts behind the shares: hits of the answerable questions of each split.
        "train_hits": [list(row) for row in view.hits],
        "train_questions": view.questions,
        "split_questions": view.split_questions,
        "tied": len(view.tied),
        "cells": len(view.k1s) * len(view.bs),
        "rule": view.rule,
        "best": {
            "k1": view.best.k1,
            "b": view.best.b,
            "train_recall": view.best.train_recall,
            "split_recall": view.best.split_recall,
            "train_hits": view.best.train_hits,
            "split_hits": view.best.split_hits,
        },
        "default": {
            "k1": view.default.k1,
            "b": view.default.b,
            "train_recall": view.default.train_recall,
            "split_recall": view.default.split_recall,
            "train_hits": view.default.train_hits,
            "split_hits": view.default.split_hits,
        },
    }


def rankers_section(lab: Lab, key: ChunkingKey, split: str) -> dict[str, Any]:
    weight = choose_weight(lab, chunking=key)
    missing = neural_unavailable(lab)
    settings = ranker_settings(RetrievalSettings(chunking=key), weight=weight, neural=not missing)
    table = {name: measure(lab, split, s) for name, s in settings.items()}
    rows = first_rank_rows(lab, split, settings, with_text=False)
    neural = RetrievalSettings("neural-score", chunking=key)
    neural_weight = None if missing else choose_weight(lab, neural)
    return {
        "split": split,
        "chunker": chunker_label(key),
        "k1": default("k1"),
        "b": default("b"),
        "weight": weight,
        "neural_weight": neural_weight,
        "weight_tuned_on": "train",
        "recall_k": RECALL_K,
        "answerable": sum(row["answerable"] for row in rows),
        "table": table,
        "unavailable": missing,
        "questions": rows,
    }


def reranker_section(lab: Lab, settings: RunSettings, lam: float | None) -> dict[str, Any]:
    about = {
        "first_stage": settings.retriever,
        "chunker": chunker_label(settings.chunking),
        "used_by_run": settings.rerank,
        "mmr_used_by_run": settings.mmr,
    }
    try:
        reranker = train_reranker(lab, settings.retrieval)
        chosen = choose_lambda(lab, reranker)
    except ValueError as exc:
        # Too few or one-sided training rows (a tiny corpus): say so, keep the other sections.
        return {
            "supported": False,
            "reason": f"the reranker cannot be trained on this data: {exc}",
            **about,
        }
    shown = lam if lam is not None else chosen
    return {
        "supported": True,
        "reason": None,
        **about,
        "weights": reranker.weights,
        "bias": float(reranker.model.bias),
        "training_rows": reranker.rows,
        "positives": reranker.positives,
        "chosen_lambda": chosen,
        "lambda": shown,
        "tuning": [note.to_dict() for note in lab_tuning(lab, {"mmr_lambda": chosen})],
        "rows": rerank_rows(lab, reranker, shown),
    }


def end_to_end_section(
    lab: Lab, settings: RunSettings, split: str
) -> tuple[dict[str, Any], RunSettings]:
    """The end-to-end section and the settings resolved as far as the data allows (without a
    run, the fusion weight and MMR's lambda are still chosen; the threshold stays TUNED)."""
    if any(q.labels == "pages" for q in lab.questions):
        return {"supported": False, "reason": _PAGES_RUN, "split": split}, _resolved(lab, settings)
    try:
        result = run_pipeline(lab, settings, split=split)
    except ValueError as exc:
        # The settings were checked before (build_report), so this is the data: say so plainly.
        reason = f"the run could not be made: {exc}"
        return {"supported": False, "reason": reason, "split": split}, _resolved(lab, settings)
    flow = funnel(result)
    return {
        "supported": True,
        "reason": None,
        "split": split,
        "accuracy": result.accuracy,
        "correct": result.correct,
        "n": result.n,
        "interval": list(result.interval),
        "answerable": result.answerable,
        "answerable_correct": result.answerable_correct,
        "bound": result.bound,
        "threshold": result.threshold,
        "mmr_lambda": result.mmr_lambda,
        "budget": settings.budget,
        "tuning": [note.to_dict() for note in result.tuning],
        "funnel": dict(result.funnel),
        "stages": flow["stages"],
        "unanswerable": flow["unanswerable"],
        "declined": flow["declined"],
        "false_answers": flow["false_answers"],
        "outcomes": [
            {
                "id": o.id,
                "kind": o.kind,
                "question": o.question,
                "answerable": o.answerable,
                "outcome": o.outcome,
                "rank": o.rank,
                "k_budget": o.k_budget,
                "quote": o.quote,
                "quote_chunk": o.quote_chunk,
                "coverage": o.coverage,
            }
            for o in result.outcomes
        ],
    }, result.resolved


def data_section(lab: Lab, digests: Mapping[str, str]) -> dict[str, Any]:
    labels = {q.labels for q in lab.questions if q.labels != "none"}
    counts = {}
    for split in SPLITS:
        qs = lab.split(split)
        answerable = sum(q.answerable for q in qs)
        counts[split] = {
            "questions": len(qs),
            "answerable": answerable,
            "out_of_corpus": len(qs) - answerable,
        }
    return {
        "corpus": lab.corpus.root,
        "pages": len(lab.corpus),
        "words": lab.corpus.n_words,
        "questions": lab.questions.source,
        "labels": "mixed" if len(labels) > 1 else (labels.pop() if labels else "none"),
        "counts": counts,
        "sha256": dict(digests),
    }


def _resolved(lab: Lab, settings: RunSettings) -> RunSettings:
    try:
        return settings.with_chosen(resolve_read(lab, settings))
    except ValueError:
        # No reranker to choose lambda with (the reranker section says why): the weight alone.
        return settings.with_chosen(resolve(lab, settings.retrieval))


__all__ = [
    "REFERENCE_CHUNKERS",
    "bm25_section",
    "chunker_label",
    "chunking_section",
    "data_section",
    "end_to_end_section",
    "lab_key",
    "rankers_section",
    "reranker_section",
]
