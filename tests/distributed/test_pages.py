"""Tests for raglab.distributed.pages: a corpus folder read, checked and held on the workers.

Oracle: :func:`raglab.corpus.pages.load_corpus` of the same folder on this machine: the same
pages field for field, the same warnings (the corpus's and each document's), the same problems
in the same order; the round trips counted by hand; tracemalloc of this process.
"""

from __future__ import annotations

import dataclasses
import gc
import shutil
import sys
import warnings
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

import pytest

from raglab.corpus.pages import Corpus, Page, PageTexts, bundled_handbook_dir, load_corpus
from raglab.distributed.chunking import text_fetcher
from raglab.distributed.pages import BLOCK_PAGES, CorpusRead, RemotePages, load_corpus_on_cluster
from raglab.errors import InputError, RaglabWarning
from raglab.settings import CLIENT_PAGE_RECORDS as KEEP
from tests.corpus.documents.build import write_docx


def _here(folder: Path | str) -> tuple[Corpus, list[str]]:
    """``load_corpus`` on this machine, and the RaglabWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RaglabWarning)
        corpus = load_corpus(folder)
    return corpus, [str(w.message) for w in caught if issubclass(w.category, RaglabWarning)]


def _there(client: Any, folder: Path | str) -> tuple[CorpusRead, list[str]]:
    """``load_corpus_on_cluster``, and the RaglabWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RaglabWarning)
        read = load_corpus_on_cluster(client, folder, texts=PageTexts(10**6), keep=KEEP)
    return read, [str(w.message) for w in caught if issubclass(w.category, RaglabWarning)]


def _same(mine: Corpus, theirs: Corpus) -> None:
    """``mine`` (pages on the workers) is ``theirs`` page for page, by row, by id and in order."""
    assert isinstance(mine.pages, RemotePages)
    assert mine.root == theirs.root and mine.warnings == theirs.warnings
    assert len(mine) == len(theirs) and mine.n_words == theirs.n_words
    for ours, whole in zip(mine, theirs, strict=True):
        _same_page(ours, whole)
    for k in range(len(theirs) - 1, -1, -3):
        whole = theirs.pages[k]
        _same_page(mine.pages[k], whole)
        _same_page(mine.page(whole.id), whole)
        assert mine.row(whole.id) == k and whole.id in mine
        assert mine.pages.chars_of(whole.id) == len(whole.text)
    assert "no such page" not in mine and mine.pages.chars_of("no such page") is None
    assert list(mine.ids) == list(theirs.ids) and list(mine.sources) == list(theirs.sources)


def _same_page(ours: Page, whole: Page) -> None:
    for f in dataclasses.fields(Page):
        if f.name not in ("text", "sections"):
            assert getattr(ours, f.name) == getattr(whole, f.name), (whole.id, f.name)
    assert ours.n_words == whole.n_words


def _untidy(folder: Path) -> Path:
    """The handbook with a cp1252 page, a binary file named as a page (skipped), a page with
    unused front-matter keys, an empty page, a Word file and a damaged one (skipped, warned)."""
    shutil.copytree(bundled_handbook_dir(), folder)
    (folder / "cafe.md").write_bytes("# Café\n\nLe café est très chaud.\n".encode("cp1252"))
    (folder / "blob.md").write_bytes(bytes(range(256)) * 8)
    (folder / "keys.md").write_text("---\nid: keys\nlayout: docs\n---\n# Keys\n\nWords.\n")
    (folder / "empty.md").write_text("---\nid: empty\n---\n")
    write_docx(folder / "memo.docx", [("Heading 1", "Memo"), ("Normal", "Lenses.")], title="Memo")
    (folder / "broken.docx").write_bytes(b"PK\x03\x04 not a zip")
    return folder


def test_a_folder_read_on_the_workers_is_the_one_read_here(client: Any, tmp_path: Path) -> None:
    """Oracle: ``load_corpus`` here. Every page field for field, the corpus's warnings (a
    detected encoding, a file skipped, an empty page, kept keys) and the documents' warnings,
    in order; the partitions' page bounds are the pages each read, a skipped file having none,
    and the texts fetched by them are the pages' own."""
    folder = _untidy(tmp_path / "pages")
    theirs, warned_here = _here(folder)
    read, warned_there = _there(client, folder)
    _same(read.corpus, theirs)
    assert warned_there == warned_here and any("broken.docx" in w for w in warned_here)
    said = [str(w) for w in theirs.warnings]
    assert any("blob.md" in w and "skipped" in w for w in said), said
    assert any("empty.md" in w for w in said) and any("layout" in w for w in said)
    assert read.n_files == len(theirs) + 2  # blob.md and broken.docx: no page
    assert read.bounds[0] == 0 and read.bounds[-1] == len(theirs)
    assert read.bounds == sorted(read.bounds) and len(read.bounds) == len(read.parts) + 1
    fetch = text_fetcher(client, (), lambda: read.parts, bounds=read.bounds)
    rows = list(range(len(theirs)))[::-1]
    assert fetch(rows, [theirs.pages[r].id for r in rows]) == [theirs.pages[r].text for r in rows]


def test_a_relative_folder_names_its_files_as_given(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: ``load_corpus`` of the same relative path here. The workers do not share this
    process's working folder, yet every source, warning and problem names a file as the
    relative path given does."""
    _untidy(tmp_path / "pages")
    (tmp_path / "pages" / "bad.md").write_text("---\nnot a key value line\n---\n# Bad\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as here:
        _here("pages")
    with pytest.raises(InputError) as there:
        _there(client, "pages")
    assert there.value.problems == here.value.problems
    assert [p.file for p in here.value.problems] == [str(Path("pages") / "bad.md")]
    (tmp_path / "pages" / "bad.md").unlink()
    theirs, warned_here = _here("pages")
    read, warned_there = _there(client, "pages")
    _same(read.corpus, theirs)
    assert warned_there == warned_here
    assert all(not Path(p.source).is_absolute() for p in read.corpus)


def test_a_folder_refused_on_the_workers_is_refused_as_here(client: Any, tmp_path: Path) -> None:
    """Oracle: ``load_corpus``'s InputError here: front matter that does not parse, ids given
    twice (across partitions), a ``supersedes`` naming no page, the same problems in the same
    order; and an empty folder, a missing one."""
    folder = tmp_path / "pages"
    folder.mkdir()
    for k in range(12):
        (folder / f"p{k:02d}.md").write_text(f"---\nid: p{k % 9}\n---\n# P{k}\n\nWords {k}.\n")
    (folder / "c.md").write_text("---\nnot a key value line\n---\n# C\n\nThree.\n")
    (folder / "s.md").write_text("---\nid: s\nsupersedes: nowhere\n---\n# S\n\nTwo.\n")
    with pytest.raises(InputError) as here:
        _here(folder)
    with pytest.raises(InputError) as there:
        _there(client, folder)
    assert there.value.problems == here.value.problems
    assert [p.field for p in here.value.problems].count("id") == 3
    empty = tmp_path / "empty"
    empty.mkdir()
    for what in (empty, tmp_path / "nowhere"):
        with pytest.raises(InputError) as here:
            _here(what)
        with pytest.raises(InputError) as there:
            _there(client, what)
        assert there.value.problems == here.value.problems


def test_the_pages_come_a_round_trip_a_plan_and_only_the_last_kept_stay(
    client: Any, tmp_path: Path
) -> None:
    """Oracle: ``load_corpus`` here, and the round trips counted by hand. With three pages'
    metadata kept at most: a page read twice in a row is fetched once; pages said ahead
    (``prefetch``) come in one round trip however many partitions hold them; ids said ahead
    cost one more (their buckets); a full pass costs one a block of pages (three here); no more than three
    are ever kept, and every page read is still its own."""
    folder = tmp_path / "pages"
    folder.mkdir()
    for k in range(40):
        (folder / f"p{k:02d}.md").write_text(f"# Page {k}\n\n{'word ' * (k + 1)}\n")
    theirs = load_corpus(folder)
    read = load_corpus_on_cluster(client, folder, texts=PageTexts(10**6), keep=3)
    pages = read.corpus.pages
    assert isinstance(pages, RemotePages) and len(read.parts) > 1
    start = pages.round_trips
    _same_page(pages[5], theirs.pages[5])
    _same_page(pages[5], theirs.pages[5])
    assert pages.round_trips == start + 1
    pages.prefetch([0, 39, 20])
    assert pages.round_trips == start + 2
    for k in (20, 0, 39):
        _same_page(pages[k], theirs.pages[k])
    assert pages.round_trips == start + 2
    read.corpus.prefetch_ids(["p10", "p30", "nowhere"])
    assert pages.round_trips == start + 3
    _same_page(read.corpus.page("p30"), theirs.page("p30"))
    assert "nowhere" not in read.corpus and pages.round_trips == start + 3
    before = pages.round_trips
    assert [p.id for p in pages] == list(theirs.ids)
    assert pages.round_trips - before == -(-40 // min(3, BLOCK_PAGES)) == 14
    assert max(len(pages._records), len(pages._rows)) <= 3


def _weight(root: object) -> int:
    """The bytes (``sys.getsizeof``) of every object reachable from ``root`` by references,
    the Dask client and its futures left out (the cluster's, not the corpus's), and functions
    (a function reaches its module's globals)."""
    from distributed import Client, Future

    seen = {id(root)}
    todo, total = [root], 0
    while todo:
        one = todo.pop()
        total += sys.getsizeof(one)
        for child in gc.get_referents(one):
            if id(child) in seen or isinstance(
                child, type | ModuleType | FunctionType | Client | Future
            ):
                continue
            seen.add(id(child))
            todo.append(child)
    return total


def test_the_client_holds_nothing_a_page(client: Any, tmp_path: Path) -> None:
    """Oracle: ``sys.getsizeof`` of every object the corpus read on the workers keeps here
    (its pages, summaries, bounds; the Dask client and futures left out). It weighs the same
    at 300 and at 3,000 pages, within a byte a page (it was 86 bytes a page with the pages'
    metadata kept here as columns); the same pages read here weigh over 300 bytes a page."""

    def held(n: int) -> int:
        folder = tmp_path / f"pages{n}"
        folder.mkdir()
        for k in range(n):
            (folder / f"p{k:05d}.md").write_text(f"# Page {k}\n\nword {k}\n")
        read = load_corpus_on_cluster(client, folder, texts=PageTexts(10**6), keep=KEEP)
        assert len(read.corpus) == n
        return _weight(read)

    small, large = held(300), held(3000)
    assert abs(large - small) < 2700, (small, large)
    # The same pages read here, texts and all: what the measure gives pages it does hold.
    assert _weight(load_corpus(tmp_path / "pages3000")) - large > 300 * 3000
