"""``raglab import beir`` with ``corpus.jsonl`` read and checked on Dask workers.

What runs where:

1. **Client**: cut ``corpus.jsonl`` into about equal ranges of bytes, each ending just after a
   line break (:func:`line_ranges`; only the cut points are read here).
2. **Workers, one task per range** (:func:`check_corpus_lines`): read the range's bytes, decode
   them as UTF-8, split them into lines as :func:`raglab.base.files.read_text_lines` does, parse each
   line's JSON and check its ``_id``, ``title`` and ``text`` with the very functions the
   single-machine import uses. Line numbers count from the range's first line.
3. **Client**: lay the ranges end to end (a line's number is its range's local number plus the
   lines before the range), find duplicate ids (that needs every id, so it runs here, over the
   ids only), then read ``queries.jsonl`` and the qrels, split the questions and write the
   collection exactly as :func:`raglab.formats.beir.import_beir` does.

The pages, ``questions.jsonl``, the summary and every problem (its file, line, field and
order) are the single-machine import's, byte for byte. What stays on the client, and why: the
queries and qrels (small beside the corpus); the duplicate-id check; the file names of the
pages (unique ignoring case, so they need every id); and the writing itself, which builds the
pages in a temporary folder and swaps it in with the questions file, so that a failure leaves
the output folder as it was: one rename on one machine, which workers writing their own pages
could not give.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path
from typing import Any

from raglab.distributed.cluster import shards
from raglab.errors import Problem
from raglab.formats.beir import (
    _json_object,
    _read_id,
    _read_jsonl,
    _read_string,
    import_beir,
)
from raglab.formats.collection import (
    TEST_FRACTION,
    ImportSummary,
)

__all__ = ["check_corpus_lines", "import_beir_on_cluster", "line_ranges", "read_corpus"]

#: One line's reading: (number in its range, id, title, text, its problems).
Entry = tuple[int, str | None, str, str | None, tuple[Problem, ...]]
#: A range's reading: (lines it holds, its entries, (offset, byte) of the first non-UTF-8 byte).
RangeReading = tuple[int, list[Entry], tuple[int, int] | None]


def line_ranges(path: Path, n_ranges: int) -> list[tuple[int, int]]:
    """At most ``n_ranges`` contiguous byte ranges (start, end) covering ``path``, each cut just
    after a line break (the last ends at the end of the file); none for an empty file."""
    size = path.stat().st_size
    cuts = [0]
    with path.open("rb") as handle:
        for i in range(1, max(1, n_ranges)):
            at = size * i // n_ranges
            if at <= cuts[-1]:
                continue
            handle.seek(at - 1)
            handle.readline()  # to just after the line break at or after byte at - 1
            cut = handle.tell()
            if cuts[-1] < cut < size:
                cuts.append(cut)
    cuts.append(size)
    return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]


def check_corpus_lines(path: str, start: int, end: int) -> RangeReading:
    """Task: read bytes ``start`` to ``end`` of ``corpus.jsonl`` and check each line as
    ``raglab import beir`` does, except for duplicate ids (the client checks those)."""
    with open(path, "rb") as handle:
        handle.seek(start)
        data = handle.read(end - start)
    try:
        # A byte-order mark is dropped at the start of the file only, as read_text does.
        text = data.decode("utf-8-sig" if start == 0 else "utf-8")
    except UnicodeDecodeError as exc:
        return data.count(b"\n"), [], (start + exc.start, data[exc.start])
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    entries: list[Entry] = []
    for number, line in enumerate(lines, start=1):
        raw = line[:-1] if line.endswith("\r") else line
        if not raw.strip():
            continue
        problems: list[Problem] = []
        obj = _json_object(raw, path, number, problems)
        if obj is None:
            entries.append((number, None, "", None, tuple(problems)))
            continue
        rid = _read_id(obj, path, number, problems)
        title = _read_string(obj, "title", path, number, rid, problems, required=False) or ""
        text_field = _read_string(obj, "text", path, number, rid, problems, required=True)
        entries.append((number, rid, title, text_field, tuple(problems)))
    return len(lines), entries, None


def _shifted(problem: Problem, lines_before: int) -> Problem:
    if problem.line is None:
        return problem
    return dataclasses.replace(problem, line=problem.line + lines_before)


def read_corpus(
    client: Any, path: Path, problems: list[Problem], *, ranges: int | None = None
) -> list[tuple[str, str, str]]:
    """``(id, title, text)`` of each record of ``corpus.jsonl``, read and checked on the
    workers; the problems are appended to ``problems`` in the single-machine import's order."""
    source = str(path)
    if not path.is_file():  # the single machine's own message for an unreadable file
        return _read_jsonl(path, "corpus", problems, quiet=True)
    n = ranges if ranges is not None else shards(client)
    futures = [
        client.submit(check_corpus_lines, source, a, b, pure=False) for a, b in line_ranges(path, n)
    ]
    readings: list[RangeReading] = client.gather(futures)
    for _, _, bad in readings:
        if bad is not None:
            offset, byte = bad
            # read_text's problem: the line of the first byte that is not UTF-8.
            with path.open("rb") as handle:
                line = handle.read(offset).count(b"\n") + 1
            message = f"is not UTF-8 (byte 0x{byte:02x} at offset {offset})"
            problems.append(Problem(source, message, line))
            return []
    records: list[tuple[str, str, str]] = []
    first: dict[str, int] = {}
    start = len(problems)
    before = 0
    for n_lines, entries, _ in readings:
        for number, rid, title, text, found in entries:
            line = number + before
            problems.extend(_shifted(p, before) for p in found)
            duplicate = False
            if rid is not None:
                if rid in first:
                    problems.append(
                        Problem(
                            source, f"duplicate id, first on line {first[rid]}", line, "_id", rid
                        )
                    )
                    duplicate = True
                else:
                    first[rid] = line
            if not found and not duplicate and rid is not None and text is not None:
                records.append((rid, title, text))
        before += n_lines
    if not records and len(problems) == start:
        problems.append(Problem(source, "no records found"))
    return records


def import_beir_on_cluster(
    client: Any,
    folder: str | Path,
    out_dir: str | Path,
    *,
    split: str | None = None,
    test_fraction: float = TEST_FRACTION,
    seed: int,
    qrels_file: str | Path | None = None,
    overwrite: bool = False,
    quiet: bool = False,
    ranges: int | None = None,
) -> ImportSummary:
    """:func:`raglab.formats.beir.import_beir` with ``corpus.jsonl`` read on the workers of
    ``client``: the same arguments, files, summary and problems (the steps after reading the
    corpus are that function's own)."""
    return import_beir(
        folder,
        out_dir,
        split=split,
        test_fraction=test_fraction,
        seed=seed,
        qrels_file=qrels_file,
        overwrite=overwrite,
        quiet=quiet,
        read_corpus=lambda path, problems: read_corpus(client, path, problems, ranges=ranges),
    )
