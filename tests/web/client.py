"""The in-process face of the web app for tests: a synchronous client over httpx's
ASGITransport, and the timings of a few interactions (reported at the end of the run by
tests/web/conftest.py, never asserted).

Every app a test serves in-process is kept in :data:`APPS` (:func:`served`; :class:`Api` adds its
own): after each test its background neural encoding is stopped (tests/conftest.py), so no thread
one test started goes on writing vectors, into a cache folder another test has set.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

import httpx

TIMINGS: list[tuple[str, float]] = []

#: The apps served in-process by tests (module docstring).
APPS: weakref.WeakSet[Any] = weakref.WeakSet()


def served(app: Any) -> Any:
    """``app`` (from :func:`raglab.web.app.create_app`), kept in :data:`APPS`."""
    APPS.add(app)
    return app


def stop_encoding() -> None:
    """Stop the neural encoding of every app in :data:`APPS` (each resumes when next asked)."""
    for app in list(APPS):
        app.state.raglab.encoding.stop()


def record_timing(name: str, ms: float) -> None:
    """Keep one measured interaction for the end-of-run report."""
    TIMINGS.append((name, ms))


@dataclass
class Api:
    """A synchronous face over an in-process ASGI client: ``api.get(path, **params)``."""

    app: Any
    calls: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        served(self.app)

    async def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        transport = httpx.ASGITransport(app=self.app, raise_app_exceptions=False)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1:8000"
        ) as client:
            return await client.request(method, path, **kwargs)

    def get(
        self, path: str, *, headers: dict[str, str] | None = None, **params: Any
    ) -> httpx.Response:
        self.calls.append(path)
        return asyncio.run(self._send("GET", path, params=params, headers=headers))

    def post(
        self, path: str, body: Any = None, *, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        self.calls.append(path)
        return asyncio.run(
            self._send("POST", path, json=body if body is not None else {}, headers=headers)
        )

    def timed_get(self, name: str, path: str, **params: Any) -> httpx.Response:
        start = time.perf_counter()
        response = self.get(path, **params)
        record_timing(f"API {name}", (time.perf_counter() - start) * 1000)
        return response

    def timed_post(self, name: str, path: str, body: Any = None) -> httpx.Response:
        start = time.perf_counter()
        response = self.post(path, body)
        record_timing(f"API {name}", (time.perf_counter() - start) * 1000)
        return response
