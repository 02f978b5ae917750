"""Neural sentence embeddings: raglab.embedding.neural's pass of all-MiniLM-L6-v2 against sentence-transformers.

    python benchmarks/bench_neural.py             # the full run, printed as a RESULTS section
    python benchmarks/bench_neural.py --quick     # fewer repeats, batch sizes and documents
    python benchmarks/bench_neural.py --threads 0 # BLAS at its default in the rows without a peer

Data: every chunk of the bundled handbook under the default chunking (``Lab.load().indexes.chunk_set()``,
the heading chunker of exhibits II to V), encoded as ``NeuralIndex`` encodes chunks: word pieces
truncated at 256, mean pooling, unit rows; and the first 1,000 Cranfield documents (title and
abstract, one chunk each; 200 with ``--quick``), longer texts (a third reach 256 word pieces).

Measured:

- when ``sentence_transformers`` imports: ``SentenceTransformer.encode`` on the same model folder,
  batch sizes 32 and 128, ``normalize_embeddings=True``, CPU, torch at its default threads (one a
  core). Its vectors must equal ours within 1e-5 (absolute, every coordinate) before anything is
  timed; then ours at one BLAS thread, ours at one a core and the peer run in turn, the medians
  are compared, and each row gives the 1-minute load average seen during its rounds. When it
  does not import, the table says so and gives no number for it;
- throughput (chunks/s) of ``NeuralModel.encode`` over the handbook at several batch sizes,
  median of the repeats (the batch sizes must agree with batch size 1 to 1e-6 first);
- memory: the model's weight arrays (``BertWeights.nbytes``), tracemalloc's peak during one
  encode of all the chunks, and the vectors per 1,000 chunks (float32, (1000, 384));
- the on-disk cache (``encode_cached``): a cold call into an empty folder, and a warm call that
  reads every vector back (what a second process pays).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    Config,
    Disagreement,
    Row,
    Section,
    mb,
    render,
    spread,
    time_repeats,
    timed,
    traced_peak,
)

from raglab.embedding.neural.cache import encode_cached
from raglab.embedding.neural.encoder import load_kernels
from raglab.embedding.neural.model import NeuralModel, load_model

PEER_TOL = 1e-5  # largest |ours - theirs| allowed, any coordinate, normalised vectors
BATCH_TOL = 1e-6  # largest difference between batch sizes
PEER_BATCHES = (32, 128)  # sentence-transformers' default batch size, and a large one
PEER_BATCH = 32
# The target: at least the peer's throughput, torch at its default threads against our BLAS at
# as many threads (one thread a side is shown beside it, without a target).
PEER_GOAL = 1.0
CRANFIELD_CHUNKS = 1000


def _handbook_chunks() -> list[str]:
    from raglab.pipeline.lab import Lab

    return [c.text for c in Lab.load().indexes.chunk_set().chunks]


def _cranfield_chunks(n: int) -> list[str]:
    """The first ``n`` Cranfield documents (title and abstract), each one chunk."""
    from common import CRANFIELD_DIR, _glasgow_records

    return _glasgow_records(CRANFIELD_DIR / "cran.all.1400")[:n]


def _sentence_transformer(model: NeuralModel) -> tuple[Any | None, str]:
    """The peer on our model folder, or None and why not."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        return None, f"sentence_transformers is not importable ({exc}); no side-by-side number"
    import sentence_transformers

    peer = SentenceTransformer(str(model.path), device="cpu")
    return peer, f"sentence-transformers {sentence_transformers.__version__}"


def _blas_threads(n: int) -> Any:
    """A context in which numpy's BLAS runs ``n`` threads (threadpoolctl)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=n, user_api="blas")


def _interleaved(
    sides: list[Callable[[], object]], repeats: int
) -> tuple[list[list[float]], list[float]]:
    """Seconds of ``repeats`` calls of each side, one of each in turn, so that a change in the
    machine's load falls on every side alike; and the 1-minute load average after each round."""
    samples: list[list[float]] = [[] for _ in sides]
    loads: list[float] = []
    for _ in range(repeats):
        for side, out in zip(sides, samples, strict=True):
            out += time_repeats(side, repeats=1).samples
        loads.append(os.getloadavg()[0])
    return samples, loads


def _load_text(loads: list[float]) -> str:
    return f"load {min(loads):.1f} to {max(loads):.1f}"


def _case(model: NeuralModel, name: str, texts: list[str]) -> str:
    lengths = np.array([len(ids) for ids in model.token_ids(texts)])
    return (
        f"{name}, {len(texts):,} chunks ({int(lengths.sum()):,} word pieces, mean "
        f"{lengths.mean():.0f}, max {int(lengths.max())})"
    )


def _side_by_side(
    section: Section,
    model: NeuralModel,
    case: str,
    texts: list[str],
    peer: Any,
    peer_label: str,
    repeats: int,
    our_threads: tuple[int, ...],
) -> None:
    """Ours at each BLAS thread count of ``our_threads``, the peer at torch's default threads,
    each batch size of PEER_BATCHES: vectors checked first, then timed interleaved."""
    import torch

    cores = os.cpu_count() or 1
    # torch's default is one thread a core, unless OMP_NUM_THREADS says otherwise (run.py sets it
    # for the other benchmarks): the peer runs at that default whatever the environment.
    torch.set_num_threads(cores)
    torch_threads = torch.get_num_threads()
    for size in PEER_BATCHES:

        def ours(threads: int, size: int = size) -> Callable[[], object]:
            def call() -> object:
                with _blas_threads(threads):
                    return model.encode(texts, batch_size=size)

            return call

        def theirs(size: int = size) -> object:
            return peer.encode(
                texts, batch_size=size, convert_to_numpy=True, normalize_embeddings=True
            )

        mine = np.asarray(ours(1)())
        gap = float(np.abs(np.asarray(theirs()) - mine).max())
        if gap > PEER_TOL:
            raise Disagreement(f"sentence-transformers' vectors differ from ours by {gap:.1e}")
        threads = sorted(set(our_threads))
        (*ours_samples, peer_samples), loads = _interleaved(
            [*(ours(n) for n in threads), theirs], repeats
        )
        rate = [len(texts) / s for s in peer_samples]
        for n, samples in zip(threads, ours_samples, strict=True):
            section.rows.append(
                Row(
                    case,
                    f"chunks/s, batch size {size}, our BLAS at {n} thread{'s' if n > 1 else ''} "
                    f"(median of {repeats}, interleaved)",
                    "chunks/s",
                    len(texts) / statistics.median(samples),
                    f"{peer_label}, torch at its default {torch_threads} threads",
                    len(texts) / statistics.median(peer_samples),
                    f"max |ours - peer| = {gap:.1e}; {_load_text(loads)}",
                    better="higher",
                    target=n == cores,
                    goal=PEER_GOAL,
                    ours_range=spread([len(texts) / s for s in samples]),
                    peer_range=spread(rate),
                )
            )


def run(
    cfg: Config, *, cranfield: int | None = None, our_threads: tuple[int, ...] | None = None
) -> Section:
    section = Section(
        "neural",
        "Neural embeddings: raglab.embedding.neural (numpy + numba) against sentence-transformers "
        "(torch)",
        "all-MiniLM-L6-v2 (6 layers, 12 heads, h = 384, word pieces truncated at 256, mean "
        "pooling, unit rows) on every handbook chunk and on the first 1,000 Cranfield documents "
        "(one chunk each). Throughput is chunks per second over the whole set, median of the "
        "repeats. The peer runs on the same model folder when it is installed, torch at its "
        "default threads (one a core); its vectors must equal ours within 1e-5 before either "
        "side is timed; the sides run in turn (ours at one BLAS thread, ours at one a core, "
        "the peer), and each row gives the 1-minute load average seen during its rounds.",
    )
    model, load_seconds = timed(load_model)
    load_kernels()  # numba compiles (or reads its cache) here, not in a timed call
    texts = _handbook_chunks()
    case = _case(model, "handbook", texts)
    sizes = (32,) if cfg.quick else (8, 32, 64)
    one = model.encode(texts, batch_size=1)  # the reference of the batch sizes
    ours_at: dict[int, Any] = {}
    for size in sizes:
        vectors = model.encode(texts, batch_size=size)
        gap = float(np.abs(vectors - one).max())
        if gap > BATCH_TOL:
            raise Disagreement(f"batch size {size} differs from batch size 1 by {gap:.1e}")
        ours_at[size] = vectors

    peer, peer_label = _sentence_transformer(model)
    repeats = cfg.slow_repeats
    if peer is not None:
        threads = our_threads or (1, os.cpu_count() or 1)
        _side_by_side(section, model, case, texts, peer, peer_label, repeats, threads)
        more = _cranfield_chunks(cranfield or (200 if cfg.quick else CRANFIELD_CHUNKS))
        _side_by_side(
            section,
            model,
            _case(model, "Cranfield", more),
            more,
            peer,
            peer_label,
            repeats,
            threads,
        )
    for size in sizes:
        timing = time_repeats(partial(model.encode, texts, batch_size=size), repeats=repeats)
        section.rows.append(
            Row(
                case,
                f"chunks/s, batch size {size}, BLAS threads as the header (median of {repeats})",
                "chunks/s",
                len(texts) / timing.median,
                peer_label if peer is None and size == PEER_BATCH else "",
                None,
                f"equal to batch size 1 within {BATCH_TOL:g}; load {os.getloadavg()[0]:.1f}",
                better="higher",
                ours_range=spread([len(texts) / s for s in timing.samples]),
            )
        )

    vectors, peak, _ = traced_peak(lambda: model.encode(texts, batch_size=PEER_BATCH))
    per_thousand = vectors.nbytes / len(texts) * 1000
    section.rows += [
        Row("model", "load_model (safetensors + tokenizer), one call", "s", load_seconds),
        Row("model", "weights held (float32 arrays)", "MB", mb(model.weights.nbytes)),
        Row(case, f"encode peak memory, batch size {PEER_BATCH}", "MB", mb(peak)),
        Row("vectors", f"per 1,000 chunks ((1000, {model.dim}) float32)", "MB", mb(per_thousand)),
    ]

    with tempfile.TemporaryDirectory(prefix="raglab-bench-neural-") as folder:
        cached, cold = timed(lambda: encode_cached(model, texts, cache_dir=folder))
        warm = time_repeats(lambda: encode_cached(model, texts, cache_dir=folder), repeats=repeats)
        gap = float(np.abs(cached - ours_at[PEER_BATCH]).max())
        section.rows += [
            Row(case, "encode_cached, empty cache (encode + write)", "s", cold),
            Row(
                case,
                f"encode_cached, every vector on disk (median of {repeats})",
                "s",
                warm.median,
                check=f"equal to encode within {gap:.1e}",
                ours_range=spread(warm.samples),
            ),
        ]
    if peer is None:
        section.notes.append(f"Peer: {peer_label}.")
    section.notes += [
        "Our pass runs the dense products on the real word pieces only (packed) and attention "
        "text by text, so padding costs nothing; GELU, softmax and LayerNorm are numba's compiled "
        "kernels (numpy's without numba). Where the time goes: benchmarks/profile_neural.py.",
        "The side-by-side rows set our BLAS threads with threadpoolctl per call and leave torch "
        "at its default; the other rows use the header's thread count.",
    ]
    return section


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and batch sizes")
    parser.add_argument("--out", type=Path, default=None, help="also write the section here")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="BLAS threads of the rows without a peer (default 1; 0: its default); the "
        "side-by-side rows set their own and leave torch at its default",
    )
    parser.add_argument(
        "--cranfield", type=int, default=None, help="Cranfield documents (default 1,000; 200 quick)"
    )
    parser.add_argument(
        "--our-threads",
        default="",
        help="our BLAS thread counts beside the peer, e.g. 1,2 (default: 1 and one a core)",
    )
    parser.add_argument("--repeats", type=int, default=None, help="timed rounds (default 3)")
    args = parser.parse_args(argv)
    cfg = Config.make(quick=args.quick)
    if args.repeats:
        cfg = dataclasses.replace(cfg, slow_repeats=args.repeats)
    ours = tuple(int(n) for n in args.our_threads.split(",") if n) or None
    limits: Any = None
    if args.threads > 0:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            print("threadpoolctl is not installed: BLAS keeps its own threads", file=sys.stderr)
        else:
            limits = threadpool_limits(limits=args.threads)
    started = dt.datetime.now(dt.UTC)
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    try:
        section = run(cfg, cranfield=args.cranfield, our_threads=ours)
    except Disagreement as exc:
        section = Section("neural", "Neural embeddings", "The sides disagreed; no time reported.")
        section.failure = f"the sides disagree: {exc}"
        traceback.print_exc()
    section.seconds = time.perf_counter() - t0
    text = render(
        [section],
        config=cfg,
        command=" ".join(["python benchmarks/bench_neural.py", *(argv or sys.argv[1:])]),
        started=started,
        wall_seconds=section.seconds,
        threads=args.threads,
        load=(load_before, os.getloadavg()),
    )
    if limits is not None:
        limits.restore_original_limits()
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    print(text)
    return 1 if section.failure else 0


if __name__ == "__main__":
    raise SystemExit(main())
