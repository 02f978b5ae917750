"""What every router shares: the lab, its locks, a bounded cache of answers.

One computation per setting, however many requests ask for it at once; JSON helpers.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar, cast

import numpy as np
from fastapi import Depends, HTTPException, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from raglab.base.sentinels import TUNED
from raglab.corpus.questions import Question
from raglab.pipeline.cache import BoundedCache
from raglab.pipeline.lab import Lab
from raglab.run_settings import ChunkingKey
from raglab.settings import CACHE_SIZE
from raglab.web.encoding import NeuralEncoding
from raglab.web.guard import shorten
from raglab.web.idle import IdleGate

#: Requests that may wait for the lab at once (computing, or waiting for a computation);
#: more are answered 503. Well under the thread pool's 40 workers, so cached answers and static
#: files always find a free worker.
MAX_WAITING = 16
#: Seconds a client answered 503 is told to wait before it tries again.
RETRY_AFTER_S = 1

_MISS: Any = object()
T = TypeVar("T")


class Busy(Exception):
    """The lab has :data:`MAX_WAITING` requests waiting already: answered 503 with Retry-After."""


@dataclass
class WebState:
    """The lab behind the API, shared by the thread pool's requests.

    The lab's own caches are not thread-safe, so computations run one at a time under ``lock``.
    End-to-end runs (``POST /api/run``, the longest computations, seconds each) run on a lab of
    their own, ``runner`` (the same corpus and questions, its own indexes and caches), under
    ``run_lock``: an exhibit's request never waits behind a run, nor a run behind it.
    Finished results live in ``cache`` behind a lock of their own, held only to look a result
    up or store it: a cached answer never waits for a computation. The first request for a
    setting computes it; later requests for the same setting wait for that one result instead
    of computing it again; and at most ``max_waiting`` requests wait for each lab at once (more
    get :class:`Busy`, answered 503), so waiting requests cannot take every worker thread.

    ``encoding`` encodes the neural vectors in the background (:mod:`raglab.web.encoding`);
    ``idle`` counts the requests in flight, so background work can wait for a quiet moment;
    ``later_done`` is set once the background work given to the app has all run; ``closing``
    once the server shuts down (:meth:`close`), so the background starts no further task.
    """

    lab: Lab
    warm_ms: dict[str, float] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)
    cache: BoundedCache[Hashable, Any] = field(default_factory=lambda: BoundedCache(CACHE_SIZE * 4))
    idle: IdleGate = field(default_factory=IdleGate)
    later_done: threading.Event = field(default_factory=threading.Event)
    closing: threading.Event = field(default_factory=threading.Event)
    max_waiting: int = MAX_WAITING
    _cache_lock: threading.Lock = field(default_factory=threading.Lock)
    _in_flight: dict[Hashable, Future[Any]] = field(default_factory=dict)
    run_lock: threading.RLock = field(default_factory=threading.RLock)
    _waiting: int = 0
    _run_waiting: int = 0
    _local: threading.local = field(default_factory=threading.local)
    #: ``/api/meta``'s JSON body, encoded on first request: nothing in it changes while serving.
    meta_body: bytes | None = None
    runner: Lab = field(init=False)
    encoding: NeuralEncoding = field(init=False)

    def __post_init__(self) -> None:
        lab = self.lab
        self.runner = Lab(
            lab.corpus,
            lab.questions,
            stem=lab.stem,
            analyzer=lab.analyzer,
            windows=lab.windows,
            model=lab.model,
        )
        self.runner.runs = lab.runs
        self.runner.evaluator = lab.evaluator
        self.encoding = NeuralEncoding(lab, self.lock)

    def close(self) -> None:
        """Stop the background work as the server shuts down: no further task starts, and the
        neural encoding ends after its batch in progress (:meth:`NeuralEncoding.stop`)."""
        self.closing.set()
        self.encoding.stop()

    def compute(self, key: Hashable, build: Callable[[], T], *, run: bool = False) -> T:
        """``build()``'s result for ``key``: from the cache, from the computation of the same
        key already running, or computed now under the lab's lock (``run``: the runner's lock,
        for a computation on :attr:`runner`) and cached.

        A key names one route's one computation (its first item is the route's), so the value
        cached under it is always what that route's ``build`` returns: T, with no check after
        the read."""
        return cast(T, self._compute(key, build, run))

    def _compute(self, key: Hashable, build: Callable[[], Any], run: bool = False) -> Any:
        if getattr(self._local, "inside", False):
            # Called from inside a computation: this thread holds the lab already, and waiting
            # for another request's computation of the key could wait for this one.
            with self._cache_lock:
                value = self.cache.find(key, _MISS)
            if value is _MISS:
                value = build()
                with self._cache_lock:
                    value = self.cache.setdefault(key, value)
            return value
        with self._cache_lock:
            value = self.cache.find(key, _MISS)
            if value is not _MISS:
                return value
            pending = self._in_flight.get(key)
            owner = pending is None
            if pending is None:
                pending = self._in_flight[key] = Future()
        if not owner:
            with self._slot(run):
                return pending.result()
        try:
            value = self.call(build, run=run)
        except BaseException as exc:
            pending.set_exception(exc)
            raise
        else:
            with self._cache_lock:
                self.cache.setdefault(key, value)
            pending.set_result(value)
            return value
        finally:
            with self._cache_lock:
                self._in_flight.pop(key, None)

    async def json(self, key: Hashable, build: Callable[[], Any]) -> Response:
        """``build()``'s JSON answer for ``key``, its bytes encoded once and cached.

        For a route asked again and again while computations run: a cached answer is found and
        sent from the event loop, with no hop to the thread pool and no encoding, so it needs
        Python's global lock a few times instead of a dozen (each wait may last a whole switch
        interval while a computation holds it). A miss computes in the thread pool as
        :meth:`compute` does. The bytes are those FastAPI sends for the value itself.
        """
        with self._cache_lock:
            body = self.cache.find(key, _MISS)
        if body is _MISS:
            body = await run_in_threadpool(
                self._compute, key, lambda: bytes(JSONResponse(build()).body)
            )
        return Response(body, media_type="application/json")

    def call(self, work: Callable[[], Any], *, run: bool = False) -> Any:
        """``work()`` under the lab's lock (``run``: the runner's), not cached (:class:`Busy`
        when too many wait for it)."""
        with self._slot(run), self.run_lock if run else self.lock:
            self._local.inside = True
            try:
                return work()
            finally:
                self._local.inside = False

    @contextmanager
    def _slot(self, run: bool = False) -> Iterator[None]:
        name = "_run_waiting" if run else "_waiting"
        with self._cache_lock:
            waiting = getattr(self, name)
            if waiting >= self.max_waiting:
                raise Busy(f"{waiting} requests are waiting for the lab already")
            setattr(self, name, waiting + 1)
        try:
            yield
        finally:
            with self._cache_lock:
                setattr(self, name, getattr(self, name) - 1)


async def get_state(request: Request) -> WebState:
    # A coroutine, so FastAPI resolves it on the event loop: a sync dependency costs every
    # request a hop to the thread pool, which is what waits longest while a computation runs.
    state = request.app.state.raglab
    assert isinstance(state, WebState)
    return state


State = Annotated[WebState, Depends(get_state)]


def plain(value: Any) -> Any:
    """A JSON-ready copy: dataclasses, tuples and numpy values become dicts, lists and numbers;
    a non-finite float and :data:`~raglab.settings.TUNED` (a value not chosen, because not used)
    become None."""
    if value is TUNED:
        return None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        number = float(value)
        return number if math.isfinite(number) else None
    return value


def chunking_key(method: str, size: int | None, overlap: int | None) -> ChunkingKey:
    """The resolved chunker setting (an overlap given to a chunker that has none is a
    ValueError, answered 422, as on the command line)."""
    return ChunkingKey(method, size, overlap).resolved()


def find_question(lab: Lab, question_id: str) -> Question:
    """The question, or a 404 naming the id (a long one cut short: :func:`shorten`)."""
    try:
        return lab.questions.by_id(question_id)
    except KeyError:
        raise HTTPException(404, f"no question with id {shorten(question_id)!r}") from None
