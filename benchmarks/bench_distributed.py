"""BM25 and LSA on one machine against a 2-worker Dask LocalCluster on the same machine.

Data: the BM25 sweep's generated chunks (``bench_sweep.make_data``: 100 to 200 tokens a chunk,
about 150, Zipf s = 1 over 200,000 terms) and 1,000 queries, 500 of each of its mixes (zipf and
chunk). One machine is :class:`raglab.bm25.index.BM25Index` and :func:`raglab.embedding.lsa.fit_lsa`; the
cluster is :class:`raglab.distributed.bm25.DistributedBM25` (one contiguous shard per worker,
which reads its chunks from a file the client wrote, a line a chunk, and counts them there) and :func:`raglab.distributed.lsa.fit_lsa_on_cluster` (A in two row
blocks per worker), on ``connect(workers=2)``: single-threaded worker processes, BLAS on one
thread everywhere. The LSA windows are the first 20,000 fixed windows of 256 consecutive tokens
of the chunks in order (fewer below 40,000 chunks), the same at every size from 40,000 chunks.

Each of four steps runs in its own fresh process (``--worker KIND CHUNKS``): one machine's BM25
and LSA, the cluster's BM25 and LSA (the client process starts its own LocalCluster, whose
scheduler runs inside it). Peak RSS is the high-water mark of ``/proc/<pid>/status`` (VmHWM),
reset through ``/proc/self/clear_refs`` before each step, in the one-machine process, the
client process and, by ``client.run``, in every worker process; the token lists are resident
and counted. Checks before anything is reported: the cluster's BM25 top 10 (documents and
scores, compared as bytes) equal the single index's, and our numpy and numba backends equal
each other; the cluster's LSA model (U, s, Vt, the idf and ||A||_F^2) equals one machine's
byte for byte. BM25 is checked untimed, then
timed (median of 3 runs of one batch of all 1,000 queries); each LSA fit is timed once and
checked after (a disagreement raises, and no time is reported).

    python benchmarks/bench_distributed.py          # 100,000 chunks: 3 min 20 s on 2 idle cores
    python benchmarks/bench_distributed.py --sizes 1000000,3000000

``--cli CHUNKS`` measures the command line instead, as a user runs it: ``raglab run --retriever
bm25 --json`` on a generated folder (:func:`make_cli_corpus`: pages of 100 one-chunk sections,
200 questions), on one machine and with ``--scheduler`` on a 2-worker LocalCluster started in
a process of its own (since 2026-12-07; before, ``--workers 2``, whose scheduler runs in the
client's process and adds its memory to the client's), in fresh processes whose peak RSS
(VmHWM) is read every 0.1 s: the client's, the scheduler's process's and each worker
process's; the two outputs must be the same bytes (:class:`Disagreement` otherwise).
``--cli 10000,100000`` took about 3 minutes on 2 shared cores (2026-12-06).

    python benchmarks/bench_distributed.py --cli 10000,100000
    python benchmarks/bench_distributed.py --cli 1000000

Large sizes ran on 2026-12-04 (RESULTS.md section 8): `--sizes 1000000` in 11 minutes and
`--sizes 3000000` in 23 minutes on 2 cores. One machine peaked at 2.7 and 7.3 GB, each worker at
1.45 and 3.85 GB (0.54 and 0.53 of one machine's), the client at 1.6 and 4.3 GB (it generates
the token lists and writes the partitions' files).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # before numpy is imported (inherited by the workers)

import numpy as np  # noqa: E402

sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(1, str(Path(__file__).resolve().parent))

import bench_sweep  # noqa: E402
from bench_sweep import _reset_peak, _status_kb  # noqa: E402
from common import Config, Disagreement, Section, run_json_worker, timed  # noqa: E402

from raglab.settings import LSA_OVERSAMPLE, LSA_RANK, SEED, default  # noqa: E402

SIZES = (100_000,)
QUICK_SIZES = (10_000,)
LARGE_SIZES = (1_000_000,)
WORKERS = 2
TOP_K = 10
PER_MIX = 500  # queries of each of make_data's two mixes: 1,000 in all
WINDOW = 256  # tokens a window
MAX_WINDOWS = 20_000
LSA_CHUNKS = 40_000  # a multiple of make_data's block: the same first chunks at every size
WIDTH = LSA_RANK + LSA_OVERSAMPLE  # l, the sketches' columns (74)


# --- data and process memory --------------------------------------------------------------------


def _data(n_docs: int) -> tuple[list[list[str]], list[list[str]]]:
    # make_data draws 300 queries a mix from 1,000,000 chunks on (bm25s is slow there); this
    # benchmark has no bm25s, so 1,000 at every size. Set in the fresh worker process only.
    bench_sweep.LARGE_QUERIES = bench_sweep.N_QUERIES
    docs, mixes = bench_sweep.make_data(n_docs)
    return docs, mixes["zipf"][:PER_MIX] + mixes["chunk"][:PER_MIX]


def _windows(n_docs: int) -> list[list[str]]:
    """Consecutive 256-token windows of the first chunks, in order (at most 20,000)."""
    docs, _ = bench_sweep.make_data(min(n_docs, LSA_CHUNKS))
    stream = [t for d in docs for t in d]
    count = min(len(stream) // WINDOW, MAX_WINDOWS)
    return [stream[i * WINDOW : (i + 1) * WINDOW] for i in range(count)]


def _rss_mb() -> float:
    return _status_kb("VmRSS") / 1024


def _peak_mb() -> float:
    return _status_kb("VmHWM") / 1024


class _Peaks:
    """Reset and read the peak RSS of the client process and of every worker process."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.ok = True

    def reset(self) -> None:
        self.ok = _reset_peak() and all(self.client.run(_reset_peak).values()) and self.ok

    def read(self) -> dict[str, Any]:
        workers = self.client.run(_peak_mb)
        return {"client": _peak_mb(), "workers": [workers[w] for w in sorted(workers)]}


def _shard_info(shard: Any) -> dict[str, Any]:
    """Task: one shard's documents, postings, terms and array bytes (on its worker)."""
    c = shard.counts
    arrays = (c.indptr, c.docs, c.tf, c.lengths, shard.idf, shard.ratio)
    return {
        "docs": c.n_docs,
        "postings": int(c.docs.size),
        "terms": len(c.terms),
        "nbytes": sum(int(a.nbytes) for a in arrays),
    }


# --- fresh-process workers ----------------------------------------------------------------------


def single_bm25(n_docs: int, ref: Path) -> dict[str, Any]:
    from raglab.bm25.index import BM25Index

    base_mb = _rss_mb()  # the interpreter, numpy and raglab, before any data
    docs, queries = _data(n_docs)
    reset = _reset_peak()
    t0 = time.perf_counter()
    index = BM25Index(docs, k1=bench_sweep.K1, b=bench_sweep.B)
    index_s = time.perf_counter() - t0
    index_peak = _peak_mb()
    postings = sum(len(set(d)) for d in docs)
    answers = {be: index.search_many(queries, k=TOP_K, backend=be) for be in ("numpy", "numba")}
    for a, b in zip(answers["numpy"], answers["numba"], strict=True):
        if a.tobytes() != b.tobytes():
            raise Disagreement("our numpy and numba backends differ")
    np.savez(ref, docs=answers["numba"][0], scores=answers["numba"][1])
    _reset_peak()
    query_s = {
        be: [timed(partial(index.search_many, queries, k=TOP_K, backend=be))[1] for _ in range(3)]
        for be in ("numpy", "numba")
    }
    return {
        "base_mb": base_mb,
        "index_s": index_s,
        "index_peak_mb": index_peak,
        "query_s": query_s,
        "query_peak_mb": _peak_mb(),
        "nbytes": int(index.nbytes),
        "postings": postings,
        "terms": len(index.vocabulary),
        "peak_reset": reset,
    }


def single_lsa(n_docs: int, ref: Path) -> dict[str, Any]:
    from raglab.embedding.lsa import fit_lsa, power_iterations_for

    windows = _windows(n_docs)
    reset = _reset_peak()
    t0 = time.perf_counter()
    model = fit_lsa(windows, rank=LSA_RANK, seed=SEED, oversample=26)
    lsa_s = time.perf_counter() - t0
    np.savez(ref, U=model.U, s=model.s, Vt=model.Vt, idf=model.idf, f=[model.frobenius_sq])
    return {
        "lsa_s": lsa_s,
        "lsa_peak_mb": _peak_mb(),
        "windows": len(windows),
        "nnz": sum(len(set(w)) for w in windows),  # non-zeros of A
        "terms": len(model.vocabulary),
        "passes": power_iterations_for(len(windows)),
        "peak_reset": reset,
    }


def _count_file(path: str) -> Any:
    """Worker task: read one partition's chunks (a line each, tokens between spaces) and count
    them, freeing the token lists before the counts go back. Tokens are interned, as RAG lab's
    tokeniser interns them (and as the generator's lists share one string a term): a pointer a
    token, not a string object a token."""
    from raglab.distributed.bm25 import count_partition

    with open(path, encoding="utf-8") as f:
        token_lists = [list(map(sys.intern, line.split())) for line in f]
    return count_partition(token_lists)


def cluster_bm25(n_docs: int, ref: Path) -> dict[str, Any]:
    docs, queries = _data(n_docs)
    folder = Path(tempfile.mkdtemp(prefix="raglab-bench-"))
    try:
        return _cluster_bm25(docs, queries, folder, ref)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _cluster_bm25(
    docs: list[list[str]], queries: list[list[str]], folder: Path, ref: Path
) -> dict[str, Any]:
    import distributed
    from raglab.distributed.bm25 import DistributedBM25
    from raglab.distributed.cluster import connect

    n_docs = len(docs)
    t0 = time.perf_counter()
    with connect(workers=WORKERS) as client:
        start_s = time.perf_counter() - t0
        peaks = _Peaks(client)
        addresses = sorted(client.scheduler_info()["workers"])
        idle = client.run(_rss_mb)
        baseline = {"client": _rss_mb(), "workers": [idle[w] for w in addresses]}
        # Each partition is written to a file here, as a collection on shared storage would be,
        # and read by its own worker: no worker receives token lists from the client.
        paths = []
        for i in range(WORKERS):
            path = folder / f"part-{i}.txt"
            part = docs[i * n_docs // WORKERS : (i + 1) * n_docs // WORKERS]
            with path.open("w", encoding="utf-8") as f:
                f.writelines(" ".join(d) + "\n" for d in part)
            paths.append(str(path))
        peaks.reset()
        t0 = time.perf_counter()
        counts = [
            client.submit(_count_file, path, workers=[address], pure=False)
            for path, address in zip(paths, addresses, strict=True)
        ]
        index = DistributedBM25.from_counts(client, counts)
        shards = index._shards  # the shard futures: built when they are done, not when submitted
        wait: Any = distributed.wait  # untyped
        wait(shards)
        index_s = time.perf_counter() - t0
        index_peak = peaks.read()
        info = client.gather([client.submit(_shard_info, s, pure=False) for s in shards])
        placed = client.who_has(shards)
        for rec, s in zip(info, shards, strict=True):
            rec["worker"] = addresses.index(next(iter(placed[s.key])))
        found, scores = index.search_many(queries, k=TOP_K, k1=default("k1"), b=default("b"))
        want = np.load(ref)
        if found.tobytes() != want["docs"].tobytes():
            q = int(np.flatnonzero((found != want["docs"]).any(axis=1))[0])
            raise Disagreement(f"query {q}: the cluster's top {TOP_K} differ from one machine's")
        if scores.tobytes() != want["scores"].tobytes():
            raise Disagreement("the cluster's BM25 scores differ from one machine's in some bit")
        peaks.reset()
        ask = partial(index.search_many, queries, k=TOP_K, k1=default("k1"), b=default("b"))
        query_s = [timed(ask)[1] for _ in range(3)]
        query_peak = peaks.read()
    return {
        "start_s": start_s,
        "baseline_mb": baseline,
        "index_s": index_s,
        "index_peak_mb": index_peak,
        "query_s": query_s,
        "query_peak_mb": query_peak,
        "shards": info,
        "check": f"top {TOP_K} of {len(queries):,} queries, documents and scores bit for bit",
        "peak_reset": peaks.ok,
    }


def cluster_lsa(n_docs: int, ref: Path) -> dict[str, Any]:
    from raglab.distributed.cluster import connect
    from raglab.distributed.lsa import fit_lsa_on_cluster

    windows = _windows(n_docs)
    with connect(workers=WORKERS) as client:
        peaks = _Peaks(client)
        peaks.reset()
        t0 = time.perf_counter()
        model = fit_lsa_on_cluster(client, windows, rank=LSA_RANK, seed=SEED, oversample=26)
        lsa_s = time.perf_counter() - t0
        lsa_peak = peaks.read()
    with np.load(ref) as want:
        got = {"U": model.U, "s": model.s, "Vt": model.Vt, "idf": model.idf}
        for name, value in got.items():
            if value.tobytes() != want[name].tobytes():
                raise Disagreement(f"the cluster's LSA {name} differs from one machine's")
        if model.frobenius_sq != float(want["f"][0]):
            raise Disagreement("the cluster's ||A||_F^2 differs from one machine's")
    return {
        "lsa_s": lsa_s,
        "lsa_peak_mb": lsa_peak,
        "check": f"U, {model.s.size} singular values, Vt, idf and ||A||_F^2 bit for bit",
        "peak_reset": peaks.ok,
    }


WORKER_KINDS = {
    "single-bm25": single_bm25,
    "cluster-bm25": cluster_bm25,
    "single-lsa": single_lsa,
    "cluster-lsa": cluster_lsa,
}


def _spawn(kind: str, n_docs: int, ref: Path, timeout: float) -> dict[str, Any]:
    args = ["--worker", kind, str(n_docs), str(ref)]
    return run_json_worker(Path(__file__).resolve(), args, timeout, label=f"{kind}: ")


# --- the table ----------------------------------------------------------------------------------


def _med(samples: Sequence[float]) -> float:
    return float(np.median(samples))


def _row(n: int, step: str, t1: float, m1: float | None, tc: float, mc: Any, check: str) -> str:
    """One line: times, then peak RSS of one machine, of the client and of each worker."""
    mem = "| - | - | - | - | - "
    if m1 is not None and mc is not None:
        w = mc["workers"]
        mem = (
            f"| {m1:,.0f} | {mc['client']:,.0f} | {mc['client'] / m1:.2f} | "
            f"{', '.join(f'{x:,.0f}' for x in w)} | {', '.join(f'{x / m1:.2f}' for x in w)} "
        )
    return f"| {n:,} | {step} | {t1:.2f} | {tc:.2f} | {tc / t1:.2f} {mem}| {check} |"


def report(sizes: Sequence[int], *, timeout: float = 7200) -> tuple[list[str], list[str]]:
    """Run every worker for every size; returns (markdown lines of the tables, notes)."""
    results: dict[int, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-distributed-") as tmp:
        for n in sizes:
            results[n] = {}
            for kind, suffix in (("bm25", ".npz"), ("lsa", ".npz")):
                ref = Path(tmp) / f"{kind}-{n}{suffix}"
                for side in ("single", "cluster"):
                    print(f"  {side} {kind} at {n:,} chunks ...", file=sys.stderr, flush=True)
                    results[n][f"{side}-{kind}"] = _spawn(f"{side}-{kind}", n, ref, timeout)
    lines = [
        f"| Chunks | Step | One machine (s) | Cluster, {WORKERS} workers (s) | Cluster / one "
        "machine | Peak RSS, one machine (MB) | Peak RSS, client (MB) | Client / one machine | "
        "Peak RSS, each worker (MB) | Each worker / one machine | Agreement |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    shard_lines = [
        "| Chunks | Shard | Worker | Chunks in shard | Postings | Terms | Shard arrays (MB) | "
        "Bytes / posting |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    notes = []
    for n in sizes:
        sb, cb = results[n]["single-bm25"], results[n]["cluster-bm25"]
        sl, cl = results[n]["single-lsa"], results[n]["cluster-lsa"]
        steps = [
            ("indexing", sb["index_s"], sb["index_peak_mb"], cb["index_s"], cb["index_peak_mb"],
             f"{sb['postings']:,} postings"),
            ("1,000 queries, top 10 (one machine: numba)", _med(sb["query_s"]["numba"]),
             sb["query_peak_mb"], _med(cb["query_s"]), cb["query_peak_mb"], cb["check"]),
            ("1,000 queries, top 10 (one machine: numpy)", _med(sb["query_s"]["numpy"]), None,
             _med(cb["query_s"]), None, "numpy and numba bit for bit"),
            (f"LSA SVD, {sl['windows']:,} windows x {sl['terms']:,} terms, {sl['passes']} "
             "power passes", sl["lsa_s"], sl["lsa_peak_mb"], cl["lsa_s"], cl["lsa_peak_mb"],
             cl["check"]),
        ]  # fmt: skip
        lines += [_row(n, *step) for step in steps]
        if sum(s["postings"] for s in cb["shards"]) != sb["postings"]:
            raise Disagreement(f"{n:,}: the shards' postings do not add up to the index's")
        for i, s in enumerate(cb["shards"]):
            shard_lines.append(
                f"| {n:,} | {i} | {s['worker']} | {s['docs']:,} | {s['postings']:,} | "
                f"{s['terms']:,} | {s['nbytes'] / 2**20:,.1f} | {s['nbytes'] / s['postings']:.2f} |"
            )
        base, m1 = cb["baseline_mb"], sb["index_peak_mb"]
        net = ", ".join(
            f"{(x - b) / (m1 - sb['base_mb']):.2f}"
            for x, b in zip(cb["index_peak_mb"]["workers"], base["workers"], strict=True)
        )
        notes += [
            f"{n:,} chunks: one machine's BM25Index holds {sb['nbytes'] / 2**20:,.1f} MB of arrays "
            f"for {sb['postings']:,} postings, {sb['nbytes'] / sb['postings']:.2f} bytes a "
            f"posting ({sb['terms']:,} terms).",
            f"{n:,} chunks: starting the LocalCluster took {cb['start_s']:.1f} s (not in the "
            f"times); an idle worker process holds {', '.join(f'{x:,.0f}' for x in base['workers'])}"
            f" MB and the client {base['client']:,.0f} MB before any data, one machine's process "
            f"{sb['base_mb']:,.0f} MB; net of these, each worker's indexing peak is {net} of one "
            "machine's.",
            f"{n:,} chunks, range of the 3 query batches: one machine (numba) "
            f"{min(sb['query_s']['numba']):.2f} to {max(sb['query_s']['numba']):.2f} s, (numpy) "
            f"{min(sb['query_s']['numpy']):.2f} to {max(sb['query_s']['numpy']):.2f} s; cluster "
            f"{min(cb['query_s']):.2f} to {max(cb['query_s']):.2f} s.",
            f"{n:,} chunks: A has {sl['nnz']:,} non-zeros; the sketches are {sl['terms']:,} x "
            f"{WIDTH} and {sl['windows']:,} x {WIDTH} float64 "
            f"({sl['terms'] * WIDTH * 8 / 2**20:,.1f} MB and "
            f"{sl['windows'] * WIDTH * 8 / 2**20:,.1f} MB).",
        ]
        if not all(r["peak_reset"] for r in results[n].values()):
            notes.append(f"{n:,} chunks: a peak could not be reset; it is the process's own.")
    notes.append(
        "The client's peak includes the scheduler (a LocalCluster's scheduler runs in the client "
        "process) and the token lists it generated and wrote to the partitions' files (the workers read "
        "those); LSA sends every window to every worker."
    )
    return [*lines, "", *shard_lines], notes


# --- the command line as a user runs it: client and workers' peaks -----------------------------

CLI_SECTIONS = 100  # sections a generated page, one chunk each under the heading chunker
CLI_SENTENCES = 5  # sentences a section, 12 words each
CLI_VOCABULARY = 20_000  # words w0 .. w19999, drawn Zipf s = 1
CLI_QUESTIONS = 200  # half train, half test; each asks for the first sentence of a section
CLI_POLL_S = 0.1


def make_cli_corpus(root: Path, n_chunks: int, sections: int = CLI_SECTIONS) -> Path:
    """A folder ``root/pages`` of ``ceil(n_chunks / sections)`` Markdown pages of ``sections``
    sections (one chunk each; default 100) and ``root/questions.jsonl``; returns the questions
    file. Seeded: the same folder at every call. Each section's first sentence starts with its own id (``p7x12``), so
    a question names its section and every answer lies whole in one chunk."""
    rng = np.random.default_rng(SEED)
    ranks = np.arange(1, CLI_VOCABULARY + 1, dtype=np.float64)
    p = (1 / ranks) / (1 / ranks).sum()
    words = np.array([f"w{i}" for i in range(CLI_VOCABULARY)])
    pages = root / "pages"
    pages.mkdir(parents=True)
    n_pages = -(-n_chunks // sections)
    per_page = sections * CLI_SENTENCES * 11
    for page in range(n_pages):
        drawn = words[rng.choice(CLI_VOCABULARY, size=per_page, p=p)].reshape(-1, 11)
        parts = [
            f"---\nid: p{page}\ntitle: Page {page}\nupdated: 2025-01-01\nstatus: current\n---\n"
            f"# Page {page}\n"
        ]
        for x in range(min(sections, n_chunks - page * sections)):
            rows = drawn[x * CLI_SENTENCES : (x + 1) * CLI_SENTENCES]
            sentences = [f"Item p{page}x{x} " + " ".join(rows[0]) + "."]
            sentences += [(" ".join(r) + ".").capitalize() for r in rows[1:]]
            parts.append(f"\n## Part {x}\n\n" + " ".join(sentences) + "\n")
        (pages / f"p{page}.md").write_text("".join(parts), encoding="utf-8")
    picks = rng.choice(n_chunks, size=min(CLI_QUESTIONS, n_chunks), replace=False)
    lines = []
    for i, c in enumerate(picks.tolist()):
        page, x = divmod(c, sections)
        text = (pages / f"p{page}.md").read_text(encoding="utf-8")
        answer = text.split(f"## Part {x}\n\n", 1)[1].split(". ", 1)[0] + "."
        question = f"What about p{page}x{x} " + " ".join(answer.split()[2:6]) + "?"
        split = "train" if i % 2 == 0 else "test"
        lines.append(
            json.dumps(
                {"id": f"q{i}", "split": split, "kind": "keyword", "question": question,
                 "answer": answer}
            )
        )  # fmt: skip
    questions = root / "questions.jsonl"
    questions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return questions


def _hwm_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _cluster_process(address_file: str) -> None:
    """``--cluster-process FILE``: a LocalCluster of :data:`WORKERS` single-threaded worker
    processes in this process, its scheduler here too; writes the scheduler's address to FILE
    and lives until killed. The client then runs in its own process (``--scheduler``), so the
    client's peak is its own and the scheduler's is this process's."""
    import logging

    import distributed

    # Typed as Any: parts of distributed are untyped.
    local_cluster: Any = distributed.LocalCluster
    cluster = local_cluster(
        n_workers=WORKERS,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        silence_logs=logging.ERROR,
    )
    Path(address_file + ".part").write_text(cluster.scheduler_address)
    Path(address_file + ".part").rename(address_file)
    while True:
        time.sleep(3600)


class _Family:
    """The peak RSS (VmHWM) of a process and of every process it starts, read on demand."""

    def __init__(self, pid: int) -> None:
        import psutil

        self.root = psutil.Process(pid)
        self.peaks: dict[int, float] = {}
        self.names: dict[int, str] = {}

    def read(self) -> None:
        import psutil

        try:
            family = [self.root, *self.root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return
        for child in family:
            mb = _hwm_mb(child.pid)
            if mb is None:
                continue
            self.peaks[child.pid] = max(mb, self.peaks.get(child.pid, 0.0))
            if child.pid not in self.names:
                try:
                    self.names[child.pid] = " ".join(child.cmdline())
                except psutil.Error:
                    self.names[child.pid] = ""

    def own(self) -> float:
        return self.peaks.get(self.root.pid, 0.0)

    def workers(self) -> list[float]:
        # The worker processes run multiprocessing's spawn_main; its resource tracker is small.
        return sorted(
            mb for pid, mb in self.peaks.items() if pid != self.root.pid
            and "spawn_main" in self.names[pid] and "resource_tracker" not in self.names[pid]
        )  # fmt: skip


def cli_peaks(
    argv: Sequence[str], env: dict[str, str], timeout: float, cluster: _Family | None = None
) -> dict[str, Any]:
    """Run ``raglab *argv`` in a child process and follow the peak RSS (VmHWM) of it and of
    every process it starts (a LocalCluster's workers), and of ``cluster``'s processes (a
    cluster in a process of its own, :func:`_cluster_process`), read every 0.1 s until the
    command ends: the last reading of a process is its peak but for its last 0.1 s. Returns
    the exit status, the seconds, the client's peak, the scheduler's (``cluster``'s process;
    None without one) and each worker's, and the output."""
    cmd = [sys.executable, "-m", "raglab", *argv]
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        client = _Family(proc.pid)
        while proc.poll() is None:
            if time.perf_counter() - t0 > timeout:
                proc.kill()
                raise RuntimeError(f"raglab {' '.join(argv)} ran past {timeout:.0f} s")
            for family in (client, cluster):
                if family is not None:
                    family.read()
            time.sleep(CLI_POLL_S)
        seconds = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        output, errors = out.read(), err.read().decode(errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"raglab {' '.join(argv)} exited {proc.returncode}: {errors[-2000:]}")
    return {
        "rc": proc.returncode,
        "seconds": seconds,
        "client_mb": client.own(),
        "scheduler_mb": None if cluster is None else cluster.own(),
        "workers_mb": (client if cluster is None else cluster).workers(),
        "output_bytes": len(output),
        "output": output.decode(),
    }


@contextlib.contextmanager
def _cluster(env: dict[str, str], timeout: float) -> Iterator[tuple[str, _Family]]:
    """A LocalCluster in a process of its own (:func:`_cluster_process`): its scheduler's
    address and its processes' peaks, the process killed (workers and all) at the end."""
    with tempfile.TemporaryDirectory(prefix="bench-distributed-cluster-") as tmp:
        address = Path(tmp) / "address"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--cluster-process", str(address)]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, start_new_session=True)
        try:
            t0 = time.perf_counter()
            while not address.exists():
                if proc.poll() is not None or time.perf_counter() - t0 > timeout:
                    raise RuntimeError("the benchmark's LocalCluster did not start")
                time.sleep(0.1)
            yield address.read_text(), _Family(proc.pid)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def cli_report(
    sizes: Sequence[int], *, timeout: float = 7200, sections: int = CLI_SECTIONS
) -> list[str]:
    """``raglab run --retriever bm25 --json`` on a generated folder of each size, on one
    machine and with ``--scheduler`` on a :data:`WORKERS`-worker LocalCluster started in a
    process of its own (as a deployment runs its scheduler apart from the client; with
    ``--workers`` the scheduler runs in the client's process and its memory adds to the
    client's): the peaks (one machine; the client, the scheduler's process and each worker),
    seconds and whether the two outputs are the same bytes. ``sections``: chunks a page
    (:func:`make_cli_corpus`)."""
    lines = [
        "| Chunks | Pages | Questions | One machine (s) | Peak RSS, one machine (MB) | Cluster (s) | "
        "Peak RSS, client (MB) | Peak RSS, scheduler (MB) | Peak RSS, each worker (MB) | "
        "Outputs |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="bench-distributed-cli-") as tmp:
            root = Path(tmp)
            questions = make_cli_corpus(root / "data", n, sections)
            env = {**os.environ, "RAGLAB_CACHE_DIR": str(root / "cache")}
            src = str(Path(__file__).resolve().parents[1] / "src")
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
            argv = ["run", "--corpus", str(root / "data" / "pages"), "--questions",
                    str(questions), "--retriever", "bm25", "--json"]  # fmt: skip
            print(f"  raglab run at {n:,} chunks, one machine ...", file=sys.stderr, flush=True)
            one = cli_peaks(argv, env, timeout)
            print(f"  raglab run at {n:,} chunks, --scheduler ({WORKERS} workers) ...",
                  file=sys.stderr, flush=True)  # fmt: skip
            with _cluster(env, timeout) as (address, cluster):
                two = cli_peaks([*argv, "--scheduler", address], env, timeout, cluster)
        if one["output"] != two["output"]:
            raise Disagreement(f"{n:,} chunks: the cluster's output differs from one machine's")
        same = "same bytes"
        lines.append(
            f"| {n:,} | {-(-n // sections):,} | {min(CLI_QUESTIONS, n)} | {one['seconds']:.1f} | {one['client_mb']:,.0f} "
            f"| {two['seconds']:.1f} | {two['client_mb']:,.0f} | {two['scheduler_mb']:,.0f} | "
            f"{', '.join(f'{x:,.0f}' for x in two['workers_mb'])} | {same} |"
        )
        print(lines[-1], file=sys.stderr, flush=True)
    return lines


def run(cfg: Config) -> Section:
    sizes = QUICK_SIZES if cfg.quick else SIZES + (LARGE_SIZES if cfg.large else ())
    section = Section(
        "distributed",
        f"7. One machine against a {WORKERS}-worker Dask LocalCluster at "
        + ", ".join(f"{n:,}" for n in sizes)
        + " chunks",
        " ".join(__doc__.split("\n\n")[1].split())
        + " Ratios are cluster / one machine (below 1: the cluster is faster or smaller).",
    )
    section.extra, section.notes = report(sizes)
    return section


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--worker", nargs=3, metavar=("KIND", "CHUNKS", "REF"), help=argparse.SUPPRESS
    )
    parser.add_argument("--cluster-process", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", default="", help="comma-separated chunk counts")
    parser.add_argument("--timeout", type=float, default=7200, help="seconds a worker may take")
    parser.add_argument(
        "--cli",
        default="",
        metavar="CHUNKS",
        help="comma-separated chunk counts: measure `raglab run --retriever bm25 --workers 2 "
        "--json` as a user runs it instead (client's and workers' peaks)",
    )
    parser.add_argument(
        "--sections",
        type=int,
        default=CLI_SECTIONS,
        help=f"with --cli: sections (chunks) a generated page (default {CLI_SECTIONS}; 1: pages "
        "of one chunk, as a BEIR import gives)",
    )
    args = parser.parse_args(argv)
    if args.cluster_process:
        _cluster_process(args.cluster_process)
        return 0
    if args.worker:
        kind, n, ref = args.worker
        print(json.dumps(WORKER_KINDS[kind](int(n), Path(ref))))
        return 0
    load = os.getloadavg()
    if args.cli:
        lines = cli_report(
            [int(s) for s in args.cli.split(",")], timeout=args.timeout, sections=args.sections
        )
        print("\n".join(lines))
        print(f"- Load average {' / '.join(f'{x:.2f}' for x in load)} at the start (1/5/15 min).")
        return 0
    sizes = tuple(int(s) for s in args.sizes.split(",")) if args.sizes else SIZES
    lines, notes = report(sizes, timeout=args.timeout)
    notes.append(
        f"Load average {' / '.join(f'{x:.2f}' for x in load)} at the start, "
        f"{' / '.join(f'{x:.2f}' for x in os.getloadavg())} at the end (1/5/15 min)."
    )
    print("\n".join([*lines, "", *(f"- {n}" for n in notes)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
