"""Importing a classic Glasgow test collection: Cranfield, CACM, and others in the same format.

The Glasgow IR group's collections (ir.dcs.gla.ac.uk/resources/test_collections; Cleverdon 1967
for Cranfield, Fox 1983 for CACM) come as three files. The documents and the queries are records
that open with a line ``.I <number>``; field markers on lines of their own open a field that runs
to the next marker: ``.T`` title, ``.W`` text, ``.A`` authors (one a line), ``.K`` keywords,
``.B`` bibliographic note (others, such as ``.X``, ``.C`` or ``.N``, are read and ignored). The
qrels file holds one judgement a line, its columns separated by whitespace.

Reading is forgiving where the distributed files need it, and says so:

- A marker naming a field its record already has is taken as damage, not structure: its line is
  dropped, its text stays in the field being read, and a warning names it. (Cranfield has three:
  stray ``.A`` and ``.B`` lines inside the text of document 240, a second ``.W`` in documents 576
  and 578; this keeps their abstracts whole.)
- A record with no field marker at all (CACM's ``query.text`` ends with an empty ``.I 0``) is
  skipped, with a note in the summary.
- A control character (C0 or DEL, less tab, form feed and carriage return: what a page may not
  hold) is replaced by a space, with a warning naming the file, line, field, record and column.
  (CACM's abstracts of documents 2712 and 2857 each hold a byte 0x19.)

Qrels, recognised by :func:`qrels_are_binary`: when every non-blank row is ``query document 0 0``
(CACM; CISI writes the last zero ``0.000000``), relevance is binary: each pair listed is relevant,
at 1 (:data:`BINARY_GRADE_MAP`), and a note says so. Otherwise the rows are ``query document
grade`` (a fourth column ignored) and grades go through ``grade_map`` (raw grade -> relevance; a
relevance of 0 or less drops the row, a raw grade missing from the map is an error), by default
Cranfield's: 1 (most relevant) to 4 become relevance 5 - grade, so 4 to 1, and -1 ("no interest")
is dropped. A ``grade_map`` given explicitly is used whatever the rows look like.

The import writes one page per document (id: the ``.I`` number without leading zeros; title: the
``.T`` field on one line, or "Document <n>" when empty), in ``OUT/pages/<n zero-padded>.md`` so
files sort in document order. ``fields`` (some of :data:`PAGE_FIELDS`) makes the page text: the
title as a ``#`` heading ("Document <n>" without ``T``), then each other field chosen, in the
order given, as a paragraph (:func:`page_part`). The default, :data:`DEFAULT_PAGE_FIELDS` (T, W,
K), is the text about the document's subject: title, abstract and keywords; authors and the
source note are catalogue data, added on request (``A`` answers queries that name authors).
Cranfield has no ``.K``, so its pages are title and abstract. Its ``.W`` opens with a copy of the
title; the page gives the title once, as its heading: a body that starts with the title's words
(whitespace and case aside) loses them (:func:`body_without_title`). A page with nothing but its
heading is counted as empty.

Queries: with ``queries_by_position`` (the default) the qrels number queries 1, 2, ... by their
position in the queries file (records skipped as empty not counted), not by their ``.I`` numbers
(Cranfield's well-known quirk: its ``.I`` numbers run 1 to 365 with gaps); otherwise by ``.I``
number. (CACM's ``.I`` numbers are its positions.) The question id is that number; its text is
the ``.W`` field on one line (``.T`` when there is no ``.W``), and, when ``A`` is among the
``fields``, the query's own ``.A`` after it as the pages have it ("Authors: Prieve, B.; Pooch,
U.": :func:`query_text`). The rule mirrors the pages: a field chosen for the page text is the one
a question may name, so an author on both sides can match; without ``A`` (the default) no
question changes, and Cranfield's queries have no ``.A``. Questions left with no relevant
page are skipped and counted; the rest are split by :func:`seeded_split`. Splits, the output
folder and the all-or-nothing writing work as in :mod:`raglab.formats.beir`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from raglab.base.files import read_text_lines
from raglab.corpus.questions import SPLITS
from raglab.errors import InputError, Problem
from raglab.formats.collection import (
    TEST_FRACTION,
    ImportSummary,
    PageRecord,
    check_fraction,
    check_output_dir,
    one_line,
    seeded_split,
    write_collection,
)
from raglab.formats.trec import cap_problems, parse_int

# Cranfield's grades: 1 (complete answer) .. 4 (minimum interest) -> relevance 5 - grade; -1 dropped.
CRANFIELD_GRADE_MAP: Mapping[int, int] = {1: 4, 2: 3, 3: 2, 4: 1, -1: 0}
# A binary qrels file's rows (all "query document 0 0"): each listed pair is relevant, at 1.
BINARY_GRADE_MAP: Mapping[int, int] = {0: 1}
GLASGOW_KIND = "glasgow"

# The fields a page may hold (--fields), and the page's default: its running text.
PAGE_FIELDS = ("T", "W", "A", "K", "B")
DEFAULT_PAGE_FIELDS = ("T", "W", "K")
# How a chosen catalogue field is introduced on its page.
_FIELD_LABELS = {"A": "Authors", "K": "Keywords", "B": "Source"}

_ID_LINE = re.compile(r"\.I(?:[ \t]+(\S*))?")
_FIELD_LINE = re.compile(r"\.([A-Z])")
# The characters raglab.corpus.pages refuses in a page: C0 controls and DEL, less tab, line feed,
# form feed and carriage return (CACM's abstracts 2712 and 2857 hold a 0x19 each).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class GlasgowRecord:
    """One ``.I`` record: its number, the line of its ``.I``, and its fields by letter."""

    number: int
    line: int
    fields: Mapping[str, str]

    def text(self, letter: str) -> str:
        return self.fields.get(letter, "")


def parse_glasgow(
    lines: Sequence[str], *, source: str = "<string>"
) -> tuple[list[GlasgowRecord], list[Problem]]:
    """Parse Glasgow records; returns them in file order with the warnings found.

    A field's text keeps its lines (trailing spaces removed; blank lines at either end dropped).
    Raises :class:`InputError` listing every problem: text before the first ``.I`` or before a
    record's first field marker, a ``.I`` without a whole number, a number used twice, no records.
    """
    problems: list[Problem] = []
    warnings: list[Problem] = []
    records: list[GlasgowRecord] = []
    first_line: dict[int, int] = {}
    fields: dict[str, list[str]] | None = None
    number = -1
    start = 0
    current: str | None = None
    orphan_reported = False

    def close() -> None:
        if fields is not None and number >= 0:
            text = {k: "\n".join(v).strip("\n") for k, v in fields.items()}
            records.append(GlasgowRecord(number, start, text))

    for i, raw in enumerate(lines, start=1):
        line = raw.rstrip()
        m = _ID_LINE.fullmatch(line)
        if m:
            close()
            fields, current, start = {}, None, i
            value = m.group(1) or ""
            parsed = parse_int(value)
            number = -1
            if parsed is None or parsed < 0:
                problems.append(
                    Problem(source, f"record number is not a whole number: {value!r}", i, ".I")
                )
            elif parsed in first_line:
                problems.append(
                    Problem(
                        source,
                        f"record number {parsed} used twice (first on line {first_line[parsed]})",
                        i,
                        ".I",
                        str(parsed),
                    )
                )
            else:
                number = parsed
                first_line[parsed] = i
            continue
        item = str(number) if number >= 0 else None
        m = _FIELD_LINE.fullmatch(line)
        if m and fields is not None:
            letter = m.group(1)
            if letter in fields and current is not None:
                warnings.append(
                    Problem(
                        source,
                        f"field .{letter} given again in this record: the marker is dropped and "
                        f"the text kept in .{current}",
                        i,
                        f".{letter}",
                        item,
                    )
                )
            else:
                fields[letter] = []
                current = letter
            continue
        if fields is None:
            if line.strip() and not orphan_reported:
                problems.append(Problem(source, "text before the first '.I' line", i))
                orphan_reported = True
            continue
        if current is None:
            if line.strip():
                problems.append(
                    Problem(source, "text before the record's first field marker", i, None, item)
                )
            continue
        if _CONTROL.search(line):
            for found in _CONTROL.finditer(line):
                warnings.append(
                    Problem(
                        source,
                        f"control character U+{ord(found.group()):04X} at column "
                        f"{found.start() + 1} replaced by a space",
                        i,
                        f".{current}",
                        item,
                    )
                )
            line = _CONTROL.sub(" ", line)
        fields[current].append(line)
    close()
    if not records and not problems:
        problems.append(Problem(source, "no '.I' records found"))
    if problems:
        raise InputError(cap_problems(problems, source))
    return records, warnings


def _read_records(
    path: str | Path, problems: list[Problem], warnings: list[Problem], notes: list[str]
) -> list[GlasgowRecord]:
    try:
        records, found = parse_glasgow(read_text_lines(path), source=str(path))
    except InputError as exc:
        problems.extend(exc.problems)
        return []
    warnings.extend(found)
    # A record with no field at all is a placeholder, not a document or query: CACM's
    # query.text ends with an empty ".I 0".
    for record in records:
        if not record.fields:
            notes.append(
                f"{path}:{record.line}: record .I {record.number} has no fields and is skipped"
            )
    return [r for r in records if r.fields]


def qrels_are_binary(lines: Sequence[str]) -> bool:
    """Whether a qrels file is binary: every non-blank line ``query document 0 0``.

    That is the CACM and CISI form (the fourth column may be written ``0.000000``): a pair is
    relevant because it is listed, and the zeros are no grade. Anything else, such as Cranfield's
    three columns ``query document grade``, is graded. A file with no judgement is not binary.
    """
    rows = [line.split() for line in lines if line.strip()]
    return bool(rows) and all(
        len(cols) == 4 and parse_int(cols[2]) == 0 and _is_zero(cols[3]) for cols in rows
    )


def _is_zero(text: str) -> bool:
    try:
        return float(text) == 0.0
    except ValueError:
        return False


def _check_grade_map(grade_map: Mapping[int, int]) -> None:
    for raw, relevance in grade_map.items():
        for value in (raw, relevance):
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"grade_map must map integers to integers, not {raw!r}: {value!r}")


@dataclass
class _Qrels:
    grades: dict[int, dict[int, int]]
    dropped: int


def _read_qrels(
    path: str | Path,
    questions: Mapping[int, object],
    docs: Mapping[int, object],
    grade_map: Mapping[int, int],
    problems: list[Problem],
    *,
    check_ids: bool,
) -> _Qrels:
    source = str(path)
    result = _Qrels({}, 0)
    try:
        lines = read_text_lines(path)
    except InputError as exc:
        problems.extend(exc.problems)
        return result
    first: dict[tuple[int, int], int] = {}
    grades = ", ".join(str(g) for g in sorted(grade_map))
    for number, raw in enumerate(lines, start=1):
        cols = raw.split()
        if not cols:
            continue
        if len(cols) not in (3, 4):
            problems.append(
                Problem(
                    source,
                    f"expected 3 columns 'query document grade', found {len(cols)}",
                    number,
                    "columns",
                )
            )
            continue
        values = [parse_int(c) for c in cols[:3]]
        qid, docid, grade = values
        item = str(qid) if qid is not None else None
        here: list[Problem] = []
        for name, text, value in zip(("query", "document", "grade"), cols, values, strict=False):
            if value is None:
                here.append(Problem(source, f"not a whole number: {text!r}", number, name, item))
        if check_ids and qid is not None and qid not in questions:
            here.append(
                Problem(source, f"no query {qid} in the queries file", number, "query", item)
            )
        if check_ids and docid is not None and docid not in docs:
            here.append(
                Problem(
                    source, f"no document {docid} in the documents file", number, "document", item
                )
            )
        if grade is not None and grade not in grade_map:
            here.append(
                Problem(
                    source,
                    f"grade {grade} is not in the grade map ({grades})",
                    number,
                    "grade",
                    item,
                )
            )
        if qid is not None and docid is not None and (qid, docid) in first:
            here.append(
                Problem(
                    source,
                    f"document {docid} judged twice for this query "
                    f"(first on line {first[(qid, docid)]})",
                    number,
                    "document",
                    item,
                )
            )
        if here or qid is None or docid is None or grade is None:
            problems.extend(here)
            continue
        first[(qid, docid)] = number
        relevance = grade_map[grade]
        if relevance > 0:
            result.grades.setdefault(qid, {})[docid] = relevance
        else:
            result.dropped += 1
    if not first and not problems:
        problems.append(Problem(source, "no judgements found"))
    return result


def body_without_title(body: str, title: str) -> str:
    """``body`` without the copy of ``title`` it opens with, if it opens with one; stripped.

    The match is on words, whitespace and case aside, as Cranfield's ``.W`` repeats the ``.T``
    lines with other line breaks: ``body_without_title("wing lift\\n in a slipstream .\\n  a study",
    "wing lift in a\\nslipstream .")`` gives ``"a study"``. A body that differs from its title in
    any word (Cranfield 1000 and 1369 have typing slips there) is kept whole.
    """
    words = title.split()
    if words:
        copy = r"\s*" + r"\s+".join(map(re.escape, words)) + r"(?=\s|$)"
        start = re.match(copy, body, re.IGNORECASE)
        if start:
            body = body[start.end() :]
    return body.strip()


def check_page_fields(fields: Sequence[str]) -> None:
    """Raise ``ValueError`` unless ``fields`` names one or more of :data:`PAGE_FIELDS`, once each."""
    if (
        isinstance(fields, str)
        or not fields
        or len(set(fields)) != len(fields)
        or any(f not in PAGE_FIELDS for f in fields)
    ):
        raise ValueError(
            f"fields must name one or more of {', '.join(PAGE_FIELDS)}, each once, "
            f"as a sequence of letters; not {fields!r}"
        )


def page_part(doc: GlasgowRecord, letter: str) -> str:
    """The paragraph field ``letter`` (not ``T``, the heading) adds to ``doc``'s page; "" if none.

    ``W``: the text, less its opening copy of the title (:func:`body_without_title`), lines kept.
    ``A``: "Authors: " and the author lines joined by "; ". ``K``, ``B``: "Keywords: ",
    "Source: " and the field on one line.
    """
    if letter == "W":
        return body_without_title(doc.text("W"), doc.text("T"))
    if letter == "A":
        value = "; ".join(one_line(a) for a in doc.text("A").splitlines() if a.strip())
    else:
        value = one_line(doc.text(letter))
    return f"{_FIELD_LABELS[letter]}: {value}" if value else ""


def query_text(query: GlasgowRecord, fields: Sequence[str]) -> str:
    """A query's question on one line: its ``.W`` (``.T`` without one), then, with ``A`` among
    ``fields``, its authors as :func:`page_part` writes them on a page (CACM's queries 2, 31
    and six others name the authors they want in an ``.A``); "" when it has no text."""
    text = one_line(query.text("W") or query.text("T"))
    authors = page_part(query, "A") if "A" in fields else ""
    return f"{text} {authors}" if text and authors else text


def import_glasgow(
    docs_file: str | Path,
    queries_file: str | Path,
    qrels_file: str | Path,
    out_dir: str | Path,
    *,
    test_fraction: float = TEST_FRACTION,
    seed: int,
    grade_map: Mapping[int, int] | None = None,
    queries_by_position: bool = True,
    fields: Sequence[str] = DEFAULT_PAGE_FIELDS,
    overwrite: bool = False,
    quiet: bool = False,
) -> ImportSummary:
    """Import a Glasgow collection into ``out_dir`` (see the module docstring).

    ``grade_map`` left out is :data:`BINARY_GRADE_MAP` for binary qrels (:func:`qrels_are_binary`),
    else :data:`CRANFIELD_GRADE_MAP`; ``queries_by_position=False`` reads the qrels' query numbers
    as ``.I`` numbers; ``fields`` chooses the page text (:data:`DEFAULT_PAGE_FIELDS`: T, W, K).
    ``overwrite`` replaces ``pages/`` and ``questions.jsonl`` in a non-empty ``out_dir``;
    ``quiet`` hides progress bars. Raises :class:`InputError` listing every problem (file, line,
    field) before anything is written; ``ValueError`` on bad arguments. Warnings (stray field
    markers, control characters replaced) and notes (binary qrels, empty records skipped) are in
    the summary.
    """
    check_fraction(test_fraction)
    check_page_fields(fields)
    if grade_map is not None:
        _check_grade_map(grade_map)
    check_output_dir(out_dir, overwrite=overwrite)
    problems: list[Problem] = []
    warnings: list[Problem] = []
    notes: list[str] = []
    grades = grade_map
    if grades is None:
        grades = CRANFIELD_GRADE_MAP
        try:
            if qrels_are_binary(read_text_lines(qrels_file)):
                grades = BINARY_GRADE_MAP
                notes.append(
                    f"{qrels_file}: every row is 'query document 0 0', so relevance is binary: "
                    "each pair listed is relevant"
                )
        except InputError:
            pass  # an unreadable file is reported once, by _read_qrels
    docs = _read_records(docs_file, problems, warnings, notes)
    queries = _read_records(queries_file, problems, warnings, notes)
    numbered = (
        {position: q for position, q in enumerate(queries, start=1)}
        if queries_by_position
        else {q.number: q for q in queries}
    )
    texts: dict[int, str] = {}
    for key, query in numbered.items():
        text = query_text(query, fields)
        if not text:
            problems.append(
                Problem(str(queries_file), "query has no text", query.line, ".W", str(key))
            )
        texts[key] = text
    by_number = {d.number: d for d in docs}
    qrels = _read_qrels(qrels_file, numbered, by_number, grades, problems, check_ids=not problems)
    if problems:
        raise InputError(cap_problems(problems, str(docs_file)))

    kept = [key for key in numbered if qrels.grades.get(key)]
    splits = seeded_split([str(k) for k in kept], test_fraction=test_fraction, seed=seed)
    questions = [
        {
            "id": str(key),
            "split": splits[str(key)],
            "kind": GLASGOW_KIND,
            "question": texts[key],
            "pages": {str(d): g for d, g in qrels.grades[key].items()},
        }
        for key in kept
    ]
    width = len(str(max(by_number)))
    pages: list[PageRecord] = []
    empty = 0
    for doc in docs:
        title = one_line(doc.text("T")) or f"Document {doc.number}"
        heading = title if "T" in fields else f"Document {doc.number}"
        parts = [p for p in (page_part(doc, f) for f in fields if f != "T") if p]
        empty += not parts
        text = f"# {heading}\n" + "".join(f"\n{part}\n" for part in parts)
        pages.append(PageRecord(str(doc.number), title, text, f"{doc.number:0{width}d}"))
    write_collection(out_dir, pages, questions, overwrite=overwrite, quiet=quiet)
    return ImportSummary(
        out_dir=str(out_dir),
        pages=len(pages),
        empty_pages=empty,
        renamed_pages=0,  # every id is a number: a safe file name once zero-padded
        questions={s: sum(q["split"] == s for q in questions) for s in SPLITS},
        skipped_questions=len(numbered) - len(kept),
        labels=sum(len(g) for g in qrels.grades.values()),
        dropped_labels=qrels.dropped,
        warnings=tuple(warnings),
        notes=tuple(notes),
    )
