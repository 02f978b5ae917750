"""The numpy BM25 batch on one thread against two, by collection size: where threads pay.

    python benchmarks/bench_numpy_threads.py                      # 10,000 to 100,000 documents
    python benchmarks/bench_numpy_threads.py --sizes 20000,65536

``BM25Index.search_many(queries, k=10, backend="numpy", threads=1 or 2)`` on the sweep's
generated chunks (``bench_sweep.make_data``: 100 to 200 tokens, Zipf s = 1 over 200,000 terms)
and its two query mixes, 1,000 queries each, in one process. The rule that keeps numpy on one
thread from 65,536 documents on (``raglab.bm25.index.numpy_threads``) is lifted for the run, so
every size takes the threads asked; the answers of the two counts must be equal bit for bit
before anything is timed. The counts are interleaved, five rounds, medians; the one-minute load
is printed beside each row. Below 65,536 documents every query is scored in dense blocks; from
there on long queries go through MaxScore one by one: the table says which path each size took.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(1, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from bench_sweep import make_data  # noqa: E402

import raglab.bm25.index as bm25_module  # noqa: E402
from raglab.bm25.index import BM25Index  # noqa: E402

SIZES = (10_000, 15_000, 20_000, 30_000, 50_000, 65_536, 100_000)
ROUNDS = 5
TOP_K = 10


def measure(n_docs: int) -> list[str]:
    """One markdown row a mix at ``n_docs`` documents."""
    docs, mixes = make_data(n_docs)
    index = BM25Index(docs, k1=1.2, b=0.75)
    path = "dense blocks" if n_docs < bm25_module._BATCH_PRUNE_MIN_DOCS else "MaxScore"
    rows = []
    for mix in ("zipf", "chunk"):
        queries = mixes[mix][:1_000]
        one = index.search_many(queries, k=TOP_K, backend="numpy", threads=1)
        two = index.search_many(queries, k=TOP_K, backend="numpy", threads=2)
        if not (np.array_equal(one[0], two[0]) and np.array_equal(one[1], two[1])):
            raise SystemExit(f"{n_docs} documents, {mix}: two threads answered differently")
        seconds: dict[int, list[float]] = {1: [], 2: []}
        for _ in range(ROUNDS):
            for threads in (1, 2):
                start = time.perf_counter()
                index.search_many(queries, k=TOP_K, backend="numpy", threads=threads)
                seconds[threads].append(time.perf_counter() - start)
        one_s, two_s = statistics.median(seconds[1]), statistics.median(seconds[2])
        rows.append(
            f"| {n_docs:,} | {path} | {mix} | {len(queries) / one_s:,.0f} | "
            f"{len(queries) / two_s:,.0f} | {one_s / two_s:.2f} | {os.getloadavg()[0]:.2f} |"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="", help="comma-separated document counts")
    args = parser.parse_args(argv)
    sizes = tuple(int(s) for s in args.sizes.split(",") if s) or SIZES
    # Lifted for the run: every size takes two threads when asked.
    bm25_module._NUMPY_THREADS_BELOW_DOCS = 10**12
    print("| Documents | Path | Mix | 1 thread (q/s) | 2 threads (q/s) | 2 / 1 | Load (1 min) |")
    print("|---:|---|---|---:|---:|---:|---:|")
    for n_docs in sizes:
        print("\n".join(measure(n_docs)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
