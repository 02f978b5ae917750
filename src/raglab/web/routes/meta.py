"""The data summary, the defaults and the labelled questions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, Response

from raglab.corpus.pages import bundled_handbook_dir
from raglab.corpus.questions import SPLITS
from raglab.labels import (
    CHUNKER_LABELS,
    EXHIBIT_LABELS,
    FEATURE_LABELS,
    RETRIEVER_LABELS,
    SIZE_SLIDERS,
)
from raglab.pipeline.fingerprint import data_fingerprint
from raglab.settings import (
    CHUNK_SIZES,
    FIXED_OVERLAP,
    FUSION_WEIGHTS,
    GRID_B,
    GRID_K1,
    GRID_RECALL_K,
    LSA_OVERSAMPLE,
    LSA_POWER_ITERATIONS,
    LSA_RANK,
    LSA_WINDOW_WORDS,
    LSA_WINDOWS,
    MMR_DEPTH,
    MMR_LAMBDAS,
    NDCG_K,
    NEURAL_RETRIEVERS,
    READER_THRESHOLDS,
    RECALL_KS,
    RERANK_DEPTH,
    RERANK_L2,
    RETRIEVERS,
    RRF_K,
    SCORE_FUSIONS,
    SEED,
    SETTINGS,
    default,
)
from raglab.web.state import State, WebState

router = APIRouter(tags=["data"])


def _defaults() -> dict[str, Any]:
    return {
        "seed": SEED,
        "fixed_size": CHUNK_SIZES["fixed"],
        "fixed_overlap": FIXED_OVERLAP,
        "sentence_size": CHUNK_SIZES["sentence"],
        "heading_max_words": CHUNK_SIZES["heading"],
        "bm25_k1": default("k1"),
        "bm25_b": default("b"),
        "grid_k1": list(GRID_K1),
        "grid_b": list(GRID_B),
        "grid_recall_k": GRID_RECALL_K,
        "lsa_rank": LSA_RANK,
        "lsa_windows": LSA_WINDOWS,
        "lsa_window_words": LSA_WINDOW_WORDS,
        "lsa_oversample": LSA_OVERSAMPLE,
        "lsa_power_iterations": LSA_POWER_ITERATIONS,
        "rrf_k": RRF_K,
        "fusion_depth": default("fusion_depth"),
        "fusion_weights": list(FUSION_WEIGHTS),
        "recall_ks": list(RECALL_KS),
        "ndcg_k": NDCG_K,
        "rerank_depth": RERANK_DEPTH,
        "rerank_l2": RERANK_L2,
        "mmr_lambdas": list(MMR_LAMBDAS),
        "mmr_depth": MMR_DEPTH,
        "budget_words": default("budget"),
        "reader_thresholds": list(READER_THRESHOLDS),
        "retrieval_chunker": default("chunker"),
        "retrievers": list(RETRIEVERS),
        "neural_retrievers": list(NEURAL_RETRIEVERS),
        "score_fusions": list(SCORE_FUSIONS),
        "size_sliders": {
            method: {"label": label, "min": lo, "max": hi, "step": step}
            for method, (label, (lo, hi, step)) in SIZE_SLIDERS.items()
        },
        "default_retriever": default("retriever"),
    }


@router.get(
    "/meta",
    summary="The corpus, the questions, every setting and every default",
    response_model=dict[str, Any],
)
async def get_meta(state: State) -> Response:
    # Every page load and poll asks for this, so it is answered from bytes encoded once, on the
    # event loop: no thread-pool hop, no hashing of the corpus files per request (the data
    # fingerprint reads every page), nothing to wait for while a computation holds the lab.
    if state.meta_body is None:
        state.meta_body = bytes(JSONResponse(meta(state)).body)
    return Response(state.meta_body, media_type="application/json")


def meta(state: WebState) -> dict[str, Any]:
    """``/api/meta``'s answer: the data's summary, every setting, label and default."""
    lab = state.lab
    qs = list(lab.questions)
    labels = {name: sum(q.labels == name for q in qs) for name in ("passage", "pages", "none")}
    return {
        "bundled": str(lab.corpus.root) == str(bundled_handbook_dir()),
        # The folder's name only: the page needs no more, and a full path says too much.
        "corpus": {
            "pages": len(lab.corpus),
            "words": lab.corpus.n_words,
            "name": Path(str(lab.corpus.root)).name,
        },
        "questions": {
            "total": len(qs),
            "labels": labels,
            "splits": {
                name: {
                    "total": len(lab.split(name)),
                    "answerable": len(lab.split(name, answerable=True)),
                }
                for name in SPLITS
            },
            "kinds": sorted({q.kind for q in qs}),
            "warnings": [str(w) for w in lab.questions.warnings],
        },
        "stem": lab.stem,
        "analyzer": lab.analyzer,
        "settings": [s.to_json() for s in SETTINGS],
        "labels": {
            "retrievers": dict(RETRIEVER_LABELS),
            "features": dict(FEATURE_LABELS),
            "chunkers": dict(CHUNKER_LABELS),
            # In the page's order: its navigation and closing note name the exhibits by these.
            "exhibits": dict(EXHIBIT_LABELS),
        },
        "defaults": _defaults(),
        # The data's one fingerprint (the same as a report's corpus and questions digests give),
        # shortened: the page keeps its progress per corpus under it.
        "fingerprint": data_fingerprint(lab)[:16],
        "warm_ms": state.warm_ms,
    }


@router.get("/questions", summary="The labelled questions, in file order")
def get_questions(
    state: State,
    split: Annotated[Literal["all", "train", "test"], Query(description="a split, or all")] = "all",
) -> dict[str, Any]:
    rows = []
    for q in state.lab.questions:
        if split != "all" and q.split != split:
            continue
        rows.append(
            {
                "id": q.id,
                "split": q.split,
                "kind": q.kind,
                "question": q.question,
                "answer": q.answer,
                "answerable": q.answerable,
                "labels": q.labels,
                "words": q.answer_words,
                "page": q.spans[0].page_id if q.spans else None,
                "pages": dict(q.pages) if q.pages else None,
            }
        )
    return {"split": split, "questions": rows}
