"""Listing a corpus folder: its page files in reading order, whole or a range of it.

A folder's files are read in the order ``sorted(p for p in root.rglob("*") if ...)`` gives
them: a path sorts by its parts, so the walk takes each folder's entries sorted by name, a
sub-folder's files coming at its name's place. A file's *key* is its parts under the folder
(``("guides", "setup.md")``); keys sort as the files are read, so ``start <= key < stop`` names a
contiguous range of them, which :func:`walk_files` lists entering only the sub-folders that hold
some of it (a cluster's worker lists its own partition so: :mod:`raglab.distributed.listing`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from raglab.corpus.documents.read import DOCUMENT_SUFFIXES
from raglab.corpus.strings import StringColumn

__all__ = [
    "CORPUS_SUFFIXES",
    "PAGE_SUFFIXES",
    "Key",
    "corpus_files",
    "folder_prefix",
    "key_path",
    "walk_files",
]

PAGE_SUFFIXES = (".md", ".txt")
#: Every file a corpus folder's reading takes: pages, and documents read as pages.
CORPUS_SUFFIXES = PAGE_SUFFIXES + DOCUMENT_SUFFIXES

#: A file's parts under its corpus folder, what the files are read in the order of.
Key = tuple[str, ...]


def folder_prefix(root: Path) -> str:
    """What the path of every file found under ``root`` starts with (``rglob``'s)."""
    return "" if root == Path(".") else str(root / "_")[:-1]


def key_path(prefix: str, key: Key) -> str:
    """The path of the file ``key`` names under the folder whose :func:`folder_prefix` is
    ``prefix``."""
    return prefix + os.sep.join(key)


def _suffix(name: str) -> str:
    """A file name's suffix, as ``PurePath(name).suffix`` gives it (none for ``.md`` or
    ``a.``)."""
    i = name.rfind(".")
    return name[i:] if 0 < i < len(name) - 1 else ""


def walk_files(root: Path, start: Key = (), stop: Key | None = None) -> Iterator[Key]:
    """The keys of the corpus files under ``root`` (:data:`CORPUS_SUFFIXES`, any case, under
    every sub-folder) from ``start`` (a key; ``()``: the first file) up to, not including,
    ``stop`` (None: to the last), in reading order. As ``rglob`` does, a link to a file is a
    file and a link to a folder is not entered.

    A sub-folder whose files all sort before ``start`` is not listed; the walk ends at the
    first key at or past ``stop``. Each folder entered is listed whole (its names sorted), so a
    range of one flat folder of N files costs a listing of N names, a range of a nested folder
    only the folders it touches."""

    def walk(folder: str, parts: Key) -> Iterator[Key]:
        # Names only, not an os.DirEntry each: a flat folder of a million pages is read here.
        names: list[str] = []
        folders: set[str] = set()
        with os.scandir(folder) as found:
            for entry in found:
                if entry.is_dir() and not entry.is_symlink():
                    folders.add(entry.name)
                    names.append(entry.name)
                elif _suffix(entry.name).lower() in CORPUS_SUFFIXES and entry.is_file():
                    names.append(entry.name)
        names.sort()
        depth = len(parts) + 1
        # A key of this folder's depth below low heads a subtree wholly before start; one above
        # high, a subtree wholly past stop (and so is everything after it).
        low = start[:depth]
        high = None if stop is None else stop[:depth]
        for name in names:
            key = (*parts, name)
            if key < low:
                continue
            if high is not None and key > high:
                return
            if name in folders:
                yield from walk(folder + os.sep + name, key)
            elif stop is not None and key >= stop:
                return
            elif key >= start:
                yield key

    return walk(str(root), ())


def corpus_files(root: Path) -> StringColumn:
    """The paths of the corpus files under ``root`` (:func:`walk_files`), as
    ``sorted(p for p in root.rglob("*") if ...)`` gives them, held as one
    :class:`~raglab.corpus.strings.StringColumn` (about 8 bytes a file beside its path after
    ``root``; a ``Path`` a file, with its parts, weighed about 500 while the folder was read)."""
    prefix = folder_prefix(root)
    files = StringColumn(prefix=prefix)
    for key in walk_files(root):
        files.append(key_path(prefix, key))
    return files
