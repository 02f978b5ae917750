"""The in-tab encoder in Chromium's Worker: a neural run at another chunking, two sites' engines.

Serves two written sites (``raglab site --out``), ``--site`` and ``--baseline`` (the same site
with another engine copied into its ``static/engine``, say the commit before a change), and for
each chunking times, in Chromium's own clock, one ``POST /api/run`` with the neural retriever at
that chunking in a fresh Worker, once the weights are loaded (a typed question first), so the
time is the chunks' encoding and the run; the two sites alternate, each round's order swapped.
Prints one JSON line a run: the milliseconds, the accuracy (equal on both sides), the encoder's
path as the Worker posts it (``{encoder: {path}}``; none from an engine before it said so) and
the load average::

    python benchmarks/bench_tab_encoder_chromium.py --site NEW --baseline OLD --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"

#: Asks a fresh module Worker of the page's site a typed question (the weights loaded), then
#: times the run; resolves {ms, status, accuracy, paths}.
TIMED_RUN = """async ([body]) => {
  const w = new Worker('/static/engine/worker.js', {type: 'module'});
  const paths = [];
  w.addEventListener('message', (e) => { if (e.data.encoder) paths.push(e.data.encoder.path); });
  const ask = (id, url, method, b) => new Promise((resolve) => {
    const on = (e) => {
      if (e.data.id === id && e.data.status !== undefined) {
        w.removeEventListener('message', on);
        resolve(e.data);
      }
    };
    w.addEventListener('message', on);
    w.postMessage({id, url, method, body: b});
  });
  await ask(1, '/api/neural/search?q=warm%20batteries&top=5', 'GET', null);
  const t0 = performance.now();
  const r = await ask(2, '/api/run', 'POST', body);
  const ms = performance.now() - t0;
  w.terminate();
  return {ms, status: r.status, accuracy: r.body.accuracy, paths};
}"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, required=True, help="a written site")
    parser.add_argument(
        "--baseline", type=Path, required=True, help="the same site, another engine"
    )
    parser.add_argument("--rounds", type=int, default=3, help="runs per site at the first chunking")
    parser.add_argument(
        "--chunkings",
        default="heading:90,fixed:128",
        help="METHOD:SIZE list; the first timed --rounds times, the others once",
    )
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    sites = {"new": (args.site, 8732), "baseline": (args.baseline, 8731)}
    servers = [
        subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "-d", str(d), "-b", "127.0.0.1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for d, port in sites.values()
    ]
    chunkings = [c.split(":") for c in args.chunkings.split(",")]
    plans = [chunkings[0]] * args.rounds + chunkings[1:]
    try:
        time.sleep(1.5)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            for i, (method, size) in enumerate(plans):
                for name in ["baseline", "new"] if i % 2 == 0 else ["new", "baseline"]:
                    context = browser.new_context()
                    page = context.new_page()
                    page.goto(f"http://127.0.0.1:{sites[name][1]}/")
                    page.wait_for_selector("body[data-ready=true]")
                    body = {"chunker": method, "size": int(size), "retriever": "neural"}
                    result = page.evaluate(TIMED_RUN, [{**body, "rerank": False, "mmr": False}])
                    result.update(site=name, chunking=f"{method}:{size}", load=os.getloadavg()[0])
                    print(json.dumps(result), flush=True)
                    context.close()
            browser.close()
    finally:
        for server in servers:
            server.terminate()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
