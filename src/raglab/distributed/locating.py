"""Answer passages located in place: on the Dask workers that read the pages.

A questions file's answers are passages to be found in the pages (:mod:`raglab.corpus.passages`).
Here each worker reads a contiguous partition of the page files (as
:func:`raglab.distributed.chunking.submit_files` cuts them), locates every answer passage in
its own pages, and returns only the spans it found: the pages' texts stay on the workers. The
client joins the partitions' spans in partition order, which is the corpus's page order, so
each passage's spans are :meth:`raglab.corpus.passages.WholeCorpusFinder.find`'s, in its order, and
parses the questions with them (:class:`raglab.corpus.passages.LocatedPassages`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from raglab.corpus.passages import (
    AnswerSpan,
    LocatedPassages,
    Needle,
    PassageFinder,
    WholeCorpusFinder,
)
from raglab.distributed.chunking import file_partitions, read_files
from raglab.distributed.cluster import shards, share

__all__ = ["locate_in_files", "locate_on_cluster"]


def locate_in_files(
    paths: Sequence[str], needles: Sequence[Needle], encoding: str | None = None
) -> list[list[AnswerSpan]]:
    """Task: read a partition's page files (``load_corpus``'s reading of each, ``encoding`` as
    given to it: :func:`raglab.distributed.chunking.read_files`) and find each needle in its
    pages: one list of spans per needle, in page order (empty where none is here)."""
    # A file's problems are left out: the client's own reading of the corpus reports them.
    pages, _ = read_files(paths, encoding)
    finder = WholeCorpusFinder(pages)
    held = {p.id for p in pages}
    return [
        finder.find(passage, page) if page is None or page in held else []
        for passage, page in needles
    ]


def locate_on_cluster(
    client: Any,
    files: Sequence[Path],
    needles: Sequence[Needle],
    fallback: Callable[[], PassageFinder],
    *,
    partitions: int | None = None,
    encoding: str | None = None,
) -> LocatedPassages:
    """Every needle located on the workers, each partition of ``files`` (default: two per
    worker) in its own task; the spans joined in partition order. ``fallback`` finds a pair
    the questions ask for that is not among ``needles`` (none, when they come from
    :func:`raglab.corpus.passages.answer_needles` of the same file). ``encoding``: the one the
    corpus was read in (``load_corpus``'s), None for each page's own."""
    unique = list(dict.fromkeys(needles))
    n = partitions if partitions is not None else shards(client)
    groups = file_partitions(files, n)
    if not unique or not groups:
        return LocatedPassages({}, fallback)
    sent = share(client, unique)
    parts = client.gather(
        [client.submit(locate_in_files, group, sent, encoding, pure=False) for group in groups]
    )
    found = {
        needle: [span for part in parts for span in part[i]] for i, needle in enumerate(unique)
    }
    return LocatedPassages(found, fallback)
