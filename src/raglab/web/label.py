"""The labelling app: search and read the pages, and write labelled questions to a JSON Lines file.

``create_label_app(corpus, path)`` serves ``/`` (the labelling page, ``static/label.html``) and
``/api/label/...``: ``meta`` (kinds and splits), ``pages?q=`` (BM25 over the pages), ``page/{id}``
(its title and text, the text every chunker cuts), and ``questions`` (GET the list and the counts
per split and kind; POST a new one; PUT and DELETE ``questions/{id}``; a question labelled by
relevant pages is edited with its ``pages`` list). A write checks the whole
resulting file as ``raglab validate`` does and replaces it atomically
(:func:`raglab.corpus.labelling.save_records`); a refused write is answered 422 with the checks'
message and leaves the file untouched, and a file that cannot be written (its folder gone, a full
disk) is 500 with one line saying why. Requests pass :class:`~raglab.web.guard.RequestGuard`
(host names, origins, sizes) first, as the lab's do.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Query
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from raglab.corpus.labelling import (
    NO_ANSWER_KIND,
    Record,
    check_records,
    counts,
    make_record,
    next_id,
    problem_text,
    read_records,
    save_records,
)
from raglab.corpus.pages import Corpus
from raglab.corpus.questions import BUNDLED_KINDS, SPLITS
from raglab.errors import InputError, OutputError
from raglab.pipeline.page_search import PageSearch
from raglab.web.app import FAVICON_URL, STATIC_DIR, _invalid_request
from raglab.web.guard import RequestGuard, allowed_hosts, host_name

#: The most pages one search answers with.
SEARCH_LIMIT = 50


class QuestionIn(BaseModel):
    """A question as the page sends it: ``page`` with ``start`` and ``end`` (character offsets
    into the page's text, code points) is its answer passage; ``pages`` its relevant pages
    instead (a list of ids, or ids to grades); neither means the documents cannot answer it."""

    id: str | None = Field(default=None, min_length=1, max_length=200)
    question: str = Field(min_length=1, max_length=4000)
    kind: str = Field(min_length=1, max_length=100)
    split: str | None = None
    page: str | None = None
    start: int | None = Field(default=None, ge=0)
    end: int | None = Field(default=None, ge=0)
    pages: list[str] | dict[str, int] | None = None


class LabelState:
    """The corpus, its page search, the questions file and its records (kept in step with the
    file under ``lock``: a record list is replaced only once the file holding it is written)."""

    def __init__(self, corpus: Corpus, path: Path) -> None:
        self.corpus = corpus
        self.path = path
        self.search = PageSearch(corpus)
        self.records: list[Record] = read_records(path, corpus)
        self.located = self._locate(self.records)
        self.lock = threading.Lock()

    def _locate(self, records: list[Record]) -> dict[str, dict[str, Any]]:
        """Where each answer passage lies (the occurrence ``page`` and ``start`` name, else the
        first found: a file made by hand), so the page shows it selected for an edit."""
        found = check_records(records, self.corpus, str(self.path))
        if found is None:
            return {}
        return {
            q.id: {"page": q.spans[0].page_id, "start": q.spans[0].start, "end": q.spans[0].end}
            for q in found
            if q.spans
        }

    def listing(self) -> dict[str, Any]:
        return {
            "file": str(self.path),
            "questions": self.records,
            "located": self.located,
            "counts": counts(self.records),
            "total": len(self.records),
        }

    def record(self, body: QuestionIn, question_id: str) -> Record:
        if body.split is not None and body.split not in SPLITS:
            raise HTTPException(422, f"split: must be one of {', '.join(SPLITS)}")
        try:
            return make_record(
                self.corpus,
                question_id=question_id,
                question=body.question,
                kind=body.kind,
                split=body.split,
                page=body.page,
                start=body.start,
                end=body.end,
                pages=body.pages,
            )
        except ValueError as exc:
            raise HTTPException(422, str(exc)) from None

    def save(self, records: list[Record]) -> None:
        try:
            save_records(self.path, records, self.corpus)
        except OutputError as exc:  # the file cannot be written: not the question's fault
            raise HTTPException(500, problem_text(exc)) from None
        except InputError as exc:
            raise HTTPException(422, problem_text(exc)) from None
        self.records = records
        self.located = self._locate(records)

    def position(self, question_id: str) -> int:
        for i, r in enumerate(self.records):
            if r.get("id") == question_id:
                return i
        raise HTTPException(404, f"no question with id {question_id!r}")


def create_label_app(
    corpus: Corpus, path: str | Path, *, hosts: Iterable[str] | None = None
) -> FastAPI:
    """The labelling app over ``corpus``, writing ``path`` (which need not exist yet);
    :class:`InputError` when the existing file does not pass the checks. ``hosts``: the host
    names to answer (default: the loopback names)."""
    state = LabelState(corpus, Path(path))
    app = FastAPI(title="RAG lab labelling", docs_url=None, redoc_url=None)
    app.state.label = state
    app.add_middleware(
        RequestGuard,
        hosts=frozenset(map(host_name, hosts)) if hosts is not None else allowed_hosts(),
    )
    app.add_exception_handler(RequestValidationError, _invalid_request)

    @app.get("/api/label/meta", summary="Kinds and splits to choose from, and the file written")
    def label_meta() -> dict[str, Any]:
        return {
            "kinds": list(BUNDLED_KINDS),
            "no_answer_kind": NO_ANSWER_KIND,
            "splits": list(SPLITS),
            "file": str(state.path),
            "corpus": corpus.root,
            "pages": len(corpus),
        }

    @app.get("/api/label/pages", summary="Pages matching a query, best first (BM25)")
    def label_pages(q: str = Query(default="", max_length=1000)) -> dict[str, Any]:
        hits = state.search.search(q, SEARCH_LIMIT)
        return {
            "query": q,
            "pages": [{"id": h.page_id, "title": h.title, "score": h.score} for h in hits],
        }

    @app.get("/api/label/page/{page_id:path}", summary="A page's title and text")
    def label_page(page_id: str) -> dict[str, Any]:
        if page_id not in corpus:
            raise HTTPException(404, f"no page with id {page_id!r}")
        page = corpus.page(page_id)
        return {"id": page.id, "title": page.title, "text": page.text}

    @app.get("/api/label/questions", summary="The labelled questions and counts per split and kind")
    def label_questions() -> dict[str, Any]:
        with state.lock:
            return state.listing()

    @app.post("/api/label/questions", status_code=201, summary="Add a question")
    def add_question(body: QuestionIn) -> dict[str, Any]:
        with state.lock:
            record = state.record(body, body.id or next_id(state.records))
            state.save([*state.records, record])
            return {"question": record, **state.listing()}

    @app.put("/api/label/questions/{question_id}", summary="Replace a question")
    def edit_question(question_id: str, body: QuestionIn) -> dict[str, Any]:
        with state.lock:
            at = state.position(question_id)
            record = state.record(body, body.id or question_id)
            state.save([*state.records[:at], record, *state.records[at + 1 :]])
            return {"question": record, **state.listing()}

    @app.delete("/api/label/questions/{question_id}", summary="Delete a question")
    def delete_question(question_id: str) -> dict[str, Any]:
        with state.lock:
            at = state.position(question_id)
            state.save([*state.records[:at], *state.records[at + 1 :]])
            return state.listing()

    @app.get(FAVICON_URL, include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(STATIC_DIR / "favicon.ico", media_type="image/x-icon")

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "label.html", headers={"Cache-Control": "no-cache"})

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app
