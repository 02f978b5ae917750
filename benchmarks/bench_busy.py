"""Busy machine: BM25 batches and BLAS products while another process spins on one core.

A bounded competing load: one process spinning in a Python loop, pinned to the last core this
process may use, started before the timing and stopped after it (it stops itself after
``SPIN_LIMIT`` seconds whatever happens). Under it each workload runs in three modes, interleaved
repeat by repeat, medians of the repeats:

- **one thread**, the floor (the goal: a busy machine never runs slower than this);
- **threads = cores** (before): the count taken from the machine's size, as a library that
  ignores the load would (``threads=`` the cores; BLAS at the cores);
- **auto** (after): :func:`raglab.base.threads.resolve_threads`, the cores free now (the cores
  less the running load, at least 1), the ``threads`` setting's default.

Workloads: ``BM25Index.search_many`` (numba and numpy backends) over generated chunks of 100 to
200 tokens drawn from a Zipf law (s = 1) over 50,000 terms, with queries of 3 to 8 terms drawn
from the same law; float32 matrix products of the neural encoder's feed-forward shape (a batch
of 32 texts of 128 word pieces: (4,096 x 384) @ (384 x 1,536), then back); and, with the neural
model installed, the encoder itself on the handbook's first chunks (default chunking, batches of
32), as :func:`raglab.pipeline.dense.chunk_index` runs it. BLAS is capped by
:func:`raglab.base.threads.blas_threads`. Answers are checked first: the BM25 lists of the three
modes equal bit for bit, the products and the vectors within 1e-5.

The workloads run in a fresh process without the thread variables run.py sets (a process told
to take one thread is what "auto" honours, so they would make every mode one thread). The load
average (one minute) is stated before the spinner starts and after it stops: other work on the
machine adds to the one spinning process.

    python benchmarks/bench_busy.py            # 20,000 chunks, 1,000 queries, 7 repeats
    python benchmarks/bench_busy.py --quick    # 5,000 chunks, 200 queries, 3 repeats
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(1, str(Path(__file__).resolve().parent))

from common import Config, Disagreement, Section, run_json_worker, time_repeats

THREAD_VARIABLES = (
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMBA_NUM_THREADS",
)
TERMS = 50_000
MIN_LEN, MAX_LEN = 100, 200
QUERY_MIN, QUERY_MAX = 3, 8
TOP_K = 10
SEED = 21
K1, B = 1.2, 0.75
SIZES = {"full": (20_000, 1_000, 7), "quick": (5_000, 200, 3)}  # chunks, queries, repeats
ENCODED = {"full": 64, "quick": 32}  # handbook chunks encoded a run
BATCH_ROWS, HIDDEN, INNER = 32 * 128, 384, 1_536  # the encoder's feed-forward product
SPIN_LIMIT = 900.0  # seconds: the spinner stops itself after this, whatever happens
MODES = ("one thread", "threads = cores (before)", "auto (after)")


def make_data(n_docs: int, n_queries: int) -> tuple[list[list[str]], list[list[str]]]:
    """Seeded chunks and Zipf-drawn queries (terms absent from the chunks are dropped)."""
    rng = np.random.default_rng(SEED)
    p = 1.0 / np.arange(1, TERMS + 1, dtype=np.float64)
    cdf = np.cumsum(p / p.sum())
    names = np.array([f"t{i}" for i in range(TERMS)], dtype=object)

    def draw(size: int) -> np.ndarray:
        out: np.ndarray = np.minimum(np.searchsorted(cdf, rng.random(size)), TERMS - 1)
        return out

    lengths = rng.integers(MIN_LEN, MAX_LEN + 1, size=n_docs)
    ids = draw(int(lengths.sum()))
    seen = np.zeros(TERMS, dtype=bool)
    seen[ids] = True
    bounds = np.concatenate(([0], np.cumsum(lengths))).tolist()
    docs = [names[ids[a:z]].tolist() for a, z in itertools.pairwise(bounds)]
    queries: list[list[str]] = []
    while len(queries) < n_queries:
        drawn = draw(int(rng.integers(QUERY_MIN, QUERY_MAX + 1)))
        known = drawn[seen[drawn]]
        if known.size:
            queries.append(names[known].tolist())
    return docs, queries


def _spinner(core: int) -> subprocess.Popen[bytes]:
    code = (
        "import os, time\n"
        f"os.sched_setaffinity(0, {{{core}}})\n"
        f"end = time.monotonic() + {SPIN_LIMIT}\n"
        "while time.monotonic() < end:\n"
        "    pass\n"
    )
    return subprocess.Popen([sys.executable, "-c", code])


def _encoder(n_chunks: int) -> Callable[[int], np.ndarray] | None:
    """Encoding the handbook's first ``n_chunks`` chunks with BLAS on a given count of threads,
    or None without the neural model."""
    from raglab.base.threads import blas_threads
    from raglab.pipeline import dense
    from raglab.pipeline.lab import Lab

    if dense.unavailable(None) is not None:
        return None
    model = dense.load(None)
    texts = [c.text for c in Lab.load().indexes.chunk_set().chunks[:n_chunks]]

    def encode(threads: int) -> np.ndarray:
        with blas_threads(threads):
            out: np.ndarray = model.encode(texts, batch_size=32)
        return out

    return encode


def worker(quick: bool) -> dict[str, Any]:
    from raglab.base.threads import blas_threads, resolve_threads, usable_cores
    from raglab.bm25.index import BM25Index

    n_docs, n_queries, repeats = SIZES["quick" if quick else "full"]
    cores = usable_cores()
    docs, queries = make_data(n_docs, n_queries)
    index = BM25Index(docs, k1=K1, b=B)
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((BATCH_ROWS, HIDDEN)).astype(np.float32)
    w1 = rng.standard_normal((HIDDEN, INNER)).astype(np.float32) / np.float32(HIDDEN**0.5)
    w2 = rng.standard_normal((INNER, HIDDEN)).astype(np.float32) / np.float32(INNER**0.5)

    def product(threads: int) -> np.ndarray:
        with blas_threads(threads):
            out: np.ndarray = (x @ w1) @ w2
        return out

    encode = _encoder(ENCODED["quick" if quick else "full"])

    # Checked before timing (and compiled, for numba): every mode gives the same answers.
    for backend in ("numba", "numpy"):
        want = index.search_many(queries, k=TOP_K, backend=backend, threads=1)
        for threads in (cores, "auto"):
            got = index.search_many(queries, k=TOP_K, backend=backend, threads=threads)
            if not (np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])):
                raise Disagreement(f"search_many ({backend}) on {threads} threads differs")
    want_product = product(1)
    if not np.allclose(product(cores), want_product, rtol=1e-5, atol=1e-5):
        raise Disagreement(f"the products on {cores} BLAS threads differ from one thread's")
    if encode is not None and not np.allclose(encode(cores), encode(1), rtol=1e-5, atol=1e-5):
        raise Disagreement(f"the vectors on {cores} BLAS threads differ from one thread's")

    def modes(run: Callable[[int | str], object]) -> dict[str, Callable[[], object]]:
        return {
            MODES[0]: lambda: run(1),
            MODES[1]: lambda: run(cores),
            MODES[2]: lambda: run("auto"),
        }

    workloads: dict[str, dict[str, Callable[[], object]]] = {
        f"search_many, numba, {n_queries:,} queries": modes(
            lambda t: index.search_many(queries, k=TOP_K, backend="numba", threads=t)
        ),
        f"search_many, numpy, {n_queries:,} queries": modes(
            lambda t: index.search_many(queries, k=TOP_K, backend="numpy", threads=t)
        ),
        "BLAS: (4,096 x 384) @ (384 x 1,536) @ (1,536 x 384), float32": modes(
            lambda t: product(resolve_threads(t))
        ),
    }
    if encode is not None:
        workloads[
            f"neural encoder, {ENCODED['quick' if quick else 'full']} handbook chunks, batch 32"
        ] = modes(lambda t: encode(resolve_threads(t)))
    load_before = os.getloadavg()[0]
    spinner = _spinner(max(os.sched_getaffinity(0)))
    try:
        time.sleep(1.0)  # let the spinner reach its core
        times: dict[str, dict[str, list[float]]] = {w: {m: [] for m in MODES} for w in workloads}
        chose: list[int] = []
        for _ in range(repeats):
            for name, runs in workloads.items():
                for mode, fn in runs.items():
                    if mode == MODES[2]:
                        chose.append(resolve_threads("auto"))
                    times[name][mode].append(time_repeats(fn, repeats=1).samples[0])
        load_end = os.getloadavg()[0]
    finally:
        spinner.kill()
        spinner.wait()
    return {
        "cores": cores,
        "chunks": n_docs,
        "repeats": repeats,
        "times": times,
        "auto_chose": chose,
        "load": [load_before, load_end],
    }


def table(result: dict[str, Any]) -> list[str]:
    """The section's table: median seconds per mode, and the ratios to one thread and cores."""
    lines = [
        "| Workload | One thread | Threads = cores (before) | auto (after) | auto / one thread |"
        " auto / cores | Repeats (ms), auto |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, by_mode in result["times"].items():
        med = {m: float(np.median(v)) for m, v in by_mode.items()}
        auto = by_mode[MODES[2]]
        lines.append(
            f"| {name} | {med[MODES[0]] * 1e3:,.1f} ms | {med[MODES[1]] * 1e3:,.1f} ms | "
            f"{med[MODES[2]] * 1e3:,.1f} ms | {med[MODES[2]] / med[MODES[0]]:.2f} | "
            f"{med[MODES[2]] / med[MODES[1]]:.2f} | {min(auto) * 1e3:,.1f} to "
            f"{max(auto) * 1e3:,.1f} |"
        )
    return lines


def notes(result: dict[str, Any]) -> list[str]:
    chose = result["auto_chose"]
    counts = ", ".join(f"{t} thread(s) {chose.count(t)} times" for t in sorted(set(chose)))
    start, end = result["load"]
    return [
        f"{result['cores']} usable cores, {result['chunks']:,} chunks, {result['repeats']} "
        f"repeats a mode, interleaved; a ratio below 1: auto took less time than that mode.",
        f"auto chose {counts} (once before each of its runs).",
        f"Load average (1 min): {start:.2f} before the spinner started, {end:.2f} when it was "
        "stopped (the spinner adds about 1; the rest is other work on the machine).",
    ]


def run(cfg: Config) -> Section:
    section = Section(
        "busy",
        "9. Busy machine: one thread, threads = cores (before) and auto (after), one core spun",
        __doc__.split("\n\n")[1].replace("\n", " "),
    )
    result = run_json_worker(
        Path(__file__).resolve(),
        ["--worker", *(["--quick"] if cfg.quick else [])],
        timeout=SPIN_LIMIT,
        drop_env=THREAD_VARIABLES,
    )
    section.extra, section.notes = table(result), notes(result)
    return section


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="5,000 chunks, 3 repeats")
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.quick)))
        return 0
    result = run_json_worker(
        Path(__file__).resolve(),
        ["--worker", *(["--quick"] if args.quick else [])],
        timeout=SPIN_LIMIT,
        drop_env=THREAD_VARIABLES,
    )
    print("\n".join([*table(result), "", *(f"- {n}" for n in notes(result))]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
