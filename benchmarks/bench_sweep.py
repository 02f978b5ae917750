"""BM25 size sweep: raglab.bm25.index against bm25s from 10,000 to 1,000,000 chunks, two query mixes.

Data: chunks of 100 to 200 tokens drawn from a Zipf law (s = 1) over 200,000 terms; 1,000
queries (300 from 1,000,000 chunks on) of 3 to 8 terms per mix: **zipf** (terms drawn from the same Zipf law, as a user's
words would be; terms absent from the collection are dropped) and **chunk** (distinct terms of
one random chunk, as section 1 draws them).

Every size runs in fresh processes (``python bench_sweep.py --worker ...``), so each figure is
that process's own:

- **memory** (one process per side): the token lists are made, the peak resident set size is
  reset (``/proc/self/clear_refs``), the index is built (its time and the peak RSS of the build,
  token lists included), 100 queries of each mix are answered (the peak RSS of building and
  querying), and the index's array bytes are counted (ours: ``BM25Index.nbytes``; bm25s: the
  arrays of its score matrix);
- **speed** (one process, both sides): each side answers every query once and the answers are
  compared (the check of section 1: bm25s's scores times (k1 + 1) equal ours to 2e-6, lists
  differing only in the order of equal scores; our two backends bit for bit), then both sides'
  batch calls are timed on the same batches, one after the other on every batch.

bm25s at its defaults (numpy backend; numba backend with ``n_threads=0``) runs on one thread, and
so does ours in those columns (``threads=1``). The peer-at-fastest columns run both on every core
this process may use (``os.sched_getaffinity``): bm25s with ``n_threads`` equal to the cores (its
numpy backend then maps queries over a thread pool, its numba backend runs its ``prange`` kernel)
and ours with ``threads`` equal to the cores; their answers are checked too (ours bit for bit
against one thread, bm25s's against ours), and all four runs are interleaved batch by batch. Each
row states the one-minute load average when its timing started and ended.

    python benchmarks/bench_sweep.py                 # 10k and 100k
    python benchmarks/bench_sweep.py --large         # and 1M (up to an hour more, ~7 GB)
    python benchmarks/bench_sweep.py --sizes 10000,3000000
    python benchmarks/bench_sweep.py --sizes cranfield,10000   # Cranfield beside 10k

``cranfield`` among the sizes adds Cranfield's 1,400 documents (``common.cranfield()``: title and
abstract through raglab's tokeniser) with three mixes: **real** (its 225 queries), **zipf** (3 to 8
terms drawn from a Zipf law, s = 1, over its vocabulary ranked by collection frequency, the
most frequent first, as the generated chunks' terms are ranked) and **chunk** (3 to 8 distinct
terms of one random non-empty document), through the same workers, timing and checks.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

# BLAS on one thread, before numpy is imported (inherited by the workers). numba's own thread
# count is left alone: bm25s's parallel kernel needs more than one (and its default, n_threads=0,
# runs serially without it).
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(1, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    Config,
    Disagreement,
    Section,
    check_rankings,
    cranfield,
    run_json_worker,
    time_repeats,
)

SIZES = (10_000, 100_000)
LARGE_SIZES = (1_000_000,)
QUICK_SIZES = (10_000,)
TERMS = 200_000
MIN_LEN, MAX_LEN = 100, 200
QUERY_MIN, QUERY_MAX = 3, 8
N_QUERIES = 1_000
LARGE_QUERIES = 300  # per mix from 1,000,000 chunks on (bm25s's numpy backend takes ~0.1 s each)
MEMORY_QUERIES = 100  # per mix, answered by each memory worker on both backends
BATCHES = 5
NUMBA_ROUNDS = 3
TOP_K = 10
SEED = 15
MIXES = ("zipf", "chunk")
CRANFIELD = "cranfield"  # the name --sizes takes for Cranfield's collection
CRANFIELD_MIXES = ("real", "zipf", "chunk")
# Cranfield's batches take milliseconds, so each is timed this many times per backend (the
# generated sizes: once with numpy, NUMBA_ROUNDS with numba).
CRANFIELD_ROUNDS = 5
BM25S_RTOL = 2e-6
K1, B = 1.2, 0.75
GEN_BLOCK = 20_000  # chunks generated at a time (keeps the generator's own peak small)


# --- data ---------------------------------------------------------------------------------------


def _zipf_cdf() -> np.ndarray:
    p = 1.0 / np.arange(1, TERMS + 1, dtype=np.float64)
    cdf: np.ndarray = np.cumsum(p / p.sum())
    return cdf


def _draw(rng: np.random.Generator, cdf: np.ndarray, size: int) -> np.ndarray:
    out: np.ndarray = np.minimum(np.searchsorted(cdf, rng.random(size)), TERMS - 1)
    return out


def make_data(n_docs: int) -> tuple[list[list[str]], dict[str, list[list[str]]]]:
    """The chunks (token lists) and both query mixes, seeded; chunks made a block at a time."""
    rng = np.random.default_rng(SEED)
    cdf = _zipf_cdf()
    names = np.array([f"t{i}" for i in range(TERMS)], dtype=object)
    docs: list[list[str]] = []
    seen = np.zeros(TERMS, dtype=bool)
    for start in range(0, n_docs, GEN_BLOCK):
        lengths = rng.integers(MIN_LEN, MAX_LEN + 1, size=min(GEN_BLOCK, n_docs - start))
        ids = _draw(rng, cdf, int(lengths.sum()))
        seen[ids] = True
        bounds = np.concatenate(([0], np.cumsum(lengths))).tolist()
        docs += [names[ids[a:z]].tolist() for a, z in itertools.pairwise(bounds)]
    queries: dict[str, list[list[str]]] = {"zipf": [], "chunk": []}
    n_queries = N_QUERIES if n_docs < 1_000_000 else LARGE_QUERIES
    while len(queries["zipf"]) < n_queries:
        drawn = _draw(rng, cdf, int(rng.integers(QUERY_MIN, QUERY_MAX + 1)))
        known = drawn[seen[drawn]]
        if known.size:
            queries["zipf"].append(names[known].tolist())
    for _ in range(n_queries):
        doc = docs[int(rng.integers(n_docs))]
        distinct = sorted(set(doc))
        size = min(int(rng.integers(QUERY_MIN, QUERY_MAX + 1)), len(distinct))
        queries["chunk"].append([distinct[i] for i in rng.choice(len(distinct), size, False)])
    return docs, queries


def cranfield_data() -> tuple[list[list[str]], dict[str, list[list[str]]]]:
    """Cranfield's documents and its three mixes (real, zipf, chunk), seeded.

    zipf: 3 to 8 terms drawn (with repeats, as the generated mix draws them) from p(rank r) ~ 1/r
    over the collection's terms ranked by collection frequency (ties by term), so every term is
    in the collection; chunk: 3 to 8 distinct terms of one random non-empty document."""
    coll = cranfield()
    docs = coll.docs
    rng = np.random.default_rng(SEED)
    counts: dict[str, int] = {}
    for doc in docs:
        for term in doc:
            counts[term] = counts.get(term, 0) + 1
    ranked = sorted(counts, key=lambda t: (-counts[t], t))
    p = 1.0 / np.arange(1, len(ranked) + 1, dtype=np.float64)
    cdf = np.cumsum(p / p.sum())
    names = np.array(ranked, dtype=object)
    queries: dict[str, list[list[str]]] = {"real": [list(q) for q in coll.queries]}
    queries["zipf"] = []
    for _ in range(N_QUERIES):
        drawn = np.searchsorted(cdf, rng.random(int(rng.integers(QUERY_MIN, QUERY_MAX + 1))))
        queries["zipf"].append(names[np.minimum(drawn, len(ranked) - 1)].tolist())
    filled = [i for i, doc in enumerate(docs) if doc]
    queries["chunk"] = []
    for _ in range(N_QUERIES):
        distinct = sorted(set(docs[filled[int(rng.integers(len(filled)))]]))
        size = min(int(rng.integers(QUERY_MIN, QUERY_MAX + 1)), len(distinct))
        queries["chunk"].append([distinct[i] for i in rng.choice(len(distinct), size, False)])
    return docs, queries


def _data(collection: str) -> tuple[list[list[str]], dict[str, list[list[str]]]]:
    """A worker's collection: Cranfield's for ``cranfield``, else ``make_data(int(collection))``."""
    return cranfield_data() if collection == CRANFIELD else make_data(int(collection))


def _label(size: int | str) -> str:
    """The Chunks cell of a size: ``10,000`` or ``Cranfield``."""
    return "Cranfield" if size == CRANFIELD else f"{size:,}"


# --- fresh-process workers ----------------------------------------------------------------------


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _build(side: str, docs: list[list[str]]) -> Any:
    if side == "ours":
        from raglab.bm25.index import BM25Index

        return BM25Index(docs, k1=K1, b=B)
    import bm25s

    retriever = bm25s.BM25(method="lucene", k1=K1, b=B)
    retriever.index(docs, show_progress=False)
    return retriever


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _answer(side: str, index: Any, queries: list[list[str]], backend: str, threads: int = 1) -> Any:
    """One side's answers on ``threads`` threads (1: bm25s at its defaults, ours on one)."""
    if side == "ours":
        return index.search_many(queries, k=TOP_K, backend=backend, threads=threads)
    index.backend = backend
    kwargs: dict[str, int] = {}
    if threads > 1:
        kwargs["n_threads"] = threads
    elif backend == "numba":
        kwargs["n_threads"] = 1
    return index.retrieve(queries, k=TOP_K, show_progress=False, **kwargs)


def _index_bytes(side: str, index: Any) -> int:
    if side == "ours":
        return int(index.nbytes)
    return sum(int(v.nbytes) for v in index.scores.values() if isinstance(v, np.ndarray))


def memory_worker(side: str, collection: str) -> dict[str, Any]:
    docs, queries = _data(collection)
    tokens_kb = _status_kb("VmRSS")
    reset = _reset_peak()
    t0 = time.perf_counter()
    index = _build(side, docs)
    build_s = time.perf_counter() - t0
    build_peak_kb = _status_kb("VmHWM")
    for mix in queries:
        for backend in ("numpy", "numba"):
            _answer(side, index, queries[mix][:MEMORY_QUERIES], backend)
    return {
        "tokens_mb": tokens_kb / 1024,
        "build_s": build_s,
        "build_peak_mb": build_peak_kb / 1024 if reset else None,
        "peak_mb": _status_kb("VmHWM") / 1024 if reset else None,
        "process_peak_mb": _status_kb("VmHWM") / 1024,
        "index_mb": _index_bytes(side, index) / 2**20,
        "peak_reset": reset,
    }


def _rows(side: str, result: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    if side == "ours":
        found, scores = result
        return list(zip(found, scores, strict=True))
    return [
        (np.asarray(d, dtype=np.int64), np.asarray(s, dtype=np.float64))
        for d, s in zip(result.documents, result.scores, strict=True)
    ]


def speed_worker(collection: str) -> dict[str, Any]:
    from raglab.bm25.index import numpy_threads

    docs, queries = _data(collection)
    where = _label(collection if collection == CRANFIELD else int(collection))
    ours = _build("ours", docs)
    theirs = _build("bm25s", docs)
    out: dict[str, Any] = {}
    for mix in queries:
        qs = queries[mix]
        cache: dict[int, np.ndarray] = {}

        def rescore(q: int, qs: list[list[str]] = qs, cache: dict[int, np.ndarray] = cache) -> Any:
            if q not in cache:
                cache[q] = ours.scores(qs[q])
            return cache[q]

        cores = _cores()
        ours_numpy = _rows("ours", _answer("ours", ours, qs, "numpy"))
        ours_numba = _rows("ours", _answer("ours", ours, qs, "numba"))
        for q, (a, b) in enumerate(zip(ours_numpy, ours_numba, strict=True)):
            if not (np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])):
                raise Disagreement(f"{mix} query {q}: our numpy and numba backends differ")
        for backend in ("numpy", "numba"):
            threaded = _rows("ours", _answer("ours", ours, qs, backend, cores))
            for q, (a, b) in enumerate(zip(ours_numpy, threaded, strict=True)):
                if not (np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])):
                    raise Disagreement(
                        f"{mix} query {q}: ours ({backend}) on {cores} threads differs from one"
                    )
        size = math.ceil(len(qs) / BATCHES)
        batches = [qs[i : i + size] for i in range(0, len(qs), size)]
        for backend in ("numpy", "numba"):
            check = check_rankings(
                f"bm25s ({backend}) at {where}, {mix}",
                ours_numpy,
                _rows("bm25s", _answer("bm25s", theirs, qs, backend)),
                scale=K1 + 1.0,
                rtol=BM25S_RTOL,
                rescore=rescore,
            )
            # bm25s at its fastest documented mode (n_threads = the cores), checked likewise;
            # this call also compiles its parallel kernel before the timing.
            check_cores = check_rankings(
                f"bm25s ({backend}, n_threads={cores}) at {where}, {mix}",
                ours_numpy,
                _rows("bm25s", _answer("bm25s", theirs, qs, backend, cores)),
                scale=K1 + 1.0,
                rtol=BM25S_RTOL,
                rescore=rescore,
            )
            runs = {
                "ours": ("ours", ours, 1),
                "peer": ("bm25s", theirs, 1),
                "ours_cores": ("ours", ours, cores),
                "peer_cores": ("bm25s", theirs, cores),
            }
            qps: dict[str, list[float]] = {name: [] for name in runs}
            # What exists now (the data, both indexes, numba's compiled kernels) outlives the
            # timing: frozen out of the collector's sight, the collection before each timed batch
            # (time_repeats) walks only what the batches made, milliseconds instead of 0.1 s.
            gc.freeze()
            load_start = os.getloadavg()[0]
            rounds = NUMBA_ROUNDS if backend == "numba" else 1
            for _ in range(CRANFIELD_ROUNDS if collection == CRANFIELD else rounds):
                for batch in batches:
                    for name, run in runs.items():
                        qps[name].append(
                            len(batch)
                            / time_repeats(
                                partial(_answer, *run[:2], batch, backend, run[2]), repeats=1
                            ).samples[0]
                        )
            out[f"{mix}/{backend}"] = {
                **qps,
                "check": check,
                "check_cores": check_cores,
                "cores": cores,
                "load": [load_start, os.getloadavg()[0]],
                "docs": len(docs),
                "queries": len(qs),
                "rounds": len(qps["ours"]) // len(batches),
                # the threads our numpy search_many takes for threads = cores on these batches
                "numpy_threads": numpy_threads(
                    cores, n_docs=len(docs), n_queries=min(len(b) for b in batches)
                ),
            }
    return out


def _spawn(args: Sequence[str], timeout: float, cache: Path | None = None) -> dict[str, Any]:
    """One worker's result; with ``cache``, read from (or saved to) a JSON file there, so that
    sizes run by separate invocations can be put in one table."""
    saved = cache / f"{args[1]}-{args[2]}.json" if cache else None
    if saved and saved.is_file():
        cached: dict[str, Any] = json.loads(saved.read_text())
        return cached
    # numba's thread cap (run.py sets it to 1) would refuse bm25s's n_threads = the cores.
    result = run_json_worker(
        Path(__file__).resolve(), args, timeout, drop_env=("NUMBA_NUM_THREADS",)
    )
    if saved:
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text(json.dumps(result))
    return result


# --- the table ----------------------------------------------------------------------------------


def _slope(sizes: Sequence[int], values: Sequence[float]) -> float | None:
    """Least-squares slope of log(value) against log(size): the growth exponent."""
    pts = [(math.log(s), math.log(v)) for s, v in zip(sizes, values, strict=True) if v and v > 0]
    if len(pts) < 2:
        return None
    x, y = np.array(pts).T
    return float(np.polyfit(x, y, 1)[0])


def _crossover(sizes: Sequence[int], ratios: Sequence[float]) -> str:
    """Where ours / peer (q/s) crosses 1, by log-linear interpolation between measured sizes."""
    words = []
    for (s0, r0), (s1, r1) in itertools.pairwise(zip(sizes, ratios, strict=True)):
        if (r0 - 1) * (r1 - 1) < 0:
            t = math.log(r0) / (math.log(r0) - math.log(r1))
            at = math.exp(math.log(s0) + t * (math.log(s1) - math.log(s0)))
            who = "ours" if r1 > 1 else "bm25s"
            words.append(f"{who} pulls ahead at about {at:,.0f} chunks")
    if words:
        return "; ".join(words)
    lead = "ours" if all(r >= 1 for r in ratios) else "bm25s" if all(r < 1 for r in ratios) else ""
    return f"{lead} ahead at every size measured" if lead else "no crossing"


def _fmt(v: float | None, digits: int = 0) -> str:
    return "-" if v is None else f"{v:,.{digits}f}"


def _at_cores(rec: dict[str, Any]) -> str:
    """The peer-at-fastest cells of a speed record: ours and bm25s on the cores (medians), their
    ratio, and the load when the timing started and ended ("-" for a record saved before these
    columns existed)."""
    if "ours_cores" not in rec:
        return "- | - | - | -"
    ours_q, peer_q = float(np.median(rec["ours_cores"])), float(np.median(rec["peer_cores"]))
    start, end = rec["load"]
    return (
        f"{_fmt(ours_q)} | {_fmt(peer_q)} | {ours_q / peer_q:.2f} ({rec['cores']} cores) | "
        f"{start:.2f} to {end:.2f}"
    )


def _cranfield_notes(speed: dict[int | str, dict[str, Any]]) -> list[str]:
    """The notes of Cranfield's rows: its mixes, its rounds, and where our numpy threads = cores
    column ran on one thread (from each speed record's ``numpy_threads``)."""
    recs = speed[CRANFIELD]
    first = next(iter(recs.values()))
    counts = ", ".join(
        f"{key.split('/')[0]} {rec['queries']:,}"
        for key, rec in recs.items()
        if key.endswith("/numpy")
    )
    one = [
        _label(n)
        for n, by_key in speed.items()
        if any(rec.get("numpy_threads") == 1 for k, rec in by_key.items() if k.endswith("/numpy"))
    ]
    notes = [
        f"Cranfield: {first['docs']:,} documents (title and abstract, raglab's tokeniser, no "
        f"stemming); queries per mix: {counts}. real: its own queries (cran.qry); zipf: 3 to 8 "
        "terms drawn from p(rank r) ~ 1/r over its terms ranked by collection frequency (the "
        "generated mix's law, put on Cranfield's vocabulary; every term drawn is in the "
        "collection); chunk: 3 to 8 distinct terms of one random non-empty document. Its "
        f"batches take milliseconds, so each is timed {first['rounds']} times per backend "
        "(the four runs still interleaved batch by batch).",
    ]
    if not one:
        return notes
    return [
        *notes,
        "Ours with numpy and threads = cores runs on one thread from 65,536 documents on "
        "(`raglab.bm25.index.numpy_threads`: there long queries go through MaxScore one by "
        "one, whose Python steps hold the GIL, and threads slow them down), so at "
        + ", ".join(one)
        + " the numpy 'Ours q/s, threads = cores' column times the same one-thread path as "
        "'Ours q/s': their difference is noise, and bm25s's n_threads = cores is met by one "
        "of our threads there.",
    ]


def sweep(
    sizes: Sequence[int | str], *, timeout: float = 3600, cache: Path | None = None
) -> tuple[list[str], list[str]]:
    """Run every worker (or read its saved result from ``cache``); returns (markdown lines of
    the tables, notes). A size is a chunk count or ``"cranfield"`` (Cranfield's collection,
    left out of the growth exponents and crossovers, which are the generated sizes')."""
    memory: dict[int | str, dict[str, dict[str, Any]]] = {}
    speed: dict[int | str, dict[str, Any]] = {}
    for n in sizes:
        unit = "" if n == CRANFIELD else " chunks"
        print(f"  sweep {_label(n)}{unit} ...", file=sys.stderr, flush=True)
        memory[n] = {
            side: _spawn(["--worker", side, str(n)], timeout, cache) for side in ("ours", "bm25s")
        }
        speed[n] = _spawn(["--worker", "speed", str(n)], timeout, cache)
    lines = [
        "| Chunks | Mix | Backend | Ours q/s | bm25s q/s | Ours / bm25s | Ours q/s, threads ="
        " cores | bm25s q/s, n_threads = cores | Ours / bm25s, both on the cores | Load (1 min)"
        " | Agreement |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    ratio_of: dict[str, list[float]] = {}
    qps_of: dict[str, dict[str, list[float]]] = {}
    for n in sizes:
        for key, rec in speed[n].items():
            mix, backend = key.split("/")
            ours_q, peer_q = float(np.median(rec["ours"])), float(np.median(rec["peer"]))
            if n != CRANFIELD:
                ratio_of.setdefault(key, []).append(ours_q / peer_q)
                qps_of.setdefault(key, {"ours": [], "peer": []})
                qps_of[key]["ours"].append(ours_q)
                qps_of[key]["peer"].append(peer_q)
            fast = _at_cores(rec)
            lines.append(
                f"| {_label(n)} | {mix} | {backend} | {_fmt(ours_q)} | {_fmt(peer_q)} | "
                f"{ours_q / peer_q:.2f} | {fast} | {rec['check']}"
                f"{'; n_threads = cores: ' + rec['check_cores'] if 'check_cores' in rec else ''}"
                "; ours range "
                f"{_fmt(min(rec['ours']))} to {_fmt(max(rec['ours']))}, bm25s "
                f"{_fmt(min(rec['peer']))} to {_fmt(max(rec['peer']))} |"
            )
    lines += [
        "",
        "| Chunks | Index, ours (MB) | Index, bm25s (MB) | Ours / bm25s | Build peak RSS, ours"
        " (MB) | Build peak RSS, bm25s (MB) | Build + queries peak RSS, ours (MB) | Build +"
        " queries peak RSS, bm25s (MB) | Token lists (MB) | Build time, ours (s) | Build time,"
        " bm25s (s) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        o, p = memory[n]["ours"], memory[n]["bm25s"]
        lines.append(
            f"| {_label(n)} | {o['index_mb']:,.1f} | {p['index_mb']:,.1f} | "
            f"{o['index_mb'] / p['index_mb']:.2f} | {_fmt(o['build_peak_mb'])} | "
            f"{_fmt(p['build_peak_mb'])} | {_fmt(o['peak_mb'])} | {_fmt(p['peak_mb'])} | "
            f"{o['tokens_mb']:,.0f} | {o['build_s']:.2f} | {p['build_s']:.2f} |"
        )
    notes = []
    grown = [n for n in sizes if isinstance(n, int)]
    if len(grown) >= 2:
        growth = []
        for key, q in qps_of.items():
            e_o = _slope(grown, [1 / v for v in q["ours"]])
            e_p = _slope(grown, [1 / v for v in q["peer"]])
            growth.append(f"{key}: ours {e_o:.2f}, bm25s {e_p:.2f}")
        notes.append(
            "Growth exponents (slope of log time per query against log chunks): "
            + "; ".join(growth)
            + "."
        )
        mem = []
        for what, field in (("index bytes", "index_mb"), ("build time", "build_s")):
            e_o = _slope(grown, [memory[n]["ours"][field] for n in grown])
            e_p = _slope(grown, [memory[n]["bm25s"][field] for n in grown])
            mem.append(f"{what}: ours {e_o:.2f}, bm25s {e_p:.2f}")
        notes.append("Growth exponents of " + "; ".join(mem) + ".")
        notes.append(
            "Crossovers (ours / bm25s in q/s through 1): "
            + "; ".join(f"{key}: {_crossover(grown, r)}" for key, r in ratio_of.items())
            + "."
        )
    if CRANFIELD in speed:
        notes += _cranfield_notes(speed)
    return lines, notes


def run(cfg: Config) -> Section:
    sizes = QUICK_SIZES if cfg.quick else SIZES + (LARGE_SIZES if cfg.large else ())
    section = Section(
        "sweep",
        "1b. BM25 size sweep: raglab.bm25.index against bm25s at "
        + ", ".join(f"{n:,}" for n in sizes)
        + " chunks",
        __doc__.split("\n\n")[1].replace("\n", " ")
        + " Each size runs in fresh processes: one per side for memory, one for speed; answers "
        "are checked equal before timing. Ratios are ours / bm25s in queries per second (above "
        "1: ours faster) and in bytes (below 1: ours smaller).",
    )
    section.extra, section.notes = sweep(sizes)
    return section


def _parse_sizes(parser: argparse.ArgumentParser, text: str) -> tuple[int | str, ...]:
    """``--sizes``: positive chunk counts and ``cranfield``; anything else is a usage error."""
    sizes: list[int | str] = []
    for word in text.split(","):
        word = word.strip()
        if word.lower() == CRANFIELD:
            sizes.append(CRANFIELD)
        elif word.isdigit() and int(word) > 0:
            sizes.append(int(word))
        else:
            parser.error(f"--sizes: {word!r} is neither a positive chunk count nor {CRANFIELD!r}")
    return tuple(sizes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=2, metavar=("SIDE", "CHUNKS"), help=argparse.SUPPRESS)
    parser.add_argument("--large", action="store_true", help="add 1,000,000 chunks")
    parser.add_argument(
        "--sizes",
        default="",
        help=f"comma-separated chunk counts, and {CRANFIELD!r} for Cranfield's collection",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="keep each worker's result in this folder and reuse what is there",
    )
    args = parser.parse_args(argv)
    if args.worker:
        side, size = args.worker
        result = speed_worker(size) if side == "speed" else memory_worker(side, size)
        print(json.dumps(result))
        return 0
    sizes = (
        _parse_sizes(parser, args.sizes)
        if args.sizes
        else SIZES + (LARGE_SIZES if args.large else ())
    )
    lines, notes = sweep(sizes, cache=args.cache)
    print("\n".join([*lines, "", *(f"- {n}" for n in notes)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
