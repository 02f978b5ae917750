"""The server's warm start: the first page answers from what ``warm`` built, and what is left to
the background (``warm_later``) answers with the same numbers whenever it is asked for: before
its task has run, while the task is running, or after.

Requests go through the app in-process (httpx's ASGITransport); the app's lifespan is entered by
hand, which is what starts the background thread in ``raglab serve``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import httpx
import pytest

from raglab.pipeline.cache import BoundedCache
from raglab.pipeline.exhibits.chunking import intact_curve
from raglab.pipeline.lab import Lab
from raglab.web.app import create_app
from raglab.web.idle import IdleGate
from raglab.web.state import WebState, plain
from raglab.web.warm import vectors_cached, warm, warm_later
from tests.web.client import served

# What the page asks for as it opens (app.js and each exhibit's init), at the defaults: every
# GET route of the API with its required parameters filled in.
FIRST_PAGE: list[tuple[str, dict[str, Any]]] = [
    ("/api/meta", {}),
    ("/api/questions", {}),
    ("/api/chunking", {"method": "fixed", "size": 200, "overlap": 0}),
    ("/api/chunking/curve", {"overlap": 0}),
    ("/api/chunking/answer/{test}", {"method": "fixed", "size": 200, "overlap": 0}),
    ("/api/bm25/examples", {}),
    ("/api/bm25/grid", {}),
    ("/api/bm25/recall", {}),
    ("/api/bm25/search", {"q": "{question}"}),
    ("/api/lsa", {}),
    ("/api/lsa/twins", {}),
    ("/api/lsa/neighbours", {"word": "mount"}),
    ("/api/lsa/search", {"q": "{question}"}),
    ("/api/fusion/table", {}),
    ("/api/fusion/grid", {}),
    ("/api/fusion/lists/{test}", {}),
    ("/api/rerank/table", {}),
    ("/api/rerank/version", {}),
]

# What the background builds, asked for by requests: other chunkers, overlaps and lambdas, and
# the end-to-end run.
LATER: list[tuple[str, str, dict[str, Any]]] = [
    ("GET", "/api/chunking", {"method": "sentence"}),
    ("GET", "/api/chunking", {"method": "heading"}),
    ("GET", "/api/chunking/curve", {"overlap": 35}),
    ("GET", "/api/chunking/curve", {"overlap": 100}),
    ("GET", "/api/rerank/table", {"lam": 0.6}),
    ("GET", "/api/rerank/table", {"lam": 1.0}),
    ("POST", "/api/run", {}),
    ("GET", "/api/chunking/curve", {"overlap": 5}),
]


def _filled(lab: Lab, path: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    q = lab.split("test", answerable=True)[0]
    values = {"test": q.id, "question": q.question}
    return path.format(**values), {k: str(v).format(**values) for k, v in params.items()}


def _count_builds(lab: Lab) -> list[Hashable]:
    """Every key the lab's result caches build from now on (a hit builds nothing)."""
    built: list[Hashable] = []

    def spy(cache: BoundedCache[Hashable, object]) -> None:
        get = cache.get

        def counted(key: Hashable, build: Callable[[], object]) -> object:
            def recorded() -> object:
                built.append(key)
                return build()

            return get(key, recorded)

        cache.get = counted  # type: ignore[method-assign]

    of = lab.caches.of
    spied: set[int] = set()

    def spied_of(kind: Any) -> Any:
        cache = of(kind)
        if id(cache) not in spied:
            spied.add(id(cache))
            spy(cache)
        return cache

    lab.caches.of = spied_of  # type: ignore[method-assign]
    return built


async def _request(client: httpx.AsyncClient, method: str, path: str, params: Any) -> Any:
    if method == "GET":
        response = await client.get(path, params=params)
    else:
        response = await client.post(path, json=params)
    assert response.status_code == 200, (path, response.text)
    return response.json()


def _client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000"
    )


@pytest.fixture(scope="module")
def fully_warmed() -> dict[str, Any]:
    """The LATER answers of a lab warmed completely before serving: the expected numbers."""
    lab = Lab.load()
    warm(lab)
    for task in warm_later(lab):
        task()
    app = served(create_app(lab))

    async def ask() -> dict[str, Any]:
        async with _client(app) as client:
            return {
                f"{method} {path} {params}": await _request(client, method, path, params)
                for method, path, params in LATER
            }

    return asyncio.run(ask())


def test_warm_builds_everything_the_first_page_reads() -> None:
    """After warm() alone, the first page's requests find every result the lab caches already
    built: none of them computes a ranking, a model or a table."""
    lab = Lab.load()
    warm(lab)
    built = _count_builds(lab)
    app = served(create_app(lab))

    async def first_page() -> None:
        async with _client(app) as client:
            for path, params in FIRST_PAGE:
                await _request(client, "GET", *_filled(lab, path, params))

    asyncio.run(first_page())
    assert built == []


def test_warm_needs_no_neural_vector(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On an empty cache the warm start encodes nothing (the server encodes in the background,
    raglab.web.encoding): every step runs, and no vector file is written."""
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(tmp_path))
    lab = Lab.load()
    timings = warm(lab)
    assert timings and all(ms >= 0 for ms in timings.values())
    assert not list(tmp_path.rglob("*.npy"))
    assert not vectors_cached(lab)


def test_requests_during_background_warming_answer_as_after_it(
    fully_warmed: dict[str, Any],
) -> None:
    """The background starts at once (no quiet period) while the requests arrive, so each is
    answered before, during or after its task: with the same numbers every time."""
    lab = Lab.load()
    warm(lab)
    app = served(create_app(lab, later=warm_later(lab), quiet=0.0))
    state = app.state.raglab
    assert isinstance(state, WebState)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with app.router.lifespan_context(app), _client(app) as client:
            during = {
                f"{method} {path} {params}": await _request(client, method, path, params)
                for method, path, params in LATER
            }
            assert await asyncio.to_thread(state.later_done.wait, 60)
            after = {
                f"{method} {path} {params}": await _request(client, method, path, params)
                for method, path, params in LATER
            }
        return during, after

    during, after = asyncio.run(scenario())
    assert during == fully_warmed
    assert after == fully_warmed


def test_a_request_waits_for_the_task_in_progress_instead_of_building_it_again() -> None:
    """A request for a result the background is building waits for that task (which holds the
    lab's lock) and then reads its result: the curve is built once, not twice."""
    lab = Lab.load()
    warm(lab)
    expected = plain(intact_curve(Lab.load(), overlap=50))
    built = _count_builds(lab)
    started, release = threading.Event(), threading.Event()

    def slow_curve() -> None:
        started.set()
        assert release.wait(30)
        intact_curve(lab, overlap=50)

    app = served(create_app(lab, later=[slow_curve], quiet=0.0))

    async def scenario() -> Any:
        async with app.router.lifespan_context(app), _client(app) as client:
            assert await asyncio.to_thread(started.wait, 30)
            pending = asyncio.ensure_future(
                _request(client, "GET", "/api/chunking/curve", {"overlap": 50})
            )
            await asyncio.sleep(0.3)
            assert not pending.done()  # held up by the task in progress
            release.set()
            return await pending

    assert asyncio.run(scenario()) == expected
    assert built.count((50, "test")) == 1  # INTACT_CURVES is keyed by (overlap, split)


def test_background_work_waits_until_the_server_is_quiet() -> None:
    """With no request in flight the gate opens ``quiet`` seconds after the last one ended; while
    a request is in flight it stays shut however long it lasts."""
    now = [100.0]
    gate = IdleGate(quiet=0.25, clock=lambda: now[0])
    assert not gate.idle()  # a server that has just started gets a quiet period too
    now[0] += 0.3
    assert gate.idle()
    gate.enter()
    now[0] += 10.0
    assert not gate.idle() and gate.active == 1
    gate.leave()
    assert not gate.idle() and gate.active == 0
    now[0] += 0.2
    assert not gate.idle()
    now[0] += 0.1
    assert gate.idle()


def test_waiting_for_a_quiet_server_returns_once_the_last_request_has_ended() -> None:
    gate = IdleGate(quiet=0.05)
    gate.enter()
    opened = threading.Event()
    waiter = threading.Thread(target=lambda: (gate.wait(), opened.set()), daemon=True)
    waiter.start()
    time.sleep(0.2)
    assert not opened.is_set()  # a request is still in flight
    left = time.monotonic()
    gate.leave()
    assert opened.wait(5)
    assert time.monotonic() - left >= 0.04
    waiter.join(5)


def test_the_gate_counts_every_http_request_the_app_serves() -> None:
    lab = Lab.load()
    app = served(create_app(lab))
    state = app.state.raglab
    assert isinstance(state, WebState)
    seen: list[int] = []
    original = state.idle.enter

    def enter() -> None:
        original()
        seen.append(state.idle.active)

    state.idle.enter = enter  # type: ignore[method-assign]

    async def ask() -> None:
        async with _client(app) as client:
            for path in ("/", "/api/meta", "/docs", "/api/nowhere"):
                await client.get(path)

    asyncio.run(ask())
    assert seen == [1, 1, 1, 1]
    assert state.idle.active == 0
