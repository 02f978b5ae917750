"""What every router shares: the lab, a lock around it, a bounded result cache, JSON helpers."""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Annotated, Any

import numpy as np
from fastapi import Depends, HTTPException, Request

from raglab import _config as C
from raglab.pipeline.lab import BoundedCache, ChunkingKey, Lab
from raglab.questions import Question
from raglab.settings import TUNED
from raglab.web.idle import IdleGate


@dataclass
class WebState:
    """The lab behind the API. Requests run in a thread pool, so the lab (whose caches are not
    thread-safe) is used under ``lock``; ``cache`` keeps composed results per setting.

    ``idle`` counts the requests in flight, so background work can wait for a quiet moment;
    ``later_done`` is set once the background work given to the app has all run.
    """

    lab: Lab
    warm_ms: dict[str, float] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)
    cache: BoundedCache[Hashable, Any] = field(
        default_factory=lambda: BoundedCache(C.CACHE_SIZE * 4)
    )
    idle: IdleGate = field(default_factory=IdleGate)
    later_done: threading.Event = field(default_factory=threading.Event)

    def compute(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """``build()`` under the lock, cached under ``key``."""
        with self.lock:
            return self.cache.get(key, build)

    def call(self, work: Callable[[], Any]) -> Any:
        """``work()`` under the lock, not cached."""
        with self.lock:
            return work()


def get_state(request: Request) -> WebState:
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
    """The question, or a 404 naming the id."""
    try:
        return lab.questions.by_id(question_id)
    except KeyError:
        raise HTTPException(404, f"no question with id {question_id!r}") from None
