"""A corpus folder read and checked on the Dask workers: the client reads no page file.

:func:`load_corpus_on_cluster` is :func:`raglab.corpus.pages.load_corpus` with the files read
where the pages are held for the command (:func:`raglab.distributed.chunking.read_partitions`):
each partition's worker reads its files as ``load_corpus`` reads each one and sends back what
the client keeps of its pages, their metadata as columns
(:class:`~raglab.corpus.page_columns.PageColumns`, no text), with what the reading said of
them (problems, warnings, the documents' notes). The client joins the partitions in file order
and checks the whole (:func:`raglab.corpus.pages.check_pages`, ``load_corpus``'s own checks:
duplicate ids, a ``supersedes`` naming no page, an empty corpus), so a folder gives the same
corpus, the same problems in the same order and the same warnings as on one machine, and each
page file is read once per command, by a worker (before, the client read every file too).

The folder is still walked here (the partitions are cut from the files' sizes), and the
columns are still O(pages) here: 169 bytes a page measured at 300,000 one-chunk pages
(docs/scale.md).
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from raglab.corpus.documents.read import DocumentReader
from raglab.corpus.page_columns import PageColumns
from raglab.corpus.pages import (
    Corpus,
    PageTexts,
    check_pages,
    corpus_files,
    corpus_folder,
    folder_prefix,
)
from raglab.distributed.chunking import PagesRead, partition_bounds, read_partitions
from raglab.distributed.cluster import shards, submit_beside
from raglab.errors import Problem, RaglabWarning

__all__ = ["CorpusRead", "PartitionPages", "load_corpus_on_cluster", "partition_pages"]


@dataclass(frozen=True, slots=True)
class PartitionPages:
    """What a partition's worker sends the client of its pages (:func:`partition_pages`):
    their metadata as columns, and all its reading said (:class:`PagesRead` without the
    pages)."""

    columns: PageColumns
    problems: tuple[Problem, ...]
    problem_rows: tuple[int, ...]
    said: tuple[Problem, ...]
    worded: bytes
    notes: tuple[str, ...]
    skipped: tuple[tuple[str, int], ...]


def partition_pages(read: PagesRead, prefix: str) -> PartitionPages:
    """Task: a partition's pages as the client keeps them, their sources after ``prefix`` (the
    corpus folder's, held once), beside what the reading said."""
    columns = PageColumns(PageTexts(0), prefix=prefix)
    for page in read.pages:
        columns.add(page)
    return PartitionPages(
        columns,
        read.problems,
        read.problem_rows,
        read.said,
        read.worded,
        read.notes,
        read.skipped,
    )


@dataclass(frozen=True)
class CorpusRead:
    """A corpus read on the workers (:func:`load_corpus_on_cluster`): the corpus as the client
    keeps it, the number of files read (a file skipped has no page), the futures of each
    partition's pages (:class:`PagesRead`, held on the workers for every stage) and where each
    partition's pages start among the corpus's (the last entry: the number of pages): what
    :func:`raglab.distributed.chunking.text_fetcher` finds a page's partition by. The files'
    paths are not kept: they were an entry a file here."""

    corpus: Corpus
    n_files: int
    parts: list[Any]
    bounds: list[int]


def load_corpus_on_cluster(
    client: Any,
    path: str | Path | None,
    *,
    texts: PageTexts,
    encoding: str | None = None,
    progress: Callable[[Sequence[int]], Iterable[int]] | None = None,
) -> CorpusRead:
    """``load_corpus(path, encoding=encoding, held=...)`` with every file read on the workers,
    the pages kept here as columns whose texts ``texts`` fetches: the same corpus, the same
    :class:`~raglab.errors.InputError` (the same problems, in the same order) and the same
    warnings (each document's, as a :class:`~raglab.errors.RaglabWarning`, as the partitions
    come). ``progress`` wraps the partitions' numbers as each is joined here."""
    root = corpus_folder(path, encoding)
    files = corpus_files(root)
    cwd = Path.cwd()
    parts = read_partitions(
        client, files, encoding=encoding, cwd=cwd, bounds=partition_bounds(files, shards(client))
    )
    n_files = len(files)
    del files  # the paths travelled with the tasks: not held beside the columns
    prefix = folder_prefix(root)
    pages = PageColumns(texts, prefix=prefix)
    found: list[tuple[int, Problem]] = []
    said: list[Problem] = []
    worded = bytearray()
    skipped: Counter[str] = Counter()
    bounds = [0]
    numbers = range(len(parts))
    for g in numbers if progress is None else progress(numbers):
        # Each partition's columns come and join these before the next is asked for.
        got: PartitionPages = submit_beside(client, partition_pages, parts[g], prefix).result()
        base = len(pages)
        found.extend(
            (base + row, problem)
            for row, problem in zip(got.problem_rows, got.problems, strict=True)
        )
        said.extend(got.said)
        worded += got.worded
        for note in got.notes:
            warnings.warn(note, RaglabWarning, stacklevel=2)
        skipped.update(dict(got.skipped))
        pages.extend(got.columns)
        bounds.append(len(pages))
    documents = DocumentReader()
    documents.skipped.update(skipped)
    documents.finish()
    warned = check_pages(root, n_files, pages, found, said, worded)
    return CorpusRead(Corpus(pages, str(root), warned), n_files, parts, bounds)
