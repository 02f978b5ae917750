"""Tests of raglab.corpus.listing: a corpus folder's files in reading order, whole or a range."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from raglab.corpus import listing

#: Names that sort differently as strings and as paths ("a b/…" against "a/…", "b/…" against
#: "b.md"), any case of a suffix, a dotfile, a folder named like a page, nested folders.
NAMES = (
    "a/b.md", "a b/x.md", "a.md", "b/z.txt", "b.md", "B.MD", "c/d/e.HTML", "c/d.md",
    ".hidden.md", ".md", "notes.rst", "x.md/inside.md", "z-last.txt", "c/d/f/g.md", "c/e.md",
)  # fmt: skip


def _folder(root: Path) -> Path:
    for name in NAMES:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# T\n\nWords.\n")
    (root / "link.md").symlink_to(root / "a.md")
    (root / "linked").symlink_to(root / "c", target_is_directory=True)
    return root


def _by_rglob(root: Path) -> list[str]:
    return [
        str(p)
        for p in sorted(root.rglob("*"))
        if p.suffix.lower() in listing.CORPUS_SUFFIXES and p.is_file()
    ]


def test_corpus_files_come_in_the_order_sorting_the_paths_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: ``sorted(p for p in root.rglob("*") if p.suffix.lower() in CORPUS_SUFFIXES and
    p.is_file())``, what the folder's reading was. Names that sort differently as strings and
    as paths ("a b/…" against "a/…", "b/…" against "b.md"), any case of a suffix, a dotfile, a
    folder named like a page, a link to a page and a link to a folder, and the folder given as
    "." or as an absolute path: the same files, in the same order."""
    _folder(tmp_path)
    by_rglob = _by_rglob
    got = list(listing.corpus_files(tmp_path))
    assert got == by_rglob(tmp_path)
    # As strings "a b/x.md" < "a.md" < "a/b.md"; as paths "a" < "a b" < "a.md".
    assert [Path(p).relative_to(tmp_path).as_posix() for p in got][:5] == [
        ".hidden.md",
        "B.MD",
        "a/b.md",
        "a b/x.md",
        "a.md",
    ]
    monkeypatch.chdir(tmp_path)
    assert list(listing.corpus_files(Path("."))) == by_rglob(Path("."))
    assert list(listing.corpus_files(Path("a"))) == by_rglob(Path("a")) == ["a/b.md"]


def test_every_range_of_keys_is_the_slice_of_the_whole_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: the whole listing (checked against ``rglob`` above) sliced. For every pair of
    cuts among the files' keys (and none: from the first, to the last), ``walk_files(root,
    start, stop)`` is ``files[i:j]``; and a folder wholly outside the range is never listed (a
    spy on ``os.scandir``)."""
    root = _folder(tmp_path)
    keys = list(listing.walk_files(root))
    assert [listing.key_path(listing.folder_prefix(root), k) for k in keys] == _by_rglob(root)
    n = len(keys)
    assert n == 14
    for i, j in itertools.combinations_with_replacement(range(n + 1), 2):
        start = keys[i] if i < n else (*keys[-1], "\uffff")
        stop = keys[j] if j < n else None
        assert list(listing.walk_files(root, start, stop)) == keys[i:j], (i, j)
    listed: list[str] = []
    scandir = os.scandir

    def spy(path: str) -> object:
        listed.append(Path(path).relative_to(root).as_posix())
        return scandir(path)

    monkeypatch.setattr(listing.os, "scandir", spy)
    # From "c/d.md" up to "c/e.md": the folder c/d sorts before c/d.md (its files lie before the
    # range) and c/d/f with it; "linked" and every name after "c" lie past it. Only "." and c.
    got = list(listing.walk_files(root, ("c", "d.md"), ("c", "e.md")))
    assert got == [("c", "d.md")]
    assert listed == [".", "c"]
    listed.clear()
    assert list(listing.walk_files(root, ("c", "d", "f", "g.md"), ("c", "d.md"))) == [
        ("c", "d", "f", "g.md")
    ]
    assert listed == [".", "c", "c/d", "c/d/f"]
