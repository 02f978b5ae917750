"""The key parity tests again in Chromium: the same ``*.test.mjs`` files, run in a real page.

Oracle: the Python engine, through the fixtures :mod:`tests.web.static.engine.parity` writes
(the ones Node's test runner reads in ``test_parity.py``). A local HTTP server serves the
engine's and the tests' modules and the fixtures; the page maps Node's built-in modules to
``node_builtins.mjs`` with an import map, imports one test file, runs the tests it declares and
hands back one row per test. Same checks, same tolerances as in Node (exact for counts, tokens
and rankings, 1e-9 for real numbers), on Chromium's JavaScript and its Math.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from playwright.sync_api import Browser

pytestmark = pytest.mark.browser

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
#: The folders the page may read, by URL prefix: the engine, its tests, and the fixtures.
SERVED = {
    "/src/raglab/web/static/engine/": REPO / "src" / "raglab" / "web" / "static" / "engine",
    "/tests/web/static/engine/": HERE,
}
FIXTURES = "/parity/"
SHIM = "/tests/web/static/engine/node_builtins.mjs"
TYPES = {".mjs": "text/javascript", ".js": "text/javascript", ".json": "application/json"}

#: The key stages, one test file each: the Snowball stemmer on every word of both collections;
#: BM25's scores, rankings, contributions and the (k1, b) grid; the randomised SVD and LSA's
#: cosines; the reranker's logistic weights and MMR; RRF and score fusion; packing, the reader
#: and the diagnosis; Wilson's interval and McNemar's test.
KEY = (
    "text/snowball",
    "bm25/index",
    "embedding/lsa",
    "rerank/rerank",
    "fusion/fusion",
    "reading/reading",
    "metrics/stats",
)

HARNESS = """<!doctype html>
<meta charset="utf-8">
<script type="importmap">{imports}</script>
<script>globalThis.process = {{ env: {{ RAGLAB_PARITY_DIR: "{fixtures}" }} }};</script>
<script type="module">
  import {{ run }} from "node:test";
  const file = new URLSearchParams(location.search).get("file");
  import(file)
    .then(() => run())
    .catch((e) => [{{ name: `import ${{file}}`, ok: false, message: String(e.stack || e), ms: 0 }}])
    .then((rows) => {{ window.parityRows = rows; }});
</script>
"""


def harness() -> bytes:
    """The page: Node's module names mapped to the shim, the fixtures' folder in process.env."""
    names = ("node:test", "node:assert/strict", "node:fs", "node:path")
    imports = json.dumps({"imports": dict.fromkeys(names, SHIM)})
    return HARNESS.format(imports=imports, fixtures=FIXTURES.rstrip("/")).encode()


def handler(fixtures: Path) -> type[BaseHTTPRequestHandler]:
    """GET only: the harness at ``/``, the fixtures under ``/parity/``, and the two module
    folders of :data:`SERVED`; 404 for anything else (no path leaves those folders)."""
    roots = {**SERVED, FIXTURES: fixtures}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = unquote(urlsplit(self.path).path)
            if path == "/":
                self.answer(harness(), "text/html")
                return
            for prefix, root in roots.items():
                if path.startswith(prefix):
                    file = (root / path.removeprefix(prefix)).resolve()
                    if file.is_relative_to(root) and file.is_file():
                        self.answer(file.read_bytes(), TYPES.get(file.suffix, "text/plain"))
                        return
            self.send_error(404)

        def answer(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # a line per module fetched would bury the test's own report

    return Handler


@pytest.fixture(scope="module")
def parity_site(parity_dir: Path) -> Iterator[str]:
    """The harness, the modules and the session's parity fixtures on a local port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(parity_dir))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.mark.parametrize("name", KEY)
def test_the_engine_in_chromium_equals_the_python_engine(
    browser: Browser, parity_site: str, name: str
) -> None:
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        file = f"/tests/web/static/engine/{name}.test.mjs"
        page.goto(f"{parity_site}/?file={file}")
        page.wait_for_function("() => window.parityRows !== undefined", timeout=180_000)
        rows: list[dict[str, Any]] = page.evaluate("() => window.parityRows")
    finally:
        context.close()
    assert not errors, errors
    assert rows, f"{file} declared no test"
    failed = [f"{r['name']}:\n{r['message']}" for r in rows if not r["ok"]]
    assert not failed, f"{len(failed)} of {len(rows)} failed in Chromium:\n" + "\n".join(failed)
