"""One page's text exactly as the chunkers see it, as ``raglab show PAGE`` prints it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException

from raglab.cli.show import answers_on, relative_path
from raglab.web.guard import shorten
from raglab.web.state import State

router = APIRouter(tags=["data"])


@router.get(
    "/page/{page_id:path}",
    summary="A page's text as retrieval sees it, with the answer passages located on it",
)
def get_page(state: State, page_id: str) -> dict[str, Any]:
    """The page ``page_id`` (URL-encoded: an id may hold ``/``, ``#``, ``?``): its id, title,
    file (relative to the corpus folder), format (the file's suffix), status, update date,
    the page it supersedes, the front-matter keys RAG lab does not use (``meta``, shown, never
    used), its text after the front matter (what the chunkers cut and an answer passage is
    looked for in), its headings, and each labelled question's answer passage located on it
    (``answers``: question id, start and end offsets in ``text``, as ``raglab show`` lists
    them). 404 for an id the corpus does not hold."""
    corpus = state.lab.corpus
    if page_id not in corpus:
        raise HTTPException(404, f"no page with id {shorten(page_id)!r} in the corpus")
    page = corpus.page(page_id)
    suffix = Path(page.source).suffix.lstrip(".").lower()
    return {
        "id": page.id,
        "title": page.title,
        "path": relative_path(corpus, page),
        "format": suffix or None,
        "status": page.status,
        "updated": page.updated.isoformat() if page.updated else None,
        "supersedes": page.supersedes,
        "meta": dict(page.meta),
        "words": page.n_words,
        "text": page.text,
        "headings": [
            {"heading": s.heading, "level": s.level, "start": s.start, "end": s.end}
            for s in page.sections
        ],
        "answers": answers_on(state.lab.questions, page),
    }
