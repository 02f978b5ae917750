"""Tests for raglab.distributed.chunk_table: a chunking's table whose pages' rows stay on the workers.

Oracle: the single machine's table of the same pages (``ChunkTable``, ``chunk_pages``) and
``page_age_years`` of every chunk's own date; the round trips counted by hand.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from raglab.chunking.chunkers import chunk_pages
from raglab.chunking.table import ChunkTable
from raglab.corpus.pages import PageTexts, bundled_handbook_dir, load_corpus
from raglab.distributed.chunk_table import RemoteChunkTable, remote_chunk_table
from raglab.distributed.chunking import submit_files
from raglab.distributed.pages import CorpusRead, RemotePages, load_corpus_on_cluster
from raglab.pipeline.lab import Lab, no_questions
from raglab.rerank.features import page_age_years
from raglab.run_settings import ChunkingKey
from raglab.settings import CLIENT_PAGE_RECORDS as KEEP


def _remote(client: Any, read: CorpusRead, key: ChunkingKey) -> RemoteChunkTable:
    pages = read.corpus.pages
    assert isinstance(pages, RemotePages)
    parts = submit_files(client, [], key, read=read.parts)
    return remote_chunk_table(client, pages, read.parts, parts, key, keep=KEEP)


@pytest.mark.parametrize("key", [ChunkingKey("heading"), ChunkingKey("fixed", 50, 10)])
def test_the_table_is_the_one_made_here(client: Any, key: ChunkingKey) -> None:
    """Oracle: ``ChunkTable`` of the handbook's pages read here: every chunk field for field
    (a full pass), each chunk's page, each page's rows, the word counts, chunk ids and the
    chunks holding a span; and a stage's rows cost one round trip, not one a chunk."""
    from raglab.distributed.chunking import text_fetcher

    texts = PageTexts(10**7)
    read = load_corpus_on_cluster(client, None, texts=texts, keep=KEEP)
    fetch = text_fetcher(client, (), lambda: read.parts, bounds=read.bounds)
    texts.fetch = lambda ids: fetch([read.corpus.row(i) for i in ids], ids)
    k = key.resolved()
    here = load_corpus()
    theirs = ChunkTable(here.pages, method=k.method, size=k.size, overlap=k.overlap)
    table = _remote(client, read, key)
    assert len(table) == len(theirs) and table.total_words == theirs.total_words
    rows = np.arange(len(theirs))[::-7].copy()
    before = read.corpus.pages.round_trips if isinstance(read.corpus.pages, RemotePages) else 0
    with table.reading(rows.tolist()):
        assert [table.chunk_id(int(i)) for i in rows] == [theirs.chunk_id(int(i)) for i in rows]
    pages = read.corpus.pages
    assert isinstance(pages, RemotePages) and pages.round_trips == before + 1
    assert table.page_rows_of(rows).tolist() == theirs.page_rows_of(rows).tolist()
    assert table.take(rows.tolist()) == theirs.take(rows.tolist())
    assert table.words_of(rows).tolist() == theirs.words_of(rows).tolist()
    for page in list(here)[::5]:
        assert table.rows_of(page.id) == theirs.rows_of(page.id)
        assert table.containing(page.id, 10, 20) == theirs.containing(page.id, 10, 20)
    assert table.rows_of("no such page") == range(0)
    assert list(table) == list(theirs)


def _dated(folder: Path, undated: int) -> Path:
    """The handbook with the ``updated`` line taken off every ``undated``-th page (in file
    order)."""
    shutil.copytree(bundled_handbook_dir(), folder)
    for k, file in enumerate(sorted(folder.glob("*.md"))):
        text = file.read_text(encoding="utf-8")
        if k % undated == 0:
            text = re.sub(r"^updated: .*\n", "", text, count=1, flags=re.MULTILINE)
        file.write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize("undated", [2, 3])
def test_the_ages_are_the_ones_found_here(client: Any, tmp_path: Path, undated: int) -> None:
    """Oracle: ``page_age_years`` of every chunk's own date (``chunk_pages`` here), with every
    ``undated``-th page's date taken off, so undated chunks take the median of the dated
    chunks' ages: bit for bit, from the partitions' chunks counted by date and the candidates'
    pages' dates alone."""
    folder = _dated(tmp_path / "pages", undated)
    here = load_corpus(folder)
    texts = PageTexts(10**7)
    read = load_corpus_on_cluster(client, folder, texts=texts, keep=KEEP)
    lab = Lab(read.corpus, no_questions())
    for key in (ChunkingKey().resolved(), ChunkingKey("fixed", 40, 10).resolved()):
        made = chunk_pages(here, method=key.method, size=key.size, overlap=key.overlap)
        want = page_age_years([c.updated for c in made])
        assert len({float(a) for a in want}) > 2
        lab.indexes.chunk_table = lambda k, key=key: _remote(client, read, key)
        cs = lab.indexes.chunk_set(key)
        assert isinstance(cs.chunks, RemoteChunkTable)
        idx = np.arange(len(made))[::-1].copy()
        assert cs.ages_of(idx).tobytes() == want[idx].tobytes()
        assert "_page_ages" not in cs.__dict__
