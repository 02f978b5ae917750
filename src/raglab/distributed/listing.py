"""A corpus folder cut into partitions by ranges of paths, each listed and read by a worker.

The client walks the folder once (:func:`folder_ranges`) holding no path a file: it keeps a
sample of the files' keys (:data:`raglab.corpus.listing.Key`) with the bytes before each, every
m-th file, m doubling whenever the sample passes :data:`SAMPLE` entries, and cuts the folder
where the running total of bytes crosses each multiple of total / n, as
:func:`raglab.distributed.chunking.partition_bounds` cuts a list of files (the same cuts while
the folder has at most :data:`SAMPLE` files; past that, each at the first kept file at or past
its running-total point and past the cut before, m under 2 × files / :data:`SAMPLE`). A partition travels as its first key and the next one's
(:class:`FolderRange`): a task's arguments are a few strings whatever the files, so neither the
client nor the scheduler holds a path a file. Its worker lists its range itself
(:func:`raglab.corpus.listing.walk_files`) and reads it (:func:`read_range`).

Each range carries its files' count and checksum (the sum of each path's 8-byte BLAKE2b, mod
2^64, which sums over any run of files): a worker that lists other files (the folder changed
while it was read) says so as a problem of the folder, and the command stops.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from raglab.corpus.listing import Key, folder_prefix, key_path, walk_files
from raglab.distributed.chunking import PagesRead, read_files
from raglab.errors import Problem

__all__ = ["SAMPLE", "FolderRange", "folder_ranges", "path_sum", "read_range", "submit_ranges"]

#: The most keys the client's sample of a folder holds before it halves (about 100 bytes each).
SAMPLE = 1 << 14

_MOD = 1 << 64


def path_sum(key: Key) -> int:
    """A file's part of a range's checksum: its path under the folder's 8-byte BLAKE2b."""
    data = os.sep.join(key).encode("utf-8", "surrogateescape")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


@dataclass(frozen=True, slots=True)
class FolderRange:
    """The files of a corpus folder whose keys run from ``start`` up to, not including,
    ``stop`` (None: to the last file): ``files`` of them, whose :func:`path_sum` add up to
    ``checksum`` (mod 2^64)."""

    start: Key
    stop: Key | None
    files: int
    checksum: int


def folder_ranges(
    root: Path,
    n_partitions: int,
    *,
    progress: Callable[[Iterator[Key]], Iterable[Key]] | None = None,
) -> tuple[list[FolderRange], int]:
    """``root``'s corpus files cut into at most ``n_partitions`` contiguous ranges, none empty,
    of about equal bytes (a file counted as at least one byte), and the number of files. One
    walk (``progress`` wraps its files' keys as they are found); held here: the sample
    (:data:`SAMPLE` keys at most), never a key a file."""
    keys: list[Key] = []  # the sample: files 0, m, 2m, ... of the walk
    before: list[int] = []  # the bytes before each sampled file
    sums: list[int] = []  # each sampled file's run's checksum: it up to the next sampled one
    step, n_files, total = 1, 0, 0
    prefix = folder_prefix(root)
    walk = walk_files(root)
    for key in walk if progress is None else progress(walk):
        if n_files % step == 0:
            if len(keys) == SAMPLE:
                # Every other entry kept: a run's checksum joins the next one's.
                keys, before = keys[::2], before[::2]
                sums = [(sums[i] + sums[i + 1]) % _MOD for i in range(0, len(sums), 2)]
                step *= 2
            if n_files % step == 0:
                keys.append(key)
                before.append(total)
                sums.append(0)
        sums[-1] = (sums[-1] + path_sum(key)) % _MOD
        total += max(1, os.stat(key_path(prefix, key)).st_size)
        n_files += 1
    if not n_files:
        return [], 0
    n = max(1, min(int(n_partitions), n_files))
    cuts = [0]  # positions in the sample
    # Range c starts at the first sampled file past range c - 1's first whose bytes before it
    # reach c / n of the total: the running total crosses each multiple once.
    for c in range(1, n):
        target = total * c / n
        k = bisect.bisect_left(before, target, lo=cuts[-1] + 1)
        if k == len(keys):
            break
        cuts.append(k)
    cuts.append(len(keys))
    ranges = []
    for a, b in itertools.pairwise(cuts):
        last = b * step if b < len(keys) else n_files
        ranges.append(
            FolderRange(
                keys[a] if a else (),
                keys[b] if b < len(keys) else None,
                last - a * step,
                sum(sums[a:b]) % _MOD,
            )
        )
    return ranges, n_files


def read_range(
    root: str, part: FolderRange, encoding: str | None = None, cwd: str | None = None
) -> PagesRead:
    """Task: the files of ``part`` of the folder ``root`` (as the client gave it: relative to
    ``cwd``, the client's working folder, when not absolute) listed here and read
    (:func:`raglab.distributed.chunking.read_files`), held on its worker for every stage. Files
    other than the client counted (the folder changed meanwhile) are a problem of the folder,
    ahead of the partition's own."""
    folder = Path(root) if cwd is None else Path(cwd) / root
    prefix = folder_prefix(Path(root))
    paths: list[str] = []
    checksum = 0
    for key in walk_files(folder, part.start, part.stop):
        paths.append(key_path(prefix, key))
        checksum = (checksum + path_sum(key)) % _MOD
    read = read_files(paths, encoding, cwd=cwd)
    if (len(paths), checksum) == (part.files, part.checksum):
        return read
    first = key_path(prefix, part.start) if part.start else "the first file"
    changed = Problem(
        root,
        f"changed while it was read: from {first} on, {part.files} files were listed when the "
        f"command began and {len(paths)} (or other names) when a worker read them; run it "
        "again once the folder is still",
    )
    return dataclasses.replace(
        read, problems=(changed, *read.problems), problem_rows=(0, *read.problem_rows)
    )


def submit_ranges(
    client: Any,
    root: Path,
    ranges: Sequence[FolderRange],
    *,
    encoding: str | None = None,
    cwd: Path | None = None,
) -> list[Any]:
    """Futures of :class:`~raglab.distributed.chunking.PagesRead`, one per range of ``root``
    (:func:`read_range`). Submitted tasks, not scattered data: a worker lost with a partition's
    pages lists and reads its range again."""
    folder = None if cwd is None else str(cwd)
    return [
        client.submit(read_range, str(root), part, encoding, folder, pure=False) for part in ranges
    ]
