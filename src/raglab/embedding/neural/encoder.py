"""The BERT forward pass of a sentence-embedding model, in float32 numpy (no torch).

A text of t word pieces (ids with [CLS] first and [SEP] last) becomes t hidden states of width h
(Devlin et al. 2019), then one sentence vector (Reimers and Gurevych 2019)::

    x_0 = LayerNorm(E_word[id] + E_pos[0..t-1] + E_type[0])                      (t, h)
    per layer l = 1..L, with H heads of width d = h / H (Vaswani et al. 2017):
        Q, K, V = x W_q + b_q, x W_k + b_k, x W_v + b_v, split into H heads     (H, t, d)
        A       = softmax(Q K^T / sqrt(d)) V                                    (H, t, d)
        a       = LayerNorm(x + concat_heads(A) W_o + b_o)                      (t, h)
        x       = LayerNorm(a + GELU(a W_1 + b_1) W_2 + b_2)                    (t, h); W_1 (h, 4h)
    GELU(z) = z/2 (1 + erf(z / sqrt 2))   (the erf form, not the tanh approximation)
    LayerNorm(z) = (z - mean(z)) / sqrt(var(z) + eps) * gamma + beta, over the last axis
    pooled  = sum_i x_i / t  (mean) or x_0 ([CLS])                                  (h,)
    output  = pooled / max(||pooled||_2, 1e-12)      (when normalised)

Texts are encoded in batches (after sorting by length). Nothing is padded: the products run on
the N word pieces of a batch packed together, (N, h), and attention runs text by text, so a
text's vector depends on its batch only through BLAS's rounding of the products (about 1e-7).
The element-wise steps (GELU, softmax, LayerNorm) are numba's compiled kernels when numba is
installed (:mod:`raglab.embedding.neural.compiled`), else numpy's, computing the same values.
BLAS runs the large products on its threads; the rest runs on as many threads of the pass's
own (:func:`raglab.base.threads.blas_thread_count`): attention shared text by text (BLAS at one thread inside it),
GELU and LayerNorm by blocks of rows, which changes no value, so a batch's vectors depend on
BLAS's thread count only as its products do.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from raglab.base.ranking import IntArray
from raglab.base.threads import blas_controller, blas_thread_count, even_parts, run_parts
from raglab.embedding.neural import compiled as _compiled
from raglab.embedding.neural.compiled import ERF_A, ERF_P, Kernels

__all__ = [
    "GELU_BLOCK",
    "NUMPY_KERNELS",
    "ROW_BLOCK",
    "SCORES_BLOCK",
    "BertWeights",
    "EncoderInput",
    "Float32Array",
    "LayerWeights",
    "Progress",
    "check_batch_size",
    "check_texts",
    "encode",
    "forward",
    "gelu",
    "layer_norm",
    "length_batches",
    "load_kernels",
    "plan_batches",
    "pool",
    "pooled_batch",
    "token_states",
    "unit_rows32",
]

Float32Array = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]
# Wraps the list of batches as they are encoded (each batch: the positions of its texts in the
# input), like ``load_corpus``'s ``progress``: the command line passes a progress bar.
Progress = Callable[[list[IntArray]], Iterable[IntArray]]

_INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))
_HALF = np.float32(0.5)
# Values per block of the numpy GELU: its three float32 temporaries (48 KiB each) stay in a
# core's second-level cache. Blocks of 4,096 to 65,536 values ran within 10 % of each other.
GELU_BLOCK = 12288
# Rows per block, at least, when GELU and LayerNorm are shared among threads: below it handing
# a block to another thread costs more than computing it.
ROW_BLOCK = 64
# Bytes of attention scores a thread computes at once, at most (a head's (t, t) at the least):
# the heads of a text go by as many as fit, so that the scores stay in a core's second-level
# cache from Q K^T through the softmax to P V. All 12 heads of a 256-piece text at once (3 MB)
# ran 4 to 7 % slower; the values are the same either way (each head is its own products).
SCORES_BLOCK = 1 << 19


@dataclass(frozen=True, slots=True, eq=False)
class LayerWeights:
    """One transformer layer, every matrix stored as (in, out) so that ``x @ W`` applies it.

    ``qkv`` (h, 3h) and ``qkv_bias`` (3h,) are W_q, W_k, W_v side by side (one product instead of
    three); ``attn_out`` (h, h); ``ffn_in`` (h, i); ``ffn_out`` (i, h); ``ln1_*`` and ``ln2_*``
    (h,) the LayerNorms after attention and after the feed-forward block. All float32.
    """

    qkv: Float32Array
    qkv_bias: Float32Array
    attn_out: Float32Array
    attn_out_bias: Float32Array
    ln1_gamma: Float32Array
    ln1_beta: Float32Array
    ffn_in: Float32Array
    ffn_in_bias: Float32Array
    ffn_out: Float32Array
    ffn_out_bias: Float32Array
    ln2_gamma: Float32Array
    ln2_beta: Float32Array


@dataclass(frozen=True, slots=True, eq=False)
class BertWeights:
    """A BERT encoder: ``word`` (vocab, h), ``position`` (max_positions, h), ``token_type``
    (types, h), the embedding LayerNorm (h,), the layers, ``heads`` H and LayerNorm ``eps``."""

    word: Float32Array
    position: Float32Array
    token_type: Float32Array
    emb_gamma: Float32Array
    emb_beta: Float32Array
    layers: tuple[LayerWeights, ...]
    heads: int
    eps: float

    @property
    def hidden(self) -> int:
        """h, the width of every hidden state."""
        return int(self.word.shape[1])

    @property
    def nbytes(self) -> int:
        """Bytes held by all the arrays."""
        arrays = [self.word, self.position, self.token_type, self.emb_gamma, self.emb_beta]
        for layer in self.layers:
            arrays += [getattr(layer, f.name) for f in fields(layer)]
        return sum(int(a.nbytes) for a in arrays)


class EncoderInput(Protocol):
    """What the forward pass reads of a loaded model (:class:`raglab.embedding.neural.model.
    NeuralModel` is one): its weights, pooling ("mean" or "cls"), padding id, vector width
    and word-piece ids. The encoder names this shape, not the model's class, so the model
    module can offer ``encode`` without the two importing each other."""

    @property
    def weights(self) -> BertWeights: ...

    @property
    def pooling(self) -> str: ...

    @property
    def pad_token_id(self) -> int: ...

    @property
    def dim(self) -> int: ...

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]: ...


def layer_norm(
    x: Float32Array, gamma: Float32Array, beta: Float32Array, eps: float
) -> Float32Array:
    """(x - mean) / sqrt(var + eps) * gamma + beta over the last axis (biased variance, as torch).
    Shape of x, float32."""
    mean = x.mean(axis=-1, keepdims=True)
    centred: Float32Array = x - mean
    var = np.mean(np.square(centred), axis=-1, keepdims=True)
    centred /= np.sqrt(var + np.float32(eps))
    centred *= gamma
    centred += beta
    return centred


def gelu(x: Float32Array) -> Float32Array:
    """GELU(x) = x Phi(x) = x/2 (1 + erf(x / sqrt 2)) (Hendrycks and Gimpel 2016), the erf form
    (not the tanh approximation), in place on x (any shape, float32); returns x.

    erf is Abramowitz and Stegun 7.1.26 (absolute error under 1.5e-7, so within a few float32
    units of the exact value), the form torch's CPU kernel evaluates, so the two passes round
    alike. The work goes in blocks of :data:`GELU_BLOCK` values, small enough that the temporaries
    stay in cache: about 20 numpy operations a block instead of scipy's float64 ``erf``, which
    cost a third of the whole pass."""
    flat = x.reshape(-1)
    size = min(GELU_BLOCK, flat.size)
    a, t, q = (np.empty(size, dtype=np.float32) for _ in range(3))
    for start in range(0, flat.size, GELU_BLOCK):
        v = flat[start : start + GELU_BLOCK]
        n = v.size
        aa, tt, qq = a[:n], t[:n], q[:n]
        np.abs(v, out=aa)
        aa *= _INV_SQRT2  # |z|, z = v / sqrt 2
        np.multiply(aa, ERF_P, out=tt)
        tt += np.float32(1.0)
        np.reciprocal(tt, out=tt)  # t = 1 / (1 + p |z|)
        np.multiply(tt, ERF_A[0], out=qq)
        for coefficient in ERF_A[1:]:
            qq += coefficient
            qq *= tt  # t (a1 + t (a2 + ...)) by Horner's rule
        np.square(aa, out=aa)
        np.negative(aa, out=aa)
        np.exp(aa, out=aa)
        qq *= aa
        qq *= _HALF  # 1 - Phi(|v|) = (1 - erf(|z|)) / 2
        np.subtract(_HALF, qq, out=qq)
        np.copysign(qq, v, out=qq)
        qq += _HALF  # Phi(v) = 1/2 + sign(v) (1/2 - (1 - Phi(|v|)))
        v *= qq
    return x


def _gelu_bias(x: Float32Array, bias: Float32Array) -> None:
    x += bias
    gelu(x)


def _softmax_rows(s: Float32Array, scale: float) -> None:
    # scale > 0, so (s - max) * scale is scale * s less its max; one reciprocal a row, then a
    # product per value, cheaper than a division per value.
    s -= s.max(axis=-1, keepdims=True)
    s *= np.float32(scale)
    np.exp(s, out=s)
    inverse = s.sum(axis=-1, keepdims=True)
    np.reciprocal(inverse, out=inverse)
    s *= inverse


def _add_layer_norm(
    x: Float32Array,
    residual: Float32Array,
    bias: Float32Array,
    gamma: Float32Array,
    beta: Float32Array,
    eps: float,
) -> None:
    x += residual
    x += bias
    x[...] = layer_norm(x, gamma, beta, eps)


NUMPY_KERNELS = Kernels(_gelu_bias, _softmax_rows, _add_layer_norm)


@functools.cache
def load_kernels(compiled: bool | None = None) -> Kernels:
    """The element-wise steps the pass runs: numba's compiled ones
    (:func:`raglab.embedding.neural.compiled.kernels`) when ``compiled`` is True, or None and
    numba is installed; else :data:`NUMPY_KERNELS`, each in place and computing the same values
    (to float rounding: about 1e-7). Compiling takes a few seconds on first use (then numba's
    disk cache); call this before timing an encoding so that it is not counted."""
    if compiled is None:
        compiled = _compiled.available()
    return _compiled.kernels() if compiled else NUMPY_KERNELS


_one_thread_lock = threading.Lock()
_one_thread_users = 0
_one_thread_limiter: Any = None


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """BLAS at one thread inside the block (the caller's threads split the work instead). The
    cap is the process's: blocks that overlap in several threads (two encodings at once) share
    one cap, set by the first to enter and lifted by the last to leave, so BLAS's count is
    restored whatever order they leave in."""
    global _one_thread_users, _one_thread_limiter
    controller = blas_controller()
    if controller is None:
        yield
        return
    with _one_thread_lock:
        if _one_thread_users == 0:
            _one_thread_limiter = controller.limit(limits=1)
        _one_thread_users += 1
    try:
        yield
    finally:
        with _one_thread_lock:
            _one_thread_users -= 1
            if _one_thread_users == 0:
                _one_thread_limiter.restore_original_limits()
                _one_thread_limiter = None


_scratch = threading.local()


def _scores_buffer(size: int) -> Float32Array:
    """A float32 buffer of ``size`` values, this thread's own, kept for its next call (grown when
    too small): the scores of a text's heads (:data:`SCORES_BLOCK`), which a fresh array, up to
    3 MB, would map and fault in page by page at every text of every layer."""
    buffer: Float32Array | None = getattr(_scratch, "scores", None)
    if buffer is None or buffer.size < size:
        buffer = np.empty(size, dtype=np.float32)
        _scratch.scores = buffer
    return buffer[:size]


def _attention(
    packed: Float32Array,
    lengths: Sequence[int],
    heads: int,
    softmax_rows: Callable[[Float32Array, float], None],
    out: Float32Array,
    threads: int = 1,
) -> None:
    """softmax(Q K^T / sqrt(d) + 0) V for every head, heads concatenated, of each text on its
    own: ``packed`` (N, 3h) holds Q, K and V of the N tokens of the texts, text after text,
    ``lengths`` their counts; writes (N, h) into ``out``. No text sees another's tokens, so no
    padding and no mask: each text's (H, t, t) scores are all real.

    With ``threads`` > 1 the texts are shared among that many threads, BLAS at one thread each
    (:func:`_one_blas_thread`): a text's products are too small (t x d x t) for BLAS to split
    them well, and the softmax between them would otherwise run on one core. Each text is
    computed by the same calls either way, so the values do not depend on ``threads``."""
    h = out.shape[1]
    d = h // heads
    scale = 1.0 / math.sqrt(d)
    starts = list(itertools.accumulate(lengths, initial=0))

    def text(i: int) -> None:
        start, t = starts[i], lengths[i]
        # (t, 3, H, d) -> (3, H, t, d): each head's (t, d) slice keeps unit stride along d, so
        # matmul hands every head to BLAS without copying.
        q, k, v = packed[start : start + t].reshape(t, 3, heads, d).transpose(1, 2, 0, 3)
        # Each head's (t, d) context goes straight to its columns of out (row stride h): BLAS
        # writes strided rows, so the heads need no concatenating copy.
        context = out[start : start + t].reshape(t, heads, d).transpose(1, 0, 2)
        group = max(1, min(heads, SCORES_BLOCK // (4 * t * t)))
        scores = _scores_buffer(group * t * t).reshape(group, t, t)
        for first in range(0, heads, group):
            last = min(heads, first + group)
            part = scores[: last - first]
            np.matmul(q[first:last], k[first:last].transpose(0, 2, 1), out=part)
            softmax_rows(part.reshape(-1, t), scale)
            np.matmul(part, v[first:last], out=context[first:last])

    if threads <= 1 or len(lengths) == 1:
        for i in range(len(lengths)):
            text(i)
        return
    with _one_blas_thread():
        # Longest texts first (a batch is sorted so), one part a text: the threads take the
        # next text as they finish, so the parts even out without sizing them.
        run_parts(len(lengths), threads, text)


def _by_rows(
    threads: int, kernel: Callable[..., None], rowwise: tuple[Float32Array, ...], *rest: object
) -> None:
    """``kernel(*rowwise, *rest)`` on row blocks of the ``rowwise`` arrays (same row count), on
    ``threads`` threads, blocks of at least :data:`ROW_BLOCK` rows. The element-wise steps work
    row by row, so a row gets the same values whichever block and thread compute it."""
    bounds = even_parts(rowwise[0].shape[0], threads, ROW_BLOCK)
    if len(bounds) == 2:
        kernel(*rowwise, *rest)
        return

    def block(p: int) -> None:
        lo, hi = bounds[p], bounds[p + 1]
        kernel(*(a[lo:hi] for a in rowwise), *rest)

    run_parts(len(bounds) - 1, threads, block)


def _states(
    weights: BertWeights,
    ids: IntArray,
    lengths: Sequence[int],
    kernels: Kernels,
    threads: int = 1,
) -> Float32Array:
    """The last hidden states (N, h) of the N word pieces ``ids`` (N,) of texts laid text after
    text, ``lengths`` tokens each, positions counting from 0 at each text's [CLS].

    ``threads``: how many threads run the steps BLAS does not (attention text by text, GELU,
    LayerNorm), as BLAS runs the large products on its own threads; the values are the same
    for any count (every step is per row or per text)."""
    longest = max(lengths)
    if longest > weights.position.shape[0]:
        raise ValueError(
            f"{longest} word pieces exceed the model's {weights.position.shape[0]} positions"
        )
    positions = np.concatenate([np.arange(t) for t in lengths])
    x = weights.word[ids]
    x += weights.position[positions]
    x += weights.token_type[0]  # one segment: every token is of type 0
    x = layer_norm(x, weights.emb_gamma, weights.emb_beta, weights.eps)
    n, h = x.shape
    # Buffers reused by every layer: the products write into them rather than allocating.
    packed = np.empty((n, 3 * h), dtype=np.float32)
    context = np.empty((n, h), dtype=np.float32)
    attended = np.empty((n, h), dtype=np.float32)
    inner = np.empty((n, weights.layers[0].ffn_in.shape[1]), dtype=np.float32)
    spare = np.empty((n, h), dtype=np.float32)
    eps = weights.eps
    for layer in weights.layers:
        np.matmul(x, layer.qkv, out=packed)
        packed += layer.qkv_bias
        _attention(packed, lengths, weights.heads, kernels.softmax_rows, context, threads)
        np.matmul(context, layer.attn_out, out=attended)
        ln1 = (layer.attn_out_bias, layer.ln1_gamma, layer.ln1_beta, eps)
        _by_rows(threads, kernels.add_layer_norm, (attended, x), *ln1)
        np.matmul(attended, layer.ffn_in, out=inner)
        _by_rows(threads, kernels.gelu_bias, (inner,), layer.ffn_in_bias)
        np.matmul(inner, layer.ffn_out, out=spare)
        ln2 = (layer.ffn_out_bias, layer.ln2_gamma, layer.ln2_beta, eps)
        _by_rows(threads, kernels.add_layer_norm, (spare, attended), *ln2)
        x, spare = spare, x
    return x


def _lengths(mask: BoolArray) -> list[int]:
    """The real tokens of each row of a right-padded ``mask`` (b, t); each row needs one."""
    lengths = mask.sum(axis=1)
    if lengths.min(initial=1) < 1:
        raise ValueError("every row of the batch needs at least one real token")
    return [int(n) for n in lengths]


def forward(
    weights: BertWeights, ids: IntArray, mask: BoolArray, *, kernels: Kernels | None = None
) -> Float32Array:
    """The last hidden states (b, t, h) float32 of a padded batch of word-piece ``ids`` (b, t);
    ``mask`` (b, t) is True at real tokens, whose states these are (padded positions hold 0).
    Padding must be on the right (positions count from 0 at [CLS]); every row needs at least one
    real token. ``kernels``: the element-wise steps (None: :func:`load_kernels`).

    Only attention mixes tokens, so everything else (embeddings, the projections, the
    feed-forward blocks, LayerNorm) runs on the N real tokens packed together, (N, h), and
    attention runs text by text: padding costs nothing anywhere.
    """
    b, t = ids.shape
    if t > weights.position.shape[0]:
        raise ValueError(
            f"{t} word pieces exceed the model's {weights.position.shape[0]} positions"
        )
    x = _states(weights, ids[mask], _lengths(mask), kernels or load_kernels(), blas_thread_count())
    out = np.zeros((b, t, x.shape[1]), dtype=np.float32)
    out[mask] = x
    return out


def pool(states: Float32Array, mask: BoolArray, mode: str) -> Float32Array:
    """One vector per text from its states (b, t, h): ``"mean"`` over the real tokens (the mask),
    or ``"cls"``, the state of [CLS]. Shape (b, h), float32."""
    if mode == "cls":
        out: Float32Array = states[:, 0].copy()
        return out
    if mode != "mean":
        raise ValueError(f"pooling must be 'mean' or 'cls', got {mode!r}")
    weights = mask.astype(np.float32)
    summed = np.einsum("bth,bt->bh", states, weights)
    counts = np.maximum(weights.sum(axis=1, keepdims=True), np.float32(1e-9))
    out = summed / counts
    return out


def unit_rows32(x: Float32Array) -> Float32Array:
    """Each row of x (n, h) over max(||row||_2, 1e-12), as torch's ``normalize``; float32."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    out: Float32Array = (x / np.maximum(norms, np.float32(1e-12))).astype(np.float32, copy=False)
    return out


def check_texts(texts: Sequence[str]) -> None:
    """Raise ValueError unless ``texts`` is a sequence of strings (one bare string is refused: it
    would be read as its characters)."""
    if isinstance(texts, str | bytes):
        raise ValueError("texts must be a sequence of strings, not one string")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValueError(f"texts[{i}] is {type(text).__name__}, not a string")


def plan_batches(
    model: EncoderInput, texts: Sequence[str], batch_size: int
) -> tuple[list[list[int]], list[IntArray]]:
    """The word-piece ids of each text, and the batches :func:`encode` runs: positions in
    ``texts``, sorted by word-piece count (longest first, ties in input order) and cut every
    ``batch_size``, so a batch holds texts of similar lengths. A batch's vectors depend on the
    batch (BLAS rounds the products by the batch's shape), so whoever runs these batches, here
    or on a cluster's workers, gets the same vectors."""
    check_batch_size(batch_size)
    check_texts(texts)
    ids = model.token_ids(texts)
    return ids, length_batches([len(row) for row in ids], batch_size)


def check_batch_size(batch_size: int) -> None:
    """Raise ValueError unless ``batch_size`` is an integer >= 1."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")


def length_batches(lengths: Sequence[int], batch_size: int) -> list[IntArray]:
    """The batches :func:`plan_batches` cuts from the texts' word-piece counts ``lengths``:
    positions, sorted by count (longest first, ties in input order), cut every ``batch_size``.
    The counts alone decide the plan, so a cluster's client plans it from counts its workers
    send, without the texts (:mod:`raglab.distributed.neural`)."""
    check_batch_size(batch_size)
    counts = np.fromiter(lengths, np.int64, len(lengths))
    order = np.argsort(-counts, kind="stable")
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def _packed(rows: Sequence[Sequence[int]]) -> tuple[IntArray, list[int]]:
    """The word pieces of a batch laid text after text, (N,), and each text's count."""
    lengths = [len(row) for row in rows]
    ids = np.fromiter((i for row in rows for i in row), np.int64, sum(lengths))
    return ids, lengths


def _pooled(states: Float32Array, lengths: Sequence[int], mode: str) -> Float32Array:
    """:func:`pool` of packed states (N, h) laid text after text, ``lengths`` tokens each: the
    mean (summed in float64) or the first token of each text. Shape (b, h), float32."""
    starts = np.cumsum([0, *lengths[:-1]])
    if mode == "cls":
        first: Float32Array = states[starts]
        return first
    if mode != "mean":
        raise ValueError(f"pooling must be 'mean' or 'cls', got {mode!r}")
    sums = np.add.reduceat(states, starts, axis=0, dtype=np.float64)
    out: Float32Array = (sums / np.asarray(lengths, dtype=np.float64)[:, None]).astype(np.float32)
    return out


def pooled_batch(
    model: EncoderInput,
    rows: Sequence[Sequence[int]],
    *,
    kernels: Kernels | None = None,
    threads: int | None = None,
) -> Float32Array:
    """One batch of :func:`plan_batches` through the network, pooled, not normalised: (b, h).
    ``kernels``: the element-wise steps (None: :func:`load_kernels`); ``threads``: the threads
    of the steps BLAS does not run (None: :func:`blas_thread_count`), which change no value."""
    ids, lengths = _packed(rows)
    count = blas_thread_count() if threads is None else threads
    states = _states(model.weights, ids, lengths, kernels or load_kernels(), count)
    return _pooled(states, lengths, model.pooling)


def _batches(
    model: EncoderInput, texts: Sequence[str], batch_size: int, progress: Progress | None
) -> Iterator[tuple[IntArray, Float32Array, list[int]]]:
    """(positions in ``texts``, packed states (N, h), token counts) of each batch of
    :func:`plan_batches`."""
    ids, batches = plan_batches(model, texts, batch_size)
    kernels = load_kernels()
    threads = blas_thread_count()
    for batch in batches if progress is None else progress(batches):
        flat, lengths = _packed([ids[i] for i in batch.tolist()])
        yield batch, _states(model.weights, flat, lengths, kernels, threads), lengths


def encode(
    model: EncoderInput,
    texts: Sequence[str],
    *,
    batch_size: int = 32,
    normalize: bool = True,
    progress: Progress | None = None,
) -> Float32Array:
    """One sentence vector per text: shape (n, h) float32, rows in the order of ``texts``.

    Pooled as the model's folder says (mean over the tokens, or [CLS]); ``normalize`` divides each
    row by its L2 norm (what ``SentenceTransformer.encode`` returns for all-MiniLM-L6-v2, whose
    modules end with a Normalize layer). Texts longer than ``model.max_seq_length`` word pieces
    are truncated. ``batch_size`` texts go through the network at once (32, as
    sentence-transformers); results agree across batch sizes to float rounding (about 1e-7).
    """
    out = np.zeros((len(texts), model.dim), dtype=np.float32)
    for positions, states, lengths in _batches(model, texts, batch_size, progress):
        out[positions] = _pooled(states, lengths, model.pooling)
    return unit_rows32(out) if normalize else out


def token_states(
    model: EncoderInput, texts: Sequence[str], *, batch_size: int = 32
) -> list[Float32Array]:
    """The last hidden state of every word piece of each text: a list of (t_i, h) float32 arrays,
    [CLS] first and [SEP] last, padding removed; batched as :func:`encode`."""
    out: list[Float32Array] = [np.zeros((0, model.dim), dtype=np.float32)] * len(texts)
    for positions, states, lengths in _batches(model, texts, batch_size, None):
        parts = np.split(states, np.cumsum(lengths[:-1]))
        for i, part in zip(positions.tolist(), parts, strict=True):
            out[i] = part.copy()
    return out
