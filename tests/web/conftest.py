"""Fixtures for the web lab: the app in-process, a real server for the browser, and timings.

API tests talk to the app in-process through httpx's ASGITransport. Browser tests start the real
server (``python -m raglab.cli.serve``) on a free port and drive Debian's Chromium with
Playwright. Timings of a few interactions are collected and printed at the end of the run (never
asserted) and written to ``test-artifacts/``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from raglab.pipeline.lab import Lab
from raglab.web.app import create_app
from raglab.web.warm import warm, warm_later
from web.pages import LAPTOP, Opener, opener

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

_TIMINGS: list[tuple[str, float]] = []


def record_timing(name: str, ms: float) -> None:
    """Keep one measured interaction for the end-of-run report."""
    _TIMINGS.append((name, ms))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _TIMINGS:
        return
    terminalreporter.section("web lab: measured interactions (ms, after the warm start)")
    lines = [f"{ms:8.1f}  {name}" for name, ms in _TIMINGS]
    for line in lines:
        terminalreporter.write_line(line)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "web-timings.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


@dataclass
class Api:
    """A synchronous face over an in-process ASGI client: ``api.get(path, **params)``."""

    app: Any
    calls: list[str] = field(default_factory=list)

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

    def post(self, path: str, body: Any = None) -> httpx.Response:
        self.calls.append(path)
        return asyncio.run(self._send("POST", path, json=body if body is not None else {}))

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


@pytest.fixture(scope="session")
def timings() -> Callable[[str, float], None]:
    """``timings(name, ms)`` keeps one measured interaction for the end-of-run report."""
    return record_timing


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """``test-artifacts/`` at the repository root (git-ignored), created on demand."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def chromium() -> dict[str, Any]:
    """Keyword arguments for ``playwright.chromium.launch``: Debian's Chromium, headless."""
    return {"executable_path": CHROMIUM, "args": list(CHROMIUM_ARGS)}


@pytest.fixture(scope="session")
def lab() -> Lab:
    """The library's own lab, independent of the one the app serves: the expected numbers."""
    return Lab.load()


@pytest.fixture(scope="session")
def served_lab() -> Lab:
    """The lab behind the in-process app, warmed as ``raglab serve`` leaves it once idle: the
    first page's results, then every background task."""
    served = Lab.load()
    warm(served)
    for task in warm_later(served):
        task()
    return served


@pytest.fixture(scope="session")
def api(served_lab: Lab) -> Api:
    return Api(create_app(served_lab))


@pytest.fixture(scope="session")
def api_for() -> type[Api]:
    """Wrap another app (a user's corpus) the way ``api`` wraps the handbook's."""
    return Api


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(url: str, process: subprocess.Popen[bytes], log: Path, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            out = log.read_text(encoding="utf-8", errors="replace")
            pytest.fail(f"the server exited early with status {process.returncode}:\n{out}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    json.load(response)
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    process.kill()
    pytest.fail(f"the server did not answer {url} within {timeout:.0f} s")


@contextlib.contextmanager
def serving(*options: str, log_name: str = "web-server.log") -> Iterator[str]:
    """``python -m raglab.cli.serve OPTIONS`` on a free port, its output in test-artifacts/;
    yields its base URL once ``/api/meta`` answers, and stops the server afterwards."""
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    ARTIFACTS.mkdir(exist_ok=True)
    log = ARTIFACTS / log_name
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "raglab.cli.serve", "--port", str(port), *options],
            cwd=REPO,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for(f"{base}/api/meta", process, log)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The bundled handbook served with the defaults; yields its base URL."""
    with serving() as base:
        yield base


@pytest.fixture(scope="module")
def meta(server: str) -> dict[str, Any]:
    """``/api/meta`` of the served lab, as the page reads it."""
    data: dict[str, Any] = httpx.get(f"{server}/api/meta", timeout=30).json()
    return data


@pytest.fixture(scope="module")
def browser(chromium: dict[str, Any]) -> Iterator[Browser]:
    """One Chromium per test module; each test opens its own context (fresh storage)."""
    with sync_playwright() as p:
        b = p.chromium.launch(**chromium)
        yield b
        b.close()


@pytest.fixture
def open_page(browser: Browser, server: str) -> Iterator[Opener]:
    """``open_page(viewport)``: the served lab in a fresh page (:func:`web.pages.opener`)."""
    yield from opener(browser, server)


@pytest.fixture
def page(open_page: Opener) -> Page:
    """The served lab in a fresh page at 1280 x 900, loaded and ready."""
    return open_page(LAPTOP)
