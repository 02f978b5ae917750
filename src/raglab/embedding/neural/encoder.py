"""The BERT forward pass of a sentence-embedding model, in float32 numpy (no torch).

A text of t word pieces (ids with [CLS] first and [SEP] last) becomes t hidden states of width h
(Devlin et al. 2019), then one sentence vector (Reimers and Gurevych 2019)::

    x_0 = LayerNorm(E_word[id] + E_pos[0..t-1] + E_type[0])                      (t, h)
    per layer l = 1..L, with H heads of width d = h / H (Vaswani et al. 2017):
        Q, K, V = x W_q + b_q, x W_k + b_k, x W_v + b_v, split into H heads     (H, t, d)
        A       = softmax(Q K^T / sqrt(d) + M) V                                (H, t, d)
        a       = LayerNorm(x + concat_heads(A) W_o + b_o)                      (t, h)
        x       = LayerNorm(a + GELU(a W_1 + b_1) W_2 + b_2)                    (t, h); W_1 (h, 4h)
    GELU(z) = z/2 (1 + erf(z / sqrt 2))   (exact, not the tanh approximation)
    LayerNorm(z) = (z - mean(z)) / sqrt(var(z) + eps) * gamma + beta, over the last axis
    pooled  = sum_i m_i x_i / max(sum_i m_i, 1e-9)  (mean) or x_0 ([CLS])            (h,)
    output  = pooled / max(||pooled||_2, 1e-12)      (when normalised)

M is the additive attention mask: 0 for a real token, float32's lowest value for a padded key,
so exp() gives padded keys exactly zero weight. Texts are encoded in batches padded to the
longest text of the batch (after sorting by length); every product but attention's runs on the
real tokens only (:func:`forward`). Padding never changes a real token's state beyond float
rounding (other matrix shapes can take other BLAS blocking: about 1e-7).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from raglab.base.ranking import IntArray

__all__ = [
    "BertWeights",
    "EncoderInput",
    "Float32Array",
    "LayerWeights",
    "Progress",
    "check_texts",
    "encode",
    "forward",
    "gelu",
    "layer_norm",
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

_MASKED = np.finfo(np.float32).min  # HF's additive mask value: exp(lowest - max) is exactly 0
_INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))


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


@functools.cache
def load_kernels() -> Any:
    """scipy's ``erf`` ufunc, imported on the first encoding rather than with this module.

    Importing ``scipy.special`` takes about 0.1 s of one core; a process that reads every vector
    from the cache (a server's start, most runs) never needs it. Call it before timing an
    encoding so the import is not counted."""
    from scipy.special import erf  # type: ignore[import-untyped]

    return erf


def gelu(x: Float32Array) -> Float32Array:
    """GELU(x) = x/2 (1 + erf(x / sqrt 2)) (Hendrycks and Gimpel 2016), exact, in place."""
    half = x * np.float32(0.5)
    x *= _INV_SQRT2
    # scipy evaluates erf in float64 and rounds to float32: the exact form, and the most costly
    # step of the whole pass (about a third of the time, one value per feed-forward unit).
    out: Float32Array = load_kernels()(x, out=x)
    out += np.float32(1.0)
    out *= half
    return out


def _attention(
    layer: LayerWeights, x: Float32Array, mask: BoolArray, bias: Float32Array, heads: int
) -> Float32Array:
    """softmax(Q K^T / sqrt(d) + M) V for every head, heads concatenated, for the N real tokens
    x (N, h) of a batch whose layout is ``mask`` (b, t): (N, h) -> (N, h)."""
    (b, t), h = mask.shape, x.shape[1]
    d = h // heads
    packed = x @ layer.qkv
    packed += layer.qkv_bias
    qkv = np.zeros((b, t, 3 * h), dtype=np.float32)
    qkv[mask] = packed
    # (b, t, 3, H, d) -> (3, b, H, t, d): each head's (t, d) slice keeps unit stride along d, so
    # matmul hands every (b, H) pair to BLAS without copying.
    q, k, v = qkv.reshape(b, t, 3, heads, d).transpose(2, 0, 3, 1, 4)
    scores = np.matmul(q, k.transpose(0, 1, 3, 2))  # (b, H, t, t)
    scores *= np.float32(1.0 / math.sqrt(d))
    scores += bias
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    context = np.matmul(scores, v)  # (b, H, t, d)
    out: Float32Array = context.transpose(0, 2, 1, 3)[mask].reshape(-1, h)
    return out


def forward(weights: BertWeights, ids: IntArray, mask: BoolArray) -> Float32Array:
    """The last hidden states (b, t, h) float32 of a padded batch of word-piece ``ids`` (b, t);
    ``mask`` (b, t) is True at real tokens, whose states these are (padded positions hold 0).
    Padding must be on the right (positions count from 0 at [CLS]); every row needs at least one
    real token.

    Only attention mixes tokens, so everything else (embeddings, the projections, the
    feed-forward blocks, LayerNorm) runs on the N real tokens packed together, (N, h): padding
    costs only in the (b, H, t, t) attention scores, never in the products that dominate.
    """
    b, t = ids.shape
    if t > weights.position.shape[0]:
        raise ValueError(
            f"{t} word pieces exceed the model's {weights.position.shape[0]} positions"
        )
    positions = np.broadcast_to(np.arange(t), (b, t))[mask]
    x = weights.word[ids[mask]]
    x += weights.position[positions]
    x += weights.token_type[0]  # one segment: every token is of type 0
    x = layer_norm(x, weights.emb_gamma, weights.emb_beta, weights.eps)
    bias = np.where(mask, np.float32(0.0), _MASKED).astype(np.float32)[:, None, None, :]
    for layer in weights.layers:
        attended = _attention(layer, x, mask, bias, weights.heads) @ layer.attn_out
        attended += layer.attn_out_bias
        attended += x
        x = layer_norm(attended, layer.ln1_gamma, layer.ln1_beta, weights.eps)
        inner = x @ layer.ffn_in
        inner += layer.ffn_in_bias
        ffn = gelu(inner) @ layer.ffn_out
        ffn += layer.ffn_out_bias
        ffn += x
        x = layer_norm(ffn, layer.ln2_gamma, layer.ln2_beta, weights.eps)
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
    ``batch_size``, so a batch pads to a length close to its texts' own. A batch's vectors depend
    on the batch (padding moves them by float rounding), so whoever runs these batches, here or
    on a cluster's workers, gets the same vectors."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    check_texts(texts)
    ids = model.token_ids(texts)
    lengths = np.fromiter((len(row) for row in ids), np.int64, len(ids))
    order = np.argsort(-lengths, kind="stable")
    return ids, [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def _padded(model: EncoderInput, rows: Sequence[Sequence[int]]) -> tuple[IntArray, BoolArray]:
    """A batch of word-piece rows padded to the longest: ids (b, t) and mask (b, t)."""
    width = max(len(row) for row in rows)
    padded = np.full((len(rows), width), model.pad_token_id, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.bool_)
    for i, row in enumerate(rows):
        padded[i, : len(row)] = row
        mask[i, : len(row)] = True
    return padded, mask


def pooled_batch(model: EncoderInput, rows: Sequence[Sequence[int]]) -> Float32Array:
    """One batch of :func:`plan_batches` through the network, pooled, not normalised: (b, h)."""
    padded, mask = _padded(model, rows)
    return pool(forward(model.weights, padded, mask), mask, model.pooling)


def _batches(
    model: EncoderInput, texts: Sequence[str], batch_size: int, progress: Progress | None
) -> Iterator[tuple[IntArray, Float32Array, BoolArray]]:
    """(positions in ``texts``, states (b, t, h), mask (b, t)) of each batch of
    :func:`plan_batches`."""
    ids, batches = plan_batches(model, texts, batch_size)
    for batch in batches if progress is None else progress(batches):
        padded, mask = _padded(model, [ids[i] for i in batch.tolist()])
        yield batch, forward(model.weights, padded, mask), mask


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
    for positions, states, mask in _batches(model, texts, batch_size, progress):
        out[positions] = pool(states, mask, model.pooling)
    return unit_rows32(out) if normalize else out


def token_states(
    model: EncoderInput, texts: Sequence[str], *, batch_size: int = 32
) -> list[Float32Array]:
    """The last hidden state of every word piece of each text: a list of (t_i, h) float32 arrays,
    [CLS] first and [SEP] last, padding removed; batched as :func:`encode`."""
    out: list[Float32Array] = [np.zeros((0, model.dim), dtype=np.float32)] * len(texts)
    for positions, states, mask in _batches(model, texts, batch_size, None):
        for row, i in enumerate(positions.tolist()):
            out[i] = states[row, mask[row]].copy()
    return out
