"""One page's text exactly as the chunkers see it, as ``raglab show PAGE`` prints it."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException

from raglab.pipeline.page_view import page_view
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
    return page_view(corpus, state.lab.questions, corpus.page(page_id))
