"""Writing a loaded model's weights as one binary file the in-tab JavaScript encoder reads.

The file is laid out as safetensors lays one out, so a browser can fetch it whole (with progress)
and view its tensors without copying::

    bytes 0..7      n, the manifest's length, unsigned 64-bit little-endian
    bytes 8..8+n    the manifest, UTF-8 JSON, padded with spaces so the data starts at a
                    multiple of 8
    bytes 8+n..     the tensors, little-endian float32 or float16, row-major, one after another

The manifest holds ``format`` (:data:`FORMAT`), ``dtype``, ``model_hash`` (sha256 of
``model.safetensors``), ``cache_key`` (the model's :attr:`~raglab.embedding.neural.model.
NeuralModel.cache_key`, which the shipped chunk vectors carry too), ``config`` (hidden width,
heads, layers, LayerNorm eps, pooling, ``max_seq_length``) and ``tensors``: for each, in file
order, its ``name``, ``shape``, ``offset`` (bytes from the data's start) and ``bytes``. Names and
layouts are :class:`~raglab.embedding.neural.encoder.BertWeights`'s: ``word``, ``position``,
``token_type``, ``emb_gamma``, ``emb_beta``, then ``layer.<l>.<field>`` for each
:class:`~raglab.embedding.neural.encoder.LayerWeights` field, matrices stored (in, out) and W_q,
W_k, W_v side by side in ``qkv``. For all-MiniLM-L6-v2 the file is 90.3 MB in float32 and
45.1 MB in float16 (each weight rounded to the nearest float16; see docs/design.md for what that
costs the vectors). ``engine/embedding/neural/weights.js`` reads it.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

from raglab.embedding.neural.encoder import BertWeights, Float32Array
from raglab.embedding.neural.model import NeuralModel

__all__ = ["DTYPES", "FORMAT", "export_weights", "manifest", "tensors"]

#: The version of the layout above; the JavaScript loader refuses any other.
FORMAT = "raglab-bert-weights-1"
#: The element types a file can hold.
DTYPES = ("float32", "float16")
_FLOAT16_MAX = float(np.finfo(np.float16).max)


def tensors(weights: BertWeights) -> Iterator[tuple[str, Float32Array]]:
    """Every tensor of ``weights`` with its name, in file order."""
    yield "word", weights.word
    yield "position", weights.position
    yield "token_type", weights.token_type
    yield "emb_gamma", weights.emb_gamma
    yield "emb_beta", weights.emb_beta
    for n, layer in enumerate(weights.layers):
        for f in fields(layer):
            yield f"layer.{n}.{f.name}", getattr(layer, f.name)


def manifest(model: NeuralModel, dtype: str) -> dict[str, Any]:
    """The manifest of ``model``'s weights stored as ``dtype`` (one of :data:`DTYPES`)."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    size = np.dtype(dtype).itemsize
    entries, offset = [], 0
    for name, array in tensors(model.weights):
        entries.append(
            {"name": name, "shape": list(array.shape), "offset": offset, "bytes": array.size * size}
        )
        offset += array.size * size
    c = model.config
    return {
        "format": FORMAT,
        "dtype": dtype,
        "model_hash": model.model_hash,
        "cache_key": model.cache_key,
        "config": {
            "hidden_size": c.hidden_size,
            "num_attention_heads": c.num_attention_heads,
            "num_hidden_layers": c.num_hidden_layers,
            "intermediate_size": c.intermediate_size,
            "layer_norm_eps": c.layer_norm_eps,
            "pad_token_id": c.pad_token_id,
            "pooling": model.pooling,
            "max_seq_length": model.max_seq_length,
        },
        "tensors": entries,
    }


def export_weights(model: NeuralModel, path: str | Path, dtype: str) -> dict[str, Any]:
    """Write ``model``'s weights to ``path`` as ``dtype`` ("float32" or "float16") in the layout
    above; the manifest written. Raises ValueError for another dtype, or for float16 when a
    weight lies beyond float16's range (65504)."""
    head = manifest(model, dtype)
    arrays = [array for _, array in tensors(model.weights)]
    if dtype == "float16":
        largest = max(float(np.abs(a).max()) for a in arrays)
        if largest > _FLOAT16_MAX:
            raise ValueError(f"a weight of {largest:g} does not fit float16 (at most 65504)")
    text = json.dumps(head).encode("utf-8")
    text += b" " * (-(8 + len(text)) % 8)
    with Path(path).open("wb") as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text)
        for array in arrays:
            out.write(
                np.ascontiguousarray(array, dtype=np.dtype(dtype).newbyteorder("<")).tobytes()
            )
    return head
