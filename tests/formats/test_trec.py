"""TREC run and qrels files: exact text, round trips, trec_eval's reading, and every bad line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from raglab.base.files import atomic_write_text, read_text_lines
from raglab.errors import InputError, Problem
from raglab.formats.trec import (
    MAX_REPORTED_PROBLEMS,
    format_run,
    read_qrels,
    read_run,
    write_qrels,
    write_run,
)

RANKINGS: dict[str, list[tuple[str, float]]] = {
    "q1": [("d3", 2.5), ("d1", 1.0), ("d2", 1.0)],  # d1 and d2 tie: written order must survive
    "q2": [("d2", 0.125)],
}


def problems_of(exc: pytest.ExceptionInfo[InputError]) -> list[Problem]:
    return list(exc.value.problems)


def write(tmp_path: Path, text: str, name: str = "run.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------
# Writing.


def test_run_file_text_is_exact(tmp_path: Path) -> None:
    """oracle: the TREC run format written out by hand, rank 1-based in the order given."""
    path = tmp_path / "run.txt"
    write_run(path, RANKINGS, tag="bm25")
    assert path.read_text(encoding="utf-8") == (
        "q1 Q0 d3 1 2.5 bm25\nq1 Q0 d1 2 1.0 bm25\nq1 Q0 d2 3 1.0 bm25\nq2 Q0 d2 1 0.125 bm25\n"
    )


def test_qrels_file_text_is_exact(tmp_path: Path) -> None:
    """oracle: the TREC qrels format written out by hand."""
    path = tmp_path / "qrels.txt"
    write_qrels(path, {"q1": {"d1": 2, "d4": 0}, "q2": {"d2": -1}})
    assert path.read_text(encoding="utf-8") == "q1 0 d1 2\nq1 0 d4 0\nq2 0 d2 -1\n"


def test_round_trip_keeps_order_and_exact_scores(tmp_path: Path) -> None:
    """oracle: the input itself; tied scores come back in the written (rank) order."""
    path = tmp_path / "run.txt"
    rankings = {"q": [("a", 0.1 + 0.2), ("b", 1e-300), ("c", -3.5), ("d", -3.5)]}
    write_run(path, rankings)
    assert read_run(path) == rankings


def test_trec_eval_reads_what_we_write(tmp_path: Path) -> None:
    """oracle: pytrec_eval's own run and qrels parsers, and its P@1 on the result."""
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    write_run(run_path, RANKINGS)
    write_qrels(qrels_path, {"q1": {"d3": 1}, "q2": {"d1": 1}})
    with run_path.open(encoding="utf-8") as f:
        run = pytrec_eval.parse_run(f)
    with qrels_path.open(encoding="utf-8") as f:
        qrels = pytrec_eval.parse_qrel(f)
    assert run == {q: dict(r) for q, r in RANKINGS.items()}
    assert qrels == {"q1": {"d3": 1}, "q2": {"d1": 1}}
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"P"}).evaluate(run)
    # q1's best document d3 is relevant, q2's only document d2 is not.
    assert (scores["q1"]["P_5"] * 5, scores["q2"]["P_5"] * 5) == (1.0, 0.0)


_ids = st.text(alphabet="abcXYZ019-_.:", min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        _ids,
        st.dictionaries(
            _ids, st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1
        ),
        min_size=1,
        max_size=4,
    )
)
def test_round_trip_property(
    tmp_path_factory: pytest.TempPathFactory, raw: dict[str, dict[str, float]]
) -> None:
    """oracle: the input itself, for any ids, any finite scores (ties included)."""
    rankings = {q: sorted(docs.items(), key=lambda kv: -kv[1]) for q, docs in raw.items()}
    path = tmp_path_factory.mktemp("run") / "run.txt"
    write_run(path, rankings)
    assert read_run(path) == rankings


@pytest.mark.parametrize(
    ("rankings", "message"),
    [
        ({"q": [("a", 1.0), ("b", 2.0)]}, "must not increase"),
        ({"q": [("a", float("nan"))]}, "not finite"),
        ({"q": [("a", 1.0), ("a", 0.5)]}, "ranked twice"),
        ({"q 1": [("a", 1.0)]}, "question id"),
        ({"q": [("a\tb", 1.0)]}, "document id"),
    ],
)
def test_write_run_refuses_bad_rankings(
    tmp_path: Path, rankings: dict[str, list[tuple[str, float]]], message: str
) -> None:
    path = write(tmp_path, "old\n")
    with pytest.raises(ValueError, match=message):
        write_run(path, rankings)
    assert path.read_text(encoding="utf-8") == "old\n"
    with pytest.raises(ValueError, match="tag"):
        format_run({"q": [("a", 1.0)]}, tag="two words")


# ---------------------------------------------------------------------------------------------
# Atomic writing and reading lines.


def test_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    """A lone surrogate cannot be encoded as UTF-8: the write fails halfway through."""
    path = write(tmp_path, "keep me\n", "out.txt")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(path, "new text \ud800 more")
    assert path.read_text(encoding="utf-8") == "keep me\n"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_overwrite_false_never_replaces(tmp_path: Path) -> None:
    path = write(tmp_path, "keep me\n", "out.txt")
    with pytest.raises(FileExistsError):
        atomic_write_text(path, "new", overwrite=False)
    assert path.read_text(encoding="utf-8") == "keep me\n"
    assert os.listdir(tmp_path) == ["out.txt"]
    fresh = tmp_path / "fresh.txt"
    atomic_write_text(fresh, "a\r\nb", overwrite=False)
    assert fresh.read_bytes() == b"a\r\nb"  # line endings untouched


def test_read_text_lines(tmp_path: Path) -> None:
    """Splits at \\n only (U+2028 stays inside its line), drops \\r and a byte-order mark."""
    path = tmp_path / "f.txt"
    path.write_bytes("\ufeffa\u2028b\r\nc\n".encode())
    assert read_text_lines(path) == ["a\u2028b", "c"]
    path.write_bytes(b"ok\ncaf\xe9\n")
    with pytest.raises(InputError) as exc:
        read_text_lines(path)
    (problem,) = problems_of(exc)
    assert problem.line == 2 and "not UTF-8" in problem.message
    with pytest.raises(InputError, match="cannot be read"):
        read_text_lines(tmp_path / "missing.txt")


# ---------------------------------------------------------------------------------------------
# Reading runs.


def test_read_run_sorts_by_score_then_rank_then_docid(tmp_path: Path) -> None:
    """oracle: the sort worked by hand.

    Scores c 3, a 2, b 2, e 2, d 2: c first; among the 2s, ranks a 5, b 2, e 2, d 9, so b and e
    (rank 2, then by docid: b < e), then a (rank 5), then d (rank 9).
    """
    path = write(
        tmp_path,
        "q1 Q0 a 5 2 t\nq1 Q0 c 1 3.0 t\nq1\tQ0\te 2 2.0 t\n\nq1  Q0   d  9 2 t\nq1 Q0 b 2 2e0 t\n",
    )
    assert read_run(path) == {"q1": [("c", 3.0), ("b", 2.0), ("e", 2.0), ("a", 2.0), ("d", 2.0)]}


@pytest.mark.parametrize(
    ("text", "line", "field", "message"),
    [
        ("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4\n", 2, "columns", "expected 6 columns"),
        ("q1 Q0 d1 1 0.5 t extra\n", 1, "columns", "found 7"),
        ("q1 Q0 d1 first 0.5 t\n", 1, "rank", "not an integer"),
        ("q1 Q0 d1 1.5 0.5 t\n", 1, "rank", "not an integer"),
        ("q1 Q0 d1 1 high t\n", 1, "score", "not a finite number"),
        ("q1 Q0 d1 1 nan t\n", 1, "score", "not a finite number"),
        ("q1 Q0 d1 1 inf t\n", 1, "score", "not a finite number"),
        ("q9 Q0 d1 1 0.5 t\n", 1, "qid", "unknown question id 'q9'"),
        ("q1 Q0 d9 1 0.5 t\n", 1, "docid", "unknown document id 'd9'"),
        ("q1 Q0 d1 1 0.5 t\nq1 Q0 d1 2 0.4 t\n", 2, "docid", "ranked twice"),
    ],
)
def test_each_bad_run_line_is_named(
    tmp_path: Path, text: str, line: int, field: str, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(InputError) as exc:
        read_run(path, known_questions={"q1", "q2"}, known_docs={"d1", "d2"})
    (problem,) = problems_of(exc)
    assert (problem.file, problem.line, problem.field) == (str(path), line, field)
    assert message in problem.message
    assert f"run.txt:{line}" in str(exc.value)


def test_every_bad_run_line_is_reported_together(tmp_path: Path) -> None:
    path = write(tmp_path, "q1 Q0 d1 x y t\nok\nq1 Q0 d2 1 0.5 t\nq1 Q0 d2 2 0.4 t\n")
    with pytest.raises(InputError) as exc:
        read_run(path)
    found = [(p.line, p.field) for p in problems_of(exc)]
    assert found == [(1, "rank"), (1, "score"), (2, "columns"), (4, "docid")]


def test_problems_beyond_the_cap_are_counted(tmp_path: Path) -> None:
    n = MAX_REPORTED_PROBLEMS + 50
    path = write(tmp_path, "".join(f"q1 Q0 d{i} {i + 1} bad t\n" for i in range(n)))
    with pytest.raises(InputError) as exc:
        read_run(path)
    problems = problems_of(exc)
    assert len(problems) == MAX_REPORTED_PROBLEMS + 1
    assert problems[-1].message == "... and 50 more problem(s) not listed"


def test_empty_run_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no ranking lines"):
        read_run(write(tmp_path, "\n  \n"))


# ---------------------------------------------------------------------------------------------
# Reading qrels.


def test_qrels_round_trip_keeps_every_grade(tmp_path: Path) -> None:
    """oracle: the input itself and pytrec_eval's parse_qrel on a hand-written file."""
    qrels = {"q1": {"d1": 2, "d2": 0, "d3": -1}, "q2": {"d1": 1}}
    path = tmp_path / "qrels.txt"
    write_qrels(path, qrels)
    assert read_qrels(path) == qrels
    messy = write(tmp_path, "q1\t0\td1\t2\nq1  iter  d2 0  \n", "messy.txt")
    with messy.open(encoding="utf-8") as f:
        assert read_qrels(messy) == pytrec_eval.parse_qrel(f) == {"q1": {"d1": 2, "d2": 0}}


@pytest.mark.parametrize(
    ("text", "line", "field", "message"),
    [
        ("q1 0 d1\n", 1, "columns", "expected 4 columns"),
        ("q1 0 d1 high\n", 1, "grade", "not an integer"),
        ("q1 0 d1 1\nq1 0 d1 2\n", 2, "docid", "judged twice"),
        ("q9 0 d1 1\n", 1, "qid", "unknown question id"),
        ("q1 0 d9 1\n", 1, "docid", "unknown document id"),
    ],
)
def test_each_bad_qrels_line_is_named(
    tmp_path: Path, text: str, line: int, field: str, message: str
) -> None:
    path = write(tmp_path, text, "qrels.txt")
    with pytest.raises(InputError) as exc:
        read_qrels(path, known_questions={"q1"}, known_docs={"d1"})
    (problem,) = problems_of(exc)
    assert (problem.line, problem.field) == (line, field) and message in problem.message
