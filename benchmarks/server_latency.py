"""The web lab's GET routes while end-to-end runs compute: p50 and p95 per route, cold cache.

Starts ``python -m raglab.cli.serve`` on a free port with an empty ``RAGLAB_CACHE_DIR`` (so the
neural vectors must be encoded), times how long it takes to answer ``/api/meta``, then fires one
neural ``POST /api/run`` and ``--runs`` other runs with varied settings (each retried on 503 and
202 as the page does) while ``--samplers`` threads ask every GET route of the API in turn. Prints,
per GET route, how many answers, their p50, p95 and maximum in milliseconds (a 503 is retried
after its Retry-After and counted in the time, as a client waits), how many 503s came on the way
and how many requests failed; then when each kind of run was answered.

    .venv/bin/python benchmarks/server_latency.py            # about a minute or two on 2 cores
    .venv/bin/python benchmarks/server_latency.py --runs 20 --samplers 2

Latency is what a client sees: a GET that waits behind a computation holding a lock shows here.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 150.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _runs(count: int) -> list[dict[str, Any]]:
    """One neural run, then ``count`` others whose settings vary (no two alike)."""
    retrievers = ["bm25", "lsa", "rrf", "score"]
    bodies: list[dict[str, Any]] = [{"retriever": "neural"}]
    for i in range(count):
        bodies.append(
            {
                "retriever": retrievers[i % len(retrievers)],
                "k1": round(0.6 + 0.2 * (i // len(retrievers)), 1),
                "budget": 200 + 50 * (i % 5),
            }
        )
    return bodies


def _get_routes(client: httpx.Client) -> list[str]:
    """Every GET route of the API with the parameters a first visit sends."""
    questions = client.get("/api/questions", params={"split": "test"}).json()["questions"]
    qid = next(q["id"] for q in questions if q["answerable"])
    schema = client.get("/openapi.json").json()
    fill = {
        "question_id": qid,
        "q": "tripod leg clamp",
        "word": "tripod",
    }
    routes = []
    for path, methods in sorted(schema["paths"].items()):
        if "get" not in methods:
            continue
        url = path.replace("{question_id}", qid)
        required = [
            p["name"]
            for p in methods["get"].get("parameters", [])
            if p.get("required") and p["in"] == "query"
        ]
        query = "&".join(f"{name}={fill[name]}" for name in required)
        routes.append(url + (f"?{query}" if query else ""))
    return routes


def _run(base: str, body: dict[str, Any], done: dict[str, float], start: float) -> None:
    with httpx.Client(base_url=base, timeout=TIMEOUT_S) as client:
        while True:
            try:
                r = client.post("/api/run", json=body)
            except httpx.TimeoutException:
                done[str(body)] = -1.0
                return
            if r.status_code in (202, 503):
                time.sleep(float(r.headers.get("Retry-After", "1")))
                continue
            done[str(body)] = time.perf_counter() - start if r.status_code == 200 else -1.0
            return


def _sample(
    base: str,
    routes: list[str],
    stop: threading.Event,
    out: dict[str, list[float]],
    bad: dict[str, int],
    busy: dict[str, int],
    offset: int,
) -> None:
    with httpx.Client(base_url=base, timeout=TIMEOUT_S) as client:
        i = offset
        while not stop.is_set():
            route = routes[i % len(routes)]
            i += 1
            t = time.perf_counter()
            while True:
                # A 503 (the lab busy) is retried after Retry-After, as a client must: the time
                # counted is until the answer, the refusals are counted apart.
                try:
                    response = client.get(route)
                except httpx.TimeoutException:
                    bad[route] = bad.get(route, 0) + 1
                    break
                if response.status_code != 503 or stop.is_set():
                    if response.status_code not in (200, 202):
                        bad[route] = bad.get(route, 0) + 1
                    break
                busy[route] = busy.get(route, 0) + 1
                time.sleep(float(response.headers.get("Retry-After", "1")))
            out.setdefault(route, []).append((time.perf_counter() - t) * 1000)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs besides the neural one")
    parser.add_argument("--samplers", type=int, default=2, help="threads asking the GET routes")
    args = parser.parse_args(argv)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="raglab-latency-") as cache:
        env = {**os.environ, "RAGLAB_CACHE_DIR": cache, "PYTHONUNBUFFERED": "1"}
        env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
        started = time.perf_counter()
        server = subprocess.Popen(
            [sys.executable, "-m", "raglab.cli.serve", "--port", str(port), "--quiet"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while True:
                try:
                    if httpx.get(f"{base}/api/meta", timeout=5).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if server.poll() is not None or time.perf_counter() - started > 600:
                    print("the server did not start", file=sys.stderr)
                    return 1
                time.sleep(0.05)
            cold = time.perf_counter() - started
            print(f"cold start (empty cache) until /api/meta answers: {cold:.1f} s")
            with httpx.Client(base_url=base, timeout=TIMEOUT_S) as client:
                routes = _get_routes(client)
            times: dict[str, list[float]] = {}
            bad: dict[str, int] = {}
            busy: dict[str, int] = {}
            stop = threading.Event()
            samplers = [
                threading.Thread(target=_sample, args=(base, routes, stop, times, bad, busy, k * 7))
                for k in range(args.samplers)
            ]
            done: dict[str, float] = {}
            t0 = time.perf_counter()
            runners = [
                threading.Thread(target=_run, args=(base, body, done, t0))
                for body in _runs(args.runs)
            ]
            for thread in [*runners, *samplers]:
                thread.start()
            for thread in runners:
                thread.join()
            stop.set()
            for thread in samplers:
                thread.join()
            span = time.perf_counter() - t0
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"{len(runners)} runs answered within {span:.1f} s; GET routes sampled meanwhile:")
    print(
        f"{'route':48} {'n':>5} {'p50 ms':>9} {'p95 ms':>9} {'max ms':>9} {'503':>5} {'failed':>6}"
    )
    worst = 0.0
    for route in routes:
        values = sorted(times.get(route, []))
        if not values:
            print(f"{route[:48]:48} {0:5d}")
            continue
        p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
        worst = max(worst, p95)
        print(
            f"{route[:48]:48} {len(values):5d} {statistics.median(values):9.1f} {p95:9.1f} "
            f"{values[-1]:9.1f} {busy.get(route, 0):5d} {bad.get(route, 0):6d}"
        )
    print(f"worst p95 over the GET routes: {worst:.1f} ms")
    neural = done.get(str(_runs(0)[0]), -1.0)
    others = [v for k, v in done.items() if k != str(_runs(0)[0])]
    print(
        f"neural run answered after {neural:.1f} s; the others after "
        f"{min(others):.1f} to {max(others):.1f} s (-1: failed or timed out)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
