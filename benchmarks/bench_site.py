"""The static site (``raglab site``) in Chromium beside ``raglab serve``: latency, load, size, memory.

Both modes run the same page in this machine's Chromium (``/usr/bin/chromium`` through
Playwright, the flags of ``tests/web/conftest.py``) on the bundled handbook: the site written by
``raglab site`` into a temporary folder and served by ``python -m http.server`` (every number
computed in the tab, by the engine's Web Worker), and ``raglab serve`` as a subprocess (every
number computed by the Python engine, its neural vectors encoded before anything is timed).

- **The long steps**: a fresh engine Worker of the site, in a page of its origin, asked the
  routes behind them in turn (the site's data, the LSA fit, the k1 × b grid, the reranker's
  training), from the request to the answer and, where the engine posts progress, from its
  first mark to its last (the step alone); the server's same routes over HTTP after its warm-up.
- **Cold load**: a new browser context (empty cache and storage) opens the page; in the page's
  own clock, from the navigation's start: the page being ready (``body[data-ready=true]``; of
  it, the page's HTML and module scripts loaded and run, DOMContentLoaded), each exhibit's
  first numbers (I: "Cut", II: the first example query and "Map the grid", III: "Fit the
  embedding", IV: the table, V: "Train the reranker", VI: "Run the pipeline", each button
  clicked the moment the page is ready, all in the same task, so what the exhibits wait for
  overlaps as it can), and the last DOM change in any of the six exhibits, once none has
  changed for ``QUIET_MS``: the first full render of all six exhibits, the issue's goal.
  Medians over ``--cold`` loads. With ``--against DIR`` only cold loads are measured, of this
  site and of DIR's in turn (an older checkout's site, say: a same-load comparison).
- **Controls**: on a page so rendered, every control of the six exhibits is changed
  ``--repeats`` times (a one-shot button once), no two changes in a row alike (sliders across
  their range, selects and radios round their options, switches toggled, typed fields through
  the page's own examples; a control that needs another set first to be enabled, say the fusion
  weight, gets it set untimed; each is put back afterwards; exhibit VI's controls are followed
  by "Run the pipeline", which its numbers wait for). Each change is timed in the page from the
  control's input event to the last change of its exhibit's DOM (a MutationObserver; settled
  once ``QUIET_MS`` pass without one; the paint follows within a frame): p50 and p95 per
  control. A value met before answers from the Worker's cache, as from the server's.
- **Size**: the bytes the cold load transferred (every response's body and headers, the
  Worker's included) and the site folder's size, the neural weights apart if it holds any.
- **Memory**: the page's JS heap (CDP ``Performance.getMetrics``: ``JSHeapUsedSize``, the main
  thread) and the resident memory of the tab's renderer process (the Worker runs in it) after
  the controls.

The one-minute load average is given beside each figure: the machine may be shared.

    .venv/bin/python benchmarks/bench_site.py            # about 10 minutes on 2 busy cores
    .venv/bin/python benchmarks/bench_site.py --quick    # 1 cold load, 2 repeats: about 4
    .venv/bin/python benchmarks/bench_site.py --quick --site DIR --cache CACHE
        # a site written beforehand, and a cache holding the server's neural vectors
    .venv/bin/python benchmarks/bench_site.py --site NEW --against OLD --cold 10
        # cold loads of two written sites in turn
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil
from playwright.sync_api import Browser, BrowserContext, Page, Request, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from common import stop_process  # noqa: E402 (after the path)
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402 (after the path)

TIMEOUT_S = 300.0
QUIET_MS = 500  # no DOM change for this long: the exhibit has settled
CAP_MS = 120_000  # one interaction's longest wait
IDLE_MS = 10_000  # no change at all this long after the input: the control changed nothing seen
INTERACTION_GOAL_MS = 100.0
RENDER_GOAL_S = 1.5
SIZE_GOAL_MB = 2.0


#: A control of an exhibit: its exhibit's section, a label, its selector, how it is changed
#: ("range", "select", "radio", "check", "click", "text", "number"), a button clicked after the
#: change when the exhibit waits for one, and what is set untimed first, to enable it
#: (selector, checked for a switch or the value of a select), then put back.
@dataclass(frozen=True)
class Control:
    section: str
    label: str
    selector: str
    kind: str
    then: str | None = None
    prepare: tuple[tuple[str, bool | str], ...] = ()
    once: bool = False  # a button whose second press shows nothing new


RUN = "#run-button"
CONTROLS = (
    Control("#chunking", "I: chunking method (radios)", "input[name=chunk-method]", "radio"),
    Control("#chunking", "I: size slider", "#chunk-size", "range"),
    Control("#chunking", "I: overlap slider", "#chunk-overlap", "range"),
    Control("#chunking", "I: questions filter", "#questions-filter", "select"),
    Control("#chunking", 'I: "Cut" button', "#chunk-cut", "click", once=True),
    Control("#bm25", "II: query typed", "#bm25-query", "text"),
    Control("#bm25", "II: example query buttons", "#bm25-examples button", "click"),
    Control("#bm25", "II: k1 slider", "#bm25-k1", "range"),
    Control("#bm25", "II: b slider", "#bm25-b", "range"),
    Control("#bm25", "II: stemming switch (maps the grid again)", "#bm25-stem", "check"),
    Control("#bm25", 'II: "Use the best cell"', "#bm25-use-best", "click", once=True),
    Control("#bm25", 'II: "Commit and measure on test"', "#bm25-commit", "click", once=True),
    Control("#lsa", "III: word typed", "#lsa-word", "text"),
    Control("#lsa", "III: suggested word buttons", "#lsa-suggestions button", "click"),
    Control("#lsa", "III: query typed", "#lsa-query", "text"),
    Control("#lsa", 'III: twins "Compare"', "#twins-form button[type=submit]", "click"),
    Control("#fusion", "IV: weight slider", "#fusion-weight", "range"),
    Control("#fusion", "IV: fusion method (radios)", "input[name=fusion-method]", "radio"),
    Control("#fusion", "IV: k select", "#fusion-k", "select"),
    Control("#fusion", 'IV: "Use the training choice"', "#fusion-use-chosen", "click", once=True),
    Control("#rerank", "V: λ slider", "#rerank-lambda", "range"),
    Control("#rerank", "V: sweep metric", "#rerank-sweep-metric", "select"),
    Control("#rerank", "V: outdated-copy question", "#version-question", "select"),
    Control("#rerank", "V: first stage (trains again)", "#rerank-first", "select"),
    Control("#end-to-end", "VI: chunker + run", "#run-chunker", "select", RUN),
    Control("#end-to-end", "VI: size + run", "#run-size", "number", RUN),
    Control("#end-to-end", "VI: retriever + run", "#run-retriever", "select", RUN),
    Control(
        "#end-to-end",
        "VI: overlap + run",
        "#run-overlap",
        "number",
        RUN,
        (("#run-chunker", "fixed"),),
    ),
    Control(
        "#end-to-end",
        "VI: fusion weight's tuned switch + run",
        "#run-weight-tuned",
        "check",
        RUN,
        (("#run-retriever", "score"),),
    ),
    Control(
        "#end-to-end",
        "VI: fusion weight + run",
        "#run-weight",
        "range",
        RUN,
        (("#run-retriever", "score"), ("#run-weight-tuned", False)),
    ),
    Control("#end-to-end", "VI: reranker switch + run", "#run-rerank", "check", RUN),
    Control("#end-to-end", "VI: MMR switch + run", "#run-mmr", "check", RUN),
    Control("#end-to-end", "VI: λ's tuned switch + run", "#run-lambda-tuned", "check", RUN),
    Control(
        "#end-to-end",
        "VI: λ slider + run",
        "#run-lambda",
        "range",
        RUN,
        (("#run-lambda-tuned", False),),
    ),
    Control("#end-to-end", "VI: budget slider + run", "#run-budget", "range", RUN),
    Control(
        "#end-to-end", "VI: threshold's tuned switch + run", "#run-threshold-tuned", "check", RUN
    ),
    Control(
        "#end-to-end",
        "VI: threshold slider + run",
        "#run-threshold",
        "range",
        RUN,
        (("#run-threshold-tuned", False),),
    ),
)

#: In the page: the values a control is changed to, in turn (``n`` of them, none its current one);
#: a neural choice is left out, as the site lacks the neural vectors.
VALUES_JS = """([selector, kind, n]) => {
  const all = [...document.querySelectorAll(selector)];
  const el = all[0];
  if (!el) return null;
  // Round the values from the one after the current: no two changes in a row alike.
  const cycle = (xs, current) => {
    const at = xs.indexOf(current);
    if (xs.length < 2 && at === 0) return [];
    return Array.from({ length: n }, (_, i) => xs[(at + 1 + i) % xs.length]);
  };
  if (kind === "range" || kind === "number") {
    const lo = Number(el.min || 0), hi = Number(el.max || (kind === "number" ? 400 : 1));
    const step = Number(el.step) || (hi - lo) / 20;
    const low = kind === "number" ? 60 : lo, high = kind === "number" ? 300 : hi;
    const xs = [];
    for (let i = 0; i <= n; i++) {
      const v = low + Math.round(((high - low) * i) / n / step) * step;
      xs.push(String(Number(v.toFixed(6))));
    }
    return cycle([...new Set(xs)], el.value);
  }
  if (kind === "select") {
    const xs = [...el.options].map((o) => o.value).filter((v) => !/neural/.test(v));
    return cycle(xs, el.value);
  }
  if (kind === "radio") return cycle(all.map((r) => r.value), all.find((r) => r.checked)?.value);
  if (kind === "click") return Array.from({ length: n }, (_, i) => String(i % all.length));
  if (kind === "check") return Array.from({ length: n }, () => "toggle");
  if (kind === "text") {
    const words = selector === "#lsa-word"
      ? [...document.querySelectorAll("#lsa-suggestions button")].map((b) => b.textContent.trim())
      : [...document.querySelectorAll("#bm25-examples button")].map((b) => b.textContent.trim());
    return cycle(words, el.value);
  }
  return null;
}"""

#: In the page: change the control, then wait until its exhibit's DOM has not changed for
#: ``quiet`` ms; the milliseconds from the input event to the last change (null: none).
CHANGE_JS = """async ({ section, selector, kind, value, then, quiet, cap, idle }) => {
  const root = document.querySelector(section);
  const all = [...document.querySelectorAll(selector)];
  let last = null;
  const observer = new MutationObserver(() => { last = performance.now(); });
  observer.observe(root, { subtree: true, childList: true, characterData: true, attributes: true });
  const fire = (el, ...types) => types.forEach((t) => el.dispatchEvent(new Event(t, { bubbles: true })));
  const start = performance.now();
  if (kind === "click") all[Number(value)].click();
  else if (kind === "check") all[0].click();
  else if (kind === "radio") all.find((r) => r.value === value).click();
  else if (kind === "text") { all[0].value = value; fire(all[0], "input"); }
  else { all[0].value = value; fire(all[0], "input", "change"); }
  if (then) document.querySelector(then).click();
  for (;;) {
    await new Promise((r) => setTimeout(r, 5));
    const now = performance.now();
    if (last !== null ? now - last >= quiet || now - start >= cap : now - start >= idle) break;
  }
  observer.disconnect();
  return last === null ? null : last - start;
}"""


def say(message: str) -> None:
    """Progress on stderr (the report goes to stdout)."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def load1() -> float:
    return os.getloadavg()[0]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ok(url: str, proc: subprocess.Popen[bytes], timeout: float = TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with status {proc.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=5).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s")


@contextlib.contextmanager
def process(*args: str, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield proc
    finally:
        stop_process(proc)


@dataclass
class Measured:
    """One mode's figures: each a (value, one-minute load when it was taken)."""

    cold: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    engine: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    controls: dict[str, list[float]] = field(default_factory=dict)
    unseen: dict[str, int] = field(default_factory=dict)  # changes that showed nothing
    control_load: dict[str, float] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    transfer: tuple[int, int, float] = (0, 0, 0.0)  # bytes, requests, load
    memory: dict[str, tuple[float, float]] = field(default_factory=dict)


#: The cold load's steps: (name, its exhibit's section, the button clicked once the page is
#: ready or None, the selector and the text that show its numbers).
STEPS = (
    ("I: Cut", "#chunking", "#chunk-cut", "#chunk-count", r"\d"),
    (
        "II: example query",
        "#bm25",
        "#bm25-examples button",
        "#bm25-results .result-list > li .score",
        r"\d",
    ),
    ("II: the k1 × b grid", "#bm25", "#bm25-map", "#bm25-best", r"at k1 ="),
    ("III: the LSA fit", "#lsa", "#lsa-build", "#lsa-summary", "largest singular value"),
    ("IV: the table", "#fusion", None, "#fusion-table tr[data-ranker=bm25] td", r"\d\.\d{3}"),
    ("V: the reranker's training", "#rerank", "#rerank-train", "#rerank-summary", "candidate rows"),
    ("VI: the default run", "#end-to-end", "#run-button", "#run-accuracy", r"\d+ of \d+"),
)

#: Run in the page before its own scripts (``add_init_script``, ``%s`` the steps as JSON): in
#: ms from the navigation's start (``performance.now()``), when the page is ready, when each
#: step's numbers first show, and the last DOM change in any of the six exhibits; the moment
#: the page is ready, every step's button is clicked, in order, in the same task (what each
#: exhibit waits for is asked at once: the exhibits' answers may overlap in time).
COLD_JS = """(() => {
  const steps = %s;
  const sections = [...new Set(steps.map((s) => s[1]))];
  const cold = (window.__cold = { ready: null, shown: {}, last: null, all: null });
  const observer = new MutationObserver((mutations) => {
    const now = performance.now();
    for (const m of mutations) {
      const node = m.target.nodeType === 1 ? m.target : m.target.parentElement;
      if (node && sections.some((s) => node.closest(s))) cold.last = now;
    }
    if (cold.ready === null && document.body && document.body.dataset.ready === "true") {
      cold.ready = now;
      for (const [, , button] of steps) if (button) document.querySelector(button).click();
    }
    for (const [name, , , selector, pattern] of steps) {
      if (name in cold.shown) continue;
      const e = document.querySelector(selector);
      if (e && new RegExp(pattern).test(e.textContent)) cold.shown[name] = now;
    }
    if (cold.all === null && Object.keys(cold.shown).length === steps.length) cold.all = now;
  });
  observer.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
  cold.stop = () => observer.disconnect();
})();"""


def render_all(page: Page, base: str, into: dict[str, list[tuple[float, float]]]) -> None:
    """Open the page (``COLD_JS`` installed in its context) and wait until every exhibit shows
    its numbers and no exhibit has changed for ``QUIET_MS``; the times, from the navigation's
    start, to the page being ready, to each step's numbers and to the last exhibit's last
    change: the first full render of all six exhibits, in the page's own clock."""
    page.goto(f"{base}/")
    page.wait_for_function(
        f"() => window.__cold.all !== null && performance.now() - window.__cold.last >= {QUIET_MS}",
        timeout=TIMEOUT_S * 1000,
        polling=50,
    )
    cold = page.evaluate("() => { window.__cold.stop(); return window.__cold; }")
    load = load1()
    into.setdefault("page ready (body[data-ready])", []).append((cold["ready"] / 1000, load))
    # Part of the above: the page's HTML parsed and its module scripts loaded and run
    # (DOMContentLoaded waits for them), before any exhibit's answer.
    loaded = page.evaluate("performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd")
    into.setdefault("of which the page's HTML and scripts (DOMContentLoaded)", []).append(
        (float(loaded) / 1000, load)
    )
    for name, *_ in STEPS:
        into.setdefault(f"{name}: numbers shown", []).append((cold["shown"][name] / 1000, load))
    into.setdefault(ALL_SIX, []).append((cold["last"] / 1000, load))


#: The row of the first full render, the issue's goal.
ALL_SIX = "all six exhibits rendered: the last exhibit's last DOM change"


def renderer_rss(before: set[int]) -> float:
    """MiB resident in the largest renderer process started since ``before``: the tab's (a
    spare renderer Chromium keeps ready is far smaller); its Worker runs in it."""
    largest = 0
    for p in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if p.pid not in before and "--type=renderer" in " ".join(p.cmdline()):
                largest = max(largest, p.memory_info().rss)
    return largest / 2**20


def renderers() -> set[int]:
    out = set()
    for p in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if "--type=renderer" in " ".join(p.cmdline()):
                out.add(p.pid)
    return out


#: In the page: whether a control is there and enabled ("ok", "disabled", "missing").
STATE_JS = """(s) => {
  const e = document.querySelector(s);
  if (!e) return "missing";
  return e.disabled || e.getAttribute("aria-disabled") === "true" ? "disabled" : "ok";
}"""

#: In the page: what a control holds now (a radio group's checked value, a switch's state).
HOLDS_JS = """([selector, kind]) => {
  const all = [...document.querySelectorAll(selector)];
  if (kind === "radio") return all.find((r) => r.checked)?.value ?? null;
  if (kind === "check") return all[0].checked ? "on" : "off";
  return kind === "click" ? null : all[0].value;
}"""


def change(page: Page, c: Control, value: str) -> float | None:
    """Change control ``c`` to ``value`` in the page; ms to its exhibit's last change, or None."""
    page.locator(c.selector).first.scroll_into_view_if_needed()
    ms = page.evaluate(
        CHANGE_JS,
        {
            "section": c.section,
            "selector": c.selector,
            "kind": c.kind,
            "value": value,
            "then": c.then,
            "quiet": QUIET_MS,
            "cap": CAP_MS,
            "idle": IDLE_MS,
        },
    )
    return None if ms is None else float(ms)


def prepare(page: Page, selector: str, want: bool | str) -> bool | str:
    """Set a switch (``want``: checked) or a select (``want``: its value) untimed, as a visitor
    would; what it held before."""
    box = page.locator(selector)
    if isinstance(want, bool):
        was: bool | str = box.is_checked()
        if was != want:
            box.click()
    else:
        was = box.input_value()
        if was != want:
            box.select_option(want)
    return was


def measure_control(page: Page, c: Control, repeats: int, m: Measured) -> None:
    """Change ``c`` ``repeats`` times (once for a one-shot button), timing each; then put it
    back as it was, untimed, with the switches its ``prepare`` set."""
    undo = [(selector, prepare(page, selector, want)) for selector, want in c.prepare]
    page.wait_for_timeout(QUIET_MS)
    state = page.evaluate(STATE_JS, c.selector)
    n = 1 if c.once else repeats
    values = page.evaluate(VALUES_JS, [c.selector, c.kind, n]) if state == "ok" else None
    if not values:
        m.skipped[c.label] = state if state != "ok" else "no other value"
        return
    say(f"  {c.label}: {values}")
    held = page.evaluate(HOLDS_JS, [c.selector, c.kind])
    samples, unseen = [], 0
    for value in values:
        if page.evaluate(STATE_JS, c.selector) != "ok":
            break
        ms = change(page, c, value)
        if ms is None:
            unseen += 1
        else:
            samples.append(ms)
    m.controls[c.label] = samples
    m.unseen[c.label] = unseen
    m.control_load[c.label] = load1()
    if c.kind != "click" and page.evaluate(HOLDS_JS, [c.selector, c.kind]) != held:
        change(page, c, "toggle" if c.kind == "check" else held)
    for selector, was in reversed(undo):
        prepare(page, selector, was)
    page.wait_for_timeout(QUIET_MS)


def cold_context(browser: Browser) -> BrowserContext:
    """A new context (empty cache and storage) whose pages run ``COLD_JS``."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(COLD_JS % json.dumps([list(step) for step in STEPS]))
    return context


#: The cold load's memory row: the tab's renderer process once all six exhibits are rendered.
COLD_RSS = "the tab's renderer process, resident, once all six are rendered (MiB)"


def cold_load(
    browser: Browser,
    base: str,
    into: dict[str, list[tuple[float, float]]],
    memory: dict[str, list[tuple[float, float]]] | None = None,
) -> tuple[int, int]:
    """One cold load in a new context (:func:`render_all`); the bytes it transferred (bodies
    and headers, the Workers' requests included) and the number of requests. With ``memory``,
    the MiB resident in the tab's renderer process (its Workers run in it) once rendered, as
    :data:`COLD_RSS`."""
    before = renderers()
    context = cold_context(browser)
    requests: list[Request] = []
    # A function of ours: Playwright cannot wrap a builtin such as list.append as a handler.
    context.on("requestfinished", lambda request: requests.append(request))
    render_all(context.new_page(), base, into)
    if memory is not None:
        memory.setdefault(COLD_RSS, []).append((renderer_rss(before), load1()))
    sizes = [r.sizes() for r in requests]
    context.close()
    return sum(x["responseBodySize"] + x["responseHeadersSize"] for x in sizes), len(sizes)


#: In a page of the site's origin: a fresh engine Worker asked, in turn, the routes behind the
#: long steps; per route the ms to its answer, its status and the Worker's progress marks.
ENGINE_JS = """async (routes) => {
  const worker = new Worker("/static/engine/worker.js", { type: "module" });
  let next = 0;
  const ask = (url, method) => new Promise((resolve) => {
    const id = ++next;
    const marks = [];
    const start = performance.now();
    worker.addEventListener("message", function on(event) {
      if (event.data.id !== id) return;
      const now = performance.now() - start;
      if (event.data.progress) { marks.push([now, event.data.progress.done, event.data.progress.total]); return; }
      worker.removeEventListener("message", on);
      resolve({ ms: now, status: event.data.status, marks });
    });
    worker.postMessage({ id, url, method });
  });
  const out = {};
  for (const [name, url, method] of routes) out[name] = await ask(url, method);
  worker.terminate();
  return out;
}"""

#: The engine's long steps, in the order a fresh Worker meets them: (name, route, method).
ENGINE_STEPS = (
    ("the site's data loaded and parsed (/api/meta)", "/api/meta", "GET"),
    ("the LSA fit (/api/lsa)", "/api/lsa", "GET"),
    ("the k1 × b grid (/api/bm25/grid)", "/api/bm25/grid?stem=false", "GET"),
    ("the reranker's training (/api/rerank/train)", "/api/rerank/train", "POST"),
)


def engine_steps(browser: Browser, base: str, into: dict[str, list[tuple[float, float]]]) -> None:
    """The long steps timed in a fresh Worker of the site: from the request to its answer and,
    where the engine marks progress, from its first mark to its last (the step alone)."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{base}/data/site.json")
    answers = page.evaluate(ENGINE_JS, [[u, r, method] for u, r, method in ENGINE_STEPS])
    context.close()
    for name, got in answers.items():
        if got["status"] != 200:
            raise RuntimeError(f"the Worker answered {got['status']} for {name}")
        into.setdefault(f"{name}, request to answer", []).append((got["ms"] / 1000, load1()))
        if len(got["marks"]) >= 2:
            span = got["marks"][-1][0] - got["marks"][0][0]
            into.setdefault(f"{name}, first to last progress mark", []).append(
                (span / 1000, load1())
            )


def server_steps(base: str, into: dict[str, list[tuple[float, float]]]) -> None:
    """The same routes asked of the server over HTTP, request to answer (after its warm-up)."""
    with httpx.Client(base_url=base, timeout=TIMEOUT_S) as client:
        for name, route, method in ENGINE_STEPS:
            start = time.perf_counter()
            status = client.request(method, route).status_code
            if status != 200:
                raise RuntimeError(f"the server answered {status} for {name}")
            into.setdefault(f"{name}, request to answer", []).append(
                (time.perf_counter() - start, load1())
            )


def measure_mode(browser: Browser, base: str, cold: int, repeats: int, *, in_tab: bool) -> Measured:
    """Every figure of one mode: the long steps, ``cold`` cold loads, the controls, memory."""
    m = Measured()
    for _ in range(cold if in_tab else 1):
        if in_tab:
            engine_steps(browser, base, m.engine)
        else:
            server_steps(base, m.engine)
    for i in range(cold):
        transferred = cold_load(browser, base, m.cold)
        if i == 0:
            m.transfer = (*transferred, load1())
    before = renderers()
    context = cold_context(browser)
    page = context.new_page()
    render_all(page, base, {})
    for c in CONTROLS:
        measure_control(page, c, repeats, m)
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    metrics = {x["name"]: x["value"] for x in cdp.send("Performance.getMetrics")["metrics"]}
    m.memory["JS heap used, main thread (CDP JSHeapUsedSize)"] = (
        metrics["JSHeapUsedSize"] / 2**20,
        load1(),
    )
    m.memory["the tab's renderer process, resident (the page and its Worker)"] = (
        renderer_rss(before),
        load1(),
    )
    context.close()
    return m


def pct(samples: list[float], q: float) -> float:
    xs = sorted(samples)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def folder_bytes(folder: Path) -> tuple[int, int]:
    """(bytes of every file, bytes of the neural weights' files among them)."""
    total = weights = 0
    for p in folder.rglob("*"):
        if p.is_file():
            size = p.stat().st_size
            total += size
            if p.suffix == ".bin" or "weights" in p.name:
                weights += size
    return total, weights


def cold_cells(samples: list[tuple[float, float]]) -> str:
    """The median time of a cold-load step and the median load beside it, as two cells."""
    if not samples:
        return " | "
    seconds = statistics.median(x for x, _ in samples)
    return f"{seconds * 1000:,.0f} ms | {statistics.median(a for _, a in samples):.2f}"


def report(
    site: Measured,
    server: Measured,
    built: tuple[float, float],
    folder: tuple[int, int],
    args: argparse.Namespace,
    loads: tuple[float, float],
) -> str:
    out = [
        "## 10. The static site in Chromium beside `raglab serve` (handbook)",
        "",
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, Chromium "
        f"{args.chromium_version}; one-minute load {loads[0]:.2f} at the start, {loads[1]:.2f} "
        f"at the end. Cold loads: {args.cold}; repeats a control: {args.repeats}; "
        f"an interaction ends {QUIET_MS} ms after its exhibit's last DOM change. "
        + (
            f"`raglab site` wrote the site in {built[0]:.1f} s (load {built[1]:.2f})."
            if args.site is None
            else "The site was written beforehand (--site)."
        ),
        "",
        "### Cold load (new context), median",
        "",
        "| Step | Site (in the tab) | load | Server (`raglab serve`) | load | Goal |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name in site.cold:
        s, v = site.cold[name], server.cold.get(name, [])
        goal = f"≤ {RENDER_GOAL_S} s" if name == ALL_SIX else ""
        out.append(f"| {name} | {cold_cells(s)} | {cold_cells(v)} | {goal} |")
    out += [
        "",
        "### The long steps: a fresh Worker of the site; the server over HTTP, after its warm-up",
        "",
        "| Step | Site (in the tab) | load | Server | load |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in site.engine:
        server_cells = cold_cells(server.engine.get(name, []))
        out.append(f"| {name} | {cold_cells(site.engine[name])} | {server_cells} |")
    out += [
        "",
        f"### Controls: input event to the exhibit's last change (ms; goal p95 ≤ {INTERACTION_GOAL_MS:.0f})",
        "",
        "| Control | Site p50 | Site p95 | load | Server p50 | Server p95 | load |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    over = []
    for c in CONTROLS:
        row = [c.label]
        for m in (site, server):
            xs = m.controls.get(c.label)
            unseen = m.unseen.get(c.label, 0)
            if xs:
                seen = f" ({unseen} showed nothing)" if unseen else ""
                row += [
                    f"{pct(xs, 0.5):,.0f}{seen}",
                    f"{pct(xs, 0.95):,.0f}",
                    f"{m.control_load[c.label]:.2f}",
                ]
            elif unseen:
                row += [f"{unseen} showed nothing", "", ""]
            else:
                row += [m.skipped.get(c.label, "not measured"), "", ""]
        xs = site.controls.get(c.label)
        if xs and pct(xs, 0.95) > INTERACTION_GOAL_MS:
            over.append(c.label)
        out.append("| " + " | ".join(row) + " |")
    size_mb = site.transfer[0] / 1e6
    out += [
        "",
        "### Size and memory",
        "",
        "| Figure | Site | load | Server | load | Goal |",
        "|---|---:|---:|---:|---:|---|",
        f"| transferred by the cold load (bodies and headers; {site.transfer[1]} and "
        f"{server.transfer[1]} requests) | {size_mb:.2f} MB | {site.transfer[2]:.2f} | "
        f"{server.transfer[0] / 1e6:.2f} MB | {server.transfer[2]:.2f} | ≤ {SIZE_GOAL_MB:.0f} MB (site, no weights) |",
        f"| the site folder, all files | {folder[0] / 1e6:.2f} MB | | | | |",
        f"| of which neural weights | {folder[1] / 1e6:.2f} MB | | | | |",
    ]
    for key in site.memory:
        (a, la), (b, lb) = site.memory[key], server.memory[key]
        out.append(
            f"| {key}, after the controls | {a:.1f} MiB | {la:.2f} | {b:.1f} MiB | {lb:.2f} | |"
        )
    out += [
        "",
        f"Site controls over the {INTERACTION_GOAL_MS:.0f} ms goal at p95: "
        + (", ".join(over) if over else "none")
        + ".",
    ]
    out.append(
        "The sliders and typed fields wait out the page's own 50 ms debounce (lib.js) before "
        "they ask, in both modes; the figures include it. The two modes ran one after the "
        "other: compare them where their loads are alike."
    )
    skipped = {**site.skipped, **server.skipped}
    if skipped:
        out.append("Not measured: " + "; ".join(f"{k} ({v})" for k, v in skipped.items()) + ".")
    return "\n".join(out)


@contextlib.contextmanager
def served(folder: Path, env: dict[str, str]) -> Iterator[str]:
    """``folder`` served by ``python -m http.server`` on a free port: its base URL."""
    port = free_port()
    args = ("-m", "http.server", str(port), "--bind", "127.0.0.1", "-d", str(folder))
    with process(*args, env=env) as proc:
        base = f"http://127.0.0.1:{port}"
        wait_ok(f"{base}/", proc)
        yield base


def versus(site: Path, other: Path, cold: int, env: dict[str, str]) -> str:
    """Cold loads of ``site`` and ``other`` in turn (``cold`` of each; the first of each pair
    alternates, so a load that drifts weighs on both alike): the cold-load table of the two."""
    times: tuple[dict[str, list[tuple[float, float]]], ...] = ({}, {})
    memory: tuple[dict[str, list[tuple[float, float]]], ...] = ({}, {})
    with served(site, env) as a, served(other, env) as b, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        try:
            for i in range(cold):
                for which in (0, 1) if i % 2 == 0 else (1, 0):
                    say(f"cold load {i + 1} of {'the site' if which == 0 else other}")
                    cold_load(browser, (a, b)[which], times[which], memory[which])
        finally:
            browser.close()
    out = [
        f"### Cold load, two sites in turn ({cold} loads each, median), "
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        "",
        f"| Step | this site | load | {other} | load | Goal |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name in times[0]:
        goal = f"≤ {RENDER_GOAL_S} s" if name == ALL_SIX else ""
        out.append(
            f"| {name} | {cold_cells(times[0][name])} | {cold_cells(times[1][name])} | {goal} |"
        )
    for name in memory[0]:
        cells = [
            f"{statistics.median(x for x, _ in m[name]):,.0f} MiB | "
            f"{statistics.median(a for _, a in m[name]):.2f}"
            for m in memory
        ]
        out.append(f"| {name} | {cells[0]} | {cells[1]} | |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 cold load, 2 repeats a control")
    parser.add_argument("--cold", type=int, default=3, help="cold loads per mode")
    parser.add_argument("--repeats", type=int, default=5, help="changes per control")
    parser.add_argument(
        "--site",
        type=Path,
        default=None,
        help="a folder `raglab site` wrote from this checkout, measured as it is (not rebuilt)",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="the server's RAGLAB_CACHE_DIR (default: a temporary one, so it encodes afresh)",
    )
    parser.add_argument(
        "--against",
        type=Path,
        default=None,
        help="another written site (say, from an older checkout): only cold loads, of the two "
        "sites in turn, --cold of each",
    )
    args = parser.parse_args()
    if args.quick:
        args.cold, args.repeats = 1, 2
    start_load = load1()
    with tempfile.TemporaryDirectory(prefix="raglab-bench-site-") as tmp:
        env = {
            **os.environ,
            "RAGLAB_CACHE_DIR": str(args.cache or Path(tmp) / "cache"),
            "PYTHONPATH": str(ROOT / "src"),
        }
        site_dir = args.site or Path(tmp) / "site"
        t = time.perf_counter()
        if args.site is None:
            subprocess.run(
                [sys.executable, "-m", "raglab", "site", "--out", str(site_dir), "--quiet"],
                cwd=ROOT,
                env=env,
                check=True,
            )
        built = (time.perf_counter() - t, load1())
        if args.against is not None:
            print(versus(site_dir, args.against, args.cold, env))
            return
        folder = folder_bytes(site_dir)
        site_port, server_port = free_port(), free_port()
        with (
            process(
                "-m",
                "http.server",
                str(site_port),
                "--bind",
                "127.0.0.1",
                "-d",
                str(site_dir),
                env=env,
            ) as static,
            process(
                "-m", "raglab", "serve", "--port", str(server_port), "--quiet", env=env
            ) as served,
        ):
            site_base = f"http://127.0.0.1:{site_port}"
            server_base = f"http://127.0.0.1:{server_port}"
            wait_ok(f"{site_base}/", static)
            wait_ok(f"{server_base}/api/meta", served)
            say("waiting for the server's neural vectors")
            deadline = time.monotonic() + 900
            while not httpx.get(f"{server_base}/api/neural/encoding", timeout=30).json()["ready"]:
                if time.monotonic() > deadline:
                    raise RuntimeError("the server did not encode its neural vectors in 15 minutes")
                time.sleep(1)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
                args.chromium_version = browser.version
                try:
                    say("the site, in the tab")
                    site = measure_mode(browser, site_base, args.cold, args.repeats, in_tab=True)
                    say("raglab serve")
                    server = measure_mode(
                        browser, server_base, args.cold, args.repeats, in_tab=False
                    )
                finally:
                    browser.close()
    print(report(site, server, built, folder, args, (start_load, load1())))


if __name__ == "__main__":
    main()
