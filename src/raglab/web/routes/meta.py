"""The data summary, the settings table and the labelled questions."""

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
    TEST_FIGURE_LABELS,
)
from raglab.pipeline.fingerprint import data_fingerprint
from raglab.settings import FIXED, SETTINGS
from raglab.web.state import State, WebState

router = APIRouter(tags=["data"])


@router.get(
    "/meta",
    summary="The corpus, the questions and the settings table (every setting and fixed value)",
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
    """``/api/meta``'s answer: the data's summary, the settings table and the labels.

    Every default the page shows or starts from is in ``settings`` (the user's settings,
    :data:`raglab.settings.SETTINGS`) or ``fixed`` (the values a user does not choose,
    :data:`raglab.settings.FIXED`): the page has no default of its own."""
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
            # What reading the folder found (a page in a detected encoding, a file skipped, an
            # empty page, keys kept as metadata), as `raglab validate` words each.
            "warnings": [str(w) for w in lab.corpus.warnings],
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
        "fixed": [f.to_json() for f in FIXED],
        "labels": {
            "retrievers": dict(RETRIEVER_LABELS),
            "features": dict(FEATURE_LABELS),
            "chunkers": dict(CHUNKER_LABELS),
            # In the page's order: its navigation and closing note name the exhibits by these.
            "exhibits": dict(EXHIBIT_LABELS),
            # A test figure's two labels (design.md, "Test figures"), the report's too.
            "test_figures": {
                "chosen": TEST_FIGURE_LABELS[True],
                "not_chosen": TEST_FIGURE_LABELS[False],
            },
            # Each chunker's size slider: its label and span (its start is the chunker's own
            # size, in ``fixed``'s chunk_sizes).
            "size_sliders": {
                method: {"label": label, "min": lo, "max": hi, "step": step}
                for method, (label, (lo, hi, step)) in SIZE_SLIDERS.items()
            },
        },
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
