"""Importing Glasgow collections: a hand-made one, every bad line, the real Cranfield and CACM."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from raglab.bm25.index import BM25Index
from raglab.corpus.pages import load_corpus
from raglab.corpus.questions import load_questions
from raglab.errors import InputError
from raglab.formats.glasgow import (
    CRANFIELD_GRADE_MAP,
    body_without_title,
    import_glasgow,
    parse_glasgow,
    qrels_are_binary,
)
from raglab.settings import SEED
from raglab.text.tokens import tokenize
from tests.conftest import CRANFIELD_DIR, Cranfield

CRANFIELD = CRANFIELD_DIR
# An excerpt of CACM cut byte for byte from the distribution (its README says how).
CACM = Path(__file__).resolve().parents[1] / "fixtures" / "cacm"

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


def output_digest(out: Path) -> str:
    """sha256 over every file of an import's output: relative path, NUL, bytes, NUL, sorted."""
    digest = hashlib.sha256()
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        digest.update(path.relative_to(out).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def test_cranfield_output_bytes_are_unchanged(tmp_path: Path) -> None:
    """oracle: the digest of the output of the importer as it was before --fields, binary qrels,
    empty records and control characters (commit 722f6d7, ``raglab import glasgow --docs
    cran.all.1400 --queries cran.qry --qrels cranqrel`` with the default seed, hashed by
    :func:`output_digest`): Cranfield has no .K, no empty record, no control character and
    graded qrels, so none of them may change a byte of its pages or questions."""
    out = tmp_path / "cranfield"
    import_glasgow(
        *(CRANFIELD / n for n in ("cran.all.1400", "cran.qry", "cranqrel")),
        out,
        quiet=True,
        seed=SEED,
    )
    assert output_digest(out) == "988f0a2295bb0440f042f34a41f22bebec09f6a6b6336e83a167710e6f459fb3"


# ---------------------------------------------------------------------------------------------
# CACM, as distributed: binary qrels, an empty last query, control bytes, authors and keywords.


def cacm_files() -> tuple[Path, Path, Path]:
    return CACM / "cacm.all", CACM / "query.text", CACM / "qrels.text"


@pytest.mark.parametrize(
    ("lines", "binary"),
    [
        (["01 1410  0 0", "05 2035 0 0", ""], True),  # CACM: one or two spaces before the zeros
        (["1 28 0 0.000000", "1 35 0 0.000000"], True),  # CISI
        (["1 184 2 ", "1 29 2 "], False),  # Cranfield: a grade in the third column
        (["1 184 0 0", "1 29 2"], False),  # one graded row makes the file graded
        (["1 184 0 1"], False),  # a fourth column that is not zero
        (["1 184 0 x"], False),
        (["", "  "], False),  # no judgement at all
    ],
)
def test_qrels_are_binary(lines: list[str], binary: bool) -> None:
    """oracle: the rule, applied by hand: binary iff every non-blank row is 'q d 0 0'."""
    assert qrels_are_binary(lines) is binary


def test_cacm_imports_as_distributed(tmp_path: Path) -> None:
    """oracle: the excerpt's README and a direct reading of its files: 55 records, 22 qrels rows
    for queries 1 (5 rows), 2 (3), 3 (6) and 5 (8), all 'q d 0 0', so each is relevance 1;
    64 queries and an empty '.I 0' on line 520 of query.text; 0x19 at column 39 of line 1,530
    (document 2712) and column 45 of line 1,628 (document 2857) of cacm.all. 24 of the 55 records
    have a .W; of the 31 without, one has a .K (grep), so 30 pages are headings only."""
    docs, queries, qrels = cacm_files()
    raw = docs.read_text("utf-8").splitlines()
    assert raw[1529][38] == raw[1627][44] == "\x19"
    out = tmp_path / "cacm"
    summary = import_glasgow(docs, queries, qrels, out, quiet=True, seed=SEED)
    assert (summary.pages, summary.empty_pages, summary.labels, summary.dropped_labels) == (
        55,
        30,
        22,
        0,
    )
    assert sum(summary.questions.values()) == 4 and summary.skipped_questions == 60
    assert [(w.line, w.field, w.item) for w in summary.warnings] == [
        (1530, ".W", "2712"),
        (1628, ".W", "2857"),
    ]
    assert [w.message for w in summary.warnings] == [
        "control character U+0019 at column 39 replaced by a space",
        "control character U+0019 at column 45 replaced by a space",
    ]
    assert len(summary.notes) == 2
    assert "relevance is binary" in summary.notes[0]
    assert summary.notes[1].endswith("query.text:520: record .I 0 has no fields and is skipped")
    questions = read_questions(out)
    assert [(q["id"], len(q["pages"])) for q in questions] == [
        ("1", 5),
        ("2", 3),
        ("3", 6),
        ("5", 8),
    ]
    assert {g for q in questions for g in q["pages"].values()} == {1}
    assert questions[1]["pages"] == {"2434": 1, "2863": 1, "3078": 1}
    # The page validates: no control character is left, the size of the network reads on.
    corpus = load_corpus(out / "pages")
    loaded = load_questions(out / "questions.jsonl", corpus=corpus)
    assert len(corpus) == 55 and len(loaded) == 4 and not loaded.warnings
    assert "with the size of  the network" in " ".join(corpus.page("2712").text.splitlines())
    assert corpus.page("3193").title == "Document 3193"  # its .T is empty


def test_cacm_default_page_holds_title_text_and_keywords(tmp_path: Path) -> None:
    """oracle: document 2434's record read by hand (its .T, .W, .K; .A, .B, .C, .N, .X left out
    by the default fields T,W,K)."""
    out = tmp_path / "cacm"
    import_glasgow(*cacm_files(), out, quiet=True, seed=SEED)
    text = load_corpus(out / "pages").page("2434").text
    assert text.startswith("# Using Page Residency To Select the Working Set Parameter\n\n")
    assert "Denning's method" in text and "Prieve" not in text and "CACM" not in text
    assert text.endswith(
        "\n\nKeywords: working set model, paging, program behavior,program modeling\n"
    )


def test_fields_choose_the_page_text(tmp_path: Path) -> None:
    """oracle: DOCS's record 1 read by hand, each chosen field as a paragraph in the order given
    (T always the heading); without T the heading is 'Document <n>'."""
    docs = DOCS.replace(".A\nbrenckman,m.\n", ".A\nbrenckman,m.\nsmith, j.\n.K\nlift,\n  wings\n")
    out = tmp_path / "out"
    import_glasgow(*collection(tmp_path, docs=docs), out, fields=("T", "K", "W", "A", "B"), seed=0)
    assert (out / "pages" / "01.md").read_text("utf-8").split("---\n", 2)[2] == (
        "# Wing lift in a slipstream .\n\nKeywords: lift, wings\n\na study of lift .\n\n"
        "Authors: brenckman,m.; smith, j.\n\nSource: j. ae. scs. 25, 1958, 324.\n"
    )
    import_glasgow(*collection(tmp_path, docs=docs), out, fields=("W",), seed=0, overwrite=True)
    assert (out / "pages" / "01.md").read_text("utf-8") == (
        "---\nid: 1\ntitle: Wing lift in a slipstream .\n---\n# Document 1\n\na study of lift .\n"
    )
    for bad in ((), ("T", "T"), ("T", "X"), "TW"):
        with pytest.raises(ValueError, match="fields"):
            import_glasgow(*collection(tmp_path), tmp_path / "bad", fields=bad, seed=0)


def test_an_author_query_finds_its_documents_with_authors_on_the_page(tmp_path: Path) -> None:
    """oracle: query 2 asks for papers "written either by Prieve or Udo Pooch"; the qrels judge
    2434, 2863 and 3078, and a grep of the raw cacm.all finds those two names only in the .A
    fields of exactly these three records. So with the default fields BM25 (k1 1.2, b 0.75, the
    library's index) gives each of them a score of 0, and with .A on the page they are its three
    best pages."""
    raw = (CACM / "cacm.all").read_text("utf-8")
    for name in ("Prieve", "Pooch"):
        assert raw.count(name) == {"Prieve": 2, "Pooch": 1}[name]
    for fields, expected_zero in ((("T", "W", "K"), True), (("T", "W", "K", "A"), False)):
        out = tmp_path / "-".join(fields)
        import_glasgow(*cacm_files(), out, quiet=True, seed=SEED, fields=fields)
        corpus = load_corpus(out / "pages")
        ids = [p.id for p in corpus]
        index = BM25Index(
            [tokenize(p.text, stem=False, analyzer="raglab") for p in corpus], k1=1.2, b=0.75
        )
        (question,) = [q for q in read_questions(out) if q["id"] == "2"]
        query = tokenize(question["question"], stem=False, analyzer="raglab")
        scores = index.scores(query)
        relevant = [ids.index(d) for d in ("2434", "2863", "3078")]
        if expected_zero:
            assert all(scores[i] == 0.0 for i in relevant)
        else:
            top = index.search(query, k=3)
            assert sorted(ids[i] for i in top.indices) == ["2434", "2863", "3078"]


def test_an_author_query_names_its_authors_when_a_is_chosen(tmp_path: Path) -> None:
    """Issue #30. oracle: query 2 of query.text read by hand: its .W "I am interested in
    articles written either by Prieve or Udo Pooch" and its .A lines "Prieve, B." and "Pooch,
    U."; queries 1, 3 and 5 (the excerpt's other judged ones) have no .A. With A among the
    fields, query 2's question adds "Authors: Prieve, B.; Pooch, U." as the pages write it, and
    its three judged documents (whose .A hold both names) are BM25's best three; without A, no
    question changes."""
    wanted = "I am interested in articles written either by Prieve or Udo Pooch"
    texts = {}
    for fields in (("T", "W", "K"), ("T", "W", "K", "A")):
        out = tmp_path / "-".join(fields)
        import_glasgow(*cacm_files(), out, quiet=True, seed=SEED, fields=fields)
        texts[fields] = {q["id"]: q["question"] for q in read_questions(out)}
    plain, with_authors = texts[("T", "W", "K")], texts[("T", "W", "K", "A")]
    assert plain["2"] == wanted
    assert with_authors["2"] == f"{wanted} Authors: Prieve, B.; Pooch, U."
    assert {k: v for k, v in with_authors.items() if k != "2"} == {
        k: v for k, v in plain.items() if k != "2"
    }
    corpus = load_corpus(tmp_path / "T-W-K-A" / "pages")
    ids = [p.id for p in corpus]
    index = BM25Index(
        [tokenize(p.text, stem=False, analyzer="raglab") for p in corpus], k1=1.2, b=0.75
    )
    top = index.search(tokenize(with_authors["2"], stem=False, analyzer="raglab"), k=3)
    assert sorted(ids[i] for i in top.indices) == ["2434", "2863", "3078"]


def test_control_characters_and_empty_records_in_any_file(tmp_path: Path) -> None:
    """oracle: the hand-made files read by hand: a NUL and a DEL in record 2's title (line 14,
    columns 5 and 11), a 0x19 in query 1 (line 4, column 1); an empty record 7 between documents
    and one at the end of the queries, skipped, so positions still number queries 1, 2, 3."""
    docs = DOCS.replace("heat transfer .\n", "heat\x00trans\x7ffer .\n").replace(
        ".I 10\n", ".I 7\n.I 10\n"
    )
    queries = QUERIES.replace("lift ?\n", "\x19lift ?\n") + "\n.I 0\n"
    out = tmp_path / "out"
    summary = import_glasgow(*collection(tmp_path, docs=docs, queries=queries), out, seed=SEED)
    controls = [w for w in summary.warnings if "control character" in w.message]
    assert [(Path(w.file).name, w.line, w.field, w.item) for w in controls] == [
        ("docs", 14, ".T", "2"),
        ("docs", 14, ".T", "2"),
        ("queries", 4, ".W", "1"),
    ]
    assert [w.message for w in controls] == [
        "control character U+0000 at column 5 replaced by a space",
        "control character U+007F at column 11 replaced by a space",
        "control character U+0019 at column 1 replaced by a space",
    ]
    assert [n.split(": ", 1)[1] for n in summary.notes] == [
        "record .I 7 has no fields and is skipped",
        "record .I 0 has no fields and is skipped",
    ]
    assert summary.pages == 4 and not (out / "pages" / "07.md").exists()
    assert read_questions(out)[0]["question"] == "what gives a wing lift ?"
    assert load_corpus(out / "pages").page("2").title == "heat trans fer ."
