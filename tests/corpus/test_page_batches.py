"""Held pages' texts fetched in batches: a stage that says which pages it will read
(:func:`raglab.corpus.pages.reading`) gets them in one call of the fetcher per budget's worth of
text, not one a page, and reads the same texts.

Oracle: the same folder read with its texts (``load_corpus``), and the calls of the fetcher
worked by hand from the pages' lengths (every page 100 characters).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from raglab.chunking.held_table import HeldChunkTable
from raglab.chunking.table import ChunkTable
from raglab.corpus.pages import Corpus, HeldPage, PageTexts, load_corpus, reading
from raglab.run_settings import ChunkingKey


def _folder(tmp_path: Path) -> Path:
    """Pages a to e of 100 characters each (no front matter: the file is the text), two
    sections a page."""
    for name in "abcde":
        body = f"# {name.upper()}\n\nOne two three.\n\n## More\n\n"
        (tmp_path / f"{name}.md").write_text(body + "x" * (99 - len(body)) + "\n")
    return tmp_path


def _held(folder: Path, budget: int) -> tuple[Corpus, Corpus, PageTexts, list[list[str]]]:
    full = load_corpus(folder)
    assert [len(p.text) for p in full] == [100] * 5
    texts = PageTexts(budget)
    held = Corpus(tuple(HeldPage.of(p, texts) for p in full), full.root, full.warnings)
    asked: list[list[str]] = []

    def fetch(ids: list[str]) -> list[str]:
        asked.append(list(ids))
        return [full.page(i).text for i in ids]

    texts.fetch = fetch
    return full, held, texts, asked


def _tables(full: Corpus, held: Corpus) -> tuple[ChunkTable, ChunkTable]:
    """The heading chunker's table of the full pages, and the same counts over the held ones
    (as the cluster gives them: no text read to find them)."""
    key = ChunkingKey().resolved()
    mine = ChunkTable(full.pages, method=key.method, size=key.size, overlap=key.overlap)
    counts = mine.first[1:] - mine.first[:-1]
    theirs = HeldChunkTable.of_counts(
        held.pages,
        counts,
        mine.total_words,
        method=key.method,
        size=key.size,
        overlap=key.overlap,
    )
    return mine, theirs


def test_reading_a_chunk_table_fetches_its_pages_in_one_call(tmp_path: Path) -> None:
    """Every chunk of the held table equals the full table's, field for field, and the five
    pages came in one call (the old code made five, one a page); nothing was fetched twice."""
    full, held, texts, asked = _held(_folder(tmp_path), budget=10_000)
    mine, theirs = _tables(full, held)
    assert len(mine) == 10
    assert list(theirs) == list(mine)
    assert asked == [["a", "b", "c", "d", "e"]]
    assert texts.round_trips == 1 and texts.fetched == 5 and texts.kept_chars == 500


def test_taking_a_few_chunks_fetches_their_pages_in_one_call(tmp_path: Path) -> None:
    """Oracle: the full table's chunks. Chunks taken out of order from three pages (as a
    reranker's candidates come) equal ``[mine[i] for i in rows]`` field for field, and their
    pages came in one call, in the order first asked (one call a page without the plan)."""
    full, held, texts, asked = _held(_folder(tmp_path), budget=10_000)
    mine, theirs = _tables(full, held)
    rows = [9, 2, 3, 8, 5]  # pages e, b, b, e, c
    assert theirs.take(rows) == [mine[i] for i in rows]
    assert asked == [["e", "b", "c"]]
    assert texts.round_trips == 1 and texts.fetched == 3


def test_a_batch_larger_than_the_budget_is_split(tmp_path: Path) -> None:
    """Budget 250 characters: two pages of 100 fit, three do not, so the five pages come in
    calls of two, two and one, and the client never keeps more than 250 characters."""
    full, held, texts, asked = _held(_folder(tmp_path), budget=250)
    mine, theirs = _tables(full, held)
    for mine_chunk, their_chunk in zip(mine, theirs, strict=True):
        assert their_chunk == mine_chunk
        assert texts.kept_chars <= 250
    assert asked == [["a", "b"], ["c", "d"], ["e"]]
    assert texts.round_trips == 3 and texts.fetched == 5


def test_a_page_over_the_budget_comes_alone_and_kept_pages_are_not_fetched(
    tmp_path: Path,
) -> None:
    """Budget 150: a planned page lacking comes alone when the next would pass the budget; a
    page kept already is not fetched, but counts against the budget and stays; without a plan
    a page comes alone. Budget 50,
    under one page: each page comes alone, and is kept all the same."""
    full, held, texts, asked = _held(_folder(tmp_path), budget=150)
    assert held.page("c").text == full.page("c").text  # no plan: c alone
    with reading([held.page(i) for i in "abcde"]):
        assert [held.page(i).text for i in "abcde"] == [full.page(i).text for i in "abcde"]
    assert asked == [["c"], ["a"], ["b"], ["c"], ["d"], ["e"]]
    asked.clear()
    texts.budget = 250
    with reading([held.page(i) for i in "abcde"]):
        # Budget 250: b's batch takes c, d would pass it. a's batch passes b, kept: b counts
        # against the budget and is marked as used, a planned page about to be read; then c,
        # kept too, would pass the budget, so a comes alone, and c, the least recently used,
        # goes (the old code fetched d with a and evicted b and c, both planned after a).
        assert held.page("b").text == full.page("b").text
        assert held.page("a").text == full.page("a").text
    assert asked == [["b", "c"], ["a"]]
    assert list(texts._kept) == ["b", "a"]
    asked.clear()
    texts.budget = 50
    with reading([held.page(i) for i in "abcde"]):
        assert [held.page(i).text for i in "cde"] == [full.page(i).text for i in "cde"]
    assert asked == [["c"], ["d"], ["e"]]
    assert list(texts._kept) == ["e"] and texts.kept_chars == 100


def test_nested_plans_batch_by_the_outer_one(tmp_path: Path) -> None:
    """A stage over a batch of questions (outer: pages e, d, c, b) around one question's
    (inner: d alone): reading d fetches d, c and b, the outer batch's pages after it; once the
    blocks end a page comes alone again."""
    full, held, texts, asked = _held(_folder(tmp_path), budget=10_000)
    with reading([held.page(i) for i in "edcb"]), reading([held.page("d")]):
        assert held.page("d").text == full.page("d").text
        assert held.page("b").text == full.page("b").text
    assert held.page("a").text == full.page("a").text
    assert asked == [["d", "c", "b"], ["a"]]
    assert texts._plans == []


def test_chunk_ids_read_no_text(tmp_path: Path) -> None:
    """``ChunkTable.chunk_id`` gives each chunk's id as the made chunk carries it, without
    fetching any page (a TREC run names chunks by id only)."""
    full, held, texts, asked = _held(_folder(tmp_path), budget=10_000)
    mine, theirs = _tables(full, held)
    assert [theirs.chunk_id(i) for i in range(len(theirs))] == [c.id for c in mine]
    assert [c.id for c in mine][:2] == ["a#0", "a#1"]
    assert asked == [] and texts.round_trips == 0


def test_plain_pages_cost_nothing_to_plan(tmp_path: Path) -> None:
    """Pages that hold their texts: ``reading`` plans nothing and reads nothing."""
    full = load_corpus(_folder(tmp_path))
    with reading(full.pages):
        assert full.page("a").text.startswith("# A")
    with pytest.raises(KeyError):
        full.page("z")


def test_what_is_found_in_a_page_goes_with_its_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``found_in`` gives ``find(text)`` (each page's length, the oracle: 100) once while the
    text is kept, drops it with the text (a budget of two pages: reading c drops a), and keeps
    at most ``CLIENT_SECTION_PAGES`` pages' of one kind (two here); a kind of its own is kept
    beside it. The old pages had no such store: every stage kept what it found for every page
    it read."""
    import raglab.corpus.pages as pages_module

    monkeypatch.setattr(pages_module, "CLIENT_SECTION_PAGES", 2)
    _, held, texts, asked = _held(_folder(tmp_path), budget=200)
    calls: list[str] = []

    def find(text: str) -> int:
        calls.append(text)
        return len(text)

    pages = {page.id: page for page in held}
    assert isinstance(pages["a"], HeldPage)
    assert pages["a"].found_in("n", find) == 100
    assert pages["a"].found_in("n", find) == 100
    assert len(calls) == 1  # kept with the text
    assert pages["b"].found_in("n", find) == 100
    assert pages["b"].found_in("other", find) == 100
    assert {key for key in texts._found} == {("a", "n"), ("b", "n"), ("b", "other")}
    pages["c"].found_in("n", find)  # fetching c drops a's text, and what was found in it
    assert list(texts._kept) == ["b", "c"]
    assert {key for key in texts._found} == {("b", "n"), ("b", "other"), ("c", "n")}
    monkeypatch.setattr(pages_module, "CLIENT_SECTION_PAGES", 1)
    pages["b"].found_in("n", find)  # kept; now one page's of a kind at most: c's goes
    assert {key for key in texts._found} == {("b", "n"), ("b", "other")}
    assert asked == [["a"], ["b"], ["c"]]
    assert len(calls) == 4


def test_a_batch_never_evicts_the_kept_pages_it_plans_to_read(tmp_path: Path) -> None:
    """Budget 300, pages of 100: after a, b and c are read (kept, a the oldest), a block plans
    d, a, e. d's batch passes a, kept (it counts and is marked as used), and takes e: the batch
    weighs 200 beside a's 100, so b and c go and a stays, read without a round trip (the old
    code fetched d and e and evicted a, the oldest, then fetched a again)."""
    full, held, texts, asked = _held(_folder(tmp_path), budget=300)
    for i in "abc":
        assert held.page(i).text == full.page(i).text
    asked.clear()
    with reading([held.page(i) for i in "dae"]):
        assert [held.page(i).text for i in "dae"] == [full.page(i).text for i in "dae"]
    assert asked == [["d", "e"]]
    assert list(texts._kept) == ["d", "a", "e"] and texts.kept_chars == 300


def test_room_is_made_before_a_batch_comes(tmp_path: Path) -> None:
    """Budget 250, pages of 100: the texts kept when the fetcher is called and the batch it
    brings weigh 250 characters at most together, at every call (worked by hand: a and b
    come first; before c and d come, a and b go, so 0 + 200; e then comes beside d, the one
    of c and d it leaves: 100 + 100). The old code fetched c and d beside a and b (400) and
    let a and b go only once the batch had come. The same calls, pages and texts either way."""
    full, held, texts, asked = _held(_folder(tmp_path), budget=250)
    fetch = texts.fetch
    assert fetch is not None
    at_call: list[tuple[int, list[str]]] = []

    def watched(ids: list[str]) -> list[str]:
        at_call.append((texts.kept_chars, sorted(texts._kept)))
        return fetch(ids)

    texts.fetch = watched
    mine, theirs = _tables(full, held)
    assert list(theirs) == list(mine)
    assert asked == [["a", "b"], ["c", "d"], ["e"]]
    assert at_call == [(0, []), (0, []), (100, ["d"])]
    for (kept, _), batch in zip(at_call, asked, strict=True):
        assert kept + 100 * len(batch) <= 250
