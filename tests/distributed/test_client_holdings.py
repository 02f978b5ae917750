"""What the client's lab holds once ``raglab run --retriever bm25`` is done on the cluster: no
object a heading of every page (the pages' sections stay with their texts on the workers), and
no array of one entry a chunk (the chunk list holds each page's count of chunks, and a page's
rows are cut again from its text when it is read; the reranker's candidates' ages are read off
their pages).

Oracle: ``raglab run --retriever bm25 --json`` on one machine (the same bytes), the generated
folder's own counts (pages x sections, one chunk a section) and the pages the client keeps
(:class:`raglab.corpus.pages.PageTexts`): read off the objects the lab reaches, by
``gc.get_referents``, independent of how the lab stores them.
"""

from __future__ import annotations

import gc
import json
import time
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import raglab.cli._cluster as cluster_module
from raglab.cli.main import main
from raglab.corpus.pages import PageTexts, Section
from raglab.distributed.chunk_table import RemoteChunkTable
from raglab.pipeline.lab import Lab
from tests.distributed.cluster_fixtures import moved_since, recorded_labs

PAGES = 13
SECTIONS = 11  # one chunk each under the heading chunker
CHUNKS = PAGES * SECTIONS


def _folder(root: Path) -> list[str]:
    """``PAGES`` pages of ``SECTIONS`` sections (an id, then words of 30 shared ones), and one
    question a page
    whose answer is its section's first sentence (half train, half test); the run's data
    options."""
    pages = root / "pages"
    pages.mkdir()
    lines = []
    for p in range(PAGES):
        parts = [
            f"---\nid: p{p}\ntitle: Page {p}\nupdated: 2025-0{1 + p % 9}-01\n---\n# Page {p}\n"
        ]
        for x in range(SECTIONS):
            words = " ".join(f"v{(p * 7 + x * 3 + j) % 30}" for j in range(8))
            parts.append(f"\n## Part {x}\n\nItem p{p}x{x} {words}. Filler text of part {x}.\n")
        (pages / f"p{p}.md").write_text("".join(parts), encoding="utf-8")
        x = p % SECTIONS
        answer = (
            f"Item p{p}x{x} " + " ".join(f"v{(p * 7 + x * 3 + j) % 30}" for j in range(8)) + "."
        )
        split = "train" if p % 2 == 0 else "test"
        question = f"What about p{p}x{x} v{(p * 7 + x * 3 + 1) % 30} v{(p * 7 + x * 3 + 2) % 30}?"
        row = {"id": f"q{p}", "split": split, "kind": "keyword", "question": question}
        lines.append(json.dumps({**row, "answer": answer}))
    (root / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ["--corpus", str(pages), "--questions", str(root / "questions.jsonl")]


def _reached(lab: Lab, before: set[int]) -> list[object]:
    """Every object the lab reaches through references, classes, modules and functions left out
    (what it holds, not the code it runs), and the objects whose ids are in ``before`` (what
    the process held before the run: the session's cluster, whose in-process scheduler keeps a
    record of earlier tests' tasks, and caches earlier tests filled with the bundled handbook),
    so the count is this run's whatever ran before it in the session."""
    seen: set[int] = set(before)
    out: list[object] = []
    stack: list[object] = [lab]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(
            obj, type | types.ModuleType | types.FunctionType | types.BuiltinFunctionType
        ):
            continue
        seen.add(id(obj))
        out.append(obj)
        stack.extend(gc.get_referents(obj))
    return out


def test_a_clustered_bm25_run_leaves_no_section_and_no_chunk_sized_array_on_the_client(
    capsys: pytest.CaptureFixture[str],
    client: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same bytes as one machine; then, of the objects the client's lab reaches, the
    sections are those of the pages the client keeps (a budget of two pages' characters
    here), where every page held its sections before (one a chunk: 143, and a title section
    each); and no array has an entry a chunk, where the chunk list held three (starts, ends,
    word counts) and the chunks' ages for the reranker's recency feature made a fourth before
    (an array, list, tuple or dict of 143 entries, the number of chunks, which no count of
    questions, pages or sections here gives). The reader's sentence bounds are kept for the
    kept pages only (two arrays a page), where every page a context was packed from kept
    them before.

    And, from the workers' transfer logs, no worker fetched a partition's pages (``read_range``)
    or chunks (``chunk_partition``) from another while the pages were fetched question by
    question."""
    data = _folder(tmp_path)
    argv = ["run", "--retriever", "bm25", "--json", *data]
    assert main(argv) == 0
    single = capsys.readouterr().out
    assert '"outcomes"' in single
    page_chars = len((tmp_path / "pages" / "p0.md").read_text(encoding="utf-8"))
    monkeypatch.setattr(cluster_module, "CLIENT_PAGE_TEXT_BUDGET", 2 * page_chars)
    labs = recorded_labs(monkeypatch)
    gc.collect()
    # Held until the end, so no id among them is reused by an object the run makes.
    earlier = gc.get_objects()
    start = time.time()
    assert main([*argv, "--scheduler", str(client.scheduler.address)]) == 0
    assert capsys.readouterr().out == single
    # The pages fetched question by question (as at 300,000 chunks under the real budget) are
    # read where their partition lies: no worker fetched a partition's pages or chunks.
    read = ("read_range-", "read_partition-", "chunk_partition-")
    assert [k for k in moved_since(client, start) if k.startswith(read)] == []
    (lab,) = labs
    reached = _reached(lab, {id(o) for o in earlier})
    (texts,) = [o for o in reached if isinstance(o, PageTexts)]
    assert 1 <= len(texts._kept) <= 2 < PAGES
    sections = [o for o in reached if isinstance(o, Section)]
    # At most the kept pages' sections (a title section and SECTIONS parts a page).
    assert len(sections) <= 2 * (SECTIONS + 1) < CHUNKS
    assert set(texts._sections) <= set(texts._kept)
    kept = [s for found in texts._sections.values() for s in found]
    assert set(map(id, sections)) == set(map(id, kept))
    # The reader's sentence bounds (starts, ends) of a page: one array of 2 x SECTIONS entries
    # each (the item and filler sentences of every part; heading lines are not quotable), kept
    # with the page's text only, where every page a context was packed from kept them before.
    bounds = [
        o
        for o in reached
        if isinstance(o, np.ndarray) and o.dtype == np.int64 and o.shape == (2 * SECTIONS,)
    ]
    assert len(bounds) <= 2 * len(texts._kept) < 2 * PAGES
    assert {page for page, _ in texts._found} <= set(texts._kept)
    (chunks,) = [cs.chunks for cs in lab.indexes._chunk_sets._data.values()]
    assert len(chunks) == CHUNKS
    # No array of a number a chunk either: the table holds each page's count of chunks, and a
    # page's rows are cut again from its text when it is read (the old code: the chunks'
    # starts, ends and word counts, 24 bytes a chunk).
    assert not [o for o in reached if isinstance(o, np.ndarray) and o.shape[:1] == (CHUNKS,)]
    # Nor a number a page: each page's first row stays on the workers (RemoteChunkTable; the
    # table held them here, (PAGES + 1,), at the last change of this test).
    assert isinstance(chunks, RemoteChunkTable)
    assert not [o for o in reached if isinstance(o, np.ndarray) and o.shape == (PAGES + 1,)]
    assert not [o for o in reached if isinstance(o, list | tuple | dict) and len(o) == CHUNKS]
