"""Run every benchmark and write benchmarks/RESULTS.md.

    python benchmarks/run.py            # the full run (about 10 minutes on 2 cores)
    python benchmarks/run.py --quick    # reduced sizes, to benchmarks/.cache/RESULTS-quick.md
    python benchmarks/run.py --only bm25,svd
    python benchmarks/run.py --large    # the BM25 sweep also at 1,000,000 chunks (up to an hour more)

A benchmark whose two sides disagree on the answer fails: its section says so instead of giving
times, the other benchmarks still run, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

THREAD_VARIABLES = (
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMBA_NUM_THREADS",
)


def _threads(argv: list[str]) -> int:
    """The --threads value, read before numpy is imported (BLAS reads its thread count once)."""
    for i, arg in enumerate(argv):
        if arg.startswith("--threads="):
            return int(arg.split("=", 1)[1])
        if arg == "--threads" and i + 1 < len(argv):
            return int(argv[i + 1])
    return 1


THREADS = _threads(sys.argv[1:])
if THREADS > 0:
    # Inherited by the servers and processes the benchmarks start, too.
    for _name in THREAD_VARIABLES:
        os.environ[_name] = str(THREADS)

# Running as a script puts benchmarks/ first on sys.path; make the src layout importable too, so
# the benchmarks work from a checkout whether or not the package is installed.
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "src"))

import bench_api  # noqa: E402  (after the thread settings above)
import bench_bm25  # noqa: E402  (after the thread settings above)
import bench_busy  # noqa: E402  (after the thread settings above)
import bench_distributed  # noqa: E402  (after the thread settings above)
import bench_end_to_end  # noqa: E402  (after the thread settings above)
import bench_metrics  # noqa: E402  (after the thread settings above)
import bench_neural  # noqa: E402
import bench_svd  # noqa: E402  (after the thread settings above)
import bench_sweep  # noqa: E402  (after the thread settings above)
from common import BENCH_DIR, Config, Disagreement, Section, render  # noqa: E402  (after the thread settings above)

BENCHMARKS: dict[str, tuple[str, Callable[[Config], Section]]] = {
    "bm25": ("1. BM25", bench_bm25.run),
    "sweep": ("1b. BM25 size sweep", bench_sweep.run),
    "svd": ("2. Randomised SVD", bench_svd.run),
    "metrics": ("3. Metrics and fusion", bench_metrics.run),
    "e2e": ("4. End to end", bench_end_to_end.run),
    "api": ("5. Web API", bench_api.run),
    "neural": ("6. Neural embeddings", bench_neural.run),
    "distributed": ("7. Dask cluster against one machine", bench_distributed.run),
    "busy": ("9. Busy machine", bench_busy.run),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="reduced sizes, for a smoke test")
    parser.add_argument(
        "--only", default="", help=f"comma-separated subset of {', '.join(BENCHMARKS)}"
    )
    parser.add_argument("--out", type=Path, default=None, help="where to write the table")
    parser.add_argument(
        "--large", action="store_true", help="the BM25 sweep also at 1,000,000 chunks"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="threads for BLAS and numba (default 1, for stable numbers on a shared machine; "
        "0 leaves every library's default)",
    )
    args = parser.parse_args(argv)
    chosen = [k.strip() for k in args.only.split(",") if k.strip()] or list(BENCHMARKS)
    unknown = [k for k in chosen if k not in BENCHMARKS]
    if unknown:
        parser.error(
            f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}"
        )
    # A quick run goes to the ignored cache folder, so it never replaces the reported numbers.
    out = args.out or (
        BENCH_DIR / ".cache" / "RESULTS-quick.md" if args.quick else BENCH_DIR / "RESULTS.md"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    cfg = Config.make(quick=args.quick, large=args.large)
    started = dt.datetime.now(dt.UTC)
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    sections: list[Section] = []
    for key in chosen:
        title, bench = BENCHMARKS[key]
        print(f"[{time.perf_counter() - t0:6.0f} s] {title} ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        try:
            section = bench(cfg)
        except Disagreement as exc:
            section = Section(key, title, "The two sides disagreed; no time is reported.")
            section.failure = f"the sides disagree: {exc}"
            traceback.print_exc()
        except Exception as exc:  # a broken benchmark is reported, and the others still run
            section = Section(key, title, "The benchmark raised an error.")
            section.failure = f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
        section.seconds = time.perf_counter() - start
        sections.append(section)
    argv_text = " ".join(
        ["python benchmarks/run.py", *(argv if argv is not None else sys.argv[1:])]
    )
    text = render(
        sections,
        config=cfg,
        command=argv_text.strip(),
        started=started,
        wall_seconds=time.perf_counter() - t0,
        threads=args.threads,
        load=(load_before, os.getloadavg()),
    )
    out.write_text(text, encoding="utf-8")
    print(text)
    print(f"Wrote {out}", file=sys.stderr)
    return 1 if any(s.failure for s in sections) else 0


if __name__ == "__main__":
    raise SystemExit(main())
