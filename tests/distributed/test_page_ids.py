"""Tests for raglab.distributed.page_ids: the corpus's ids in buckets on the workers.

Oracle: the single machine's checks over the same pages
(:func:`raglab.corpus.pages.page_checks`: ids given twice, ``supersedes`` naming no page) and
its ids' rows (``Corpus.row``); CRC-32's published check value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from raglab.corpus.pages import _PageList, load_corpus, page_checks, read_page_file
from raglab.distributed.chunking import read_partitions
from raglab.distributed.page_ids import PageIds, bucket_of


def test_a_bucket_is_the_ids_crc32_modulo_their_number() -> None:
    """Oracle: CRC-32's check value, 0xCBF43926 for ``123456789`` (the IEEE polynomial's
    published check), and by hand; the same in every process, unlike ``hash``."""
    assert bucket_of("123456789", 2**32) == 0xCBF43926
    assert bucket_of("123456789", 7) == 0xCBF43926 % 7
    assert bucket_of("", 5) == 0


def _folder(root: Path) -> Path:
    """Fourteen pages, ids repeated across the folder and within it, two ``supersedes`` that
    name no page (one on a page given twice, which one machine leaves out) and one that does."""
    root.mkdir()
    for k in range(14):
        extra = ""
        if k == 3:
            extra = "supersedes: p0\n"
        if k in (5, 11):
            extra = "supersedes: gone\n"
        (root / f"f{k:02d}.md").write_text(f"---\nid: p{k % 10}\n{extra}---\n# T{k}\n\nWords.\n")
    return root


@pytest.mark.parametrize("n_buckets", [1, 3])
def test_the_buckets_find_what_one_machine_finds(
    client: Any, tmp_path: Path, n_buckets: int
) -> None:
    """Oracle: ``page_checks`` over the pages read here, and ``Corpus.row`` of each id; rows
    asked of ids no page has are None."""
    folder = _folder(tmp_path / "pages")
    files = sorted(str(p) for p in folder.iterdir())
    here = _PageList()
    for file in files:
        page, _, _ = read_page_file(Path(file))
        assert page is not None
        here.add(page)
    checks = page_checks(here, b"\1" * len(here))
    assert [row for row, *_ in checks.twice] == [10, 11, 12, 13]
    assert [row for row, *_ in checks.dangling] == [5]
    parts = read_partitions(client, files, partitions=4)
    counts = [len(p.pages) for p in client.gather(parts)]
    firsts = [sum(counts[:g]) for g in range(len(counts))]
    ids = PageIds(client, parts, firsts, n_buckets)
    twice, dangling = ids.findings()
    assert twice == list(checks.twice)
    assert dangling == list(checks.dangling)
    asked = [f"p{k}" for k in range(10)] + ["gone", "p3"]
    rows = here.rows
    assert ids.rows(asked) == [rows.get(i) for i in asked]
    assert ids.rows(["gone"]) == [None] and ids.rows([]) == []


def test_the_buckets_of_a_clean_folder_find_nothing(client: Any) -> None:
    """Oracle: ``load_corpus`` of the handbook, which refuses nothing; every id's row is its
    place there."""
    corpus = load_corpus()
    files = [p.source for p in corpus]
    parts = read_partitions(client, files)
    counts = [len(p.pages) for p in client.gather(parts)]
    ids = PageIds(client, parts, [sum(counts[:g]) for g in range(len(counts))], 4)
    assert ids.findings() == ([], [])
    assert ids.rows(list(corpus.ids)) == list(range(len(corpus)))
