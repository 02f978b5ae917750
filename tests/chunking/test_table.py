"""ChunkTable: the chunker's list held as offsets, every chunk made from its page when read.

Oracle: ``chunk_pages`` on the same pages (the list the table stands for, compared field for
field) and ``ChunkIndex.containing`` (the span index it replaces), on the handbook's pages and
a page built by hand without sections.
"""

from __future__ import annotations

import numpy as np
import pytest

from raglab.chunking.chunk import Chunk, ChunkIndex
from raglab.chunking.chunkers import chunk_pages
from raglab.chunking.table import ChunkTable
from raglab.corpus.pages import Page
from raglab.pipeline.lab import Lab

SETTINGS = [("heading", 400, None), ("fixed", 50, 10), ("sentence", 80, None), ("fixed", 5, 0)]


@pytest.mark.parametrize(("method", "size", "overlap"), SETTINGS)
def test_the_table_reads_as_the_chunkers_list(
    handbook_lab: Lab, method: str, size: int, overlap: int | None
) -> None:
    pages = [
        *handbook_lab.corpus,
        Page("bare", "Bare", "No heading here. Two sentences, ten words."),
    ]
    made = chunk_pages(pages, method=method, size=size, overlap=overlap)
    table = ChunkTable(pages, method=method, size=size, overlap=overlap)
    assert len(table) == len(made)
    assert list(table) == made
    assert [table[i] for i in range(len(made))] == made
    assert list(table[-3:]) == made[-3:] and table[-1] == made[-1]
    assert table.n_words.tolist() == [c.n_words for c in made]
    with pytest.raises(IndexError):
        table[len(made)]
    index = ChunkIndex(made)
    for q in handbook_lab.questions:
        for span in q.spans:
            assert table.containing(span.page_id, span.start, span.end) == index.containing(
                span.page_id, span.start, span.end
            )
    assert table.containing("no such page", 0, 1) == []


def test_the_table_holds_offsets_not_chunks(handbook_lab: Lab) -> None:
    table = ChunkTable(handbook_lab.corpus.pages, method="heading", size=400, overlap=None)
    held = [getattr(table, name) for name in table.__slots__]
    arrays = [x for x in held if isinstance(x, np.ndarray)]
    assert {a.dtype for a in arrays} == {np.dtype(np.int64)}
    assert sum(a.size for a in arrays) == 3 * len(table) + len(handbook_lab.corpus) + 1
    assert not any(isinstance(x, Chunk) for x in held)
