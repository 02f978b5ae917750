"""WebState: one computation per setting, cached answers that never wait, a bounded queue.

Oracles: counts and orderings made certain with events (never timings): a build that blocks
until released shows what waits for it and what does not.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from raglab.pipeline.lab import Lab
from raglab.web.state import Busy, WebState


@pytest.fixture
def state(lab: Lab) -> WebState:
    return WebState(lab, max_waiting=4)


def test_the_same_setting_is_computed_once_for_every_caller(state: WebState) -> None:
    release = threading.Event()
    started = threading.Event()
    calls: list[int] = []

    def build() -> list[int]:
        calls.append(1)
        started.set()
        release.wait(30)
        return [42]

    with ThreadPoolExecutor(4) as pool:
        first = pool.submit(state.compute, "k", build)
        assert started.wait(30)
        others = [pool.submit(state.compute, "k", build) for _ in range(3)]
        release.set()
        results = [first.result(30), *(f.result(30) for f in others)]
    assert calls == [1]
    assert all(r is results[0] for r in results) and results[0] == [42]
    assert state.compute("k", lambda: [0]) is results[0]  # cached now


def test_a_cached_answer_does_not_wait_for_a_computation(state: WebState) -> None:
    state.compute("cached", lambda: "ready")
    release = threading.Event()
    started = threading.Event()

    def slow() -> str:
        started.set()
        release.wait(30)
        return "slow"

    with ThreadPoolExecutor(2) as pool:
        busy = pool.submit(state.compute, "slow", slow)
        assert started.wait(30)
        # The lab's lock is held by the slow build; the cached answer comes back regardless.
        assert pool.submit(state.compute, "cached", slow).result(30) == "ready"
        assert not busy.done()
        release.set()
        assert busy.result(30) == "slow"


def test_too_many_waiting_requests_are_refused_and_a_failure_reaches_every_waiter(
    state: WebState,
) -> None:
    release = threading.Event()
    started = threading.Event()

    def slow(tag: str) -> Any:
        def build() -> str:
            started.set()
            release.wait(30)
            return tag

        return build

    with ThreadPoolExecutor(8) as pool:
        held = [pool.submit(state.compute, f"k{i}", slow(f"v{i}")) for i in range(4)]
        assert started.wait(30)
        while state._waiting < 4:  # the three others queue behind the lock
            threading.Event().wait(0.01)
        with pytest.raises(Busy, match="4 requests are waiting"):
            state.compute("k9", slow("v9"))
        with pytest.raises(Busy):
            state.call(lambda: None)
        release.set()
        assert [f.result(30) for f in held] == ["v0", "v1", "v2", "v3"]
    assert state._waiting == 0 and not state._in_flight

    def broken() -> None:
        raise ValueError("no such setting")

    with pytest.raises(ValueError, match="no such setting"):
        state.compute("bad", broken)
    assert not state._in_flight  # a failure is not cached: the next caller tries again
    assert state.compute("bad", lambda: "fixed") == "fixed"


def test_a_busy_lab_answers_503_with_retry_after(api: Any) -> None:
    state = api.app.state.raglab
    saved = state.max_waiting
    state.max_waiting = 0
    try:
        response = api.get("/api/bm25/search", q="a query never asked before", top=3)
        assert response.status_code == 503
        assert response.headers["retry-after"] == "1"
        assert "busy" in response.json()["detail"]
        assert api.get("/api/meta").status_code == 200  # no computation: answered
    finally:
        state.max_waiting = saved
    assert api.get("/api/bm25/search", q="a query never asked before", top=3).status_code == 200


def test_read_only_routes_answer_while_a_run_is_computing(api: Any) -> None:
    """End-to-end runs compute on a lab of their own, under a lock of their own: with a run in
    flight (held, so it cannot end first), the exhibits' routes that compute under the lab's
    lock answer, and the run answers once released."""
    state = api.app.state.raglab
    body = {"retriever": "bm25", "k1": 0.37, "budget": 321}  # never asked before: computed
    answers: dict[str, int] = {}
    with state.run_lock:
        run = threading.Thread(
            target=lambda: answers.setdefault("run", api.post("/api/run", body).status_code)
        )
        run.start()
        for path, params in (
            ("/api/bm25/examples", {}),
            ("/api/bm25/recall", {"k1": 0.41, "b": 0.5}),
            ("/api/chunking/curve", {"overlap": 15}),
            ("/api/fusion/table", {}),
        ):
            assert api.get(path, **params).status_code == 200, path
        assert run.is_alive() and "run" not in answers  # still waiting for the runs' lock
    run.join(120)
    assert answers == {"run": 200}
    assert state.runner is not state.lab and state.runner.corpus is state.lab.corpus
