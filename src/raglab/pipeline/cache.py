"""A lab's caches: one least-recently-used cache of fixed size per kind of value, each typed.

One job: keep what a lab computed, bounded. A module that computes a kind of value declares it
once as a :class:`CacheKind` (its key and value types, its name and its size), and reads and
fills it through ``lab.caches.of(KIND)``, a :class:`BoundedCache` of exactly those types: a
cached value comes back as what was stored, with no check of its type after the read.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, TypeVar

__all__ = ["BoundedCache", "CacheKind", "Caches"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """A least-recently-used cache keeping at most ``size`` entries."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K, build: Callable[[], V]) -> V:
        """The value under ``key``; built by ``build()`` and kept when there is none."""
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

    def __len__(self) -> int:
        return len(self._data)


class CacheKind(Generic[K, V]):
    """One kind of cached value: keys of type K to values of type V, at most ``size`` kept.

    Compared by identity: each kind is declared once, as a module constant, by the module that
    computes its values."""

    __slots__ = ("name", "size")

    def __init__(self, name: str, size: int) -> None:
        self.name = name
        self.size = size

    def __repr__(self) -> str:
        return f"CacheKind({self.name!r}, {self.size})"


class Caches:
    """A lab's caches: one :class:`BoundedCache` per :class:`CacheKind`, made on first use."""

    def __init__(self) -> None:
        self._by_kind: dict[CacheKind[Any, Any], BoundedCache[Any, Any]] = {}

    def of(self, kind: CacheKind[K, V]) -> BoundedCache[K, V]:
        """The cache of ``kind``."""
        cache = self._by_kind.get(kind)
        if cache is None:
            cache = self._by_kind[kind] = BoundedCache(kind.size)
        return cache

    def __iter__(self) -> Iterator[tuple[CacheKind[Any, Any], BoundedCache[Any, Any]]]:
        """Every kind made so far with its cache."""
        return iter(list(self._by_kind.items()))
