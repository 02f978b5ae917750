"""The web API: every route of ``raglab.web.app.create_app``, in-process, and a cold start.

In-process: the app is built on the bundled handbook after the server's own warm-up
(``raglab.pipeline.exhibits.warm``, as ``raglab serve`` does), and every route is called through
Starlette's ``TestClient`` (no network). The routes are read from the app's OpenAPI schema, so a
route added later is measured too; each gets the parameters a first visit would send (required
ones filled from the data: a test question's id and text, a word of the LSA vocabulary; optional
ones left to their defaults). Reported per route: the first call, then the median and 95th
percentile of the repeats. Many routes cache their result after the first call, which the gap
between "first" and "median" shows. Every repeat must answer 200 with the same body as the first.

Cold start: ``python -m raglab serve --port N --quiet`` in a new process, timed from the moment it
is started until the page (``GET /``) answers, and until every GET route of the API has answered
too (what the page's exhibits need for their first full view).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import ROOT, Config, Disagreement, Row, Section, Timing, fmt_value, stop_process, timed

SERVER_TIMEOUT_S = 120.0
POLL_S = 0.05
COLD_STARTS = 3  # new server processes, one after another
INTERACTION_LIMIT_S = 0.100
COLD_START_LIMIT_S = 2.0


def _question(lab: Any) -> Any:
    qs = [q for q in lab.questions if q.split == "test" and q.answerable]
    return qs[0] if qs else next(iter(lab.questions))


def _requests(app: Any, lab: Any) -> list[tuple[str, str, dict[str, Any], Any]]:
    """(method, url, query parameters, JSON body or None) for every route."""
    q = _question(lab)
    vocab = lab.indexes.lsa.vocabulary
    word = next((t for t in lab.indexes.query_tokens(q) if t in vocab), vocab.terms[0])
    fills: dict[str, Any] = {"question_id": q.id, "q": q.question, "word": word}
    bodies: dict[str, Any] = {
        "/api/run": {},
        "/api/run/compare": {"a": {}, "b": {"retriever": "bm25"}},
    }
    out: list[tuple[str, str, dict[str, Any], Any]] = [
        ("GET", "/", {}, None),
        ("GET", "/docs", {}, None),
        ("GET", "/openapi.json", {}, None),
    ]
    for path, methods in app.openapi()["paths"].items():
        for method, op in methods.items():
            url = path
            params: dict[str, Any] = {}
            for p in op.get("parameters", []):
                name = p["name"]
                if p["in"] == "path":
                    url = url.replace("{" + name + "}", str(fills.get(name, "")))
                elif p.get("required"):
                    params[name] = fills.get(name)
            body = bodies.get(path, {}) if "requestBody" in op else None
            out.append((method.upper(), url, params, body))
    return out


def _call(client: Any, method: str, url: str, params: dict[str, Any], body: Any) -> bytes:
    if method == "GET":
        response = client.get(url, params=params)
    else:
        response = client.request(method, url, params=params, json=body)
    if response.status_code != 200:
        raise Disagreement(f"{method} {url} answered {response.status_code}: {response.text[:300]}")
    content: bytes = response.content
    return content


def _in_process(cfg: Config, section: Section) -> list[tuple[str, str, dict[str, Any], Any]]:
    from starlette.testclient import TestClient

    from raglab.pipeline.lab import Lab
    from raglab.web.app import create_app

    lab = Lab.load()
    from raglab.web.warm import warm

    warm_ms, warm_seconds = timed(lambda: warm(lab))
    app = create_app(lab, warm_ms=warm_ms)
    requests = _requests(app, lab)
    section.rows.append(
        Row("in-process", "server warm-up (exhibits.warm), once", "s", warm_seconds)
    )
    section.extra += [
        f"In-process latency per route ({cfg.api_repeats} repeats after the first call):",
        "",
        "| Route | First call | Median | p95 | Answer |",
        "|---|---:|---:|---:|---|",
    ]
    medians: list[float] = []
    p95s: list[float] = []
    firsts: list[tuple[float, str]] = []
    with TestClient(app, base_url="http://127.0.0.1") as client:
        for method, url, params, body in requests:

            def call(m: str = method, u: str = url, p: Any = params, b: Any = body) -> bytes:
                return _call(client, m, u, p, b)

            first, first_s = timed(call)
            samples = []
            for _ in range(cfg.api_repeats):
                again, seconds = timed(call)
                samples.append(seconds)
                if again != first:
                    raise Disagreement(f"{method} {url}: a repeat answered a different body")
            t = Timing(tuple(samples))
            medians.append(t.median)
            p95s.append(t.p95)
            firsts.append((first_s, f"{method} {url}"))
            shown = url + ("?" + "&".join(f"{k}=…" for k in params) if params else "")
            label = f"`{method} {shown}`" + (f" `{json.dumps(body)}`" if body else "")
            section.extra.append(
                f"| {label} | {fmt_value(first_s, 's')} | {fmt_value(t.median, 's')} | "
                f"{fmt_value(t.p95, 's')} | 200, {len(first):,} bytes, same every time |"
            )
    slowest_first, slowest_route = max(firsts)
    section.rows += [
        Row(
            "in-process",
            f"slowest route's median ({len(requests)} routes; target under 100 ms)",
            "s",
            max(medians),
            limit=INTERACTION_LIMIT_S,
        ),
        Row(
            "in-process",
            f"slowest route's 95th percentile ({len(requests)} routes; target under 100 ms)",
            "s",
            max(p95s),
            limit=INTERACTION_LIMIT_S,
        ),
        Row(
            "in-process",
            f"median of the {len(requests)} routes' medians",
            "s",
            sorted(medians)[len(medians) // 2],
        ),
        Row(
            "in-process",
            f"slowest first call (`{slowest_route}`, a result nothing had built yet)",
            "s",
            slowest_first,
        ),
    ]
    return requests


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait(get: Callable[[], int], deadline: float, proc: subprocess.Popen[bytes]) -> None:
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with status {proc.returncode}")
        try:
            if get() == 200:
                return
        except Exception:  # not listening yet
            pass
        if time.perf_counter() > deadline:
            raise RuntimeError("the server did not answer in time")
        time.sleep(POLL_S)


def _serve_command(env: dict[str, str]) -> list[str]:
    """``python -m raglab serve``, or ``python -m raglab.cli.serve`` while the command line does
    not register ``serve`` yet (the same program without the front end)."""
    probe = subprocess.run(
        [sys.executable, "-m", "raglab", "serve", "--help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
    )
    if probe.returncode == 0:
        return [sys.executable, "-m", "raglab", "serve"]
    return [sys.executable, "-m", "raglab.cli.serve"]


def _server_env() -> dict[str, str]:
    """The server's environment: this source tree first, and Python's bytecode cache on, as on
    a machine where raglab is installed (this workplace turns it off for every process)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT / "src")
    return env


def _cold_start_once(
    command: list[str], gets: list[tuple[str, dict[str, Any]]], env: dict[str, str]
) -> tuple[float, float]:
    """One new server process: seconds from its start to ``GET /`` answered, and to every GET
    route answered."""
    import httpx

    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    start = time.perf_counter()
    proc = subprocess.Popen(
        [*command, "--port", str(port), "--quiet"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with httpx.Client(base_url=base, timeout=SERVER_TIMEOUT_S) as client:
            deadline = start + SERVER_TIMEOUT_S
            _wait(lambda: client.get("/").status_code, deadline, proc)
            page = time.perf_counter() - start
            for url, params in gets:
                response = client.get(url, params=params)
                if response.status_code != 200:
                    raise Disagreement(f"cold server: GET {url} answered {response.status_code}")
            data = time.perf_counter() - start
    finally:
        stop_process(proc)
    return page, data


def _source_without_bytecode(folder: Path) -> Path:
    """A copy of ``src/raglab`` in ``folder`` without any ``__pycache__``: what a process sees
    when raglab's bytecode was never written (an editable install under PYTHONDONTWRITEBYTECODE,
    or a read-only tree)."""
    shutil.copytree(
        ROOT / "src" / "raglab", folder / "raglab", ignore=shutil.ignore_patterns("__pycache__")
    )
    return folder


def _cold_start(requests: list[tuple[str, str, dict[str, Any], Any]], section: Section) -> None:
    env = _server_env()
    gets = [(url, params) for method, url, params, _ in requests if method == "GET"]
    command = _serve_command(env)
    _cold_start_once(command, gets, env)  # untimed: writes the bytecode cache, as installing does
    shown = "python -m " + " ".join(command[2:])
    with tempfile.TemporaryDirectory(prefix="raglab-no-bytecode-") as tmp:
        # No bytecode for raglab's own modules, and none written: each start compiles them again.
        # Other packages keep theirs, as pip writes it when it installs them.
        bare = {
            **env,
            "PYTHONPATH": str(_source_without_bytecode(Path(tmp))),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        modes = (
            ("with raglab's bytecode cache", env),
            ("without a bytecode cache for raglab (PYTHONDONTWRITEBYTECODE=1)", bare),
        )
        for label, mode_env in modes:
            runs = [_cold_start_once(command, gets, mode_env) for _ in range(COLD_STARTS)]
            pages = Timing(tuple(p for p, _ in runs))
            datas = Timing(tuple(d for _, d in runs))
            section.rows += [
                Row(
                    "cold start (new process)",
                    f"`{shown}` start to `GET /` answered, {label} (median of {COLD_STARTS})",
                    "s",
                    pages.median,
                    ours_range=(min(pages.samples), max(pages.samples)),
                ),
                Row(
                    "cold start (new process)",
                    f"start to every GET route answered, {label} ({len(gets)} routes, the "
                    f"first full page; median of {COLD_STARTS}; target under 2 s)",
                    "s",
                    datas.median,
                    ours_range=(min(datas.samples), max(datas.samples)),
                    limit=COLD_START_LIMIT_S,
                ),
            ]


LOAD_EXPENSIVE = 20  # expensive requests kept in flight
LOAD_SAMPLES = 100  # timed requests of each cheap kind


def _under_load(cfg: Config, section: Section) -> None:
    """p95 of ``/api/meta`` and of a cached search while LOAD_EXPENSIVE clients keep an
    uncached end-to-end run each in flight, on the real server over the loopback."""
    import threading

    import httpx

    env = _server_env()
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [*_serve_command(env), "--port", str(port), "--quiet"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    stop = threading.Event()
    counts = {"200": 0, "503": 0, "other": 0}
    lock = threading.Lock()

    def expensive(worker: int) -> None:
        budget = 500 + worker
        with httpx.Client(base_url=base, timeout=SERVER_TIMEOUT_S) as client:
            while not stop.is_set():
                budget += LOAD_EXPENSIVE  # a setting no one asked for: computed, not cached
                status = client.post("/api/run", json={"budget": budget}).status_code
                with lock:
                    key = str(status) if status in (200, 503) else "other"
                    counts[key] += 1
                if status == 503:
                    time.sleep(0.05)

    samples: dict[str, list[float]] = {"meta": [], "search": []}
    try:
        with httpx.Client(base_url=base, timeout=SERVER_TIMEOUT_S) as client:
            _wait(lambda: client.get("/api/meta").status_code, time.perf_counter() + 120, proc)
            search: dict[str, str | int] = {"q": "tripod head wobble", "top": 5}
            if client.get("/api/bm25/search", params=search).status_code != 200:
                raise Disagreement("the search to be cached did not answer 200")
            workers = [threading.Thread(target=expensive, args=(i,)) for i in range(LOAD_EXPENSIVE)]
            for w in workers:
                w.start()
            time.sleep(1.0)  # let the queue fill
            n = LOAD_SAMPLES if not cfg.quick else LOAD_SAMPLES // 4
            for _ in range(n):
                for name, url, params in (
                    ("meta", "/api/meta", {}),
                    ("search", "/api/bm25/search", search),
                ):
                    start = time.perf_counter()
                    status = client.get(url, params=params).status_code
                    samples[name].append(time.perf_counter() - start)
                    if status != 200:
                        raise Disagreement(f"{url} answered {status} under load")
            stop.set()
            for w in workers:
                w.join(SERVER_TIMEOUT_S)
    finally:
        stop.set()
        stop_process(proc)
    if counts["other"]:
        raise Disagreement(f"{counts['other']} expensive requests answered neither 200 nor 503")
    for name, label in (("meta", "`GET /api/meta`"), ("search", "a cached `GET /api/bm25/search`")):
        timing = Timing(tuple(samples[name]))
        section.rows.append(
            Row(
                f"under load ({LOAD_EXPENSIVE} uncached runs in flight)",
                f"{label}, p95 of {len(timing.samples)} (target under 100 ms)",
                "s",
                timing.p95,
                ours_range=(min(timing.samples), max(timing.samples)),
                limit=INTERACTION_LIMIT_S,
            )
        )
    section.notes.append(
        f"Under load: {counts['200']} expensive runs answered 200 and {counts['503']} were "
        f"refused with 503 and Retry-After (at most {_max_waiting()} wait for the lab at once)."
    )


def _max_waiting() -> int:
    from raglab.web.state import MAX_WAITING

    return MAX_WAITING


def run(cfg: Config) -> Section:
    section = Section(
        "api",
        "5. Web API: every route of raglab.web, in-process, and the server's cold start",
        "No peer: our own latencies. In-process calls go through Starlette's TestClient on a lab "
        "warmed as `raglab serve` warms it; the cold start runs the real server in a new process "
        "(three times, after one untimed start that writes Python's bytecode cache for raglab's "
        "modules, as installing a package does).",
    )
    try:
        from raglab.web.app import create_app  # noqa: F401
    except ImportError:
        section.notes.append("raglab.web.app.create_app does not exist yet: nothing measured.")
        return section
    requests = _in_process(cfg, section)
    _cold_start(requests, section)
    _under_load(cfg, section)
    section.notes += [
        "Routes come from the app's OpenAPI schema plus `/`, `/docs` and `/openapi.json`; "
        "optional parameters are left to their defaults, as on a first visit.",
        'A "first call" after the warm-up may still build a result the warm-up did not; later '
        "calls of most routes are served from the app's cache.",
    ]
    return section
