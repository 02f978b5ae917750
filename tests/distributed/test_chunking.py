"""Pages read and chunked on the workers equal the single machine's chunks; a command reads each once.

Oracles: ``Indexes.chunk_set`` (``load_corpus`` then ``chunk_pages`` on one machine) for a folder of
pages, ``raglab import beir`` followed by ``load_corpus`` for a BEIR ``corpus.jsonl``, and
Python's own record of every file a worker opens (an audit hook, :class:`OpenedFiles`).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from distributed.diagnostics.plugin import WorkerPlugin

from raglab.cli.main import main
from raglab.corpus.pages import bundled_handbook_dir, load_corpus
from raglab.distributed.chunking import (
    chunk_beir,
    chunk_folder,
    file_partitions,
    page_digest,
    page_files,
    partition_bounds,
    read_partitions,
    same_pages,
    text_fetcher,
)
from raglab.distributed.lsa import cut_windows
from raglab.distributed.pipeline import index_lab
from raglab.errors import InputError
from raglab.formats.beir import import_beir
from raglab.pipeline.lab import Lab, no_questions
from raglab.run_settings import ChunkingKey
from raglab.settings import SEED, chunk_overlap, chunk_size
from tests.distributed.cluster_fixtures import SingleMachine

KEYS = [ChunkingKey("heading"), ChunkingKey("fixed", 50, 10), ChunkingKey("sentence", 40)]


@pytest.mark.parametrize("key", KEYS, ids=lambda k: k.method)
def test_handbook_folder_chunks_equal_the_lab_chunks(
    client: Any, handbook: Lab, key: ChunkingKey
) -> None:
    """Oracle: the single machine's chunks of the handbook, field for field and in order."""
    ours = chunk_folder(client, bundled_handbook_dir(), key, partitions=5)
    assert ours == list(handbook.indexes.chunk_set(key).chunks)


def test_cranfield_folder_chunks_equal_the_lab_chunks(
    client: Any, cranfield: Lab, cranfield_dir: Path
) -> None:
    """Oracle: the single machine's 1,400 Cranfield chunks."""
    key = ChunkingKey("heading", 100_000)
    assert chunk_folder(client, cranfield_dir / "pages", key) == list(
        cranfield.indexes.chunk_set(key).chunks
    )


def _beir(tmp_path: Path, lines: list[str]) -> Path:
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    first = json.loads(lines[0])["_id"]
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "motor"}\n', encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text(f"query-id\tcorpus-id\tscore\nq1\t{first}\t1\n")
    return folder


def test_beir_chunks_on_the_workers(client: Any, tmp_path: Path) -> None:
    """Oracle: ``import_beir`` then ``load_corpus`` and ``chunk_pages`` on one machine: each
    page's chunks are the same (index aside), and the pages come in corpus.jsonl's line order."""
    from raglab.chunking.chunkers import chunk_pages

    pages = list(load_corpus())
    lines = [json.dumps({"_id": p.id, "title": p.title, "text": p.text}) for p in pages]
    folder = _beir(tmp_path, lines)
    import_beir(folder, tmp_path / "out", quiet=True, seed=SEED)
    single = chunk_pages(
        load_corpus(tmp_path / "out" / "pages"),
        method="heading",
        size=chunk_size("heading", None),
        overlap=chunk_overlap("heading", None),
    )
    by_page: dict[str, list[tuple[Any, ...]]] = {}
    for c in single:
        by_page.setdefault(c.page_id, []).append((c.id, c.start, c.end, c.heading_path, c.text))
    # Blocks of 20 kB: the handbook's 58 lines fall into several partitions.
    ours = chunk_beir(client, folder / "corpus.jsonl", ChunkingKey("heading"), block_bytes=20_000)
    assert [c.index for c in ours] == list(range(len(single)))
    assert list(dict.fromkeys(c.page_id for c in ours)) == [p.id for p in pages]
    got: dict[str, list[tuple[Any, ...]]] = {}
    for c in ours:
        got.setdefault(c.page_id, []).append((c.id, c.start, c.end, c.heading_path, c.text))
    assert got == by_page


def test_beir_problems_name_the_lines_the_single_machine_names(client: Any, tmp_path: Path) -> None:
    """Oracle: the problems ``import_beir`` reports for the same file (file, line, field)."""
    lines = [json.dumps({"_id": f"d{i}", "text": f"page {i} " * 400}) for i in range(40)]
    lines[3] = "{not json"
    lines[31] = json.dumps({"_id": "d31"})  # no text
    folder = _beir(tmp_path, lines)
    with pytest.raises(InputError) as single:
        import_beir(folder, tmp_path / "out", quiet=True, seed=SEED)
    with pytest.raises(InputError) as ours:
        chunk_beir(client, folder / "corpus.jsonl", ChunkingKey("heading"), block_bytes=8_000)
    assert [(p.line, p.field) for p in ours.value.problems] == [
        (p.line, p.field) for p in single.value.problems
    ]
    assert [p.line for p in ours.value.problems] == [4, 32]


class OpenedFiles(WorkerPlugin):  # type: ignore[misc]
    """Records on each worker every file opened under ``folder`` while the plugin is on, from
    Python's ``open`` audit event (raised by every open of a file, whoever opens it). An audit
    hook cannot be removed, so teardown only turns it off."""

    def __init__(self, folder: Path) -> None:
        self.folder = str(folder)
        self.opened: list[str] = []
        self.on = False

    def setup(self, worker: Any) -> None:
        self.on = True

        def hook(event: str, args: tuple[Any, ...]) -> None:
            if self.on and event == "open" and isinstance(args[0], (str, os.PathLike)):
                path = os.fspath(args[0])
                if isinstance(path, str) and path.startswith(self.folder):
                    self.opened.append(path)

        sys.addaudithook(hook)

    def teardown(self, worker: Any) -> None:
        self.on = False


def _opened(dask_worker: Any) -> list[str]:
    plugin: OpenedFiles = dask_worker.plugins["opened-files"]
    return list(plugin.opened)


def test_a_run_reads_each_page_file_once_on_the_workers(
    client: Any,
    handbook: Lab,
    capsys: pytest.CaptureFixture[str],
    single_machine: SingleMachine,
) -> None:
    """Oracle: the single machine's ``run --json`` (its bytes), and the workers' own record of
    the files they open. ``run`` on the cluster locates the answer passages, cuts the LSA windows
    and chunks and counts the pages: the workers read the pages once for all three, so each of
    the handbook's page files is opened once, on one worker, and the output is unchanged."""
    argv = ["run", "--retriever", "bm25", "--json"]
    run = single_machine(*argv)
    assert run.status == 0
    single = run.out
    files = [str(Path(p.source).absolute()) for p in handbook.corpus]
    folder = Path(files[0]).parent
    client.register_plugin(OpenedFiles(folder), name="opened-files")
    try:
        assert main([*argv, "--scheduler", client.scheduler.address]) == 0
        opened = client.run(_opened)
    finally:
        client.unregister_worker_plugin("opened-files")
    assert capsys.readouterr().out == single
    assert Counter(p for paths in opened.values() for p in paths) == Counter(files)


def test_page_texts_come_from_the_partitions_holding_them(client: Any, handbook: Lab) -> None:
    """Oracle: the lab's own pages. A page's text fetched from the partition holding it is the
    lab's, whichever partition that is (the last, the first, one between)."""
    files = [Path(page.source).absolute() for page in handbook.corpus]
    read = read_partitions(client, files)
    fetch = text_fetcher(client, files, lambda: read)
    rows = [len(files) - 1, 0, len(files) // 2]
    pages = [handbook.corpus.pages[i] for i in rows]
    got = fetch(rows, [p.id for p in pages])
    assert got == [p.text for p in pages]


def test_same_pages_compares_each_partitions_count_and_digest() -> None:
    """Oracle: BLAKE2b of the ids by hand (each id's UTF-8 bytes and a NUL, 16-byte digest).
    The partitions hold the pages exactly when their counts cut ``ids`` into runs of those
    digests; another order, a page missing or one more are told."""
    by_hand = hashlib.blake2b(b"a\0b\0", digest_size=16).digest()
    assert page_digest(["a", "b"]) == by_hand
    parts = [(2, page_digest(["a", "b"])), (1, page_digest(["c"]))]
    assert same_pages(["a", "b", "c"], parts)
    assert same_pages(["a", "b", "c"], [(1, page_digest(["a"])), (2, page_digest(["b", "c"]))])
    assert not same_pages(["b", "a", "c"], parts)
    assert not same_pages(["a", "b"], parts)
    assert not same_pages(["a", "b", "c", "d"], parts)
    # Ids whose joined text is the same are still told apart (each ends with a NUL).
    assert not same_pages(["ab", "c"], [(2, page_digest(["a", "bc"]))])


def test_the_workers_reading_other_pages_is_refused(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: the folder as this machine read it, then one page's id changed on disk before
    the workers read it (what a remote cluster seeing other files at the same paths does):
    indexing and cutting the LSA windows on the workers are refused, not computed over other
    pages. Unchanged, the same calls succeed."""
    for name in "abcd":
        (tmp_path / f"{name}.md").write_text(f"---\nid: {name}\n---\n# {name}\n\nSome words.\n")
    lab = Lab(load_corpus(tmp_path), no_questions())
    assert index_lab(client, lab, partitions=2).n_docs == 4
    windows = partial(
        cut_windows,
        client,
        page_files(lab.corpus),
        lab.corpus.ids,
        lab.indexes.lsa_ranges,
        analyzer=lab.indexes.analyzer,
        stem=lab.indexes.stem,
    )
    assert windows().n > 0
    (tmp_path / "c.md").write_text("---\nid: elsewhere\n---\n# c\n\nSome words.\n")
    fresh = Lab(lab.corpus, no_questions())
    with pytest.raises(ValueError, match="read other pages than this machine did"):
        index_lab(client, fresh, partitions=2)
    with pytest.raises(ValueError, match="read other pages than this machine did"):
        windows()


def _cut_by_running_total(sizes: list[int], n_partitions: int) -> list[list[int]]:
    """The rule by hand, file by file: a new group once the bytes before a file reach the next
    multiple of total / n (the loop ``file_partitions`` ran before its cuts were searched)."""
    total = sum(sizes)
    n = max(1, min(n_partitions, len(sizes)))
    groups: list[list[int]] = [[]]
    running = 0
    for k, size in enumerate(sizes):
        if groups[-1] and running >= total * len(groups) / n and len(groups) < n:
            groups.append([])
        groups[-1].append(k)
        running += size
    return groups if sizes else []


def test_partition_bounds_cut_where_the_running_total_crosses_each_share(tmp_path: Path) -> None:
    """Oracle: the running-total rule file by file (:func:`_cut_by_running_total`), on files
    of seeded random sizes (some empty, counted as one byte, one far larger than the rest) and
    on evenly sized ones, for 1 to 9 partitions and more partitions than files."""
    rng = np.random.default_rng(SEED)
    for trial in range(6):
        folder = tmp_path / f"t{trial}"
        folder.mkdir()
        n_files = int(rng.integers(1, 40))
        sizes = rng.integers(0, 500, size=n_files).tolist() if trial % 2 else [100] * n_files
        if trial == 3:
            sizes[n_files // 2] = 50_000
        files = []
        for k, size in enumerate(sizes):
            path = folder / f"{k:03d}.md"
            path.write_bytes(b"x" * size)
            files.append(path)
        weights = [max(1, size) for size in sizes]
        for n in [*range(1, 10), n_files + 3]:
            want = _cut_by_running_total(weights, n)
            bounds = partition_bounds(files, n)
            assert bounds == [g[0] for g in want] + [n_files], (trial, n)
            assert file_partitions(files, n) == [[str(files[k]) for k in g] for g in want]
    assert partition_bounds([], 4) == [0] and file_partitions([], 4) == []
