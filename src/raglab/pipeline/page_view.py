"""One page as retrieval sees it: its file, its text and headings, and the answers located on it.

``raglab show PAGE --json`` and the lab's ``GET /api/page/{id}`` give the same object
(:func:`page_view`), so a passage copied from either is the text the chunkers cut and an answer
passage is looked for in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from raglab.corpus.pages import Corpus, Page
from raglab.corpus.questions import QuestionSet

__all__ = ["answers_on", "find_page", "page_view", "relative_path"]


def relative_path(corpus: Corpus, page: Page) -> str:
    """The page's file relative to the corpus folder (its source as given when it is not under
    the folder, or was not read from a file)."""
    try:
        return Path(page.source).relative_to(corpus.root).as_posix()
    except ValueError:
        return page.source


def find_page(corpus: Corpus, wanted: str) -> Page | None:
    """The page whose id is ``wanted``, else the page read from that file (a path relative to
    the corpus folder, or the path it was read from); None when there is none."""
    if wanted in corpus:
        return corpus.page(wanted)
    as_path = Path(wanted).as_posix()
    for page in corpus:
        if as_path in (relative_path(corpus, page), Path(page.source).as_posix()):
            return page
    return None


def answers_on(questions: QuestionSet, page: Page) -> list[dict[str, Any]]:
    """The answer passages located on ``page``: question id, start and end offsets in its text."""
    return [
        {"question": q.id, "start": s.start, "end": s.end}
        for q in questions
        for s in q.spans
        if s.page_id == page.id
    ]


def page_view(corpus: Corpus, questions: QuestionSet, page: Page) -> dict[str, Any]:
    """``page`` as a JSON object: id, title, file (relative to the corpus folder), format (the
    file's suffix), status, update date, the page it supersedes, the front-matter keys RAG lab
    does not use (``meta``: shown, never used), word count, its text after the front matter, its
    headings (heading, level, start, end) and the answer passages located on it
    (:func:`answers_on`)."""
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
        "answers": answers_on(questions, page),
    }
