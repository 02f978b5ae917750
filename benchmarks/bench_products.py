"""The encoder's four matrix products through numpy's BLAS beside torch's, at one batch's shapes.

    python benchmarks/bench_products.py                      # 6,400 rows, one thread a core
    python benchmarks/bench_products.py --rows 6400,256 --threads 2 --repeats 15

``bench_neural.py`` times whole passes against sentence-transformers; ``profile_neural.py`` says
the four products of a layer take about 70 % of ours. This times each product alone, so a gap
between the whole passes can be put where it lies: in the products (numpy's BLAS against torch's)
or in the rest of the pass. Rows are a batch's word pieces (about 6,400 for 32 of Cranfield's
first 1,000 documents, packed: our encoder computes no padding, the peer pads each batch to its
longest text, so at equal speed a row it would compute more of them). Inputs are seeded random
float32; ours is ``np.matmul(x, w, out=...)`` with ``w`` stored (in, out), as
:class:`raglab.embedding.neural.encoder.BertLayer` stores it; the peer is
``torch.nn.functional.linear(x, w)`` with ``w`` stored (out, in), as ``torch.nn.Linear`` does.
Both sides run the same thread count (threadpoolctl for numpy's BLAS, ``torch.set_num_threads``),
in turn, one call of each a round, and each side's products are checked equal to the other's
within 1e-4 relative (Frobenius) before anything is timed. Run it where torch is installed (the
benchmarks' peer environment), on an idle machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np

# all-MiniLM-L6-v2: hidden 384, intermediate 1,536; (name, in, out) of each product of a layer.
PRODUCTS = (
    ("QKV (fused)", 384, 1152),
    ("attention output", 384, 384),
    ("FFN in", 384, 1536),
    ("FFN out", 1536, 384),
)


def _median_seconds(calls: Sequence[Callable[[], object]], repeats: int) -> list[float]:
    """Each call's median seconds over ``repeats`` rounds, the calls in turn within a round."""
    samples: list[list[float]] = [[] for _ in calls]
    for _ in range(repeats):
        for call, out in zip(calls, samples, strict=True):
            start = time.perf_counter()
            call()
            out.append(time.perf_counter() - start)
    return [statistics.median(s) for s in samples]


def run(rows: Sequence[int], threads: int, repeats: int) -> str:
    """The table as Markdown: per product and row count, GFLOP/s of each side and ours / peer."""
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(threads)
    rng = np.random.default_rng(0)
    lines = [
        f"numpy {np.__version__} against torch {torch.__version__}, {threads} thread(s) each, "
        f"median of {repeats} rounds, 1-minute load {os.getloadavg()[0]:.2f} at the start",
        "",
        "| Product | Rows | numpy GFLOP/s | torch GFLOP/s | numpy / torch |",
        "|---|---:|---:|---:|---:|",
    ]
    with threadpool_limits(limits=threads, user_api="blas"):
        for n in rows:
            for name, d_in, d_out in PRODUCTS:
                x = rng.standard_normal((n, d_in), dtype=np.float32)
                w = (rng.standard_normal((d_in, d_out)) / np.sqrt(d_in)).astype(np.float32)
                out = np.empty((n, d_out), dtype=np.float32)
                tx = torch.from_numpy(x)
                tw = torch.from_numpy(np.ascontiguousarray(w.T))
                ours = np.matmul(x, w, out=out).copy()
                theirs = torch.nn.functional.linear(tx, tw).numpy()
                gap = float(np.linalg.norm(ours - theirs) / np.linalg.norm(theirs))
                if gap > 1e-4:
                    raise SystemExit(f"{name}, {n} rows: the sides differ by {gap:.2e}")

                def numpy_side(x: np.ndarray = x, w: np.ndarray = w, o: np.ndarray = out) -> object:
                    return np.matmul(x, w, out=o)

                def torch_side(tx: torch.Tensor = tx, tw: torch.Tensor = tw) -> object:
                    return torch.nn.functional.linear(tx, tw)

                with torch.inference_mode():
                    mine, peer = _median_seconds([numpy_side, torch_side], repeats)
                flops = 2.0 * n * d_in * d_out
                lines.append(
                    f"| {name} ({d_in} x {d_out}) | {n:,} | {flops / mine / 1e9:.1f} | "
                    f"{flops / peer / 1e9:.1f} | {peer / mine:.2f} |"
                )
    lines.append(f"\nLoad at the end: {os.getloadavg()[0]:.2f}.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="6400,256", help="row counts, comma-separated")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        print(
            "torch is not installed here: run this in the benchmarks' peer environment",
            file=sys.stderr,
        )
        return 2
    print(run([int(r) for r in args.rows.split(",")], args.threads, args.repeats))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
