"""The neural vectors a served lab needs, encoded once in a background thread, with progress.

A fresh lab (an empty cache, the first thing a new user meets) has no sentence vectors yet:
encoding the handbook's chunks takes seconds to minutes of one core. :class:`NeuralEncoding`
encodes them, and every labelled question and the exhibit's twin identifiers (each encoded alone),
in a thread of its own, outside the lab's lock, writing the on-disk cache exactly as a command
would (:func:`raglab.pipeline.dense.chunk_index`, :func:`raglab.pipeline.dense.encode_query`), and
counts what it has done: "encoding, n of N". Until a chunking's vectors are ready, a request that
needs them gets :class:`StillEncoding` (answered 202 with the progress, and Retry-After) or a
table with its neural rows marked pending; nothing else waits. Once ready, the lab reads the
vectors back from the cache in milliseconds.

Other chunkings (a run with another chunker and a neural retriever) are queued behind the
default one the same way. Without the model nothing is encoded: the neural rows say how to install
it, as before.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from raglab.pipeline import dense
from raglab.pipeline.exhibits.neural import TWINS
from raglab.pipeline.lab import Lab
from raglab.run_settings import ChunkingKey

__all__ = ["ENCODING_RETRY_S", "NeuralEncoding", "StillEncoding", "describe", "query_texts"]

#: Seconds a client told 202 waits before it asks again.
ENCODING_RETRY_S = 1


class _Stopped(Exception):
    """Raised in the encoding thread, between batches, once :meth:`NeuralEncoding.stop` is
    called: it ends the thread without recording an error."""


class StillEncoding(Exception):
    """The request needs neural vectors that are still being encoded: answered 202, its body
    the progress (:meth:`NeuralEncoding.progress`) and a sentence saying so."""

    def __init__(self, progress: dict[str, Any]) -> None:
        super().__init__(describe(progress))
        self.progress = progress


def query_texts(lab: Lab) -> list[str]:
    """The texts the neural exhibits encode alone: every labelled question and the twin
    identifiers of exhibit III."""
    return [q.question for q in lab.questions] + list(TWINS)


def describe(progress: dict[str, Any]) -> str:
    """ "encoding, n of N" in a sentence a person reads."""
    return (
        f"the neural model is encoding the chunks and questions, {progress['done']} of "
        f"{progress['total']}: its numbers appear when it is done"
    )


class NeuralEncoding:
    """The chunk and question vectors of ``lab``, encoded in the background (module docstring).

    ``lock`` is the lab's lock, held only to read a chunking's texts. ``on_ready`` runs in the
    encoding thread once the default chunking's vectors are ready (the web app then builds the
    neural rows and panel there, so the first request finds them).
    """

    def __init__(
        self,
        lab: Lab,
        lock: threading.RLock,
        on_ready: Callable[[], object] | None = None,
    ) -> None:
        self.lab = lab
        self.lock = lock
        self.on_ready = on_ready
        self._state = threading.Condition()
        self._ready: set[ChunkingKey] = set()
        self._queue: deque[ChunkingKey] = deque()
        self._queued: set[ChunkingKey] = set()
        self._queries_done = False
        self._queries_queued = False
        self._needed: bool | None = None
        self._done = 0
        self._total = 0
        self._error: str | None = None
        self._thread: threading.Thread | None = None
        self._announced = False
        self._stopping = False

    @property
    def started(self) -> bool:
        """Whether :meth:`start` has run for any chunking (or the model is missing)."""
        with self._state:
            return bool(self._ready or self._queued) or self._error is not None or not self.needed

    @property
    def running(self) -> bool:
        """Whether the encoding thread is alive now."""
        with self._state:
            thread = self._thread
        return thread is not None and thread.is_alive()

    @property
    def needed(self) -> bool:
        """Whether the neural retrievers can run here at all (the model is installed or given);
        looked up once."""
        if self._needed is None:
            self._needed = dense.unavailable(self.lab.model) is None
        return self._needed

    def start(self, key: ChunkingKey | None = None) -> None:
        """Have the vectors of chunking ``key`` (default: the lab's default) encoded: at once
        when the cache holds them all already (then they are ready on return), else in the
        background thread. Asking again for a key queued or ready does nothing."""
        resolved = (key or ChunkingKey()).resolved()
        with self._state:
            if not self.needed or resolved in self._ready or resolved in self._queued:
                return
            if self._error is not None or self._stopping:
                return
        try:
            chunks, queries = self._texts(resolved)
            model = dense.load(self.lab.model)
            missing = len(dense.uncached(model, chunks))
            asked = (
                0
                if self._queries_done or self._queries_queued
                else len(dense.uncached(model, queries, queries=True))
            )
        except Exception as exc:
            with self._state:
                self._error = f"{type(exc).__name__}: {exc}"
                self._state.notify_all()
            return
        announce = False
        with self._state:
            if resolved in self._ready or resolved in self._queued or self._stopping:
                return
            if missing == 0:
                # The chunks' vectors are all on disk: ready now (the questions' vectors, if
                # some are missing, follow in the background; a request needing one first
                # encodes that one alone, in milliseconds).
                self._ready.add(resolved)
                announce = resolved == ChunkingKey().resolved()
                self._state.notify_all()
            if missing or asked:
                self._queued.add(resolved)
                self._queue.append(resolved)
                self._total += missing + asked
                self._queries_queued = True
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._work, name="raglab-neural-encoding", daemon=True
                    )
                    self._thread.start()
        if announce:
            self._announce()

    def _announce(self) -> None:
        """Run ``on_ready`` once, in a thread of its own."""
        with self._state:
            if self._announced or self.on_ready is None:
                return
            self._announced = True
        threading.Thread(target=self.on_ready, name="raglab-neural-ready", daemon=True).start()

    def _texts(self, key: ChunkingKey) -> tuple[list[str], list[str]]:
        with self.lock:
            chunks = [c.text for c in self.lab.indexes.chunk_set(key).chunks]
        return chunks, query_texts(self.lab)

    def _step(self, n: int) -> None:
        with self._state:
            self._done += n
            self._state.notify_all()
            if self._stopping:
                raise _Stopped

    def stop(self) -> None:
        """Drop the chunkings queued, end the encoding thread after the batch in progress, and
        return once it has ended. The vectors of the chunking it was encoding are not kept (the
        cache is written when a chunking's last batch is done); what was finished stays on disk.
        A later :meth:`start` begins again. The server calls it as it shuts down, so no thread
        of a stopped server goes on encoding and writing the cache."""
        with self._state:
            self._stopping = True
            thread = self._thread
        try:
            if thread is not None:
                thread.join()
        finally:
            with self._state:
                self._stopping = False

    def _work(self) -> None:
        while True:
            with self._state:
                if self._stopping:
                    # What was queued is dropped; a later start() counts it again.
                    self._queue.clear()
                    self._queued.clear()
                    self._total = self._done
                    self._queries_queued = self._queries_done
                if not self._queue:
                    self._thread = None  # under the lock: start() then starts a new one
                    return
                key = self._queue[0]
            try:
                chunks, queries = self._texts(key)
                model = dense.load(self.lab.model)
                # Only the chunks missing from the cache are encoded (and counted).
                dense.chunk_index(model, chunks, on_batch=self._step)
                if not self._queries_done:
                    for text in dense.uncached(model, queries, queries=True):
                        dense.encode_query(model, text)
                        self._step(1)
            except _Stopped:
                continue  # the loop's top ends the thread
            except Exception as exc:
                with self._state:
                    self._error = f"{type(exc).__name__}: {exc}"
                    self._queue.clear()
                    self._thread = None
                    self._state.notify_all()
                return
            with self._state:
                self._queue.popleft()
                self._queued.discard(key)
                self._ready.add(key)
                self._queries_done = True
                self._state.notify_all()
            if key == ChunkingKey().resolved():
                self._announce()

    def ready(self, key: ChunkingKey | None = None) -> bool:
        """Whether chunking ``key``'s vectors (default: the lab's default) can be used now
        without encoding: encoded, or the model missing (its rows say so), or the encoding
        failed (the request then meets the same failure and reports it)."""
        resolved = (key or ChunkingKey()).resolved()
        with self._state:
            return not self.needed or self._error is not None or resolved in self._ready

    def progress(self) -> dict[str, Any]:
        """``ready`` (the default chunking's), ``done`` and ``total`` texts encoded and to encode
        by this server (0 and 0 when the cache held them all), and ``error`` (None, or why the
        encoding stopped)."""
        with self._state:
            return {
                "ready": not self.needed
                or self._error is not None
                or ChunkingKey().resolved() in self._ready,
                "done": self._done,
                "total": self._total,
                "error": self._error,
            }

    def need(self, keys: Sequence[ChunkingKey | None] = (None,)) -> None:
        """Return when every chunking of ``keys`` is ready; else start what is missing and
        raise :class:`StillEncoding` at once (the request is answered 202, never kept)."""
        for key in keys:
            self.start(key)
        if not all(self.ready(key) for key in keys):
            raise StillEncoding(self.progress())

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the default chunking is ready (for tests and scripts); whether it is."""
        with self._state:
            return bool(self._state.wait_for(lambda: bool(self.progress()["ready"]), timeout))
