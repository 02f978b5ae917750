"""Neural sentence embeddings: raglab.embedding.neural's numpy pass of all-MiniLM-L6-v2 on the handbook.

    python benchmarks/bench_neural.py             # the full run, printed as a RESULTS section
    python benchmarks/bench_neural.py --quick     # fewer repeats and batch sizes
    python benchmarks/bench_neural.py --threads 0 # leave BLAS (and torch) at their defaults

Data: every chunk of the bundled handbook under the default chunking (``Lab.load().indexes.chunk_set()``,
the heading chunker of exhibits II to V), encoded as ``NeuralIndex`` encodes chunks: word pieces
truncated at 256, mean pooling, unit rows.

Measured:

- throughput (chunks/s) of ``NeuralModel.encode`` over all the chunks at several batch sizes,
  median of the repeats (the batch sizes must agree with batch size 1 to 1e-6 first);
- when ``sentence_transformers`` imports: ``SentenceTransformer.encode`` on the same model folder,
  batch size 32, ``normalize_embeddings=True``, CPU. Its vectors must equal ours within 1e-5
  (absolute, every coordinate) before anything is timed; the two are then timed interleaved
  (ours, theirs, ours, ...) and compared by their medians. When it does not import, the table
  says so and gives no number for it;
- memory: the model's weight arrays (``BertWeights.nbytes``), tracemalloc's peak during one
  encode of all the chunks, and the vectors per 1,000 chunks (float32, (1000, 384));
- the on-disk cache (``encode_cached``): a cold call into an empty folder, and a warm call that
  reads every vector back (what a second process pays).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
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
from raglab.embedding.neural.model import NeuralModel, load_model

PEER_TOL = 1e-5  # largest |ours - theirs| allowed, any coordinate, normalised vectors
BATCH_TOL = 1e-6  # largest difference between batch sizes
PEER_BATCH = 32  # sentence-transformers' default batch size
# The target: at least half of torch's throughput (a numpy pass need not beat torch to be usable).
PEER_GOAL = 0.5


def _handbook_chunks() -> list[str]:
    from raglab.pipeline.lab import Lab

    return [c.text for c in Lab.load().indexes.chunk_set().chunks]


def _sentence_transformer(model: NeuralModel) -> tuple[Any | None, str]:
    """The peer on our model folder, or None and why not."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        return None, f"sentence_transformers is not importable ({exc}); no side-by-side number"
    import sentence_transformers

    peer = SentenceTransformer(str(model.path), device="cpu")
    return peer, f"sentence-transformers {sentence_transformers.__version__}"


def _interleaved(
    ours: Callable[[], object], theirs: Callable[[], object], repeats: int
) -> tuple[list[float], list[float]]:
    """Seconds of ``repeats`` calls of each, alternating, so that a change in the machine's load
    falls on both sides alike."""
    a: list[float] = []
    b: list[float] = []
    for _ in range(repeats):
        a += time_repeats(ours, repeats=1).samples
        b += time_repeats(theirs, repeats=1).samples
    return a, b


def run(cfg: Config) -> Section:
    section = Section(
        "neural",
        "Neural embeddings: raglab.embedding.neural (numpy) against sentence-transformers (torch)",
        "all-MiniLM-L6-v2 (6 layers, 12 heads, h = 384, word pieces truncated at 256, mean "
        "pooling, unit rows) on every handbook chunk. Throughput is chunks per second over the "
        "whole set, median of the repeats. The peer runs on the same model folder when it is "
        "installed; its vectors must equal ours within 1e-5 before either side is timed.",
    )
    model, load_seconds = timed(load_model)
    texts = _handbook_chunks()
    lengths = np.array([len(ids) for ids in model.token_ids(texts)])
    case = (
        f"handbook, {len(texts)} chunks ({int(lengths.sum()):,} word pieces, mean "
        f"{lengths.mean():.0f}, max {int(lengths.max())})"
    )
    sizes = (32,) if cfg.quick else (8, 32, 64)
    one = model.encode(texts, batch_size=1)  # the unpadded reference of the batch sizes
    ours_at: dict[int, Any] = {}
    for size in sizes:
        vectors = model.encode(texts, batch_size=size)
        gap = float(np.abs(vectors - one).max())
        if gap > BATCH_TOL:
            raise Disagreement(f"batch size {size} differs from batch size 1 by {gap:.1e}")
        ours_at[size] = vectors

    peer, peer_label = _sentence_transformer(model)
    repeats = cfg.slow_repeats
    for size in sizes:

        def ours(size: int = size) -> object:
            return model.encode(texts, batch_size=size)

        check = f"equal to batch size 1 within {BATCH_TOL:g}"
        if peer is not None and size == PEER_BATCH:

            def theirs() -> object:
                return peer.encode(
                    texts, batch_size=PEER_BATCH, convert_to_numpy=True, normalize_embeddings=True
                )

            gap = float(np.abs(np.asarray(theirs()) - ours_at[size]).max())
            if gap > PEER_TOL:
                raise Disagreement(f"sentence-transformers' vectors differ from ours by {gap:.1e}")
            a, b = _interleaved(ours, theirs, repeats)
            section.rows.append(
                Row(
                    case,
                    f"chunks/s, batch size {size} (median of {repeats}, interleaved)",
                    "chunks/s",
                    len(texts) / statistics.median(a),
                    peer_label,
                    len(texts) / statistics.median(b),
                    f"{check}; max |ours - peer| = {gap:.1e}",
                    better="higher",
                    target=True,
                    goal=PEER_GOAL,
                    ours_range=spread([len(texts) / s for s in a]),
                    peer_range=spread([len(texts) / s for s in b]),
                )
            )
            continue
        timing = time_repeats(ours, repeats=repeats)
        peer_text = peer_label if peer is None and size == PEER_BATCH else ""
        section.rows.append(
            Row(
                case,
                f"chunks/s, batch size {size} (median of {repeats})",
                "chunks/s",
                len(texts) / timing.median,
                peer_text,
                None,
                check,
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
        "Our pass runs the dense products on the real word pieces only (packed), so padding "
        "costs only in the attention scores; batches are cut from the chunks sorted by length.",
        "Both sides use their BLAS (numpy's OpenBLAS; torch's own) with the thread count in the "
        "header; run alone, this file sets it with threadpoolctl (and torch.set_num_threads) "
        "rather than environment variables.",
    ]
    return section


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and batch sizes")
    parser.add_argument("--out", type=Path, default=None, help="also write the section here")
    parser.add_argument(
        "--threads", type=int, default=1, help="BLAS and torch threads (default 1; 0: defaults)"
    )
    args = parser.parse_args(argv)
    cfg = Config.make(quick=args.quick)
    limits: Any = None
    if args.threads > 0:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            print("threadpoolctl is not installed: BLAS keeps its own threads", file=sys.stderr)
        else:
            limits = threadpool_limits(limits=args.threads)
        try:
            import torch

            torch.set_num_threads(args.threads)
        except ImportError:
            pass
    started = dt.datetime.now(dt.UTC)
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    try:
        section = run(cfg)
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
