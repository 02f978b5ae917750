"""The reader's IDF document frequencies counted on the workers: the single machine's (N, df),
and a clustered ``raglab run --reader-scoring idf`` that reads no more pages on the client than
a coverage run (it read every page, to tokenise every chunk, before).

Oracles: :func:`raglab.pipeline.reading.reader_df` on a fresh lab on one machine (every chunk
tokenised and counted there), on the handbook under two chunkers; the same command without a
cluster option (its bytes); and the coverage run's own page fetches on a generated folder whose
questions' terms lie on 4 of its 12 pages only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from distributed import get_task_stream
from raglab.cli.main import main
from raglab.distributed.chunking import submit_files
from raglab.distributed.cluster import shards
from raglab.distributed.reading import (
    QuestionTermFrequencies,
    prime_reader_df,
    reader_frequencies,
)
from raglab.pipeline.lab import Lab
from raglab.pipeline.reading import READER_DF, reader_df, reader_tokens
from raglab.reading.reader import idf_weights
from raglab.run_settings import ChunkingKey
from tests.distributed.cluster_fixtures import SingleMachine, recorded_labs, write_folder

PAGES = 12
SECTIONS = 6
ASKED = 4  # the pages a question is asked about


@pytest.mark.parametrize("key", [ChunkingKey("heading"), ChunkingKey("fixed", 50, 10)])
def test_reader_df_counted_on_the_workers_is_the_single_machines(
    client: Any, handbook: Lab, key: ChunkingKey
) -> None:
    """Oracle: ``reader_df`` of a fresh one-machine lab (N, and every term's n_t: exact dict
    equality), against the table reduced on the workers from 5 partitions in a tree of two
    tables a task (three levels); the lab primed from the cluster holds N and the n_t of its
    questions' terms, and weighs every question's terms as the single machine does."""
    single = Lab(handbook.corpus, handbook.questions)
    n_want, df_want = reader_df(single, single.indexes.chunk_set(key))
    files = [Path(page.source).absolute() for page in handbook.corpus]
    parts = submit_files(client, files, key, partitions=5)
    table = client.gather(reader_frequencies(client, parts, arity=2))
    assert (table.n_docs, dict(table.df)) == (n_want, df_want)

    primed = Lab(handbook.corpus, handbook.questions)
    assert prime_reader_df(client, primed, key, parts) == n_want
    n_docs, df = reader_df(primed, primed.indexes.chunk_set(key))
    assert isinstance(df, QuestionTermFrequencies)
    terms = {t for q in handbook.questions for t in reader_tokens(q.question)}
    assert n_docs == n_want and dict(df) == {t: df_want[t] for t in terms if t in df_want}
    assert 0 < len(df) < len(df_want)  # the questions' terms only travelled
    for q in handbook.questions:
        asked = set(reader_tokens(q.question))
        assert idf_weights(asked, df, n_docs) == idf_weights(asked, df_want, n_want)
    outside = next(t for t in df_want if t not in terms)
    with pytest.raises(ValueError, match="was not counted"):
        idf_weights([outside], df, n_docs)


def test_a_clustered_idf_run_is_byte_identical(
    capsys: pytest.CaptureFixture[str], client: Any, single_machine: SingleMachine
) -> None:
    """Oracle: ``raglab run --reader-scoring idf --json`` on one machine (the handbook, the
    default first stage, reranker and MMR)."""
    argv = ["run", "--reader-scoring", "idf", "--json"]
    single = single_machine(*argv)
    assert single.status == 0 and '"outcomes"' in single.out
    assert main([*argv, "--scheduler", str(client.scheduler.address)]) == 0
    assert capsys.readouterr().out == single.out


def _word(p: int, x: int) -> str:
    """A term of page ``p``'s part ``x`` alone (letters only: no digit splits it)."""
    return "".join(chr(97 + int(d)) for d in f"{p:02d}{x:02d}") + "ton"


def _folder(root: Path) -> list[str]:
    """``PAGES`` pages of ``SECTIONS`` parts, each part holding two terms of its own and words
    every page shares; a question on each of the first ``ASKED`` pages (half train, half test),
    asking two of its own terms, so BM25 ranks that page's chunks alone; the data options."""
    pages, questions = {}, []
    for p in range(PAGES):
        parts = [f"---\nid: p{p}\ntitle: Page {p}\n---\n# Page {p}\n"]
        for x in range(SECTIONS):
            parts.append(
                f"\n## Part {x}\n\nThe {_word(p, x)} holds {_word(p, x + 50)} firmly. "
                "Common filler words follow here.\n"
            )
        pages[f"p{p}"] = "".join(parts)
        if p < ASKED:
            x = p % SECTIONS
            questions.append(
                {
                    "id": f"q{p}",
                    "split": "train" if p % 2 == 0 else "test",
                    "kind": "keyword",
                    "question": f"Which {_word(p, x)} holds {_word(p, x + 50)}?",
                    "answer": f"The {_word(p, x)} holds {_word(p, x + 50)} firmly.",
                }
            )
    return write_folder(root, pages, questions)


def _tasks(stream: Any, name: str) -> int:
    return sum(1 for task in stream.data if str(task["key"]).startswith(f"{name}-"))


def test_a_clustered_idf_run_tokenises_no_chunk_on_the_client(
    capsys: pytest.CaptureFixture[str],
    client: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Oracle: each run on one machine (its bytes), and the coverage run's page fetches on the
    cluster. An IDF run fetches no page text more than the coverage run (the pages of the
    questions' answers and packed chunks, ASKED of the PAGES), where counting its df on the
    client read every page; its df is counted by one task per partition on the workers, and
    the coverage run counts none and primes no df. The IDF run's stage line counts the
    folder's chunks (a lab loaded here) and the shards."""
    data = _folder(tmp_path)
    n_chunks = len(Lab.load(Path(data[1]), Path(data[3])).indexes.chunk_set())
    fetched: dict[str, int] = {}
    counted: dict[str, int] = {}
    labs = recorded_labs(monkeypatch)
    for scoring in ("coverage", "idf"):
        # The table, not --json: the stage lines are printed then.
        argv = ["run", "--retriever", "bm25", "--reader-scoring", scoring, *data]
        assert main(argv) == 0
        single = capsys.readouterr().out
        assert "Accuracy" in single
        with get_task_stream(client) as stream:
            assert main([*argv, "--scheduler", str(client.scheduler.address)]) == 0
        printed = capsys.readouterr()
        assert printed.out == single
        line = f"document frequencies of {n_chunks} chunks in {shards(client)} shards"
        assert (line in printed.err) == (scoring == "idf"), printed.err
        lab = labs[-1]
        # The pages stay on the workers, gone with the cluster: their texts' source is asked.
        held = lab.corpus.pages.texts
        fetched[scoring] = held.fetched
        counted[scoring] = _tasks(stream, "count_reader_terms")
        assert len(lab.caches.of(READER_DF)) == (scoring == "idf")
    assert 0 < fetched["idf"] <= fetched["coverage"] < PAGES
    assert counted == {"coverage": 0, "idf": counted["idf"]} and counted["idf"] > 0
