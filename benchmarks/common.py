"""What every benchmark shares: timing, memory, agreement checks, data, machine info, the table.

Timing: ``time.perf_counter`` around the call, repeated; a benchmark reports the median of the
repeats (and the 95th percentile where it says so). Nothing is timed before both sides have been
run once untimed on the same data and their answers compared (:class:`Disagreement` otherwise).

Memory: :func:`traced_peak` runs the call once more, untimed, under :mod:`tracemalloc` and reports
the peak of the bytes allocated during the call above what was allocated before it. tracemalloc
sees every Python object and every numpy buffer (numpy reports its allocations to it), so it
measures the working memory of numpy/scipy code exactly; it does not see memory that compiled
extensions allocate behind Python's back (numba's runtime, BLAS work buffers). The process's peak
resident set size (``resource.getrusage``) is reported once, for the whole run, in the header.
"""

from __future__ import annotations

import datetime as dt
import gc
import itertools
import json
import math
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = ROOT / "benchmarks"
CRANFIELD_DIR = ROOT / "tests" / "fixtures" / "cranfield"

# Generated BM25 corpus (full run): chunks of 50 to 150 tokens drawn from a Zipf vocabulary.
GEN_TERMS = 50_000
GEN_ZIPF_EXPONENT = 1.0
GEN_MIN_LEN = 50
GEN_MAX_LEN = 150
GEN_QUERY_MIN = 2
GEN_QUERY_MAX = 6
GEN_SEED = 20240611

T = TypeVar("T")
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class Disagreement(AssertionError):
    """Both sides of a comparison were run on the same data and gave different answers."""


def run_json_worker(
    script: Path,
    args: Sequence[str],
    timeout: float,
    *,
    label: str = "",
    drop_env: Sequence[str] = (),
) -> dict[str, Any]:
    """``python script *args`` in a fresh process, whose last line of output is a JSON object:
    that object. A worker that failed its check of equal answers raises :class:`Disagreement`
    (with ``label`` before its last line of errors), any other failure RuntimeError. The
    worker inherits this process's environment less the variables named in ``drop_env``."""
    env = {k: v for k, v in os.environ.items() if k not in drop_env}
    proc = subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )
    if proc.returncode != 0:
        if "Disagreement" in proc.stderr:
            raise Disagreement(label + proc.stderr.strip().splitlines()[-1])
        raise RuntimeError(f"worker {' '.join(args)} failed: {proc.stderr.strip()[-2000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


# --- configuration ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Config:
    """Sizes of one run. The full run is what RESULTS.md reports; ``--quick`` shrinks everything."""

    quick: bool
    repeats: int  # repeats of a fast measurement
    slow_repeats: int  # repeats of a measurement that takes seconds
    gen_chunks: int  # generated BM25 corpus
    gen_queries: int
    query_batches: int  # the generated queries are timed in this many equal batches
    rank_bm25_queries: int  # rank_bm25 scores every document in Python: a subset of queries
    svd_rows: int
    svd_cols: int
    svd_density: float
    metric_queries: int
    e2e_repeats: int
    retrieval_questions: int  # questions timed on the generated corpus (BM25 + LSA + RRF)
    api_repeats: int
    large: bool = False  # the BM25 sweep adds 1,000,000 chunks (run.py --large)

    @classmethod
    def make(cls, *, quick: bool, large: bool = False) -> Config:
        if quick:
            return cls(
                quick=True,
                repeats=3,
                slow_repeats=2,
                gen_chunks=20_000,
                gen_queries=200,
                query_batches=4,
                rank_bm25_queries=20,
                svd_rows=20_000,
                svd_cols=5_000,
                svd_density=1e-3,
                metric_queries=2_000,
                e2e_repeats=2,
                retrieval_questions=50,
                api_repeats=5,
                large=large,
            )
        return cls(
            quick=False,
            repeats=7,
            slow_repeats=3,
            gen_chunks=200_000,
            gen_queries=1_000,
            query_batches=5,
            rank_bm25_queries=20,
            svd_rows=200_000,
            svd_cols=50_000,
            svd_density=1e-4,
            metric_queries=10_000,
            e2e_repeats=3,
            retrieval_questions=200,
            api_repeats=20,
            large=large,
        )


# --- timing and memory --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Timing:
    """Wall-clock seconds of each repeat."""

    samples: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def p95(self) -> float:
        """The 95th percentile (nearest rank) of the samples."""
        ordered = sorted(self.samples)
        return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def stop_process(proc: subprocess.Popen[Any], grace: float = 10.0) -> None:
    """Stop a server the benchmark started: SIGTERM, then SIGKILL after ``grace`` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    """``fn()`` and the seconds it took."""
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def time_repeats(fn: Callable[[], object], *, repeats: int) -> Timing:
    """Seconds of ``repeats`` calls of ``fn``; the garbage collector runs between calls, not in."""
    samples = []
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            _, seconds = timed(fn)
        finally:
            gc.enable()
        samples.append(seconds)
    return Timing(tuple(samples))


def traced_peak(fn: Callable[[], T]) -> tuple[T, int, int]:
    """``fn()``, its peak and its retained memory in bytes, as tracemalloc sees them.

    Peak: the most bytes allocated at once during the call, above what was allocated before.
    Retained: what is still allocated when the call returns (the result, caches it filled).
    """
    gc.collect()
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        result = fn()
        after, peak = tracemalloc.get_traced_memory()
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return result, max(0, peak - before), max(0, after - before)


# --- agreement ----------------------------------------------------------------------------------


def check_rankings(
    what: str,
    ours: Sequence[tuple[IntArray, FloatArray]],
    theirs: Sequence[tuple[IntArray, FloatArray]],
    *,
    scale: float,
    rtol: float,
    rescore: Callable[[int], FloatArray],
) -> str:
    """Assert that two top-k lists per query are the same ranking; returns a one-line summary.

    ``theirs`` scores times ``scale`` must equal ours position by position (within ``rtol``).
    Where the document lists differ, every document they list at a position must have, by our
    scoring (``rescore(q)``, all documents), the score we have at that position: the two lists
    then differ only in how they order (or cut) documents with equal scores. Anything else raises
    :class:`Disagreement`.
    """
    if len(ours) != len(theirs):
        raise Disagreement(f"{what}: {len(ours)} rankings against {len(theirs)}")
    identical = 0
    for q, ((a_idx, a_s), (b_idx, b_s)) in enumerate(zip(ours, theirs, strict=True)):
        a_idx = np.asarray(a_idx, dtype=np.int64)
        b_idx = np.asarray(b_idx, dtype=np.int64)
        a_s = np.asarray(a_s, dtype=np.float64)
        b_s = np.asarray(b_s, dtype=np.float64) * scale
        if a_idx.shape != b_idx.shape:
            raise Disagreement(f"{what}, query {q}: {a_idx.size} results against {b_idx.size}")
        tol = rtol * max(1.0, float(np.max(np.abs(a_s), initial=0.0)))
        if not np.allclose(a_s, b_s, rtol=0.0, atol=tol):
            at = int(np.argmax(np.abs(a_s - b_s)))
            raise Disagreement(
                f"{what}, query {q}: score at rank {at + 1} is {a_s[at]!r} against {b_s[at]!r}"
            )
        if np.array_equal(a_idx, b_idx):
            identical += 1
            continue
        if np.unique(b_idx).size != b_idx.size:
            raise Disagreement(f"{what}, query {q}: a document is listed twice")
        full = rescore(q)
        differ = np.flatnonzero(a_idx != b_idx)
        gaps = np.abs(full[b_idx[differ]] - a_s[differ])
        if np.any(gaps > tol):
            at = int(differ[int(np.argmax(gaps))])
            raise Disagreement(
                f"{what}, query {q}: rank {at + 1} holds document {b_idx[at]} (our score "
                f"{full[b_idx[at]]!r}) against our document {a_idx[at]} ({a_s[at]!r})"
            )
    n = len(ours)
    tied = n - identical
    note = f"; {tied} differ only in the order of equal scores" if tied else ""
    return f"same rankings on {n}/{n} queries ({identical} identical{note})"


def check_close(what: str, ours: FloatArray, theirs: FloatArray, *, rtol: float) -> float:
    """Assert elementwise agreement within ``rtol`` (relative to the largest value); returns the
    largest absolute difference."""
    a = np.asarray(ours, dtype=np.float64)
    b = np.asarray(theirs, dtype=np.float64)
    if a.shape != b.shape:
        raise Disagreement(f"{what}: shape {a.shape} against {b.shape}")
    diff = float(np.max(np.abs(a - b), initial=0.0))
    scale = max(1.0, float(np.max(np.abs(a), initial=0.0)))
    if diff > rtol * scale or not np.all(np.isfinite(b)):
        at = int(np.argmax(np.abs(a - b)))
        raise Disagreement(
            f"{what}: largest difference {diff:.3g} at {at} ({a.flat[at]!r} against {b.flat[at]!r})"
        )
    return diff


# --- data ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TokenCollection:
    """Documents and queries as retrieval tokens, ready for every side."""

    name: str
    docs: list[list[str]]
    queries: list[list[str]]
    description: str


def _glasgow_records(path: Path) -> list[str]:
    """The ``.W`` text (with the ``.T`` title before it, if any) of every record of a file."""
    records: list[dict[str, list[str]]] = []
    field_name: str | None = None
    for line in path.read_text(encoding="ascii").splitlines():
        if line.startswith(".I "):
            records.append({})
            field_name = None
            continue
        marker = re.fullmatch(r"\.([A-Z])\s*", line)
        if marker and field_name != "W":
            field_name = marker.group(1)
            records[-1].setdefault(field_name, [])
        elif marker:
            continue  # a stray marker inside an abstract (documents 240, 576, 578)
        elif field_name is not None and records:
            records[-1][field_name].append(line)
    return ["\n".join([*r.get("T", []), *r.get("W", [])]) for r in records]


@cache
def cranfield() -> TokenCollection:
    """Cranfield's 1,400 documents (title and abstract) and 225 queries, through raglab's
    tokeniser (``raglab.text.tokens.tokenize``, no stemming)."""
    from raglab.text.tokens import tokenize

    for name in ("cran.all.1400", "cran.qry"):
        if not (CRANFIELD_DIR / name).is_file():
            raise FileNotFoundError(f"Cranfield not found: {CRANFIELD_DIR / name}")
    docs = [
        tokenize(t, stem=False, analyzer="raglab")
        for t in _glasgow_records(CRANFIELD_DIR / "cran.all.1400")
    ]
    queries = [
        tokenize(t, stem=False, analyzer="raglab")
        for t in _glasgow_records(CRANFIELD_DIR / "cran.qry")
    ]
    return TokenCollection(
        "Cranfield",
        docs,
        queries,
        f"Cranfield, {len(docs):,} documents, {len(queries)} queries",
    )


@cache
def generated(n_docs: int, n_queries: int) -> TokenCollection:
    """A seeded corpus of ``n_docs`` chunks and ``n_queries`` queries.

    Chunk lengths are uniform on 50..150 tokens; tokens are drawn from a Zipf distribution
    (p(rank r) ~ 1 / r^1.0) over 50,000 terms named ``t0``, ``t1``, ... Each query takes 2 to 6
    distinct terms of a random chunk, chosen uniformly among the chunk's distinct terms, so every
    query matches and mixes frequent and rare terms.
    """
    rng = np.random.default_rng(GEN_SEED)
    p = 1.0 / np.arange(1, GEN_TERMS + 1, dtype=np.float64) ** GEN_ZIPF_EXPONENT
    p /= p.sum()
    lengths = rng.integers(GEN_MIN_LEN, GEN_MAX_LEN + 1, size=n_docs)
    ids = rng.choice(GEN_TERMS, size=int(lengths.sum()), p=p)
    terms = np.array([f"t{i}" for i in range(GEN_TERMS)], dtype=object)
    tokens = terms[ids]
    bounds = np.concatenate(([0], np.cumsum(lengths))).tolist()
    docs = [tokens[a:b].tolist() for a, b in itertools.pairwise(bounds)]
    queries = []
    for _ in range(n_queries):
        d = int(rng.integers(n_docs))
        distinct = np.unique(ids[bounds[d] : bounds[d + 1]])
        size = min(int(rng.integers(GEN_QUERY_MIN, GEN_QUERY_MAX + 1)), distinct.size)
        queries.append(terms[rng.choice(distinct, size=size, replace=False)].tolist())
    return TokenCollection(
        "generated",
        docs,
        queries,
        f"generated, {n_docs:,} chunks of {GEN_MIN_LEN}-{GEN_MAX_LEN} tokens "
        f"({int(lengths.sum()):,} tokens, Zipf s={GEN_ZIPF_EXPONENT} over {GEN_TERMS:,} terms), "
        f"{n_queries:,} queries of {GEN_QUERY_MIN}-{GEN_QUERY_MAX} terms",
    )


# Objects one benchmark builds and a later one may reuse (the generated corpus's BM25 index).
SHARED: dict[str, Any] = {}


# --- results ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Row:
    """One line of a results table.

    ``ours`` and ``peer_value`` are in ``unit``; ``ratio`` is ours / peer. ``better`` says which
    direction is good ("lower" for times and memory, "higher" for throughput) and ``target``
    whether the row has one: a ratio of at most ``goal``, or at least ``goal``, respectively
    (``goal`` is 1, "as fast as the peer", unless the issue asks for another ratio).
    """

    case: str
    measure: str
    unit: str
    ours: float | None
    peer: str = ""
    peer_value: float | None = None
    check: str = ""
    better: str = "lower"
    target: bool = False
    ours_range: tuple[float, float] | None = None  # smallest and largest of the repeats
    peer_range: tuple[float, float] | None = None
    limit: float | None = None  # an absolute target: ours at most this (in unit), no peer
    goal: float = 1.0  # the ratio the target asks for (e.g. 0.5: at least half the peer's speed)

    @property
    def has_target(self) -> bool:
        return self.limit is not None or (self.target and self.ratio is not None)

    @property
    def ratio(self) -> float | None:
        if self.ours is None or self.peer_value is None or self.peer_value == 0:
            return None
        return self.ours / self.peer_value

    @property
    def verdict(self) -> str:
        if self.limit is not None and self.ours is not None:
            return "met" if self.ours <= self.limit else "**missed**"
        r = self.ratio
        if not self.target or r is None:
            return ""
        met = r <= self.goal if self.better == "lower" else r >= self.goal
        if met:
            return "met"
        if (
            self.ours_range
            and self.peer_range
            and (
                self.ours_range[0] <= self.peer_range[1]
                and self.peer_range[0] <= self.ours_range[1]
            )
        ):
            return "**missed** (the repeats' ranges overlap)"
        return "**missed**"

    @property
    def agreement(self) -> str:
        """The check, then the ranges of the repeats when known."""
        parts = [self.check] if self.check else []
        if self.ours_range and self.peer_range:
            parts.append(
                f"range of repeats: ours {fmt_range(self.ours_range, self.unit)}, "
                f"peer {fmt_range(self.peer_range, self.unit)}"
            )
        elif self.ours_range:
            parts.append(f"range of repeats: {fmt_range(self.ours_range, self.unit)}")
        return "; ".join(parts)


@dataclass(slots=True)
class Section:
    """One benchmark's results: a table, the data it ran on, and notes."""

    key: str
    title: str
    intro: str
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)  # further markdown (a table of its own)
    failure: str | None = None
    seconds: float = 0.0


def fmt_value(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "s":
        if value < 1e-3:
            return f"{value * 1e6:.1f} µs"
        if value < 1.0:
            return f"{value * 1e3:.2f} ms"
        return f"{value:.2f} s"
    if unit == "MB":
        return f"{value:,.1f} MB"
    if unit == "q/s":
        return f"{value:,.0f} q/s" if value >= 100 else f"{value:,.1f} q/s"
    if unit == "%":
        return f"{value:.3g} %"
    return f"{value:.4g}{(' ' + unit) if unit else ''}"


def fmt_range(bounds: tuple[float, float], unit: str) -> str:
    return f"{fmt_value(bounds[0], unit)} to {fmt_value(bounds[1], unit)}"


def spread(samples: Sequence[float]) -> tuple[float, float]:
    """Smallest and largest of some repeats."""
    return (float(min(samples)), float(max(samples)))


def fmt_ratio(ratio: float | None) -> str:
    if ratio is None:
        return "-"
    return f"{ratio:.2f}" if ratio >= 0.1 else f"{ratio:.3f}"


def mb(n_bytes: float) -> float:
    return n_bytes / 2**20


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_total() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def _blas() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown"
    parts = [
        f"{i.get('internal_api')} {i.get('version')} ({i.get('num_threads')} threads)"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    ]
    return "; ".join(dict.fromkeys(parts)) or "unknown"


LIBRARIES = (
    "raglab",
    "numpy",
    "scipy",
    "bm25s",
    "rank-bm25",
    "ranx",
    "numba",
    "scikit-learn",
    "fastapi",
    "starlette",
    "httpx",
    "uvicorn",
)


def machine_info() -> list[tuple[str, str]]:
    """What the numbers ran on: CPU, cores, memory, OS, Python, BLAS and library versions."""
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count() or 0
    return [
        ("CPU", _cpu_model()),
        ("Cores", f"{os.cpu_count()} logical, {affinity} usable by this process"),
        ("Memory", _memory_total()),
        ("OS", f"{platform.system()} {platform.release()} ({platform.machine()})"),
        ("Python", f"{platform.python_implementation()} {platform.python_version()}"),
        ("BLAS", _blas()),
        ("Libraries", ", ".join(f"{name} {_version(name)}" for name in LIBRARIES)),
    ]


def peak_rss_mb() -> float:
    """The process's peak resident set size so far (Linux reports kilobytes)."""
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024 if sys.platform != "darwin" else kb / 2**20


def render(
    sections: Sequence[Section],
    *,
    config: Config,
    command: str,
    started: dt.datetime,
    wall_seconds: float,
    threads: int,
    load: tuple[tuple[float, float, float], tuple[float, float, float]],
) -> str:
    """RESULTS.md: header, method, one table per benchmark, then a summary of the targets."""
    out = ["# RAG lab benchmarks: results", ""]
    mode = "quick (reduced sizes; not the reported numbers)" if config.quick else "full"
    out += [
        f"Generated by `{command}` on {started.strftime('%Y-%m-%d %H:%M UTC')} ({mode} run, "
        f"{wall_seconds / 60:.1f} minutes wall clock; peak resident memory of the process "
        f"{peak_rss_mb():,.0f} MB by `resource.getrusage`).",
        "",
        "| Machine | |",
        "|---|---|",
    ]
    out += [f"| {k} | {v} |" for k, v in machine_info()]
    threads_text = (
        f"{threads} (OPENBLAS/OMP/MKL/NUMBA_NUM_THREADS, set before numpy is imported)"
        if threads > 0
        else "library defaults"
    )
    out += [
        f"| Threads | {threads_text} |",
        f"| Load average | {' / '.join(f'{x:.2f}' for x in load[0])} (1/5/15 min) at the start, "
        f"{' / '.join(f'{x:.2f}' for x in load[1])} at the end (other work on the machine) |",
    ]
    out += [
        "",
        "Method. Each comparison runs both sides in this one process on the same data (the same "
        "token lists, the same matrices), first once untimed, comparing their answers (a "
        "benchmark whose sides disagree fails and reports no time), then timed with "
        "`time.perf_counter` over repeats with the garbage collector paused; tables give the "
        "median of the repeats. **ours / peer** below 1 means we are faster (or smaller); for "
        "throughput (q/s) above 1 means we are faster. Memory is the peak of tracemalloc's "
        "traced bytes during one more, untimed, call (Python objects and numpy buffers; not "
        "numba's or BLAS's private allocations). Targets are marked in the last column.",
        "",
    ]
    for s in sections:
        out += [f"## {s.title}", "", s.intro, ""]
        if s.failure:
            out += [f"**FAILED**: {s.failure}", ""]
        if s.rows:
            out += [
                "| Case | Measure | Ours | Peer | Peer value | Ours / peer | Agreement | Target |",
                "|---|---|---:|---|---:|---:|---|---|",
            ]
            for r in s.rows:
                out.append(
                    f"| {r.case} | {r.measure} | {fmt_value(r.ours, r.unit)} | {r.peer} | "
                    f"{fmt_value(r.peer_value, r.unit)} | {fmt_ratio(r.ratio)} | {r.agreement} | "
                    f"{r.verdict} |"
                )
            out.append("")
        if s.extra:
            out += [*s.extra, ""]
        out += [f"- {n}" for n in s.notes]
        out += [f"- This benchmark took {s.seconds:.0f} s.", ""]
    out += ["## Targets", ""]
    targets = [(s, r) for s in sections for r in s.rows if r.has_target]
    met = [(s, r) for s, r in targets if r.verdict == "met"]
    missed = [(s, r) for s, r in targets if r.verdict != "met"]
    failed = [s for s in sections if s.failure]
    out.append(f"{len(met)} of {len(targets)} targets met.")
    out.append("")
    for s, r in missed:
        if r.limit is not None and r.ours is not None:
            out.append(
                f"- Missed: {s.title}, {r.case}, {r.measure}: {fmt_value(r.ours, r.unit)} "
                f"against a limit of {fmt_value(r.limit, r.unit)}."
            )
        else:
            out.append(
                f"- Missed: {s.title}, {r.case}, {r.measure}: ours / {r.peer} = "
                f"{fmt_ratio(r.ratio)}."
            )
    for s in failed:
        out.append(f"- Failed: {s.title}: {s.failure}")
    out.append("")
    return "\n".join(out)
