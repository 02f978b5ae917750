"""TREC run and qrels files, and the problem-listing helpers the importers share.

A run file holds one ranked document a line, six whitespace-separated columns::

    qid Q0 docid rank score tag

(``rank`` 1-based, best first; the second column is ignored on reading, as trec_eval does). A qrels
file holds one judgement a line, four columns::

    qid 0 docid grade

(the second column, the TREC "iteration", is ignored on reading). Columns may be separated by any
run of spaces or tabs; blank lines are skipped.

Reading sorts each question's documents the way trec_eval does, by score descending, and breaks
ties by the rank column, then by document id, so a file whose scores tie reads back in the order it
was written. Every bad line is reported at once, with its line number and column (see
:class:`raglab.errors.InputError`); after :data:`MAX_REPORTED_PROBLEMS` problems the rest are
counted, not listed.

Writing is atomic (:func:`raglab.base.files.atomic_write_text`): the text goes to a temporary file beside
the target, which replaces the target only when everything has been written, so a failure never
leaves a half-written or emptied file.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from raglab.base.files import atomic_write_text, read_text_lines
from raglab.errors import InputError, Problem

# Listing more bad lines than this only buries the first ones; the rest are counted.
MAX_REPORTED_PROBLEMS = 100
RUN_COLUMNS = ("qid", "Q0", "docid", "rank", "score", "tag")
QRELS_COLUMNS = ("qid", "iteration", "docid", "grade")
DEFAULT_TAG = "raglab"

_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


# ---------------------------------------------------------------------------------------------
# Helpers shared by the importers (the file helpers live in :mod:`raglab.base.files`).


def cap_problems(problems: Sequence[Problem], source: str) -> list[Problem]:
    """The first :data:`MAX_REPORTED_PROBLEMS` problems, then one that counts the rest."""
    if len(problems) <= MAX_REPORTED_PROBLEMS:
        return list(problems)
    rest = len(problems) - MAX_REPORTED_PROBLEMS
    return [
        *problems[:MAX_REPORTED_PROBLEMS],
        Problem(source, f"... and {rest} more problem(s) not listed"),
    ]


def parse_int(text: str) -> int | None:
    """``text`` as an integer (digits with an optional sign), else None."""
    return int(text) if _INTEGER.fullmatch(text) else None


def parse_number(text: str) -> float | None:
    """``text`` as a finite decimal number (no ``nan``, ``inf`` or ``_``), else None."""
    return float(text) if _NUMBER.fullmatch(text) else None


# ---------------------------------------------------------------------------------------------
# Writing.


def _check_token(value: str, what: str) -> None:
    if not value or any(ch.isspace() for ch in value):
        raise ValueError(f"{what} must be non-empty without whitespace, not {value!r}")


def format_run(
    rankings: Mapping[str, Sequence[tuple[str, float]]], *, tag: str = DEFAULT_TAG
) -> str:
    """The text of a run file: each question's ``(docid, score)`` list, best first.

    Scores must be finite and non-increasing within a question (the order given is the order
    written: rank 1 is the first entry), and a document may appear once per question; question
    ids, document ids and the tag must be non-empty without whitespace. Scores are written with
    ``repr`` so they read back exactly. Raises ``ValueError`` otherwise.
    """
    _check_token(tag, "tag")
    out: list[str] = []
    for qid, ranking in rankings.items():
        _check_token(qid, "question id")
        seen: set[str] = set()
        previous = math.inf
        for rank, (docid, raw_score) in enumerate(ranking, start=1):
            _check_token(docid, "document id")
            score = float(raw_score)
            if not math.isfinite(score):
                raise ValueError(f"question {qid!r}, rank {rank}: score {score} is not finite")
            if score > previous:
                raise ValueError(
                    f"question {qid!r}, rank {rank}: scores must not increase down the ranking "
                    f"({score!r} after {previous!r})"
                )
            if docid in seen:
                raise ValueError(f"question {qid!r}: document {docid!r} is ranked twice")
            seen.add(docid)
            previous = score
            out.append(f"{qid} Q0 {docid} {rank} {score!r} {tag}\n")
    return "".join(out)


def format_qrels(qrels: Mapping[str, Mapping[str, int]]) -> str:
    """The text of a qrels file: ``qid 0 docid grade`` for every judgement, in the order given."""
    out: list[str] = []
    for qid, grades in qrels.items():
        _check_token(qid, "question id")
        for docid, grade in grades.items():
            _check_token(docid, "document id")
            if isinstance(grade, bool) or int(grade) != grade:
                raise ValueError(f"question {qid!r}, document {docid!r}: grade must be an integer")
            out.append(f"{qid} 0 {docid} {int(grade)}\n")
    return "".join(out)


def write_run(
    path: str | Path,
    rankings: Mapping[str, Sequence[tuple[str, float]]],
    *,
    tag: str = DEFAULT_TAG,
    overwrite: bool = True,
) -> None:
    """Write a TREC run file atomically; see :func:`format_run` for the rules on the input."""
    atomic_write_text(path, format_run(rankings, tag=tag), overwrite=overwrite)


def write_qrels(
    path: str | Path, qrels: Mapping[str, Mapping[str, int]], *, overwrite: bool = True
) -> None:
    """Write a TREC qrels file atomically (``qid 0 docid grade`` a line)."""
    atomic_write_text(path, format_qrels(qrels), overwrite=overwrite)


# ---------------------------------------------------------------------------------------------
# Reading.


def _check_known(
    problems: list[Problem],
    source: str,
    number: int,
    qid: str,
    docid: str,
    known_questions: Collection[str] | None,
    known_docs: Collection[str] | None,
) -> None:
    if known_questions is not None and qid not in known_questions:
        problems.append(Problem(source, f"unknown question id {qid!r}", number, "qid", qid))
    if known_docs is not None and docid not in known_docs:
        problems.append(Problem(source, f"unknown document id {docid!r}", number, "docid", qid))


def read_run(
    path: str | Path,
    *,
    known_questions: Collection[str] | None = None,
    known_docs: Collection[str] | None = None,
) -> dict[str, list[tuple[str, float]]]:
    """Read a TREC run file: question id -> ``[(docid, score), ...]``, best first.

    Each question's documents are sorted by score descending, ties by the rank column ascending,
    then by document id. ``known_questions`` / ``known_docs``, when given, are the only ids
    allowed. Raises :class:`InputError` listing every bad line: a wrong number of columns, a rank
    that is not an integer, a score that is not a finite number, an unknown question or document
    id, a document ranked twice for one question, a rank below 1, or a file with no ranking lines.
    """
    source = str(path)
    lines = read_text_lines(path)
    problems: list[Problem] = []
    entries: dict[str, list[tuple[float, int, str]]] = {}
    first_seen: dict[tuple[str, str], int] = {}
    for number, raw in enumerate(lines, start=1):
        cols = raw.split()
        if not cols:
            continue
        if len(cols) != len(RUN_COLUMNS):
            problems.append(
                Problem(
                    source,
                    f"expected {len(RUN_COLUMNS)} columns '{' '.join(RUN_COLUMNS)}', "
                    f"found {len(cols)}",
                    number,
                    "columns",
                )
            )
            continue
        qid, _, docid, rank_text, score_text, _ = cols
        here: list[Problem] = []
        rank = parse_int(rank_text)
        if rank is None:
            here.append(
                Problem(source, f"rank is not an integer: {rank_text!r}", number, "rank", qid)
            )
        elif rank < 1:
            here.append(
                Problem(
                    source, f"rank must be 1 or more (1 = best), not {rank}", number, "rank", qid
                )
            )
        score = parse_number(score_text)
        if score is None:
            here.append(
                Problem(
                    source, f"score is not a finite number: {score_text!r}", number, "score", qid
                )
            )
        _check_known(here, source, number, qid, docid, known_questions, known_docs)
        key = (qid, docid)
        if key in first_seen:
            here.append(
                Problem(
                    source,
                    f"document {docid!r} ranked twice for this question "
                    f"(first on line {first_seen[key]})",
                    number,
                    "docid",
                    qid,
                )
            )
        else:
            first_seen[key] = number
        if here or rank is None or score is None:
            problems.extend(here)
            continue
        entries.setdefault(qid, []).append((score, rank, docid))
    if not entries and not problems:
        problems.append(Problem(source, "no ranking lines found"))
    if problems:
        raise InputError(cap_problems(problems, source))
    return {
        qid: [(docid, score) for score, _, docid in sorted(rows, key=lambda r: (-r[0], r[1], r[2]))]
        for qid, rows in entries.items()
    }


def read_qrels(
    path: str | Path,
    *,
    known_questions: Collection[str] | None = None,
    known_docs: Collection[str] | None = None,
) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file: question id -> {docid: grade}, in file order.

    Every grade is kept as written, zero and negative ones included (what counts as relevant is the
    caller's choice). Raises :class:`InputError` listing every bad line: a wrong number of columns,
    a grade that is not an integer, an unknown question or document id (when ``known_*`` is
    given), a document judged twice for one question, or a file with no judgements.
    """
    source = str(path)
    lines = read_text_lines(path)
    problems: list[Problem] = []
    qrels: dict[str, dict[str, int]] = {}
    first_seen: dict[tuple[str, str], int] = {}
    for number, raw in enumerate(lines, start=1):
        cols = raw.split()
        if not cols:
            continue
        if len(cols) != len(QRELS_COLUMNS):
            problems.append(
                Problem(
                    source,
                    f"expected {len(QRELS_COLUMNS)} columns '{' '.join(QRELS_COLUMNS)}', "
                    f"found {len(cols)}",
                    number,
                    "columns",
                )
            )
            continue
        qid, _, docid, grade_text = cols
        here: list[Problem] = []
        grade = parse_int(grade_text)
        if grade is None:
            here.append(
                Problem(source, f"grade is not an integer: {grade_text!r}", number, "grade", qid)
            )
        _check_known(here, source, number, qid, docid, known_questions, known_docs)
        key = (qid, docid)
        if key in first_seen:
            here.append(
                Problem(
                    source,
                    f"document {docid!r} judged twice for this question "
                    f"(first on line {first_seen[key]})",
                    number,
                    "docid",
                    qid,
                )
            )
        else:
            first_seen[key] = number
        if here or grade is None:
            problems.extend(here)
            continue
        qrels.setdefault(qid, {})[docid] = grade
    if not qrels and not problems:
        problems.append(Problem(source, "no judgement lines found"))
    if problems:
        raise InputError(cap_problems(problems, source))
    return qrels
