"""HeldChunkTable: a chunking held as each page's count of chunks, its rows cut again from a page's
text when the page is read (a Dask client's table).

Oracle: :class:`~raglab.chunking.table.ChunkTable` chunked here on the same pages (itself
checked against ``chunk_pages``, tests/chunking/test_table.py): every chunk field for field, the
chunks holding each labelled answer, word counts; the pages' texts come through
:class:`~raglab.corpus.pages.PageTexts`, whose fetches are counted.
"""

from __future__ import annotations

import numpy as np
import pytest

from raglab.chunking.held_table import HeldChunkTable
from raglab.chunking.table import ChunkTable
from raglab.corpus.pages import Corpus, HeldPage, PageTexts
from raglab.pipeline.lab import Lab

SETTINGS = [("heading", 400, None), ("fixed", 50, 10), ("sentence", 80, None)]


def _held(lab: Lab, budget: int) -> tuple[Corpus, PageTexts, list[list[str]]]:
    texts = PageTexts(budget)
    full = lab.corpus
    asked: list[list[str]] = []

    def fetch(ids: list[str]) -> list[str]:
        asked.append(list(ids))
        return [full.page(i).text for i in ids]

    texts.fetch = fetch
    return Corpus(tuple(HeldPage.of(p, texts) for p in full)), texts, asked


def _tables(
    lab: Lab, held: Corpus, method: str, size: int, overlap: int | None
) -> tuple[ChunkTable, HeldChunkTable]:
    mine = ChunkTable(lab.corpus.pages, method=method, size=size, overlap=overlap)
    theirs = HeldChunkTable.of_counts(
        held.pages,
        np.diff(mine.first),
        mine.total_words,
        method=method,
        size=size,
        overlap=overlap,
    )
    return mine, theirs


@pytest.mark.parametrize(("method", "size", "overlap"), SETTINGS)
def test_the_held_table_reads_as_the_chunked_one(
    handbook_lab: Lab, method: str, size: int, overlap: int | None
) -> None:
    """Every chunk, taken in any order, every labelled answer's chunks and every word count
    equal the table chunked here; the held table has no array of a number a chunk."""
    held, _, _ = _held(handbook_lab, budget=10**9)
    mine, theirs = _tables(handbook_lab, held, method, size, overlap)
    assert len(theirs) == len(mine) and theirs.total_words == int(mine.n_words.sum())
    assert list(theirs) == list(mine)
    rows = np.random.default_rng(0).permutation(len(mine))[:40].tolist()
    assert theirs.take(rows) == mine.take(rows)
    assert theirs.words_of(rows).tolist() == mine.n_words[rows].tolist()
    for q in handbook_lab.questions:
        for span in q.spans:
            args = (span.page_id, span.start, span.end)
            assert theirs.containing(*args) == mine.containing(*args)
    assert theirs.containing("no such page", 0, 1) == []
    for name in ("starts", "ends", "n_words"):
        assert not hasattr(theirs, name)
    arrays = [getattr(theirs, n) for n in ("first",) if isinstance(getattr(theirs, n), np.ndarray)]
    assert sum(a.size for a in arrays) == len(handbook_lab.corpus) + 1


def test_a_pages_rows_are_kept_with_its_text_and_dropped_with_it(handbook_lab: Lab) -> None:
    """Budget: the two longest pages' characters. Reading a page's chunks cuts its rows once
    (no second fetch while the text is kept: a word count of another chunk of that page reads
    nothing); once its text is dropped, its rows go with it, and the next read fetches the page
    again and cuts the same rows."""
    sizes = sorted(len(p.text) for p in handbook_lab.corpus)
    held, texts, asked = _held(handbook_lab, budget=sizes[-1] + sizes[-2])
    mine, theirs = _tables(handbook_lab, held, "heading", 400, None)
    first = handbook_lab.corpus.pages[0].id
    rows = list(theirs.rows_of(first))
    assert len(rows) > 1
    assert theirs[rows[0]] == mine[rows[0]]
    assert asked == [[first]]
    assert theirs.words_of(rows).tolist() == mine.n_words[rows].tolist()
    assert asked == [[first]]
    assert {page for page, _ in texts._found} == {first}
    for page in handbook_lab.corpus.pages[1:]:
        theirs.words_of(list(theirs.rows_of(page.id)))
    assert first not in {page for page, _ in texts._found}
    asked.clear()
    assert theirs.words_of(rows).tolist() == mine.n_words[rows].tolist()
    assert asked == [[first]]


def test_counts_that_disagree_with_the_pages_are_refused(handbook_lab: Lab) -> None:
    """A page cut into other counts than the workers sent (its text changed between the two)
    is named; counts for another number of pages are refused at once."""
    held, _, _ = _held(handbook_lab, budget=10**9)
    mine, _ = _tables(handbook_lab, held, "heading", 400, None)
    counts = np.diff(mine.first)
    counts[0] += 1
    wrong = HeldChunkTable.of_counts(
        held.pages, counts, mine.total_words, method="heading", size=400, overlap=None
    )
    with pytest.raises(ValueError, match=f"page {held.pages[0].id!r} cut into"):
        wrong.words_of([0])
    with pytest.raises(ValueError, match="counts"):
        HeldChunkTable.of_counts(
            held.pages, counts[1:], 0, method="heading", size=400, overlap=None
        )
