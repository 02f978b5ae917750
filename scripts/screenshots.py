#!/usr/bin/env python3
"""Screenshots of every exhibit at work, on a laptop (1280 x 900) and a phone (390 x 844).

    .venv/bin/python scripts/screenshots.py [--out docs/screenshots] [--base http://127.0.0.1:8000]

Without ``--base`` it starts ``python -m raglab.cli.serve`` on a free port (the bundled handbook)
and stops it afterwards. In Debian's Chromium, on a fresh page, it uses each exhibit once the way a
reader would (cut, search, fit, pick a question, train, run), closes the closing note, then
scrolls each exhibit's working part to the top of the window and saves the window as
``<exhibit>-<width>.png`` (``chunking``, ``bm25``, ``lsa``, ``fusion``, ``rerank``, ``end-to-end``).
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Page, ViewportSize, expect, sync_playwright

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORTS: tuple[ViewportSize, ...] = (
    {"width": 1280, "height": 900},
    {"width": 390, "height": 844},
)
# Each exhibit and the part of it brought to the top of the window: the panel where it works.
SHOTS = (
    ("chunking", "#chunking .panel"),
    ("bm25", "#bm25 .panel"),
    ("lsa", "#lsa .panel"),
    ("fusion", "#fusion .legend"),
    ("rerank", "#rerank .panel"),
    ("end-to-end", "#end-to-end .readout"),
)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _server(base: str | None) -> Iterator[str]:
    if base:
        yield base.rstrip("/")
        return
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "raglab.cli.serve", "--port", str(port)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise SystemExit(f"the server exited with status {process.returncode}")
            try:
                with urllib.request.urlopen(f"{url}/api/meta", timeout=2) as response:
                    json.load(response)
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    raise SystemExit("the server did not start within 120 s") from None
                time.sleep(0.3)
        # The lab as a reader sees it once the neural vectors are encoded (in the background
        # from the server's start, minutes at most on an empty cache).
        while True:
            with urllib.request.urlopen(f"{url}/api/neural/encoding", timeout=10) as response:
                progress = json.load(response)
            if progress["ready"] or progress.get("error"):
                break
            if time.monotonic() > deadline + 600:
                raise SystemExit("the neural vectors were not encoded within 12 minutes")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def _explore(page: Page) -> None:
    """Use every exhibit once, as a reader would."""
    page.locator("#chunk-cut").click()
    expect(page.locator("#chunk-chart svg circle").first).to_be_attached()
    questions = page.locator("#questions-table button[data-id]")
    expect(questions.first).to_be_attached()
    questions.first.click()
    page.locator("#bm25-query").fill("E-4107 stall")
    expect(page.locator("#bm25-results .score").first).to_be_attached()
    page.locator("#bm25-map").click()
    expect(page.locator("#bm25-heatmap svg").first).to_be_attached()
    page.locator("#lsa-build").click()
    expect(page.locator("#lsa-tools")).to_be_visible()
    page.locator("#lsa-query").fill("my handset lost its location")
    expect(page.locator("#lsa-results .score").first).to_be_attached()
    page.locator("#fusion-grid .square").nth(4).click()
    expect(page.locator("#fusion-lists .ranked")).to_have_count(3)
    page.locator("#rerank-train").click()
    expect(page.locator("#rerank-weights svg rect.bar").first).to_be_attached()
    expect(page.locator("#version-demo > *").first).to_be_attached()
    page.locator("#run-button").click()
    expect(page.locator("#run-table tbody tr").first).to_be_attached()
    expect(page.locator("#closing")).to_be_visible()
    page.locator("#closing-dock").click()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument("--base", help="a running lab's address (default: start one)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    expect.set_options(timeout=30_000)
    with _server(args.base) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for viewport in VIEWPORTS:
            context = browser.new_context(viewport=viewport, color_scheme="light")
            page = context.new_page()
            page.goto(f"{base}/")
            page.wait_for_selector("body[data-ready=true]")
            _explore(page)
            for name, selector in SHOTS:
                page.locator(selector).first.evaluate("(n) => n.scrollIntoView({block: 'start'})")
                page.evaluate("() => new Promise((r) => setTimeout(r, 150))")
                path = args.out / f"{name}-{viewport['width']}.png"
                page.screenshot(path=str(path))
                print(path.relative_to(REPO) if path.is_relative_to(REPO) else path)
            context.close()
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
