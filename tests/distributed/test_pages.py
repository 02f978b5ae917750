"""Tests for raglab.distributed.pages: a corpus folder read and checked on the workers.

Oracle: :func:`raglab.corpus.pages.load_corpus` of the same folder on this machine, with the
pages kept as columns as the client keeps them: the same pages field for field, the same
warnings (the corpus's and each document's), the same problems in the same order.
"""

from __future__ import annotations

import dataclasses
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest

from raglab.corpus.page_columns import PageColumns
from raglab.corpus.pages import Corpus, Page, PageTexts, bundled_handbook_dir, load_corpus
from raglab.distributed.chunking import text_fetcher
from raglab.distributed.pages import CorpusRead, load_corpus_on_cluster
from raglab.errors import InputError, RaglabWarning
from tests.corpus.documents.build import write_docx


def _here(folder: Path | str) -> tuple[Corpus, list[str]]:
    """``load_corpus`` on this machine, as columns, and the RaglabWarnings it gave."""
    texts = PageTexts(10**6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RaglabWarning)
        corpus = load_corpus(folder, held=lambda prefix: PageColumns(texts, prefix=prefix))
    return corpus, [str(w.message) for w in caught if issubclass(w.category, RaglabWarning)]


def _there(client: Any, folder: Path | str) -> tuple[CorpusRead, list[str]]:
    """``load_corpus_on_cluster``, and the RaglabWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RaglabWarning)
        read = load_corpus_on_cluster(client, folder, texts=PageTexts(10**6))
    return read, [str(w.message) for w in caught if issubclass(w.category, RaglabWarning)]


def _same(mine: Corpus, theirs: Corpus) -> None:
    assert isinstance(mine.pages, PageColumns)
    assert mine.root == theirs.root and mine.warnings == theirs.warnings
    assert len(mine) == len(theirs)
    for ours, whole in zip(mine, theirs, strict=True):
        for f in dataclasses.fields(Page):
            if f.name not in ("text", "sections"):
                assert getattr(ours, f.name) == getattr(whole, f.name), (whole.id, f.name)
        assert ours.n_words == whole.n_words
    assert list(mine.ids) == list(theirs.ids)


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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RaglabWarning)
        whole = load_corpus(folder)
    fetch = text_fetcher(client, (), lambda: read.parts, bounds=read.bounds)
    rows = list(range(len(whole)))[::-1]
    assert fetch(rows, [whole.pages[r].id for r in rows]) == [whole.pages[r].text for r in rows]


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
