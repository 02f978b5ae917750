"""The real server under load on the loopback: expensive requests in flight never hold up the
answers that need no computation, and a full queue is answered 503 with Retry-After, never an
error or a hang.

Oracle: the status codes and bodies (no timing is asserted; the benchmarks measure latency).
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from raglab.web.state import MAX_WAITING

EXPENSIVE = 40  # more than the queue holds, so some are refused


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return (
                response.status,
                {k.lower(): v for k, v in response.headers.items()},
                json.load(response),
            )
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, json.load(exc)


def _get(url: str) -> int:
    with urllib.request.urlopen(url, timeout=120) as response:
        json.load(response)
        return int(response.status)


def test_expensive_requests_are_computed_or_refused_while_meta_answers(server: str) -> None:
    # Every body a setting never run before (each budget its own run), so each computes.
    bodies = [{"budget": 500 + i, "retriever": "bm25"} for i in range(EXPENSIVE)]
    meta_statuses: list[int] = []
    done = threading.Event()

    def poll_meta() -> None:
        while not done.is_set():
            meta_statuses.append(_get(f"{server}/api/meta"))

    poller = threading.Thread(target=poll_meta)
    poller.start()
    try:
        with ThreadPoolExecutor(EXPENSIVE) as pool:
            results = list(pool.map(lambda b: _post(f"{server}/api/run", b), bodies))
    finally:
        done.set()
        poller.join(60)
    statuses = [status for status, _, _ in results]
    assert set(statuses) <= {200, 503}, statuses
    assert statuses.count(200) >= 1
    for status, headers, data in results:
        if status == 503:
            assert headers.get("retry-after") == "1" and "busy" in data["detail"]
        else:
            assert data["n"] == 30 and data["settings"]["budget"] >= 500
    assert meta_statuses and set(meta_statuses) == {200}
    # Refused requests were refused, not lost: asked again one by one, every one is answered.
    for body, (status, _, _) in zip(bodies, results, strict=True):
        if status == 503:
            assert _post(f"{server}/api/run", body)[0] == 200
    assert MAX_WAITING < EXPENSIVE
