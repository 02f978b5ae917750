"""The neural retrievers' pieces for a lab: the model, the chunks' vectors and a question's vector.

:mod:`raglab.embedding.neural` is imported here only when a neural retriever is used, so a lab without the
model installed never imports it (nor tokenizers and safetensors). :func:`unavailable` is how
every face says that the neural rows need the model, instead of failing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from functools import lru_cache
from typing import TYPE_CHECKING

from raglab.base.ranking import IntArray
from raglab.base.threads import blas_threads, resolve_threads
from raglab.settings import NEURAL_RETRIEVERS, THREADS

if TYPE_CHECKING:
    from raglab.embedding.neural.encoder import Float32Array
    from raglab.embedding.neural.index import NeuralIndex
    from raglab.embedding.neural.model import NeuralModel

__all__ = [
    "QUERY_FOLDER",
    "chunk_index",
    "encode_query",
    "is_neural",
    "load",
    "preload",
    "unavailable",
    "uncached",
]

# The subfolder of a model's cache holding texts encoded alone (questions).
QUERY_FOLDER = "queries"


def is_neural(retriever: str) -> bool:
    """Whether ``retriever`` needs the neural model (:data:`raglab._config.NEURAL_RETRIEVERS`)."""
    return retriever in NEURAL_RETRIEVERS


# One load at a time: a second caller (the warm start, while preload's thread is still
# reading) waits for the first and then finds the model in the cache, instead of reading 86 MB
# again.
_LOADING = threading.Lock()


def load(path: str | None) -> NeuralModel:
    """The model at ``path`` (None: the installed package), loaded once per process: its weights
    take 86 MB, so every lab (the stemmed sibling, each corpus served) shares one copy."""
    with _LOADING:
        return _load(path)


@lru_cache(maxsize=2)
def _load(path: str | None) -> NeuralModel:
    from raglab.embedding.neural.model import load_model

    return load_model(path)


def preload(path: str | None) -> threading.Thread | None:
    """Start loading the model at ``path`` (:func:`load`) and hashing its files (the vector
    cache's keys) in a background thread, or None when the model is not installed.

    For a server's start: the weights' read and the sha256 of 86 MB run outside Python's
    global lock, so they proceed on another core while the main thread imports the web stack
    and builds the lab; the lab's first use of the model then waits for this load. A model that
    cannot be loaded is left for that use to report."""
    if unavailable(path) is not None:
        return None

    def work() -> None:
        with suppress(Exception):  # reported where the model is used, with its context
            _ = load(path).cache_key

    thread = threading.Thread(target=work, name="raglab-model-preload", daemon=True)
    thread.start()
    return thread


def unavailable(model: str | None) -> str | None:
    """Why the neural retrievers cannot run, in words a user can act on, or None when they can.

    Only the missing default package counts: a model folder the user named and RAG lab cannot
    read is their mistake, reported as an :class:`~raglab.errors.InputError` when it is used.
    """
    if model is not None:
        return None
    from raglab.embedding.neural.model import INSTALL_HINT, default_model_path

    if default_model_path() is None:
        return f"needs the neural model: {INSTALL_HINT}"
    return None


def chunk_index(
    model: NeuralModel,
    texts: Sequence[str],
    *,
    on_batch: Callable[[int], None] | None = None,
    encoder: Callable[[list[str]], Float32Array] | None = None,
) -> NeuralIndex:
    """An index of the chunk ``texts``: vectors read from the on-disk cache
    (:mod:`raglab.embedding.neural.cache`), the rest encoded behind a progress bar on a terminal.

    ``on_batch(n)`` is called after each batch of ``n`` texts is encoded (a server's progress,
    "encoding, n of N"); the batches and so the vectors are the same with or without it.

    ``encoder`` encodes the missing texts instead of ``model`` (a Dask cluster's workers,
    :func:`raglab.embedding.neural.cache.encode_cached`'s ``encoder``).

    BLAS runs on the ``threads`` setting's count while the chunks are encoded ("auto": the
    cores free now, :func:`raglab.base.threads.resolve_threads`): on a busy machine its default
    of every core only queues its threads behind the other work (a 3-page corpus took 10 to
    77 s under load with BLAS's own count, 3.7 to 4.2 s with one thread)."""
    from raglab.embedding.neural.index import NeuralIndex
    from raglab.formats.progress import progress

    def bar(batches: list[IntArray]) -> Iterable[IntArray]:
        for batch in progress(batches, description="Encoding chunks (neural)"):
            yield batch
            # The caller has encoded the batch when it asks for the next one.
            if on_batch is not None:
                on_batch(len(batch))

    with blas_threads(resolve_threads(THREADS)):
        return NeuralIndex(model, texts, progress=bar, encoder=encoder)


def uncached(model: NeuralModel, texts: Sequence[str], *, queries: bool = False) -> list[str]:
    """The distinct ``texts`` with no vector in the on-disk cache yet, in first-seen order:
    chunks (as :func:`chunk_index` keeps them), or with ``queries`` texts encoded alone (as
    :func:`encode_query` keeps them). Only whether each entry exists is checked (a file per
    text), so it costs no reading."""
    from raglab.embedding.neural.cache import cache_folder, entry_path

    folder = cache_folder(model) / QUERY_FOLDER if queries else cache_folder(model)
    return [t for t in dict.fromkeys(texts) if not entry_path(model, t, folder).exists()]


def encode_query(model: NeuralModel, text: str) -> Float32Array:
    """One question's unit vector, shape (dim,), encoded alone (a batch of one): batching with
    other texts would pad it and move its vector by float rounding.

    Kept on disk like the chunks' vectors (:mod:`raglab.embedding.neural.cache`), in a ``queries``
    subfolder of its own: an entry there was always encoded alone, so the vector read back is
    bitwise the one a fresh encoding gives, never a chunk's batched one of the same text. A warm
    start of the server then reads the questions' vectors instead of running the model on each.
    """
    from raglab.embedding.neural.cache import cache_folder, encode_cached

    folder = cache_folder(model) / QUERY_FOLDER
    vector: Float32Array = encode_cached(model, [text], batch_size=1, cache_dir=folder)[0]
    return vector
