"""Importing Glasgow collections: a hand-made one, every bad line, and the real Cranfield."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from raglab.corpus.pages import load_corpus
from raglab.corpus.questions import load_questions
from raglab.errors import InputError
from raglab.formats.glasgow import (
    CRANFIELD_GRADE_MAP,
    body_without_title,
    import_glasgow,
    parse_glasgow,
)
from raglab.settings import SEED
from tests.conftest import CRANFIELD_DIR, Cranfield

CRANFIELD = CRANFIELD_DIR

DOCS = """\
.I 1
.T
Wing lift
in a slipstream .
.A
brenckman,m.
.B
j. ae. scs. 25, 1958, 324.
.W
wing lift in a slipstream .
  a study of lift .
.I 2
.T
heat transfer .
.A
someone
.W
heat flows .
.A
stray line kept .
.W
more heat text .
.I 3
.T
.A
.B
.W
.I 10
.T
Drag .
.W
drag rises .
.X
1 5 1
"""
QUERIES = """\
.I 001
.W
what gives a wing
lift ?
.I 004
.W
how does heat flow ?
.I 009
.W
what about drag ?
"""
# By position: query 1 (.I 001), 2 (.I 004), 3 (.I 009). Trailing spaces as in cranqrel.
QRELS = "1 1 1 \n1 10 3 \n2 2 2 \n2 3 -1 \n3 10 -1"


def collection(
    tmp_path: Path, docs: str = DOCS, queries: str = QUERIES, qrels: str = QRELS
) -> tuple[Path, Path, Path]:
    paths = (tmp_path / "docs", tmp_path / "queries", tmp_path / "qrels")
    for path, text in zip(paths, (docs, queries, qrels), strict=True):
        path.write_text(text, encoding="utf-8")
    return paths


def read_questions(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "questions.jsonl").read_text("utf-8").splitlines()]


def test_parse_records_fields_and_stray_markers() -> None:
    """oracle: the DOCS text read by hand; record 2's second .A and .W are stray (lines 19, 21)."""
    records, warnings = parse_glasgow(DOCS.splitlines(), source="docs")
    assert [r.number for r in records] == [1, 2, 3, 10]
    assert records[0].text("T") == "Wing lift\nin a slipstream ."
    assert records[0].text("W") == "wing lift in a slipstream .\n  a study of lift ."
    assert records[1].text("W") == "heat flows .\nstray line kept .\nmore heat text ."
    assert records[1].text("A") == "someone"
    assert records[2].fields == {"T": "", "A": "", "B": "", "W": ""}
    assert records[3].text("W") == "drag rises ." and records[3].text("X") == "1 5 1"
    assert [(w.line, w.field, w.item) for w in warnings] == [(19, ".A", "2"), (21, ".W", "2")]


def test_import_small_collection(tmp_path: Path) -> None:
    """oracle: hand-worked from QRELS with rel = 5 - grade: question 1 -> {1: 4, 10: 2},
    question 2 -> {2: 3} (its -1 dropped), question 3 has only a -1 and is skipped;
    3 labels kept, 2 dropped; 2 questions, floor(0.4 * 2 + 0.5) = 1 of them test."""
    out = tmp_path / "out"
    summary = import_glasgow(*collection(tmp_path), out, seed=SEED)
    assert (summary.pages, summary.empty_pages) == (4, 1)
    assert (summary.labels, summary.dropped_labels, summary.skipped_questions) == (3, 2, 1)
    assert dict(summary.questions) == {"train": 1, "test": 1}
    assert len(summary.warnings) == 2
    questions = read_questions(out)
    assert [(q["id"], q["question"], q["pages"]) for q in questions] == [
        ("1", "what gives a wing lift ?", {"1": 4, "10": 2}),
        ("2", "how does heat flow ?", {"2": 3}),
    ]
    assert {q["kind"] for q in questions} == {"glasgow"}
    assert sorted(p.name for p in (out / "pages").iterdir()) == ["01.md", "02.md", "03.md", "10.md"]
    assert (out / "pages" / "01.md").read_text("utf-8") == (
        "---\nid: 1\ntitle: Wing lift in a slipstream .\n---\n# Wing lift in a slipstream .\n\n"
        "a study of lift .\n"
    )  # the body's copy of the title (other line breaks, other case) is dropped
    assert (
        (out / "pages" / "02.md")
        .read_text("utf-8")
        .endswith("# heat transfer .\n\nheat flows .\nstray line kept .\nmore heat text .\n")
    )  # a body that does not open with the title is kept whole
    assert (out / "pages" / "03.md").read_text("utf-8") == (
        "---\nid: 3\ntitle: Document 3\n---\n# Document 3\n"
    )
    corpus = load_corpus(out / "pages")
    loaded = load_questions(out / "questions.jsonl", corpus=corpus)
    assert [p.id for p in corpus] == ["1", "2", "3", "10"]
    assert corpus.page("2").sections[0].heading == "heat transfer ."
    assert loaded.by_id("1").pages == {"1": 4, "10": 2} and not loaded.warnings


def test_queries_numbered_by_id_and_a_custom_grade_map(tmp_path: Path) -> None:
    """oracle: with .I numbering, qrels query 4 is the second query; grade map {0: 1} makes the
    CISI/CACM style 4-column rows relevant at grade 1."""
    qrels = "4 2 0 0.000000\n9 10 0 0.000000\n"
    out = tmp_path / "out"
    summary = import_glasgow(
        *collection(tmp_path, qrels=qrels),
        out,
        queries_by_position=False,
        grade_map={0: 1},
        seed=SEED,
    )
    assert [(q["id"], q["pages"]) for q in read_questions(out)] == [
        ("4", {"2": 1}),
        ("9", {"10": 1}),
    ]
    assert (summary.labels, summary.skipped_questions) == (2, 1)


def test_by_position_rejects_a_number_past_the_last_query(tmp_path: Path) -> None:
    with pytest.raises(InputError) as exc:
        import_glasgow(*collection(tmp_path, qrels="4 2 1\n"), tmp_path / "out", seed=SEED)
    (problem,) = exc.value.problems
    assert (problem.line, problem.field) == (1, "query") and "no query 4" in problem.message


@pytest.mark.parametrize(
    ("which", "text", "line", "field", "message"),
    [
        ("docs", "junk\n" + DOCS, 1, None, "before the first '.I'"),
        ("docs", ".I one\n.W\nx\n", 1, ".I", "not a whole number"),
        ("docs", ".I\n.W\nx\n", 1, ".I", "not a whole number"),
        ("docs", DOCS + ".I 2\n.W\nagain\n", 35, ".I", "used twice (first on line 12)"),
        ("docs", ".I 1\norphan\n.W\nx\n", 2, None, "before the record's first field marker"),
        ("docs", "\n\n", None, None, "no '.I' records"),
        ("queries", QUERIES + ".I 010\n.W\n\n", 11, ".W", "query has no text"),
        ("qrels", "1 1\n", 1, "columns", "expected 3 columns"),
        ("qrels", "1 1 1 1 1\n", 1, "columns", "found 5"),
        ("qrels", "1 x 1\n", 1, "document", "not a whole number: 'x'"),
        ("qrels", "1 1 high\n", 1, "grade", "not a whole number"),
        ("qrels", "1 1 1\n1 99 1\n", 2, "document", "no document 99"),
        ("qrels", "1 1 7\n", 1, "grade", "grade 7 is not in the grade map (-1, 1, 2, 3, 4)"),
        ("qrels", "1 1 1\n1 1 2\n", 2, "document", "judged twice"),
        ("qrels", "\n", None, None, "no judgements"),
    ],
)
def test_each_bad_line_is_named_and_nothing_is_written(
    tmp_path: Path, which: str, text: str, line: int | None, field: str | None, message: str
) -> None:
    out = tmp_path / "out"
    paths = collection(tmp_path, **{which: text})
    with pytest.raises(InputError) as exc:
        import_glasgow(*paths, out, seed=SEED)
    matching = [p for p in exc.value.problems if message in p.message]
    assert matching, str(exc.value)
    problem = matching[0]
    assert Path(problem.file).name == which and (problem.line, problem.field) == (line, field)
    assert not out.exists()


def test_bad_arguments(tmp_path: Path) -> None:
    paths = collection(tmp_path)
    with pytest.raises(ValueError, match="grade_map"):
        import_glasgow(*paths, tmp_path / "out", grade_map={"1": 4}, seed=SEED)  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="test_fraction"):
        import_glasgow(*paths, tmp_path / "out", test_fraction=2.0, seed=SEED)


# ---------------------------------------------------------------------------------------------
# The real Cranfield collection.


def test_cranfield(tmp_path: Path, cranfield: Cranfield) -> None:
    """oracle: the collection's README.txt (1,400 documents, docs 471 and 995 with an empty .W,
    225 queries, 1,837 qrels rows: grade 1 128, 2 387, 3 734, 4 363, -1 225), a direct count of
    the raw files here, a count of the files written, and the independent Cranfield parser of
    tests/conftest.py for every page's text, every question and every label."""
    docs, queries, qrels = (CRANFIELD / n for n in ("cran.all.1400", "cran.qry", "cranqrel"))
    raw_docs = docs.read_text("utf-8").splitlines()
    raw_queries = queries.read_text("utf-8").splitlines()
    rows = [line.split() for line in qrels.read_text("utf-8").splitlines() if line.strip()]
    assert sum(line.startswith(".I ") for line in raw_docs) == 1400
    assert sum(line.startswith(".I ") for line in raw_queries) == 225
    assert len(rows) == 1837
    raw_grades = Counter(int(r[2]) for r in rows)
    assert raw_grades == {1: 128, 2: 387, 3: 734, 4: 363, -1: 225}
    positive_queries = {r[0] for r in rows if r[2] != "-1"}

    out = tmp_path / "cranfield"
    summary = import_glasgow(docs, queries, qrels, out, quiet=True, seed=SEED)

    assert (summary.pages, summary.empty_pages) == (1400, 2)
    assert len(positive_queries) == 225
    assert sum(summary.questions.values()) == 225 and summary.skipped_questions == 0
    assert dict(summary.questions) == {"train": 135, "test": 90}  # floor(0.4 * 225 + 0.5) = 90
    assert (summary.labels, summary.dropped_labels) == (1837 - 225, 225)
    # The stray markers name lines of the raw file that really are bare markers.
    assert [raw_docs[w.line - 1] for w in summary.warnings if w.line] == [".A", ".B", ".W", ".W"]

    files = sorted((out / "pages").iterdir())
    assert len(files) == 1400
    empty = [f.name for f in files if f.read_text("utf-8").split("---\n", 2)[2].count("\n") == 1]
    assert empty == ["0471.md", "0995.md"]
    lines = (out / "questions.jsonl").read_text("utf-8").splitlines()
    questions = [json.loads(line) for line in lines]
    assert len(questions) == 225
    # Grades become relevance 5 - grade: the README's counts, relabelled.
    kept = Counter(g for q in questions for g in q["pages"].values())
    assert kept == {4: 128, 3: 387, 2: 734, 1: 363}
    # Queries are numbered by position: the 225th question is the last query (.I 365).
    last_start = max(i for i, line in enumerate(raw_queries) if line.startswith(".I "))
    assert raw_queries[last_start] == ".I 365"
    assert questions[-1]["id"] == "225"
    assert questions[-1]["question"] == " ".join(" ".join(raw_queries[last_start + 2 :]).split())
    assert questions[0]["pages"]["184"] == 5 - 2  # cranqrel's first row: "1 184 2"

    corpus = load_corpus(out / "pages")
    loaded = load_questions(out / "questions.jsonl", corpus=corpus)
    assert len(corpus) == 1400 and len(loaded) == 225 and not loaded.warnings
    assert all(q.answerable and q.labels == "pages" for q in loaded)
    assert (
        corpus.page("471").title == "Document 471" and corpus.page("471").text == "# Document 471\n"
    )
    # Document 240's abstract stays whole despite its stray .A and .B lines.
    assert "application to turbulent separations" in corpus.page("240").text
    assert "\n.A\n" not in corpus.page("240").text
    assert set(CRANFIELD_GRADE_MAP) == set(raw_grades)

    # Independent parser: same words in every page (the body's leading copy of the title
    # dropped), same queries, same labels (5 - grade).
    for doc in cranfield.docs:
        title = " ".join(doc.title.split()) or f"Document {doc.id}"
        body = doc.body.split()
        n = len(doc.title.split())
        if n and body[:n] == doc.title.split():
            body = body[n:]
        assert corpus.page(str(doc.id)).text.split() == ["#", *title.split(), *body]
    assert [q.question for q in loaded] == [" ".join(q.split()) for q in cranfield.queries]
    assert {q.id: dict(q.pages or {}) for q in loaded} == {
        str(qid): {str(d): 5 - g for d, g in grades.items() if g != -1}
        for qid, grades in cranfield.qrels.items()
    }


def test_body_without_title() -> None:
    """oracle: the cases worked by hand (the copy goes whatever its line breaks and case; a body
    that differs in a word, or only shares a prefix of one, stays whole)."""
    assert (
        body_without_title(
            "wing lift\n in a slipstream .\n  a study", "Wing lift in a\nslipstream ."
        )
        == "a study"
    )
    assert body_without_title("wing lift in a slipstream .", "wing lift in a slipstream .") == ""
    assert body_without_title("wing lifts a lot", "wing lift") == "wing lifts a lot"
    assert body_without_title("3. 5 and 8 .5 . tests", "3 .5 and 8 .5 .") == "3. 5 and 8 .5 . tests"
    assert body_without_title("  text\n", "") == "text"


def test_cranfield_pages_hold_their_title_once(tmp_path: Path, cranfield: Cranfield) -> None:
    """oracle: the raw .T and .W fields of tests/conftest.py's independent parser,
    whitespace-normalised, searched with str.count. 1,396 bodies open with a copy of their title
    (1000 and 1369 have a typing slip in theirs: "3. 5" for "3 .5", "oseens's" for "oseen's").
    Each page holds the title once, as its heading, plus the copies its abstract itself makes
    after the opening one: documents 410, 697, 749, 908, 1058, 1149 and 1200 restate it once."""
    out = tmp_path / "cranfield"
    import_glasgow(
        *(CRANFIELD / n for n in ("cran.all.1400", "cran.qry", "cranqrel")),
        out,
        quiet=True,
        seed=SEED,
    )
    corpus = load_corpus(out / "pages")
    opening, restated = 0, []
    for doc in cranfield.docs:
        title = " ".join(doc.title.split())
        if not title:
            continue
        body = " ".join(doc.body.split())
        if body.startswith(title):
            opening += 1
            body = body[len(title) :]
        page = " ".join(corpus.page(str(doc.id)).text.split())
        assert page.startswith(f"# {title}") and page.count(title) == 1 + body.count(title), doc.id
        if body.count(title):
            restated.append(doc.id)
    assert opening == 1396
    assert restated == [410, 697, 749, 908, 1058, 1149, 1200]
