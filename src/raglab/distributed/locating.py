"""Answer passages located in place: on the Dask workers that read the pages.

A questions file's answers are passages to be found in the pages (:mod:`raglab.corpus.passages`).
Here each worker reads a contiguous partition of the page files (as
:func:`raglab.distributed.chunking.read_partitions` cuts them, or takes the partition it has
read already for the command's other stages), locates every answer passage in its own pages,
and returns only the spans it found: the pages' texts stay on the workers. The
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
from raglab.distributed.chunking import PagesRead, read_partitions
from raglab.distributed.cluster import share, submit_beside

__all__ = ["locate_in_pages", "locate_on_cluster"]


def locate_in_pages(read: PagesRead, needles: Sequence[Needle]) -> list[list[AnswerSpan]]:
    """Task: find each needle in a partition's pages (read as ``load_corpus`` reads each file,
    :func:`raglab.distributed.chunking.read_partition`): one list of spans per needle, in page
    order (empty where none is here)."""
    # A file's problems are left out: the client's own reading of the corpus reports them.
    finder = WholeCorpusFinder(read.pages)
    held = {p.id for p in read.pages}
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
    read: Sequence[Any] | None = None,
) -> LocatedPassages:
    """Every needle located on the workers, each partition of ``files`` (default: two per
    worker) in its own task; the spans joined in partition order. ``fallback`` finds a pair
    the questions ask for that is not among ``needles`` (none, when they come from
    :func:`raglab.corpus.passages.answer_needles` of the same file). ``encoding``: the one the
    corpus was read in (``load_corpus``'s), None for each page's own. ``read``: the partitions
    of ``files`` already read on the workers (:func:`raglab.distributed.chunking.read_partitions`),
    searched where they are; ``partitions`` and ``encoding`` are then theirs."""
    unique = list(dict.fromkeys(needles))
    if not unique or not files:
        return LocatedPassages({}, fallback)
    if read is None:
        read = read_partitions(client, files, partitions=partitions, encoding=encoding)
    sent = share(client, unique)
    # Each partition searched on its worker (submit_beside): its pages are not copied.
    parts = client.gather([submit_beside(client, locate_in_pages, part, sent) for part in read])
    found = {
        needle: [span for part in parts for span in part[i]] for i, needle in enumerate(unique)
    }
    return LocatedPassages(found, fallback)
