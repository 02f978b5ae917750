"""Labelling helpers: the split chosen by the id, records made from a page range, checked saves."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from raglab.corpus.labelling import (
    assign_split,
    counts,
    make_record,
    next_id,
    read_records,
    save_records,
)
from raglab.corpus.pages import Corpus, load_corpus
from raglab.corpus.questions import load_questions
from raglab.errors import InputError
from tests.labelling_corpus import PAGES, SHARED, write_corpus


@pytest.fixture
def corpus(tmp_path: Path) -> Corpus:
    return load_corpus(write_corpus(tmp_path / "pages"))


def test_the_split_follows_sha256_of_the_id_and_is_about_60_40() -> None:
    # Oracle: hashlib's sha256, first 8 bytes big-endian, mod 100 < 60 is train (the docstring).
    for qid in ("q1", "q2", "returns-7", "é"):
        n = int.from_bytes(hashlib.sha256(qid.encode()).digest()[:8], "big") % 100
        assert assign_split(qid) == ("train" if n < 60 else "test")
    share = sum(assign_split(f"q{i}") == "train" for i in range(1000)) / 1000
    assert 0.55 < share < 0.65


def test_next_id_skips_ids_in_use() -> None:
    assert next_id([]) == "q1"
    assert next_id([{"id": "q2"}]) == "q3"
    assert next_id([{"id": "q2"}, {"id": "q3"}]) == "q4"


def test_a_record_of_the_second_occurrence_names_its_page_and_start(corpus: Corpus) -> None:
    text = PAGES["alpha"]
    second = text.index(SHARED, text.index(SHARED) + 1)
    # The selection's surrounding whitespace is dropped and the start moved past it.
    record = make_record(
        corpus,
        question_id="q1",
        question="How is a unit packed?",
        kind="keyword",
        page="alpha",
        start=second - 2,
        end=second + len(SHARED) + 1,
    )
    assert record == {
        "id": "q1",
        "split": assign_split("q1"),
        "kind": "keyword",
        "question": "How is a unit packed?",
        "answer": SHARED,
        "page": "alpha",
        "start": second,
    }


def test_a_saved_file_loads_with_the_one_occurrence_chosen(corpus: Corpus, tmp_path: Path) -> None:
    path = tmp_path / "questions.jsonl"
    record = make_record(
        corpus,
        question_id="q1",
        question="How?",
        kind="keyword",
        split="test",
        page="beta",
        start=PAGES["beta"].index(SHARED),
        end=PAGES["beta"].index(SHARED) + len(SHARED),
    )
    none = make_record(
        corpus, question_id="q2", question="Pizza?", kind="out-of-corpus", split="train"
    )
    save_records(path, [record, none], corpus)
    loaded = load_questions(path, corpus=corpus)
    assert [q.id for q in loaded] == ["q1", "q2"]
    assert [(s.page_id, s.start) for s in loaded.by_id("q1").spans] == [
        ("beta", PAGES["beta"].index(SHARED))
    ]
    assert not loaded.warnings or all("occurs" not in p.message for p in loaded.warnings)
    assert loaded.by_id("q2").answer is None
    assert counts(read_records(path, corpus)) == {
        "train": {"out-of-corpus": 1},
        "test": {"keyword": 1},
    }


def test_a_refused_save_leaves_the_file_untouched(corpus: Corpus, tmp_path: Path) -> None:
    path = tmp_path / "questions.jsonl"
    good = make_record(corpus, question_id="q1", question="Pizza?", kind="out-of-corpus")
    save_records(path, [good], corpus)
    before = path.read_bytes()
    with pytest.raises(InputError, match="duplicate id"):
        save_records(path, [good, good], corpus)
    wrong = {**good, "id": "q2", "answer": "not on any page", "page": "alpha", "start": 0}
    with pytest.raises(InputError, match="answer passage not found"):
        save_records(path, [good, wrong], corpus)
    assert path.read_bytes() == before


def test_a_missing_file_reads_as_no_questions_and_a_bad_one_is_refused(
    corpus: Corpus, tmp_path: Path
) -> None:
    assert read_records(tmp_path / "none.jsonl", corpus) == []
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "q1"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="missing field"):
        read_records(bad, corpus)


_WRITER = """
import sys
from raglab.corpus.labelling import make_record, save_records
from raglab.corpus.pages import load_corpus
corpus = load_corpus(sys.argv[1])
records = []
n = 0
while True:
    n += 1
    # Long questions, so a write takes long enough to be caught half-way.
    records.append(make_record(corpus, question_id=f"q{n}", question="why " * 2000,
                               kind="out-of-corpus"))
    save_records(sys.argv[2], records, corpus)
    print(n, flush=True)
"""


def test_kill_9_during_saves_never_leaves_a_broken_file(corpus: Corpus, tmp_path: Path) -> None:
    """A process saving again and again is killed with SIGKILL at several moments; each time the
    file is a whole earlier version: every line valid, and as many as the saves it reported or
    one more (the save in progress completed its rename)."""
    path = tmp_path / "questions.jsonl"
    sizes: set[int] = set()
    for delay in (0.0, 0.05, 0.13, 0.29, 0.51):
        process = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(corpus.root), str(path)],
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        assert process.stdout is not None
        first = process.stdout.readline()  # the first save is done: saving has begun
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        out, _ = process.communicate()
        assert process.returncode == -signal.SIGKILL
        reported = len((first + out).split())
        loaded = load_questions(path, corpus=corpus)
        assert reported <= len(loaded) <= reported + 1
        assert [q.id for q in loaded] == [f"q{i}" for i in range(1, len(loaded) + 1)]
        sizes.add(len(loaded))
        path.unlink()
    assert len(sizes) > 1  # killed at different moments, not always at the same save
