"""Where the neural encoder's time goes: each step of the forward pass timed, on two collections.

    python benchmarks/profile_neural.py                  # handbook + 1,000 Cranfield documents
    python benchmarks/profile_neural.py --kernels numpy  # the numpy element-wise steps
    python benchmarks/profile_neural.py --threads 0      # BLAS at its own default
    python benchmarks/profile_neural.py --cprofile       # also cProfile's top functions

The steps are those of ``raglab.embedding.neural.encoder._states``, run here one by one between
``time.perf_counter`` calls (same functions, same order, same buffers), over every batch of
``plan_batches``; the vectors are checked against ``NeuralModel.encode`` (bit for bit) so the
timed pass is the real one. The pass's own steps run on as many threads as BLAS (``--threads``);
on one, attention is timed step by step, on more as one step (its texts shared among threads). Padding is counted as the pass before this one would have paid it:
the attention cells (b t_max^2 per batch against sum t_i^2) of batches padded to their longest
text. The load average is printed with every table: on a shared machine the times are noisy.
"""

from __future__ import annotations

import argparse
import cProfile
import math
import os
import pstats
import sys
import time
from collections import defaultdict
from collections.abc import Sequence

import numpy as np
from common import CRANFIELD_DIR, _glasgow_records

from raglab.base.threads import blas_thread_count
from raglab.embedding.neural import encoder as enc
from raglab.embedding.neural.compiled import Kernels
from raglab.embedding.neural.model import NeuralModel, load_model

CRANFIELD_CHUNKS = 1000


def collections(cranfield: int = CRANFIELD_CHUNKS) -> dict[str, list[str]]:
    """The handbook's chunks (default chunking) and the first ``cranfield`` Cranfield documents."""
    from raglab.pipeline.lab import Lab

    handbook = [c.text for c in Lab.load().indexes.chunk_set().chunks]
    documents = _glasgow_records(CRANFIELD_DIR / "cran.all.1400")[:cranfield]
    return {"handbook": handbook, f"Cranfield, first {cranfield:,}": documents}


class Clock:
    """Seconds per named step, added up."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.t = time.perf_counter()

    def tick(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] += now - self.t
        self.t = now


def timed_states(
    weights: enc.BertWeights,
    ids: np.ndarray,
    lengths: Sequence[int],
    k: Kernels,
    clock: Clock,
    threads: int = 1,
) -> np.ndarray:
    """``encoder._states`` with a tick after each step. On one thread attention is split into
    its steps; on more, the texts are shared among the threads and attention is timed whole."""
    positions = np.concatenate([np.arange(t) for t in lengths])
    x = weights.word[ids]
    x += weights.position[positions]
    x += weights.token_type[0]
    x = enc.layer_norm(x, weights.emb_gamma, weights.emb_beta, weights.eps)
    n, h = x.shape
    heads = weights.heads
    d = h // heads
    packed = np.empty((n, 3 * h), dtype=np.float32)
    context = np.empty((n, h), dtype=np.float32)
    attended = np.empty((n, h), dtype=np.float32)
    inner = np.empty((n, weights.layers[0].ffn_in.shape[1]), dtype=np.float32)
    spare = np.empty((n, h), dtype=np.float32)
    clock.tick("embeddings + LayerNorm")
    for layer in weights.layers:
        np.matmul(x, layer.qkv, out=packed)
        packed += layer.qkv_bias
        clock.tick("QKV product (fused, N x 384 x 1152)")
        if threads > 1:
            enc._attention(packed, lengths, heads, k.softmax_rows, context, threads)
            clock.tick(f"attention, text by text on {threads} threads (Q K^T, softmax, P V)")
        start = 0
        for t in lengths if threads == 1 else ():
            q, kk, v = packed[start : start + t].reshape(t, 3, heads, d).transpose(1, 2, 0, 3)
            heads_out = context[start : start + t].reshape(t, heads, d).transpose(1, 0, 2)
            group = max(1, min(heads, enc.SCORES_BLOCK // (4 * t * t)))
            scores = enc._scores_buffer(group * t * t).reshape(group, t, t)
            for first in range(0, heads, group):
                last = min(heads, first + group)
                part = scores[: last - first]
                np.matmul(q[first:last], kk[first:last].transpose(0, 2, 1), out=part)
                clock.tick("attention Q K^T")
                k.softmax_rows(part.reshape(-1, t), 1.0 / math.sqrt(d))
                clock.tick("attention softmax")
                np.matmul(part, v[first:last], out=heads_out[first:last])
                clock.tick("attention P V (into the heads' columns)")
            start += t
        np.matmul(context, layer.attn_out, out=attended)
        clock.tick("attention output product (N x 384 x 384)")
        ln1 = (layer.attn_out_bias, layer.ln1_gamma, layer.ln1_beta, weights.eps)
        enc._by_rows(threads, k.add_layer_norm, (attended, x), *ln1)
        clock.tick("residual + LayerNorm")
        np.matmul(attended, layer.ffn_in, out=inner)
        clock.tick("FFN in product (N x 384 x 1536)")
        enc._by_rows(threads, k.gelu_bias, (inner,), layer.ffn_in_bias)
        clock.tick("bias + GELU")
        np.matmul(inner, layer.ffn_out, out=spare)
        clock.tick("FFN out product (N x 1536 x 384)")
        ln2 = (layer.ffn_out_bias, layer.ln2_gamma, layer.ln2_beta, weights.eps)
        enc._by_rows(threads, k.add_layer_norm, (spare, attended), *ln2)
        clock.tick("residual + LayerNorm")
        x, spare = spare, x
    states: np.ndarray = x
    return states


def profile(model: NeuralModel, texts: list[str], batch_size: int, k: Kernels) -> str:
    clock = Clock()
    ids, batches = enc.plan_batches(model, texts, batch_size)
    threads = blas_thread_count()
    clock.tick("word pieces + batches")
    out = np.zeros((len(texts), model.dim), dtype=np.float32)
    padded_cells = real_cells = 0
    for batch in batches:
        rows = [ids[i] for i in batch.tolist()]
        flat, lengths = enc._packed(rows)
        padded_cells += len(rows) * max(lengths) ** 2
        real_cells += sum(t * t for t in lengths)
        clock.tick("word pieces + batches")
        states = timed_states(model.weights, flat, lengths, k, clock, threads)
        out[batch] = enc._pooled(states, lengths, model.pooling)
        clock.tick("mean pooling")
    vectors = enc.unit_rows32(out)
    clock.tick("mean pooling")
    gap = float(np.abs(vectors - model.encode(texts, batch_size=batch_size)).max())
    if gap > 0:
        raise SystemExit(f"the timed steps differ from encode by {gap:.1e}")
    total = sum(clock.seconds.values())
    pieces = sum(len(i) for i in ids)
    lines = [
        f"{len(texts):,} texts, {pieces:,} word pieces, batch size {batch_size}: {total:.2f} s, "
        f"{len(texts) / total:.1f} texts/s, {threads} thread(s) (load average "
        f"{os.getloadavg()[0]:.2f})",
        "",
        "| Step | Seconds | Share |",
        "|---|---:|---:|",
    ]
    for name, seconds in sorted(clock.seconds.items(), key=lambda kv: -kv[1]):
        lines.append(f"| {name} | {seconds:.3f} | {100 * seconds / total:.1f} % |")
    products = sum(s for n, s in clock.seconds.items() if "product" in n or "attention" in n)
    lines += [
        "",
        f"Products and attention: {100 * products / total:.0f} % of the time. Padding: none "
        f"now; batches padded to their longest text would compute {padded_cells / real_cells:.3f}"
        " times the attention cells (and the products, unpacked, more).",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", choices=("auto", "numba", "numpy"), default="auto")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (0: its default)")
    parser.add_argument("--cprofile", action="store_true", help="also cProfile's top functions")
    parser.add_argument("--cranfield", type=int, default=CRANFIELD_CHUNKS, help="documents")
    parser.add_argument("--only", default="", help="profile only the collections naming this")
    args = parser.parse_args(argv)
    if args.threads > 0:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=args.threads)
    model = load_model()
    choice = {"auto": None, "numba": True, "numpy": False}[args.kernels]
    k = enc.load_kernels(compiled=choice)
    kind = "numba" if k is not enc.NUMPY_KERNELS else "numpy"
    print(f"# Neural encoder profile: {kind} kernels, BLAS threads {args.threads or 'default'}\n")
    for name, texts in collections(args.cranfield).items():
        if args.only and args.only.lower() not in name.lower():
            continue
        print(f"## {name}\n")
        print(profile(model, texts, args.batch_size, k), "\n")
        if args.cprofile:
            profiler = cProfile.Profile()
            profiler.runcall(model.encode, texts, batch_size=args.batch_size)
            stats = pstats.Stats(profiler, stream=sys.stdout)
            stats.sort_stats("tottime").print_stats(12)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
