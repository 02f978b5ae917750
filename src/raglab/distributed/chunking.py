"""Reading and chunking pages on Dask workers, partition by partition.

Two sources, each split the way Dask splits such data:

- **a folder of pages**: the files ``raglab.corpus.pages.load_corpus`` would read (``*.md``,
  ``*.txt``, ``.html``, ``.pdf`` and ``.docx`` under the folder, recursively, sorted), cut into
  contiguous partitions of about equal size in bytes; each worker reads, parses and chunks its
  files (:func:`chunk_files`) with ``load_corpus``'s own reading of a file
  (:func:`raglab.corpus.pages.read_page_file`: the same encoding, detected or given, and the
  same documents' text);
- **a BEIR ``corpus.jsonl``**: split by lines with ``dask.bag.read_text`` (blocks of bytes that
  end at a line break); each worker parses its lines into pages as ``raglab import beir``
  writes them and chunks those (:func:`chunk_jsonl_lines`).

A partition's chunks are numbered from 0 on its worker; the client gives partition p the
offset ``n_0 + ... + n_{p-1}``, so the chunks, in partition order, are the single machine's
``chunk_pages`` output: chunkers never cross pages, and a page's chunks depend on that page
alone. Checks across pages (duplicate ids, a ``supersedes`` naming no page) need only each
page's id, so they run on the client over those.

A command that locates answer passages, cuts LSA windows and chunks the pages reads each page
file once: :func:`read_partitions` gives futures of each partition's pages (:class:`PagesRead`),
held on the workers, and every stage's tasks take them (:func:`submit_files` with ``read``,
:func:`raglab.distributed.locating.locate_on_cluster`, :func:`raglab.distributed.lsa.cut_windows`).
They are tasks, not scattered data: a worker lost with a partition's pages reads them again.

Workers see the files at the paths the client gives: on a LocalCluster that is this machine's
file system; a remote cluster needs them on shared storage at the same paths.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

import numpy as np

from raglab.base.ranking import IntArray
from raglab.chunking.chunk import Chunk
from raglab.chunking.chunkers import chunk_pages
from raglab.corpus.documents.read import DocumentReader
from raglab.corpus.listing import corpus_files
from raglab.corpus.pages import (
    Corpus,
    Page,
    duplicate_id,
    has_words,
    parse_page,
    read_page_file,
    superseding_nothing,
)
from raglab.distributed.cluster import shards, submit_beside
from raglab.distributed.shard import ShardCounts
from raglab.distributed.weight import held_bytes
from raglab.errors import InputError, Problem, RaglabWarning
from raglab.formats.beir import _json_object, _read_id, _read_string
from raglab.formats.collection import PageRecord, page_markdown
from raglab.run_settings import ChunkingKey
from raglab.text.tokens import tokenize

__all__ = [
    "ChunkedPartition",
    "PagesRead",
    "chunk_beir",
    "chunk_folder",
    "chunk_jsonl_lines",
    "chunk_partition",
    "count_chunks",
    "file_partitions",
    "folder_files",
    "gather_chunks",
    "page_digest",
    "page_files",
    "page_texts",
    "partition_bounds",
    "partition_groups",
    "read_files",
    "read_partition",
    "read_partitions",
    "same_pages",
    "submit_beir",
    "submit_files",
    "text_fetcher",
]

#: Bytes of corpus.jsonl per partition (Dask's read_text blocksize).
BEIR_BLOCK_BYTES = 64 * 2**20


@dataclass(frozen=True, slots=True)
class ChunkedPartition:
    """One partition's pages and chunks, chunks numbered from 0 within the partition.

    ``pages``: (page id, source, supersedes) of each page read, in order; ``problems``: what
    could not be read (line numbers counted from the partition's first line); ``lines``: lines
    the partition held (0 for files), so the client can number a problem's line globally.
    """

    chunks: tuple[Chunk, ...]
    pages: tuple[tuple[str, str, str | None], ...]
    problems: tuple[Problem, ...]
    lines: int = 0

    def __sizeof__(self) -> int:
        return object.__sizeof__(self) + held_bytes(*(c.text for c in self.chunks))


def folder_files(folder: str | Path) -> list[Path]:
    """The page files of a corpus folder, in the order ``load_corpus`` reads them."""
    root = Path(folder)
    if not root.is_dir():
        raise InputError([Problem(str(root), "corpus folder does not exist or is not a folder")])
    return [Path(file) for file in corpus_files(root)]


def partition_bounds(files: Sequence[Path] | Sequence[str], n_partitions: int) -> list[int]:
    """Where :func:`file_partitions` cuts ``files``: each group's first file, then
    ``len(files)`` (group g is ``files[bounds[g]:bounds[g + 1]]``), found from the files' sizes
    alone (an int64 a file), no path kept."""
    if not len(files):
        return [0]
    sizes = np.fromiter(
        (max(1, os.stat(files[k]).st_size) for k in range(len(files))),
        dtype=np.int64,
        count=len(files),
    )
    before = np.concatenate([[0], np.cumsum(sizes)[:-1]])  # the bytes before each file
    total = float(sizes.sum())
    n = max(1, min(int(n_partitions), len(files)))
    bounds = [0]
    # Group c starts at the first file past group c - 1's first whose bytes before it reach
    # c / n of the total: the running total crosses each multiple once.
    for c in range(1, n):
        k = max(bounds[-1] + 1, int(np.searchsorted(before, total * c / n, side="left")))
        if k >= len(files):
            break
        bounds.append(k)
    bounds.append(len(files))
    return bounds


def file_partitions(files: Sequence[Path], n_partitions: int) -> list[list[str]]:
    """Contiguous groups of ``files`` (at most ``n_partitions``, none empty), cut where the
    running total of bytes crosses each multiple of total / n_partitions
    (:func:`partition_bounds`)."""
    bounds = partition_bounds(files, n_partitions)
    return [[str(files[k]) for k in range(a, b)] for a, b in itertools.pairwise(bounds)]


def _chunks_of(pages: Sequence[Page], key: ChunkingKey) -> tuple[Chunk, ...]:
    key = key.resolved()
    return tuple(chunk_pages(pages, method=key.method, size=key.size, overlap=key.overlap))


def _shown(value: str, read: str, shown: str) -> str:
    """``value`` with the path a worker read (``read``) written as the client gave it."""
    return value if read == shown else value.replace(read, shown)


def _problem_shown(problem: Problem, read: str, shown: str) -> Problem:
    if read == shown:
        return problem
    return dataclasses.replace(
        problem,
        file=_shown(problem.file, read, shown),
        message=_shown(problem.message, read, shown),
    )


def read_files(
    paths: Sequence[str], encoding: str | None = None, *, cwd: str | None = None
) -> PagesRead:
    """A worker's pages of ``paths`` as ``load_corpus`` reads each file (``encoding`` as given
    to it), with all it says of them (:class:`PagesRead`). ``cwd``: the client's working
    folder, against which a relative path is read (a worker does not share it); every page,
    problem and warning names a file as ``paths`` gives it, as the client's own reading would.
    """
    pages: list[Page] = []
    problems: list[Problem] = []
    problem_rows: list[int] = []
    said: list[Problem] = []
    worded = bytearray()
    documents = DocumentReader()
    with warnings.catch_warnings(record=True) as caught:
        # A document's warnings are said where the client is, in file order (:attr:`notes`).
        warnings.simplefilter("always", RaglabWarning)
        for path in paths:
            read = str(Path(cwd) / path) if cwd is not None else path
            start = len(caught)
            page, file_problems, file_warnings = read_page_file(
                Path(read), encoding=encoding, documents=documents
            )
            for caught_one in caught[start:]:
                caught_one.message = RaglabWarning(_shown(str(caught_one.message), read, path))
            problems.extend(_problem_shown(p, read, path) for p in file_problems)
            problem_rows.extend(len(pages) for _ in file_problems)
            said.extend(_problem_shown(w, read, path) for w in file_warnings)
            if page is not None:
                worded.append(has_words(page.text))
                pages.append(dataclasses.replace(page, source=_shown(page.source, read, path)))
    notes = tuple(str(one.message) for one in caught if issubclass(one.category, RaglabWarning))
    return PagesRead(
        tuple(pages),
        tuple(problems),
        tuple(problem_rows),
        tuple(said),
        bytes(worded),
        notes,
        tuple(sorted(documents.skipped.items())),
    )


@dataclass(frozen=True, slots=True)
class PagesRead:
    """A partition of page files as a worker read them (:func:`read_files`), and all
    ``load_corpus`` says of them: its pages, in file order; the files' problems, each with the
    row in :attr:`pages` the next page read after it took (``problem_rows``); the files'
    warnings (:attr:`said`, in file order); whether each page has a word (``worded``, a byte a
    page); the documents' warnings' messages (``notes``), and the documents of each kind
    skipped for want of the extra that reads them (``skipped``, (suffix, count) pairs)."""

    pages: tuple[Page, ...]
    problems: tuple[Problem, ...]
    problem_rows: tuple[int, ...] = ()
    said: tuple[Problem, ...] = ()
    worded: bytes = b""
    notes: tuple[str, ...] = ()
    skipped: tuple[tuple[str, int], ...] = ()

    def __sizeof__(self) -> int:
        return object.__sizeof__(self) + held_bytes(*(p.text for p in self.pages))


def read_partition(
    paths: Sequence[str], encoding: str | None = None, cwd: str | None = None
) -> PagesRead:
    """Task: a partition of page files read (:func:`read_files`), held on its worker for every
    stage that needs the pages."""
    return read_files(paths, encoding, cwd=cwd)


def read_partitions(
    client: Any,
    files: Sequence[Path] | Sequence[str],
    *,
    partitions: int | None = None,
    encoding: str | None = None,
    cwd: Path | None = None,
    bounds: Sequence[int] | None = None,
) -> list[Any]:
    """Futures of :class:`PagesRead`, one per contiguous partition of ``files``
    (:func:`file_partitions`; default: two per worker; ``bounds``: the cuts
    :func:`partition_bounds` gave already), read in ``encoding`` (None: each page's own,
    detected, as ``load_corpus`` does); a relative path against ``cwd`` (the client's working
    folder; None: the paths are absolute). Submitted tasks, not scattered data: a worker lost
    with a partition's pages reads the files again."""
    if bounds is None:
        n = partitions if partitions is not None else shards(client)
        bounds = partition_bounds(files, n)
    folder = None if cwd is None else str(cwd)
    # One group's paths at a time: never a string a file of the whole corpus here at once.
    return [
        client.submit(
            read_partition, [str(files[k]) for k in range(a, b)], encoding, folder, pure=False
        )
        for a, b in itertools.pairwise(bounds)
    ]


def chunk_partition(read: PagesRead, key: ChunkingKey) -> ChunkedPartition:
    """Task: a partition's pages, read once (:func:`read_partition`), parsed and chunked."""
    return ChunkedPartition(
        _chunks_of(read.pages, key),
        tuple((p.id, p.source, p.supersedes) for p in read.pages),
        read.problems,
    )


def page_texts(read: PagesRead, ids: Sequence[str]) -> list[str]:
    """Task: the texts of pages ``ids`` of a partition its worker holds, in order."""
    by_id = {page.id: page for page in read.pages}
    return [by_id[page_id].text for page_id in ids]


def partition_groups(firsts: Sequence[int] | IntArray, rows: Sequence[int]) -> dict[int, list[int]]:
    """The places in ``rows`` of the rows each partition holds, partition g holding rows
    ``firsts[g]:firsts[g + 1]`` (an empty partition none), in the order asked: what a task a
    partition is asked for."""
    groups = np.searchsorted(firsts, np.asarray(rows, dtype=np.int64), side="right") - 1
    out: dict[int, list[int]] = {}
    for i, g in enumerate(groups.tolist()):
        out.setdefault(g, []).append(i)
    return out


def text_fetcher(
    client: Any,
    files: Sequence[Path] | Sequence[str],
    read: Callable[[], Sequence[Any]],
    *,
    bounds: Sequence[int] | None = None,
) -> Callable[[Sequence[int], Sequence[str]], list[str]]:
    """``fetch(rows, ids)``: the texts of pages ``ids`` read from files ``files[rows[i]]``, from
    the partitions the workers hold (``read()``: :func:`read_partitions` of ``files`` at its
    default partitions, or cut at ``bounds``), one task per partition asked. A file's partition
    is found among the partitions' first rows (O(partitions) here, not an entry a file)."""
    if bounds is None:
        bounds = partition_bounds(files, shards(client))
    firsts = np.asarray(bounds, dtype=np.int64)

    def fetch(rows: Sequence[int], ids: Sequence[str]) -> list[str]:
        wanted = partition_groups(firsts, rows)
        parts = read()
        # Each partition's pages stay on their worker: the task goes to them, not they to it.
        asked = {
            g: submit_beside(client, page_texts, parts[g], [ids[i] for i in rows])
            for g, rows in wanted.items()
        }
        texts: list[str] = [""] * len(ids)
        for g, got in zip(asked, client.gather(list(asked.values())), strict=True):
            for i, text in zip(wanted[g], got, strict=True):
                texts[i] = text
        return texts

    return fetch


class _AbsolutePaths(Sequence[Path]):
    """``sources`` as absolute paths (against ``cwd``), each made when read."""

    def __init__(self, sources: Sequence[str], cwd: Path) -> None:
        self._sources = sources
        self._cwd = cwd

    def __len__(self) -> int:
        return len(self._sources)

    @overload
    def __getitem__(self, i: int) -> Path: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Path]: ...
    def __getitem__(self, i: int | slice) -> Path | Sequence[Path]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return self._cwd / self._sources[i]


def page_files(corpus: Corpus) -> Sequence[Path]:
    """The file of each page of ``corpus``, in order, as an absolute path (the workers do not
    share this process's working folder): made from the pages' sources when read, so a
    corpus whose pages the workers hold (:class:`~raglab.distributed.pages.RemotePages`)
    holds no path here."""
    return _AbsolutePaths(corpus.sources, Path.cwd())


def page_digest(ids: Iterable[str]) -> bytes:
    """A 16-byte BLAKE2b digest of page ids, in order: what a partition's worker and the client
    compare, so neither sends the other every id."""
    digest = hashlib.blake2b(digest_size=16)
    for page_id in ids:
        digest.update(page_id.encode("utf-8", "surrogatepass") + b"\0")
    return digest.digest()


def same_pages(ids: Sequence[str], parts: Sequence[tuple[int, bytes]]) -> bool:
    """Whether the partitions, each ``(its number of pages, page_digest of their ids)`` in
    order, hold exactly the pages ``ids``. Ids that know their partitions' digests (a corpus
    whose pages the workers hold, :class:`raglab.distributed.pages.RemotePages`) are compared
    by those when cut alike, not read here one by one."""
    known: Callable[[], list[tuple[int, bytes]]] | None = getattr(ids, "digests", None)
    if known is not None:
        theirs = known()
        if [n for n, _ in theirs] == [n for n, _ in parts]:
            return theirs == list(parts)
    # One pass over the ids, in order: ids read from elsewhere come in blocks, not one a call.
    stream = iter(ids)
    for n, digest in parts:
        taken = [0]

        def counted(n: int = n, taken: list[int] = taken) -> Iterator[str]:
            for one in itertools.islice(stream, n):
                taken[0] += 1
                yield one

        if page_digest(counted()) != digest or taken[0] != n:
            return False
    return next(stream, None) is None


def chunk_jsonl_lines(lines: Sequence[str], source: str, key: ChunkingKey) -> ChunkedPartition:
    """Task: parse a partition of ``corpus.jsonl`` lines (each with or without its line break)
    into the pages ``raglab import beir`` writes (front matter ``id`` and ``title``, the text as
    the body), and chunk them."""
    pages: list[Page] = []
    problems: list[Problem] = []
    for number, line in enumerate(lines, start=1):
        raw = line[:-1] if line.endswith("\n") else line
        raw = raw[:-1] if raw.endswith("\r") else raw
        raw = raw.removeprefix("\ufeff")
        if not raw.strip():
            continue
        obj = _json_object(raw, source, number, problems)
        if obj is None:
            continue
        before = len(problems)
        rid = _read_id(obj, source, number, problems)
        title = _read_string(obj, "title", source, number, rid, problems, required=False) or ""
        text = _read_string(obj, "text", source, number, rid, problems, required=True)
        if len(problems) > before or rid is None or text is None:
            continue
        markdown = page_markdown(PageRecord(rid, title, text, rid))
        try:
            pages.append(parse_page(markdown, stem=rid, source=source))
        except InputError as exc:
            problems.extend(exc.problems)
    return ChunkedPartition(
        _chunks_of(pages, key),
        tuple((p.id, p.source, p.supersedes) for p in pages),
        tuple(problems),
        len(lines),
    )


def count_chunks(part: ChunkedPartition, analyzer: str, stem: bool) -> ShardCounts:
    """Task: a partition's chunks tokenised (``Indexes.tokens``' rules) and counted for BM25."""
    return ShardCounts.from_tokens(
        [tokenize(c.text, stem=stem, analyzer=analyzer) for c in part.chunks]
    )


def submit_files(
    client: Any,
    files: Sequence[Path],
    key: ChunkingKey,
    *,
    partitions: int | None = None,
    encoding: str | None = None,
    read: Sequence[Any] | None = None,
) -> list[Any]:
    """Futures of :class:`ChunkedPartition`, one per partition of ``files`` (default: two per
    worker, so a slow or lost worker holds up less of the work), read in ``encoding`` (None:
    each page's own, detected, as ``load_corpus`` does). ``read``: the partitions already read
    on the workers (:func:`read_partitions` of ``files``), chunked where they are, without
    reading a file again; ``partitions`` and ``encoding`` are then theirs."""
    if read is None:
        read = read_partitions(client, files, partitions=partitions, encoding=encoding)
    return [client.submit(chunk_partition, part, key, pure=False) for part in read]


def submit_beir(
    client: Any, corpus_jsonl: str | Path, key: ChunkingKey, *, block_bytes: int = BEIR_BLOCK_BYTES
) -> list[Any]:
    """Futures of :class:`ChunkedPartition`, one per block of ``corpus.jsonl``'s lines."""
    from dask.bag import read_text as dask_read_text
    from dask.delayed import delayed as dask_delayed

    # Typed as Any: parts of dask are untyped, and mypy runs with or without it.
    read_lines: Any = dask_read_text
    delayed: Any = dask_delayed

    path = Path(corpus_jsonl)
    if not path.is_file():
        raise InputError([Problem(str(path), "corpus.jsonl does not exist or is not a file")])
    blocks = read_lines(str(path), blocksize=block_bytes, encoding="utf-8").to_delayed()
    task = delayed(chunk_jsonl_lines, pure=True)
    futures: list[Any] = client.compute([task(block, str(path), key) for block in blocks])
    return futures


def _problem_at(problem: Problem, first_line: int) -> Problem:
    if problem.line is None or first_line == 0:
        return problem
    return dataclasses.replace(problem, line=problem.line + first_line)


def gather_chunks(client: Any, partitions: Sequence[Any]) -> list[Chunk]:
    """The chunks of every partition, numbered globally in partition order, as ``chunk_pages``
    numbers them for the whole corpus. Raises :class:`InputError` listing every problem of
    every partition, and duplicate page ids or ``supersedes`` naming no page, before any chunk
    is returned."""
    parts: list[ChunkedPartition] = client.gather(list(partitions))
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    first_line = 0
    for part in parts:
        problems.extend(_problem_at(p, first_line) for p in part.problems)
        first_line += part.lines
        for page_id, source, _ in part.pages:
            if page_id in seen:
                problems.append(duplicate_id(page_id, source, seen[page_id]))
            else:
                seen[page_id] = source
    for part in parts:
        for page_id, source, supersedes in part.pages:
            if supersedes is not None and supersedes not in seen:
                problems.append(superseding_nothing(page_id, source, supersedes))
    if problems:
        raise InputError(problems)
    chunks: list[Chunk] = []
    for part in parts:
        offset = len(chunks)
        chunks.extend(dataclasses.replace(c, index=c.index + offset) for c in part.chunks)
    return chunks


def chunk_folder(
    client: Any,
    folder: str | Path,
    key: ChunkingKey,
    *,
    partitions: int | None = None,
    encoding: str | None = None,
) -> list[Chunk]:
    """A folder of pages chunked on the workers: equal to
    ``chunk_pages(load_corpus(folder, encoding=encoding))`` under ``key``."""
    files = folder_files(folder)
    if not files:
        raise InputError([Problem(str(folder), "no *.md or *.txt pages in the corpus folder")])
    futures = submit_files(client, files, key, partitions=partitions, encoding=encoding)
    return gather_chunks(client, futures)


def chunk_beir(
    client: Any, corpus_jsonl: str | Path, key: ChunkingKey, *, block_bytes: int = BEIR_BLOCK_BYTES
) -> list[Chunk]:
    """A BEIR ``corpus.jsonl`` chunked on the workers, pages in line order. Each page's chunks
    equal those of the page ``raglab import beir`` writes; the imported folder is read in file
    name order, so there the same chunks may come in another order."""
    return gather_chunks(client, submit_beir(client, corpus_jsonl, key, block_bytes=block_bytes))
