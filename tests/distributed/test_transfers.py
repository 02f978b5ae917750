"""A partition's pages and chunks stay on the worker that holds them: the tasks that read them
(the page texts fetched past the client's budget, above all) go to that worker.

Oracles: the workers' own record of every value they fetched from another worker (Dask's
``transfer_incoming_log``: each fetch's keys), the keys of the partitions' futures, the texts'
own lengths, and ``raglab run --json`` on one machine (its bytes). (A bm25 run past the
client's page-text budget moving no partition: tests/distributed/test_client_holdings.py, with
what the client holds in that run.)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest
from dask.sizeof import sizeof

from raglab.cli.main import main
from raglab.corpus.pages import load_corpus
from raglab.distributed.chunking import (
    chunk_partition,
    folder_files,
    read_partition,
    read_partitions,
    text_fetcher,
)
from raglab.run_settings import ChunkingKey
from tests.distributed.cluster_fixtures import moved_since, write_folder

PAGES = 16
SECTIONS = 9


def _folder(root: Path) -> list[str]:
    """``PAGES`` pages of ``SECTIONS`` sections and one question a page (half train, half test),
    each answer its section's first sentence; the run's data options."""
    pages, questions = {}, []
    for p in range(PAGES):
        parts = [f"---\nid: p{p}\ntitle: Page {p}\n---\n# Page {p}\n"]
        for x in range(SECTIONS):
            words = " ".join(f"v{(p * 5 + x * 3 + j) % 40}" for j in range(9))
            parts.append(f"\n## Part {x}\n\nItem p{p}x{x} {words}. More words of part {x}.\n")
        pages[f"p{p}"] = "".join(parts)
        x = p % SECTIONS
        answer = f"Item p{p}x{x} " + " ".join(f"v{(p * 5 + x * 3 + j) % 40}" for j in range(9))
        question = f"What about p{p}x{x} v{(p * 5 + x * 3 + 1) % 40}?"
        split = "train" if p % 2 == 0 else "test"
        row = {"id": f"q{p}", "split": split, "kind": "keyword", "question": question}
        questions.append({**row, "answer": answer + "."})
    return write_folder(root, pages, questions)


def test_page_texts_are_read_where_their_partition_lies(client: Any, tmp_path: Path) -> None:
    """Oracle: the workers' transfer logs and the pages' own texts. Twenty fetches, each of a
    page of every partition (as the reranker's candidates past the text budget ask, one fetch a
    question), give the pages' texts and copy no partition's pages from worker to worker. Before
    the fetch went to the partition's worker, Dask ran such tasks, once their group outgrew the
    cluster's threads, on whichever worker was free, which copied the partition to it."""
    _folder(tmp_path)
    files = [f.absolute() for f in folder_files(tmp_path / "pages")]
    pages = load_corpus(tmp_path / "pages").pages
    read = read_partitions(client, files)
    client.gather(read)  # read, before the clock starts: this test is about the fetches
    start = time.time()
    fetch = text_fetcher(client, files, lambda: read)
    for round_ in range(20):
        rows = [(round_ + step) % PAGES for step in range(0, PAGES, PAGES // len(read))]
        picked = [pages[row] for row in rows]
        assert fetch(rows, [p.id for p in picked]) == [p.text for p in picked]
    moved = moved_since(client, start)
    held = {f.key for f in read}
    assert [key for key in moved if key in held] == []


def test_a_partition_weighs_at_least_its_texts(tmp_path: Path) -> None:
    """Oracle: the texts' own sizes (``sys.getsizeof``). What Dask's scheduler weighs before it
    copies a partition to another worker (``dask.sizeof``) counts every page's text, and every
    chunk's, not the bare object's few bytes (48 before, which made a copy look free)."""
    _folder(tmp_path)
    files = [str(f.absolute()) for f in folder_files(tmp_path / "pages")]
    read = read_partition(files)
    texts = sum(sys.getsizeof(p.text) for p in read.pages)
    assert sizeof(read) >= texts
    part = chunk_partition(read, ChunkingKey("heading"))
    assert len(part.chunks) == PAGES * SECTIONS
    assert sizeof(part) >= sum(sys.getsizeof(c.text) for c in part.chunks)


def test_a_run_with_lsa_moves_no_term_block(
    client: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Oracle: the single machine's ``run --json`` (its bytes) and the workers' transfer logs.
    ``raglab run --retriever lsa`` on the cluster gives the same bytes, and no worker fetches an
    LSA term block (``_term_rows``: U's rows for a share of the vocabulary) from another: the
    tasks reading a block (the rows of a shard's or a question's terms) run where it lies.
    Before, Dask placed them as it placed the page fetches, and the blocks moved (6 to 21
    copies in a 20,000-chunk run, 27 to 96 MB)."""
    argv = ["run", *_folder(tmp_path), "--retriever", "lsa", "--json"]
    assert main(argv) == 0
    single = capsys.readouterr().out
    start = time.time()
    assert main([*argv, "--scheduler", client.scheduler.address]) == 0
    assert capsys.readouterr().out == single
    moved = moved_since(client, start)
    assert [k for k in moved if k.startswith("_term_rows-")] == []
