"""LSA's row dot products per query: BLAS's ``X @ v``, numpy's ``row_dots`` and the compiled one.

    python benchmarks/bench_row_dots.py                       # 100,000 and 1,000,000 rows of 100
    python benchmarks/bench_row_dots.py --sizes 100000 --k 48 --queries 20 --rounds 5

Seeded standard normal arrays X (n, k) and 20 query vectors v (k,). Each query is answered by
BLAS's matrix-vector product (``X @ v``, on one thread and on two, through threadpoolctl), by
``raglab.embedding.lsa.row_dots(X, v, backend="numpy")`` (a block of products, then numpy's
pairwise sum per row) and by ``row_dots(X, v, backend="numba")`` (the kernel of
``raglab.embedding.pairwise``, on one thread and on two). Before anything is timed, every
query's compiled answer must equal numpy's bit for bit and lie within 1e-12 of BLAS's (the run
stops otherwise). The ways are interleaved, ``--rounds`` rounds of all the queries each; the
table gives the median over rounds of the milliseconds a query takes, and the running load
(``/proc/loadavg``'s fourth field less this process) before and after.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np
from threadpoolctl import threadpool_limits

from raglab.base.threads import running_load
from raglab.embedding.lsa import row_dots

SIZES = (100_000, 1_000_000)
K = 100
QUERIES = 20
ROUNDS = 5
SEED = 20261206
# BLAS's product may round each row differently; the rows are sums of k products of normals.
BLAS_TOLERANCE = 1e-12

Way = Callable[[np.ndarray], np.ndarray]


def ways(X: np.ndarray) -> dict[str, tuple[int, Way]]:
    """Each way of computing ``X @ v``, with the threads BLAS is capped at while it runs."""
    return {
        "BLAS, 1 thread": (1, lambda v: X @ v),
        "BLAS, 2 threads": (2, lambda v: X @ v),
        "numpy row_dots": (1, lambda v: row_dots(X, v, backend="numpy")),
        "compiled, 1 thread": (1, lambda v: row_dots(X, v, backend="numba", threads=1)),
        "compiled, 2 threads": (1, lambda v: row_dots(X, v, backend="numba", threads=2)),
    }


def check(X: np.ndarray, V: np.ndarray) -> float:
    """The largest |compiled - BLAS| over every query, after checking compiled == numpy bit for
    bit and that largest difference within BLAS_TOLERANCE; SystemExit otherwise."""
    worst = 0.0
    for q, v in enumerate(V):
        by_numpy = row_dots(X, v, backend="numpy")
        for threads in (1, 2):
            got = row_dots(X, v, backend="numba", threads=threads)
            if got.tobytes() != by_numpy.tobytes():
                raise SystemExit(f"query {q}: compiled on {threads} threads is not numpy's bits")
        worst = max(worst, float(np.max(np.abs(by_numpy - X @ v))))
    if worst > BLAS_TOLERANCE:
        raise SystemExit(f"compiled and BLAS differ by {worst:.3g} > {BLAS_TOLERANCE}")
    return worst


def measure(n: int, k: int, queries: int, rounds: int) -> str:
    """One markdown row: the milliseconds per query of every way at n rows of k."""
    rng = np.random.default_rng(SEED)
    X = rng.standard_normal((n, k))
    V = rng.standard_normal((queries, k))
    load_before = running_load()
    worst = check(X, V)
    every = ways(X)
    ms: dict[str, list[float]] = {name: [] for name in every}
    for _ in range(rounds):
        for name, (blas, way) in every.items():
            with threadpool_limits(limits=blas, user_api="blas"):
                start = time.perf_counter()
                for v in V:
                    way(v)
                ms[name].append((time.perf_counter() - start) / queries * 1e3)
    median = {name: statistics.median(values) for name, values in ms.items()}
    blas_one, compiled_one = median["BLAS, 1 thread"], median["compiled, 1 thread"]
    cells = " | ".join(f"{median[name]:.2f}" for name in every)
    return (
        f"| {n:,} x {k} | {cells} | {median['numpy row_dots'] / blas_one:.2f} | "
        f"{compiled_one / blas_one:.2f} | {worst:.1e} | {load_before:.0f} / {running_load():.0f} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="", help="comma-separated row counts")
    parser.add_argument("--k", type=int, default=K, help="columns (default: 100)")
    parser.add_argument("--queries", type=int, default=QUERIES)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    args = parser.parse_args(argv)
    sizes = tuple(int(s) for s in args.sizes.split(",") if s) or SIZES
    names = " | ".join(ways(np.zeros((1, 1))))
    print(
        f"| Rows x k (ms a query) | {names} | numpy / BLAS 1 | compiled 1 / BLAS 1 | "
        "max abs diff vs BLAS | load before / after |"
    )
    print("|---|" + "---:|" * (len(ways(np.zeros((1, 1)))) + 4))
    for n in sizes:
        print(measure(n, args.k, args.queries, args.rounds), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
