"""Exhibit IV's views: each question's first answer rank per ranker, three lists.

Exhibit IV: :func:`question_grid` (each question's first answer rank under BM25, LSA and a
fusion) and :func:`three_lists`.
"""

from __future__ import annotations

from typing import Any

from raglab.metrics.measures import first_relevant_rank
from raglab.pipeline.exhibits._shared import question
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import first_rank_rows, rank, ranked_chunks
from raglab.run_settings import RetrievalSettings


def fusion_settings(method: str, weight: float) -> RetrievalSettings:
    """The fused ranker of exhibit IV: ``rrf`` or ``score`` at ``weight``."""
    if method not in ("rrf", "score"):
        raise ValueError(f"fusion must be rrf or score; not {method!r}")
    return RetrievalSettings(method, weight=weight)


def question_grid(lab: Lab, fused: RetrievalSettings, *, split: str = "test") -> dict[str, Any]:
    """Every question of ``split`` with the first answer rank under BM25, LSA and ``fused``.

    Ranks come from :func:`~raglab.pipeline.retrieval.first_ranks` (None: not ranked);
    out-of-corpus questions are listed with no ranks.
    """
    rankers = {
        "bm25": RetrievalSettings("bm25"),
        "lsa": RetrievalSettings("lsa"),
        "fusion": fused,
    }
    rows = first_rank_rows(lab, split, rankers)
    return {"split": split, "questions": rows}


def three_lists(
    lab: Lab, question_id: str, fused: RetrievalSettings, *, top: int = 5
) -> dict[str, Any]:
    """One question's first ``top`` chunks under BM25, LSA and ``fused``, answers marked."""
    q = question(lab, question_id)
    cs = lab.indexes.chunk_set()
    rel = cs.relevance(q)
    lists = {}
    for name, s in (
        ("bm25", RetrievalSettings("bm25")),
        ("lsa", RetrievalSettings("lsa")),
        ("fusion", fused),
    ):
        ranking = rank(lab, q, s)
        rows = ranked_chunks(lab, ranking, k=top)
        for row in rows:
            row["relevant"] = int(row["index"]) in rel
        lists[name] = {"rows": rows, "first": first_relevant_rank(ranking, rel) if rel else None}
    return {
        "id": q.id,
        "question": q.question,
        "answer": q.answer,
        "answerable": q.answerable,
        "lists": lists,
    }
