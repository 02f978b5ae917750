"""Many strings held as one UTF-8 buffer and its offsets: a few objects in all, not one a string.

A Python str costs 49 bytes or more beside its characters, and a list of them 8 more each; a
corpus of a hundred million pages holds as many ids, titles and paths. :class:`StringColumn`
holds them as their UTF-8 bytes in one ``bytearray`` and (n + 1,) int64 offsets (8 bytes a
string), a prefix they share (a folder's path) held once, each string made when read.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import overload

__all__ = ["StringColumn"]


class StringColumn(Sequence[str]):
    """``n`` strings as one UTF-8 buffer and (n + 1,) int64 offsets, string i being
    ``data[offsets[i]:offsets[i + 1]]`` decoded, after ``prefix`` (what the strings added
    begin with, stripped and held once: a corpus folder's path; with a prefix, a string that does
    not begin with it is kept whole after a NUL, which no path holds)."""

    __slots__ = ("_data", "_offsets", "prefix")

    def __init__(self, strings: Sequence[str] = (), *, prefix: str = "") -> None:
        self.prefix = prefix
        self._data = bytearray()
        self._offsets = array("q", [0])
        for one in strings:
            self.append(one)

    def append(self, value: str) -> None:
        """Add ``value`` at the end."""
        kept = value[len(self.prefix) :] if value.startswith(self.prefix) else "\0" + value
        self._data += kept.encode("utf-8", "surrogatepass")
        self._offsets.append(len(self._data))

    def __len__(self) -> int:
        return len(self._offsets) - 1

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...
    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError(f"string {i} of {n}")
        kept = self._data[self._offsets[j] : self._offsets[j + 1]].decode("utf-8", "surrogatepass")
        if not self.prefix:
            return kept
        return kept[1:] if kept[:1] == "\0" else self.prefix + kept

    def __iter__(self) -> Iterator[str]:
        for j in range(len(self)):
            yield self[j]

    def nbytes(self) -> int:
        """The buffer's and the offsets' bytes."""
        return len(self._data) + self._offsets.itemsize * len(self._offsets)
