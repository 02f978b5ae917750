"""A least-recently-used cache of fixed size: what a lab keeps its chunkings, rankings and models
in (:mod:`raglab.pipeline.lab`, which re-exports it), so a long session's memory stays bounded."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from raglab.settings import CACHE_SIZE

__all__ = ["BoundedCache"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """A least-recently-used cache with a fixed number of entries."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self._size = size
        self._data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K, build: Callable[[], V]) -> V:
        if key in self._data:
            self._data.move_to_end(key)
            return self._data[key]
        value = build()
        self._data[key] = value
        if len(self._data) > self._size:
            self._data.popitem(last=False)
        return value

    def find(self, key: K, default: V | None = None) -> V | None:
        """The value cached under ``key`` (now the most recently used), or ``default``."""
        if key in self._data:
            self._data.move_to_end(key)
            return self._data[key]
        return default

    def setdefault(self, key: K, value: V) -> V:
        """The value cached under ``key``, after storing ``value`` there when there is none."""
        return self.get(key, lambda: value)
