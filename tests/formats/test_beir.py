"""Importing BEIR folders, the shared writing helpers, and the progress bar the importers draw."""

from __future__ import annotations

import io
import json
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from raglab.corpus.pages import load_corpus
from raglab.corpus.questions import load_questions
from raglab.errors import InputError
from raglab.formats.beir import import_beir
from raglab.formats.collection import PageRecord, safe_file_stems, seeded_split, write_collection
from raglab.formats.progress import progress
from raglab.settings import SEED

CORPUS: list[dict[str, Any]] = [
    {"_id": "d1", "title": "Lift", "text": "A wing in a slipstream gains lift."},
    {"_id": "d2", "title": "Drag\non two lines", "text": "Drag rises with speed."},
    {"_id": 3, "title": None, "text": "Heat transfer in separated flow."},
    {"_id": "d4", "title": "Empty", "text": ""},
]
QUERIES: list[dict[str, Any]] = [
    {"_id": "q1", "text": "what gives a wing lift?"},
    {"_id": "q2", "text": "how does drag\tgrow?"},
    {"_id": "q3", "text": "heat in separated flow"},
    {"_id": "q4", "text": "a query nobody judged"},
]
# q1: two relevant documents, graded; q2: one relevant and one scored 0 (dropped);
# q3: only a 0 score, so no relevant page; q4: no qrels at all.
QRELS = {
    "test": [("q1", "d1", 2), ("q1", "3", 1), ("q2", "d2", 1), ("q2", "d1", 0), ("q3", "3", 0)]
}


def jsonl(rows: Sequence[Mapping[str, Any] | str]) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


def make_beir(
    root: Path,
    corpus: Sequence[Mapping[str, Any] | str] = CORPUS,
    queries: Sequence[Mapping[str, Any] | str] = QUERIES,
    qrels: Mapping[str, Sequence[tuple[str, str, int | str] | str]] = QRELS,
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text(jsonl(corpus), encoding="utf-8")
    (root / "queries.jsonl").write_text(jsonl(queries), encoding="utf-8")
    (root / "qrels").mkdir(exist_ok=True)
    for name, rows in qrels.items():
        lines = ["query-id\tcorpus-id\tscore"] + [
            r if isinstance(r, str) else "\t".join(map(str, r)) for r in rows
        ]
        (root / "qrels" / f"{name}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def read_questions(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "questions.jsonl").read_text("utf-8").splitlines()]


def test_import_writes_pages_and_graded_questions(tmp_path: Path) -> None:
    """oracle: the fixture's counts worked by hand (see QRELS): 4 pages, 1 empty (d4);
    q1 and q2 kept, q3 (only a 0) and q4 (no qrels) skipped; 3 labels kept, 2 zero rows dropped."""
    out = tmp_path / "out"
    summary = import_beir(make_beir(tmp_path / "beir"), out, split="test", seed=SEED)
    assert (summary.pages, summary.empty_pages, summary.renamed_pages) == (4, 1, 0)
    assert dict(summary.questions) == {"train": 0, "test": 2}
    assert (summary.skipped_questions, summary.labels, summary.dropped_labels) == (2, 3, 2)
    assert (out / "pages" / "d2.md").read_text("utf-8") == (
        "---\nid: d2\ntitle: Drag on two lines\n---\nDrag rises with speed.\n"
    )
    assert (out / "pages" / "3.md").read_text(
        "utf-8"
    ) == "---\nid: 3\n---\nHeat transfer in separated flow.\n"
    assert read_questions(out) == [
        {"id": "q1", "split": "test", "kind": "beir", "question": "what gives a wing lift?",
         "pages": {"d1": 2, "3": 1}},
        {"id": "q2", "split": "test", "kind": "beir", "question": "how does drag grow?",
         "pages": {"d2": 1}},
    ]  # fmt: skip
    corpus = load_corpus(out / "pages")
    questions = load_questions(out / "questions.jsonl", corpus=corpus)
    assert [p.id for p in corpus] == ["3", "d1", "d2", "d4"]
    assert (
        corpus.page("d1").title == "Lift"
        and corpus.page("d1").text == "A wing in a slipstream gains lift.\n"
    )
    assert questions.by_id("q1").pages == {"d1": 2, "3": 1} and not questions.warnings


def test_split_follows_qrels_file_names_with_dev_as_train(tmp_path: Path) -> None:
    qrels = {"train": [("q1", "d1", 1)], "dev": [("q2", "d2", 1)], "test": [("q3", "3", 1)]}
    out = tmp_path / "out"
    summary = import_beir(make_beir(tmp_path / "beir", qrels=qrels), out, seed=SEED)
    assert {q["id"]: q["split"] for q in read_questions(out)} == {
        "q1": "train",
        "q2": "train",
        "q3": "test",
    }
    assert dict(summary.questions) == {"train": 2, "test": 1}


def many_queries(n: int) -> tuple[list[dict[str, Any]], dict[str, list[tuple[str, str, int]]]]:
    queries = [{"_id": f"q{i:02d}", "text": f"question {i}"} for i in range(n)]
    return queries, {"test": [(q["_id"], "d1", 1) for q in queries]}


def test_single_qrels_file_gets_a_seeded_random_split(tmp_path: Path) -> None:
    """oracle: floor(0.4 * 10 + 0.5) = 4 test questions; the same seed gives the same split
    whatever the order of queries.jsonl; the split equals seeded_split on the ids."""
    queries, qrels = many_queries(10)
    first = tmp_path / "a"
    import_beir(make_beir(tmp_path / "beir", queries=queries, qrels=qrels), first, seed=7)
    splits = {q["id"]: q["split"] for q in read_questions(first)}
    assert sum(s == "test" for s in splits.values()) == 4
    assert splits == seeded_split(list(splits), test_fraction=0.4, seed=7)
    shuffled = [queries[i] for i in np.random.default_rng(1).permutation(10)]
    second = tmp_path / "b"
    import_beir(make_beir(tmp_path / "beir2", queries=shuffled, qrels=qrels), second, seed=7)
    assert {q["id"]: q["split"] for q in read_questions(second)} == splits


def test_seeded_split_counts_and_seeds() -> None:
    """oracle: floor(f * n + 0.5) by hand: n=5, f=0.4 -> 2; n=5, f=0.5 -> 3 (2.5 rounds up);
    f=0 -> none; f=1 -> all; and the test ids are the sorted ids at numpy's permutation."""
    ids = ["e", "c", "a", "d", "b"]
    assert sum(v == "test" for v in seeded_split(ids, test_fraction=0.4, seed=0).values()) == 2
    assert sum(v == "test" for v in seeded_split(ids, test_fraction=0.5, seed=0).values()) == 3
    assert set(seeded_split(ids, test_fraction=0.0, seed=0).values()) == {"train"}
    assert set(seeded_split(ids, test_fraction=1.0, seed=0).values()) == {"test"}
    order = np.random.default_rng(3).permutation(5)
    expected = {sorted(ids)[i] for i in order[:2]}
    split = seeded_split(ids, test_fraction=0.4, seed=3)
    assert {k for k, v in split.items() if v == "test"} == expected
    many = [f"q{i}" for i in range(40)]
    assert (
        len(
            {tuple(sorted(seeded_split(many, test_fraction=0.4, seed=s).items())) for s in range(5)}
        )
        > 1
    )
    with pytest.raises(ValueError, match="test_fraction"):
        seeded_split(ids, test_fraction=1.5, seed=0)


def test_unsafe_ids_get_safe_file_names_and_keep_their_ids(tmp_path: Path) -> None:
    corpus = [
        {"_id": "a/b", "title": "Slash", "text": "one"},
        {"_id": "CON", "title": "Reserved", "text": "two"},
        {"_id": "Case", "title": "Upper", "text": "three"},
        {"_id": "case", "title": "Lower", "text": "four"},
        {"_id": "x:y", "title": "Colon", "text": "five"},
    ]
    queries = [{"_id": "q", "text": "which?"}]
    qrels = {"test": [("q", "a/b", 1), ("q", "x:y", 1)]}
    out = tmp_path / "out"
    summary = import_beir(
        make_beir(tmp_path / "beir", corpus, queries, qrels), out, split="test", seed=SEED
    )
    names = sorted(os.listdir(out / "pages"))
    assert "Case.md" in names and "case.md" not in names and len(names) == 5
    assert summary.renamed_pages == 4
    corpus_read = load_corpus(out / "pages")
    assert sorted(p.id for p in corpus_read) == sorted(d["_id"] for d in corpus)
    assert load_questions(out / "questions.jsonl", corpus=corpus_read).by_id("q").pages == {
        "a/b": 1,
        "x:y": 1,
    }


def test_an_id_with_whitespace_is_refused_naming_its_line(tmp_path: Path) -> None:
    corpus = [{"_id": "d1", "title": "", "text": "one"}, {"_id": "x y", "title": "", "text": "two"}]
    folder = make_beir(
        tmp_path / "beir", corpus, [{"_id": "q", "text": "?"}], {"test": [("q", "d1", 1)]}
    )
    with pytest.raises(InputError) as exc:
        import_beir(folder, tmp_path / "out", split="test", seed=SEED)
    (problem,) = exc.value.problems
    assert (problem.line, problem.field) == (2, "_id")
    assert (
        "id 'x y' contains whitespace, which TREC run and qrels files cannot hold"
        in problem.message
    )
    assert not (tmp_path / "out").exists()


def test_safe_file_stems() -> None:
    """oracle: the naming rule applied by hand; the hash part is the id's SHA-1."""
    stems = safe_file_stems(["doc-1", "a b", "a b ", "nul", "Doc-1", "ok."])
    assert stems[0] == "doc-1"
    assert stems[1].startswith("a-b-") and len(stems[1]) == len("a-b-") + 12
    assert stems[2] != stems[1] and stems[2].startswith("a-b-")
    assert stems[3].startswith("nul-") and stems[4].startswith("Doc-1-")
    assert stems[5].startswith("ok-")
    assert len({s.lower() for s in stems}) == 6


def test_line_separators_inside_text_survive(tmp_path: Path) -> None:
    """U+2028 and U+0085 in a query must not split the questions file for a reader using
    str.splitlines (as raglab.corpus.questions does)."""
    corpus = [{"_id": "d1", "title": "T", "text": "body\u2028with separator"}]
    queries = [{"_id": "q1", "text": "odd\u2028query\x85text"}]
    out = tmp_path / "out"
    import_beir(
        make_beir(tmp_path / "beir", corpus, queries, {"test": [("q1", "d1", 1)]}),
        out,
        split="train",
        seed=SEED,
    )
    corpus_read = load_corpus(out / "pages")
    (question,) = load_questions(out / "questions.jsonl", corpus=corpus_read)
    assert question.question == "odd query text"  # whitespace runs become one space
    assert corpus_read.page("d1").text == "body\u2028with separator\n"


@pytest.mark.parametrize(
    ("change", "file", "line", "field", "message"),
    [
        ({"corpus": [*CORPUS[:1], "{broken"]}, "corpus.jsonl", 2, None, "not valid JSON"),
        ({"corpus": [*CORPUS[:1], "[1]"]}, "corpus.jsonl", 2, None, "JSON object"),
        ({"corpus": [{"title": "t", "text": "x"}]}, "corpus.jsonl", 1, "_id", "missing field"),
        ({"corpus": [{"_id": [1], "text": "x"}]}, "corpus.jsonl", 1, "_id", "must be a string"),
        ({"corpus": [{"_id": "'d'", "text": "x"}]}, "corpus.jsonl", 1, "_id", "quote"),
        ({"corpus": [{"_id": " d", "text": "x"}]}, "corpus.jsonl", 1, "_id", "whitespace"),
        ({"corpus": [*CORPUS, CORPUS[0]]}, "corpus.jsonl", 5, "_id", "duplicate id, first on line 1"),
        ({"corpus": [{"_id": "d1"}]}, "corpus.jsonl", 1, "text", "missing field"),
        ({"corpus": [{"_id": "d1", "text": "x", "title": 5}]}, "corpus.jsonl", 1, "title", "string"),
        ({"queries": [{"_id": "q1", "text": "  "}]}, "queries.jsonl", 1, "text", "empty"),
        ({"queries": [{"_id": "q1", "text": 7}]}, "queries.jsonl", 1, "text", "string"),
        ({"qrels": {"test": [("q1", "d1", "high")]}}, "test.tsv", 2, "score", "not an integer"),
        ({"qrels": {"test": [("q1", "d1", "1.0")]}}, "test.tsv", 2, "score", "not an integer"),
        ({"qrels": {"test": ["q1\td1"]}}, "test.tsv", 2, "columns", "expected 3 columns"),
        ({"qrels": {"test": [("q1", "d1", 1), ("qX", "d1", 1)]}}, "test.tsv", 3, "query-id", "no query 'qX'"),
        ({"qrels": {"test": [("q1", "dX", 1)]}}, "test.tsv", 2, "corpus-id", "no document 'dX'"),
        ({"qrels": {"test": [("q1", "d1", 1), ("q1", "d1", 2)]}}, "test.tsv", 3, "corpus-id", "(first at test.tsv:2)"),
        ({"qrels": {"train": [("q1", "d1", 1)], "test": [("q1", "d2", 1)]}}, "train.tsv", 2, "query-id", "also labelled in test.tsv"),
        ({"qrels": {"train": [("q1", "d1", 1)], "extra": [("q2", "d2", 1)]}}, "extra.tsv", None, None, "cannot tell the split"),
    ],
)  # fmt: skip
def test_each_bad_input_is_named_and_nothing_is_written(
    tmp_path: Path,
    change: dict[str, Any],
    file: str,
    line: int | None,
    field: str | None,
    message: str,
) -> None:
    folder = make_beir(tmp_path / "beir", **change)
    out = tmp_path / "out"
    with pytest.raises(InputError) as exc:
        import_beir(folder, out, seed=SEED)
    matching = [p for p in exc.value.problems if message in p.message]
    assert matching, str(exc.value)
    problem = matching[0]
    assert Path(problem.file).name == file and (problem.line, problem.field) == (line, field)
    assert not out.exists()


def test_every_problem_is_reported_in_one_pass(tmp_path: Path) -> None:
    folder = make_beir(
        tmp_path / "beir",
        corpus=[*CORPUS, "{bad"],
        queries=[*QUERIES, {"_id": "q5"}],
        qrels={"test": [("q1", "d1", "x")]},
    )
    with pytest.raises(InputError) as exc:
        import_beir(folder, tmp_path / "out", seed=SEED)
    where = {(Path(p.file).name, p.line, p.field) for p in exc.value.problems}
    assert where == {
        ("corpus.jsonl", 5, None),
        ("queries.jsonl", 5, "text"),
        ("test.tsv", 2, "score"),
    }


def test_missing_files_are_named(tmp_path: Path) -> None:
    (tmp_path / "beir").mkdir()
    with pytest.raises(InputError) as exc:
        import_beir(tmp_path / "beir", tmp_path / "out", seed=SEED)
    named = sorted(Path(p.file).name for p in exc.value.problems)
    assert named == ["corpus.jsonl", "qrels", "queries.jsonl"]
    with pytest.raises(InputError, match="does not exist"):
        import_beir(tmp_path / "nowhere", tmp_path / "out", seed=SEED)


def test_one_qrels_file_can_be_chosen(tmp_path: Path) -> None:
    qrels = {"train": [("q1", "d1", 1)], "test": [("q2", "d2", 1), ("q3", "3", 1)]}
    out = tmp_path / "out"
    summary = import_beir(
        make_beir(tmp_path / "beir", qrels=qrels),
        out,
        qrels_file="test.tsv",
        test_fraction=0.0,
        seed=SEED,
    )
    assert [q["id"] for q in read_questions(out)] == ["q2", "q3"]
    assert dict(summary.questions) == {"train": 2, "test": 0}


def test_non_empty_output_is_refused_unless_overwrite(tmp_path: Path) -> None:
    folder = make_beir(tmp_path / "beir")
    out = tmp_path / "out"
    (out / "pages").mkdir(parents=True)
    (out / "pages" / "stale.md").write_text("# Stale\n", encoding="utf-8")
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(InputError, match="not empty"):
        import_beir(folder, out, split="test", seed=SEED)
    assert os.listdir(out / "pages") == ["stale.md"]
    import_beir(folder, out, split="test", overwrite=True, seed=SEED)
    assert sorted(os.listdir(out / "pages")) == ["3.md", "d1.md", "d2.md", "d4.md"]
    assert sorted(os.listdir(out)) == ["notes.txt", "pages", "questions.jsonl"]
    assert (out / "notes.txt").read_text("utf-8") == "mine"


def test_failed_write_restores_the_output_folder(tmp_path: Path) -> None:
    """A lone surrogate cannot be written as UTF-8: the write fails after some pages."""
    out = tmp_path / "out"
    good = [PageRecord("a", "A", "alpha", "a")]
    write_collection(out, good, [{"id": "q"}])
    before = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    bad = [PageRecord("b", "B", "beta", "b"), PageRecord("c", "C", "bad \ud800", "c")]
    with pytest.raises(UnicodeEncodeError):
        write_collection(out, bad, [{"id": "r"}], overwrite=True)
    after = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert after == before and sorted(os.listdir(out)) == ["pages", "questions.jsonl"]
    with pytest.raises(UnicodeEncodeError):
        write_collection(tmp_path / "new", bad, [])
    assert not (tmp_path / "new").exists()


def test_bad_arguments_are_value_errors(tmp_path: Path) -> None:
    folder = make_beir(tmp_path / "beir")
    with pytest.raises(ValueError, match="split"):
        import_beir(folder, tmp_path / "out", split="dev", seed=SEED)
    with pytest.raises(ValueError, match="test_fraction"):
        import_beir(folder, tmp_path / "out", test_fraction=-0.1, seed=SEED)


# ---------------------------------------------------------------------------------------------
# The progress bar.


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_silent_off_a_terminal_and_when_quiet() -> None:
    plain = io.StringIO()
    assert list(progress(range(3), description="Counting", file=plain)) == [0, 1, 2]
    terminal = FakeTerminal()
    assert list(progress(iter("ab"), description="Counting", quiet=True, file=terminal)) == [
        "a",
        "b",
    ]
    assert plain.getvalue() == "" and terminal.getvalue() == ""


def test_progress_draws_on_a_terminal() -> None:
    terminal = FakeTerminal()
    assert list(progress(range(4), description="Counting pages", file=terminal)) == [0, 1, 2, 3]
    assert "Counting pages" in terminal.getvalue()


def test_progress_stops_its_refresh_thread_when_the_loop_ends_early() -> None:
    before = set(threading.enumerate())
    items = progress(range(100), description="Early", file=FakeTerminal())
    assert [next(items) for _ in range(3)] == [0, 1, 2]
    (refresher,) = set(threading.enumerate()) - before  # rich's refresh thread
    items.close()
    refresher.join(timeout=5)  # told to stop on close: it ends (else the join times out)
    assert not refresher.is_alive()
