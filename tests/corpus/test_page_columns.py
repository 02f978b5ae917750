"""Tests for raglab.corpus.page_columns: a Dask client's pages held as columns."""

from __future__ import annotations

import dataclasses
import gc
import tracemalloc
from pathlib import Path

import pytest

from raglab.corpus.page_columns import IdIndex, PageColumns
from raglab.corpus.pages import Corpus, HeldPage, Page, PageTexts, load_corpus
from raglab.errors import InputError


def _columns(folder: Path) -> tuple[Corpus, Corpus, PageTexts]:
    """The folder read with its texts, and read as columns whose texts come from the first."""
    full = load_corpus(folder)
    texts = PageTexts(10**6)
    held = load_corpus(folder, held=lambda prefix: PageColumns(texts, prefix=prefix))
    texts.fetch = lambda ids: [full.page(i).text for i in ids]
    return full, held, texts


def test_the_id_index_finds_every_row_and_tells_a_shared_hash_apart() -> None:
    """Oracle: a dict of the ids (the first row of an id given twice), and by hand. With every
    hash the same (``key``), each id is still found by comparing the ids, and the ids given
    twice are each later row with its first."""
    ids = ["a", "b", "c", "b", "d", "a", "b"]
    by_hand = {"a": 0, "b": 1, "c": 2, "d": 4}
    for key in (hash, lambda _: 7):
        index = IdIndex(ids, key=key)
        assert {i: index[i] for i in by_hand} == by_hand
        assert "e" not in index and index.get("e") is None and 3 not in index
        with pytest.raises(KeyError):
            index["e"]
        assert index.repeated() == [(3, 1), (5, 0), (6, 1)]
    assert IdIndex(["x", "y"]).repeated() == []


def test_pages_as_columns_are_the_pages_read_field_for_field(tmp_path: Path) -> None:
    """Oracle: ``load_corpus`` of the same folder with its texts. Every field of every page
    (front matter of both kinds, keys kept as metadata, a date, a superseded page, a page in a
    sub-folder, a .txt page), its text and sections as fetched, the warnings, the ids'
    rows and the corpus's ids and sources are the same."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_text(
        "---\nid: alpha\ntitle: Alpha\nupdated: 2024-01-02\nlayout: docs\n---\n# A\n\nOne two.\n"
    )
    (tmp_path / "b.md").write_text(
        "---\nid: beta\nstatus: superseded\n---\n# B\n\nThree four five.\n## Más\n\nSix.\n"
    )
    (tmp_path / "sub" / "c.md").write_text(
        '+++\nid = "gamma"\nsupersedes = "beta"\n[params]\nmath = true\n+++\n# C\n\nSeven.\n'
    )
    (tmp_path / "d.txt").write_text("Plain words without a heading.\n")
    full, held, _ = _columns(tmp_path)
    assert isinstance(held.pages, PageColumns)
    assert held.warnings == full.warnings and len(held) == len(full) == 4
    for mine, theirs in zip(held, full, strict=True):
        assert isinstance(mine, HeldPage)
        for f in dataclasses.fields(Page):
            assert getattr(mine, f.name) == getattr(theirs, f.name), f.name
        assert mine.n_words == theirs.n_words
        assert held.page(theirs.id).id == theirs.id and held.row(theirs.id) == full.row(theirs.id)
    assert held.page("gamma").meta == {"params.math": "true"}
    assert list(held.ids) == list(full.ids) == ["alpha", "beta", "d", "gamma"]
    assert list(held.sources) == list(full.sources)
    assert "zeta" not in held and "beta" in held


def test_a_corpus_read_as_columns_is_refused_as_the_one_read_whole(tmp_path: Path) -> None:
    """Oracle: ``load_corpus`` of the same folder with its texts. Duplicate ids (found over
    the columns' index, not a dict of every id), a ``supersedes`` naming no page and a front
    matter that does not parse are the same problems, in the same order."""
    (tmp_path / "a.md").write_text("---\nid: same\n---\n# A\n\nOne.\n")
    (tmp_path / "b.md").write_text("---\nid: other\nsupersedes: nowhere\n---\n# B\n\nTwo.\n")
    (tmp_path / "c.md").write_text("---\nnot a key value line\n---\n# C\n\nThree.\n")
    (tmp_path / "d.md").write_text("---\nid: same\n---\n# D\n\nFour.\n")
    (tmp_path / "e.md").write_text("---\nid: other\n---\n# E\n\nFive.\n")
    with pytest.raises(InputError) as whole:
        load_corpus(tmp_path)
    texts = PageTexts(100)
    with pytest.raises(InputError) as columns:
        load_corpus(tmp_path, held=lambda prefix: PageColumns(texts, prefix=prefix))
    assert columns.value.problems == whole.value.problems
    assert [Path(p.file).name for p in whole.value.problems] == [
        "c.md",
        "d.md",
        "e.md",
        "b.md",
    ]


def test_columns_hold_a_page_in_its_strings_bytes_and_a_few_numbers(tmp_path: Path) -> None:
    """Oracle: tracemalloc, and the pages' own strings. 2,000 pages read as columns hold no
    more than the UTF-8 bytes of their ids, titles and paths after the folder, and 96 bytes a
    page: by hand, 78 (five strings' offsets 40, the numbers 26, the index 12) and the arrays'
    room to grow. A page kept as an object (a HeldPage, its strings and an index entry)
    weighed more than 700 bytes beside its text."""
    n = 2000
    for k in range(n):
        (tmp_path / f"page-{k:05d}.md").write_text(
            f"---\nid: page-{k}\ntitle: Page number {k}\nupdated: 2025-01-01\n---\n# H\n\nWords.\n"
        )
    strings = sum(
        len(f"page-{k}") + len(f"Page number {k}") + len(f"page-{k:05d}.md") for k in range(n)
    )
    texts = PageTexts(100)
    # Read once before: what the first read imports is not the pages'.
    load_corpus(tmp_path, held=lambda prefix: PageColumns(texts, prefix=prefix)).row("page-0")
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        corpus = load_corpus(tmp_path, held=lambda prefix: PageColumns(texts, prefix=prefix))
        assert corpus.row(f"page-{n - 1}") == n - 1  # the index built, as a stage builds it
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(corpus) == n
    assert held <= strings + 96 * n, (held, strings, held / n)
    assert isinstance(corpus.pages, PageColumns)
    assert corpus.pages.nbytes() <= held
