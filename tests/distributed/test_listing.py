"""Tests for raglab.distributed.listing: a corpus folder cut into ranges of paths on the client,
each listed and read by a worker.

Oracles: :func:`raglab.distributed.chunking.partition_bounds` over the whole listing (the cuts
of a list of files, itself checked against the running-total rule by hand in test_chunking.py);
the listing sliced; :func:`raglab.corpus.pages.load_corpus` of the same files; the checksum
summed file by file.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from raglab.corpus.listing import corpus_files, folder_prefix, key_path, walk_files
from raglab.corpus.pages import PageTexts, load_corpus
from raglab.distributed import listing
from raglab.distributed.chunking import partition_bounds
from raglab.distributed.listing import FolderRange, folder_ranges, path_sum, read_range
from raglab.distributed.pages import load_corpus_on_cluster
from raglab.errors import InputError
from raglab.settings import CLIENT_PAGE_RECORDS as KEEP

SEED = 20261207


def _nested(root: Path, n_files: int, seed: int = SEED) -> Path:
    """``n_files`` pages of seeded random sizes (some empty) spread over nested folders, names
    chosen so that string order and path order differ ("a b" against "a/")."""
    rng = np.random.default_rng(seed)
    folders = ["", "a", "a b", "a/c", "a/c/d", "b.md.d", "z"]
    for k in range(n_files):
        folder = root / folders[int(rng.integers(0, len(folders)))]
        folder.mkdir(parents=True, exist_ok=True)
        words = " ".join(["lens"] * int(rng.integers(0, 60)))
        (folder / f"p{k:04d}.md").write_text(f"---\nid: p{k}\n---\n# Page {k}\n\n{words}\n")
    return root


def _whole(root: Path) -> list[tuple[str, ...]]:
    return list(walk_files(root))


def _check_covers(root: Path, ranges: list[FolderRange], n_files: int) -> list[int]:
    """The ranges in order are the whole listing, each with its count and checksum; their
    first files' positions, then the number of files."""
    keys = _whole(root)
    assert n_files == len(keys)
    starts, at = [], 0
    for part in ranges:
        got = list(walk_files(root, part.start, part.stop))
        assert got == keys[at : at + len(got)] and got, part
        assert part.files == len(got)
        assert part.checksum == sum(path_sum(k) for k in got) % 2**64
        assert part.start == (got[0] if at else ())
        starts.append(at)
        at += len(got)
    assert at == len(keys)
    return [*starts, at]


def test_the_ranges_cut_the_folder_where_the_list_of_its_files_is_cut(tmp_path: Path) -> None:
    """Oracle: ``partition_bounds`` of the whole listing. Nested folders of seeded random
    sizes (an empty page counted as one byte), for 1 to 9 partitions and more partitions than
    files: the same cuts, and the ranges are the listing, in order, with their counts and
    checksums."""
    for trial, n_files in enumerate((1, 7, 40, 123)):
        root = _nested(tmp_path / f"t{trial}", n_files, SEED + trial)
        files = list(corpus_files(root))
        for n in [*range(1, 10), n_files + 3]:
            ranges, counted = folder_ranges(root, n)
            assert _check_covers(root, ranges, counted) == partition_bounds(files, n), (trial, n)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert folder_ranges(empty, 4) == ([], 0)


def _cut_at_kept_files(sizes: list[int], n_partitions: int, step: int) -> list[int]:
    """The running-total rule by hand, file by file, a file eligible to open a group only when
    its position is a multiple of ``step``: a new group at the first such file once the bytes
    before it reach the next multiple of total / n. The groups' first positions, then the
    number of files."""
    total = sum(sizes)
    n = max(1, min(n_partitions, len(sizes)))
    starts = [0]
    running = 0
    for k, size in enumerate(sizes):
        eligible = k > starts[-1] and k % step == 0 and len(starts) < n
        if eligible and running >= total * len(starts) / n:
            starts.append(k)
        running += size
    return [*starts, len(sizes)]


def test_past_the_sample_the_cuts_fall_on_the_kept_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a sample of 8 keys, 123 files halve it four times (every 16th file kept). Oracle:
    the running-total rule by hand with only every 16th file eligible to open a range
    (:func:`_cut_at_kept_files`); the ranges still cover the listing with their counts and
    checksums, and no cut lies before the exact one (``partition_bounds``)."""
    root = _nested(tmp_path / "f", 123)
    files = list(corpus_files(root))
    sizes = [max(1, os.stat(f).st_size) for f in files]
    monkeypatch.setattr(listing, "SAMPLE", 8)
    for n in range(1, 10):
        ranges, counted = folder_ranges(root, n)
        got = _check_covers(root, ranges, counted)
        assert got == _cut_at_kept_files(sizes, n, 16), n
        exact = partition_bounds(files, n)
        assert all(mine >= want for mine, want in zip(got, exact, strict=False))


def test_a_worker_reads_its_range_as_load_corpus_reads_those_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: ``load_corpus`` of the folder here. The folder given relative to a working
    folder the task is told of (the worker's own is elsewhere): each range's pages are the
    corpus's pages of its rows, field for field, their sources as the client gave them."""
    _nested(tmp_path / "work" / "pages", 40)
    monkeypatch.chdir(tmp_path / "work")
    whole = load_corpus("pages")
    ranges, _ = folder_ranges(Path("pages"), 3)
    monkeypatch.chdir(tmp_path)
    rows = 0
    for part in ranges:
        read = read_range("pages", part, None, str(tmp_path / "work"))
        assert read.problems == ()
        want = [whole.pages[rows + i] for i in range(len(read.pages))]
        assert [dataclasses.replace(p, sections=()) for p in read.pages] == [
            dataclasses.replace(p, sections=()) for p in want
        ]
        assert all(p.source.startswith("pages" + os.sep) for p in read.pages)
        rows += len(read.pages)
    assert rows == len(whole)


def test_a_folder_changed_after_its_listing_is_said_by_the_worker(tmp_path: Path) -> None:
    """A page added, or one removed and another added under the same count, inside a range
    after the client listed it: that range's read opens with a problem of the folder naming
    the range's first file; the other ranges read cleanly."""
    root = _nested(tmp_path / "pages", 30)
    ranges, _ = folder_ranges(root, 3)
    last = ranges[-1]
    (root / "z").mkdir(exist_ok=True)
    (root / "z" / "zz-new.md").write_text("# New\n\nWords.\n")
    read = read_range(str(root), last, None, None)
    first = key_path(folder_prefix(root), last.start)
    assert read.problems[0].file == str(root)
    assert read.problems[0].message.startswith(f"changed while it was read: from {first} on,")
    assert read.problem_rows[0] == 0
    assert read_range(str(root), ranges[0], None, None).problems == ()
    (root / "z" / "zz-new.md").unlink()
    assert read_range(str(root), last, None, None).problems == ()
    # The same count, other names: the checksum tells.
    gone = key_path(folder_prefix(root), list(walk_files(root, last.start, last.stop))[-1])
    os.rename(gone, gone[:-3] + "-renamed.md")
    assert (
        "changed while it was read" in read_range(str(root), last, None, None).problems[0].message
    )


def _read_specs(keys: list[str], dask_scheduler: Any) -> list[int]:
    """On the scheduler: the pickled bytes of the spec it holds of each task of ``keys``."""
    return [len(pickle.dumps(dask_scheduler.tasks[key].run_spec)) for key in keys]


def test_the_scheduler_and_the_client_hold_no_path_a_file(client: Any, tmp_path: Path) -> None:
    """A read task's spec on the scheduler (what it keeps to rerun the task) weighs the same,
    to a few bytes, for 30 files and for 600: a range's two keys, not its paths. (The paths of
    600 files alone pickle to over 20 kB.)"""
    sizes = []
    for n in (30, 600):
        root = _nested(tmp_path / f"n{n}", n)
        read = load_corpus_on_cluster(client, root, texts=PageTexts(10**6), keep=KEEP)
        assert len(read.corpus) == n
        specs = client.run_on_scheduler(_read_specs, [part.key for part in read.parts])
        assert len(specs) == len(read.parts) > 1
        sizes.append(max(specs))
        del read
    assert len(pickle.dumps([str(p) for p in corpus_files(tmp_path / "n600")])) > 20_000
    assert abs(sizes[1] - sizes[0]) < 64 and sizes[1] < 2_000, sizes


def test_a_folder_changed_while_the_workers_read_it_stops_the_command(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page added after the listing: ``load_corpus_on_cluster`` refuses the folder with one
    problem naming it, as any bad folder is refused."""
    root = _nested(tmp_path / "pages", 30)
    listed = listing.folder_ranges

    def then_add(folder: Path, n: int, **kw: Any) -> tuple[list[FolderRange], int]:
        got = listed(folder, n, **kw)
        (root / "a").mkdir(exist_ok=True)
        (root / "a" / "p-late.md").write_text("# Late\n\nWords.\n")
        return got

    monkeypatch.setattr("raglab.distributed.pages.folder_ranges", then_add)
    with pytest.raises(InputError) as refused:
        load_corpus_on_cluster(client, root, texts=PageTexts(10**6), keep=KEEP)
    problems = refused.value.problems
    assert [p.file for p in problems] == [str(root)]
    assert "changed while it was read" in problems[0].message
