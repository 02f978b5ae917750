"""The web application: the JSON API, the offline API index at /docs, and the page.

``create_app(lab)`` serves one :class:`~raglab.pipeline.lab.Lab`. Every router is a thin
translator between query parameters and the pipeline's functions; invalid parameters are answered
with 422 and a readable message, unknown paths with 404.
"""

from __future__ import annotations

import html
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from raglab.errors import DataLimit, InputError
from raglab.pipeline.lab import Lab
from raglab.web.encoding import ENCODING_RETRY_S, StillEncoding
from raglab.web.errors import ERROR_RESPONSES
from raglab.web.guard import RequestGuard, allowed_hosts, host_name
from raglab.web.idle import QUIET_S, IdleGate, IdleMiddleware
from raglab.web.routes import (
    bm25,
    chunking,
    end_to_end,
    fusion,
    lsa,
    meta,
    neural,
    page,
    rerank,
)
from raglab.web.state import RETRY_AFTER_S, Busy, WebState

STATIC_DIR = Path(__file__).resolve().parent / "static"
# The API index is this package's own page (no Swagger UI, whose assets would come from a CDN);
# it and every browser asking a server for /favicon.ico get the icon shipped in static/.
FAVICON_URL = "/favicon.ico"

DESCRIPTION = (
    "Every number the RAG lab page shows comes from these routes. Each exhibit has its own "
    "router; parameters are validated, and an invalid one is answered with status 422 and a "
    "message saying what is wrong."
)


def _location(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = [str(p) for p in loc if p not in ("query", "body", "path")]
    return ".".join(parts) or "request"


def _message(error: Mapping[str, Any]) -> str:
    # The schema's pattern \S (at least one non-space character) in words a person reads.
    if (
        error.get("type") == "string_pattern_mismatch"
        and error.get("ctx", {}).get("pattern") == r"\S"
    ):
        return "type a word (whitespace alone is refused)"
    return str(error.get("msg", "invalid value"))


async def _invalid_request(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [{"field": _location(e.get("loc", ())), "message": _message(e)} for e in exc.errors()]
    message = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
    return JSONResponse({"detail": message, "errors": errors}, status_code=422)


async def _value_error(request: Request, exc: Exception) -> JSONResponse:
    if isinstance(exc, InputError | DataLimit):
        # A well-formed request the lab's data cannot serve (no training questions, nothing
        # for the reranker to learn): not the request's fault, so not 422.
        message = (
            "; ".join(str(p) for p in exc.problems) if isinstance(exc, InputError) else str(exc)
        )
        return JSONResponse({"detail": message}, status_code=409)
    return JSONResponse({"detail": str(exc)}, status_code=422)


async def _busy(request: Request, exc: Exception) -> JSONResponse:
    return JSONResponse(
        {"detail": f"the lab is busy ({exc}); try again shortly"},
        status_code=503,
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


async def _encoding(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StillEncoding)
    return JSONResponse(
        {"detail": str(exc), "encoding": exc.progress},
        status_code=202,
        headers={"Retry-After": str(ENCODING_RETRY_S)},
    )


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    return JSONResponse(
        {"detail": f"the lab could not answer this request ({type(exc).__name__})"},
        status_code=500,
    )


def _docs_page(schema: dict[str, Any]) -> str:
    """The API index: every route with its parameters, read from the OpenAPI schema."""
    rows = []
    for path, methods in sorted(schema.get("paths", {}).items()):
        for method, op in methods.items():
            params = []
            for p in op.get("parameters", []):
                s = p.get("schema", {})
                kind = s.get("type") or " or ".join(
                    str(a.get("type", "")) for a in s.get("anyOf", []) if a.get("type") != "null"
                )
                limits = [
                    f"{label} {s[key]}"
                    for key, label in (
                        ("minimum", "≥"),
                        ("maximum", "≤"),
                        ("minLength", "length ≥"),
                        ("maxLength", "length ≤"),
                    )
                    if key in s
                ]
                if "enum" in s:
                    limits.append("one of " + ", ".join(map(str, s["enum"])))
                extra = f" ({', '.join(limits)})" if limits else ""
                need = "required" if p.get("required") else "optional"
                params.append(
                    f"<li><code>{html.escape(p['name'])}</code> in {p['in']}, "
                    f"{html.escape(kind)}, {need}{html.escape(extra)}</li>"
                )
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
            if body:
                ref = body.get("schema", {}).get("$ref", "")
                params.append(
                    f"<li>JSON body: <code>{html.escape(ref.rsplit('/', 1)[-1])}</code> "
                    "(fields in the schema)</li>"
                )
            rows.append(
                f"<section><h2><code>{method.upper()} {html.escape(path)}</code></h2>"
                f"<p>{html.escape(op.get('summary', ''))}</p>"
                f"<p>{html.escape(op.get('description', '') or '')}</p>"
                f"<ul>{''.join(params) or '<li>no parameters</li>'}</ul></section>"
            )
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        "<title>RAG lab API</title>"
        f"<link rel='icon' href='{FAVICON_URL}' sizes='16x16 32x32'>"
        "<link rel='icon' href='/static/favicon.svg' type='image/svg+xml'>"
        "<link rel='stylesheet' href='/static/styles.css'></head>"
        "<body class='docs'><main><h1>RAG lab API</h1>"
        f"<p>{html.escape(DESCRIPTION)} The machine-readable schema is at "
        "<a href='/openapi.json'>/openapi.json</a>; the lab itself is at <a href='/'>/</a>.</p>"
        f"{''.join(rows)}</main></body></html>"
    )


def _run_later(state: WebState, tasks: Sequence[Callable[[], object]]) -> None:
    try:
        for task in tasks:
            # One at a time, each once the server is idle and under the lock, so a request
            # waits at most for the task in progress and then finds its result cached. A task
            # the data cannot support raises ValueError; the request that needs it will say why.
            state.idle.wait()
            if state.closing.is_set():
                return
            with state.lock, suppress(ValueError):
                task()
        # Then the default end-to-end run, on the runs' own lab under its own lock.
        state.idle.wait()
        if state.closing.is_set():
            return
        with suppress(ValueError):
            end_to_end.warm_run(state)
    finally:
        state.later_done.set()


def _when_ready(state: WebState, tasks: Sequence[Callable[[], object]]) -> None:
    """Once the neural vectors are ready: build what needs them (the neural panel, exhibit IV's
    neural rows), one task at a time, each once the server is idle and under the lock, as
    :func:`_run_later` does."""
    for task in tasks:
        state.idle.wait()
        if state.closing.is_set():
            return
        with state.lock, suppress(ValueError):
            task()


def create_app(
    lab: Lab,
    *,
    warm_ms: dict[str, float] | None = None,
    later: Sequence[Callable[[], object]] = (),
    when_ready: Sequence[Callable[[], object]] = (),
    quiet: float = QUIET_S,
    hosts: Iterable[str] | None = None,
) -> FastAPI:
    """The web lab over ``lab``.

    ``hosts``: the host names to answer (default :func:`~raglab.web.guard.allowed_hosts`, the
    loopback names); a request naming another host in ``Host`` gets 400, and a state-changing
    request whose ``Origin`` names another site gets 403 (:mod:`raglab.web.guard`).

    ``warm_ms``: timings of the warm start, shown in /api/meta. ``later``: work to do in a
    background thread once the server has started (under the lab's lock, one task at a time,
    each only after no request has been in flight for ``quiet`` seconds). The neural vectors
    are encoded from the server's start in a thread of their own (:mod:`raglab.web.encoding`);
    ``when_ready``: work needing them, done the same way once they are ready.
    """
    state = WebState(lab, dict(warm_ms or {}), idle=IdleGate(quiet))
    if when_ready:
        tasks = list(when_ready)
        state.encoding.on_ready = lambda: _when_ready(state, tasks)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # From the start, outside the lab's lock: the server answers at once meanwhile.
        starting = threading.Thread(
            target=state.encoding.start, name="raglab-neural-start", daemon=True
        )
        starting.start()
        if later:
            threading.Thread(target=_run_later, args=(state, list(later)), daemon=True).start()
        else:
            state.later_done.set()
        try:
            yield
        finally:
            # No further background task starts from now; the start only looks the cache up
            # (seconds at most), and once it has returned no encoding thread can begin after
            # close() has ended the one running.
            state.closing.set()
            starting.join()
            state.close()

    app = FastAPI(
        title="RAG lab",
        description=DESCRIPTION,
        version="0.1.0",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.raglab = state
    app.add_middleware(IdleMiddleware, gate=state.idle)
    # Added last, so it runs first: a refused request never counts as the server being busy.
    app.add_middleware(
        RequestGuard,
        hosts=frozenset(map(host_name, hosts)) if hosts is not None else allowed_hosts(),
    )
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(ValueError, _value_error)
    app.add_exception_handler(Busy, _busy)
    app.add_exception_handler(StillEncoding, _encoding)
    app.add_exception_handler(Exception, _unexpected)
    for module in (meta, page, chunking, bm25, lsa, neural, fusion, rerank, end_to_end):
        app.include_router(module.router, prefix="/api", responses=ERROR_RESPONSES)

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(_docs_page(app.openapi()))

    @app.get(FAVICON_URL, include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(
            STATIC_DIR / "favicon.ico",
            media_type="image/x-icon",
            headers={"Cache-Control": "public, max-age=86400"},
        )

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app
