"""The neural retrievers' pieces for a lab: the model, the chunks' vectors and a question's vector.

:mod:`raglab.neural` is imported here only when a neural retriever is used, so a lab without the
model installed never imports it (nor tokenizers and safetensors). :func:`unavailable` is how
every face says that the neural rows need the model, instead of failing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from raglab import _config as C
from raglab._types import IntArray

if TYPE_CHECKING:
    from raglab.neural import NeuralIndex, NeuralModel
    from raglab.neural.encoder import Float32Array

__all__ = ["QUERY_FOLDER", "chunk_index", "encode_query", "is_neural", "load", "unavailable"]

# The subfolder of a model's cache holding texts encoded alone (questions).
QUERY_FOLDER = "queries"


def is_neural(retriever: str) -> bool:
    """Whether ``retriever`` needs the neural model (:data:`raglab._config.NEURAL_RETRIEVERS`)."""
    return retriever in C.NEURAL_RETRIEVERS


@lru_cache(maxsize=2)
def load(path: str | None) -> NeuralModel:
    """The model at ``path`` (None: the installed package), loaded once per process: its weights
    take 86 MB, so every lab (the stemmed sibling, each corpus served) shares one copy."""
    from raglab.neural import load_model

    return load_model(path)


def unavailable(model: str | None) -> str | None:
    """Why the neural retrievers cannot run, in words a user can act on, or None when they can.

    Only the missing default package counts: a model folder the user named and RAG lab cannot
    read is their mistake, reported as an :class:`~raglab.errors.InputError` when it is used.
    """
    if model is not None:
        return None
    from raglab.neural.model import INSTALL_HINT, default_model_path

    if default_model_path() is None:
        return f"needs the neural model: {INSTALL_HINT}"
    return None


def chunk_index(model: NeuralModel, texts: Sequence[str]) -> NeuralIndex:
    """An index of the chunk ``texts``: vectors read from the on-disk cache
    (:mod:`raglab.neural.cache`), the rest encoded behind a progress bar on a terminal."""
    from raglab.formats.progress import progress
    from raglab.neural import NeuralIndex

    def bar(batches: list[IntArray]) -> Iterable[IntArray]:
        return progress(batches, description="Encoding chunks (neural)")

    return NeuralIndex(model, texts, progress=bar)


def encode_query(model: NeuralModel, text: str) -> Float32Array:
    """One question's unit vector, shape (dim,), encoded alone (a batch of one): batching with
    other texts would pad it and move its vector by float rounding.

    Kept on disk like the chunks' vectors (:mod:`raglab.neural.cache`), in a ``queries``
    subfolder of its own: an entry there was always encoded alone, so the vector read back is
    bitwise the one a fresh encoding gives, never a chunk's batched one of the same text. A warm
    start of the server then reads the questions' vectors instead of running the model on each.
    """
    from raglab.neural.cache import cache_folder, encode_cached

    folder = cache_folder(model) / QUERY_FOLDER
    vector: Float32Array = encode_cached(model, [text], batch_size=1, cache_dir=folder)[0]
    return vector
