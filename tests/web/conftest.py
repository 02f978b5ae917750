"""Fixtures for the web lab: the app in-process, a real server for the browser, and timings.

API tests talk to the app in-process through httpx's ASGITransport. Browser tests share one real
server (``python -m raglab.cli.serve`` on a free port, started once per session) and one Debian
Chromium driven by Playwright (launched once per session); each test opens its own context, so
its localStorage starts empty or as the test prepares it. Timings of a few interactions are collected and printed at the end of the run (never
asserted) and written to ``test-artifacts/``.
"""

from __future__ import annotations

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
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.web.client import TIMINGS, record_timing
from tests.web.pages import LAPTOP, Opener, opener

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


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not TIMINGS:
        return
    terminalreporter.section("web lab: measured interactions (ms, after the warm start)")
    lines = [f"{ms:8.1f}  {name}" for name, ms in TIMINGS]
    for line in lines:
        terminalreporter.write_line(line)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "web-timings.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


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
def serving(
    *options: str, log_name: str = "web-server.log", env: dict[str, str] | None = None
) -> Iterator[str]:
    """``python -m raglab.cli.serve OPTIONS`` on a free port, its output in test-artifacts/;
    yields its base URL once ``/api/meta`` answers, and stops the server afterwards. ``env``:
    variables for the server only (say, a cache folder of its own), over this process's."""
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
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


def wait_for_encoding(base: str, timeout: float = 600.0) -> None:
    """Return once the server at ``base`` has its neural vectors (it encodes them in the
    background from its start: raglab.web.encoding)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if httpx.get(f"{base}/api/neural/encoding", timeout=30).json()["ready"]:
            return
        time.sleep(0.5)
    pytest.fail(f"the server at {base} did not encode its vectors within {timeout:.0f} s")


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    """The bundled handbook served with the defaults, one server per session, its neural
    vectors encoded (as a server on a warm cache starts); yields its base URL. A server on an
    empty cache is tested on its own (tests/web/test_encoding.py)."""
    with serving() as base:
        wait_for_encoding(base)
        yield base


@pytest.fixture(scope="session")
def meta(server: str) -> dict[str, Any]:
    """``/api/meta`` of the served lab, as the page reads it."""
    data: dict[str, Any] = httpx.get(f"{server}/api/meta", timeout=30).json()
    return data


@pytest.fixture(scope="session")
def browser(chromium: dict[str, Any]) -> Iterator[Browser]:
    """One Chromium per session; each test opens its own context (fresh storage)."""
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
