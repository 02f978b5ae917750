"""Reading questions: locating answers, page labels, warnings and every kind of bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raglab.corpus.pages import Corpus, Page, parse_page
from raglab.corpus.passages import AnswerSpan, WholeCorpusFinder
from raglab.corpus.questions import load_questions, parse_questions
from raglab.errors import InputError


@pytest.fixture
def corpus() -> Corpus:
    pages = [
        parse_page(
            "# Returns\n\nReturns need an RMA number.\nIt is   issued by support.\n\nShort. Short.",
            stem="returns",
        ),
        parse_page("# Levels\n\nThe AL-32 has 32x magnification.", stem="levels"),
    ]
    return Corpus(tuple(pages))


def lines(*objs: Any) -> list[str]:
    return [o if isinstance(o, str) else json.dumps(o) for o in objs]


def q(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"id": "q1", "split": "train", "kind": "keyword", "question": "?"}
    base.update(kw)
    return base


def test_answer_located_ignoring_whitespace(corpus: Corpus) -> None:
    qs = parse_questions(
        lines(q(answer="Returns need an RMA number. It is issued\nby support.")), corpus=corpus
    )
    (question,) = qs.questions
    (span,) = question.spans
    text = corpus.page("returns").text
    assert span.page_id == "returns"
    assert text[span.start : span.end] == "Returns need an RMA number.\nIt is   issued by support."
    assert question.answerable and question.labels == "passage" and question.answer_words == 10


def test_out_of_corpus_question(corpus: Corpus) -> None:
    (question,) = parse_questions(lines(q(answer=None, kind="out-of-corpus")), corpus=corpus)
    assert not question.answerable and question.spans == () and question.labels == "none"


def test_repeated_answer_is_a_warning_and_every_occurrence_counts(corpus: Corpus) -> None:
    qs = parse_questions(lines(q(answer="Short.")), corpus=corpus)
    assert len(qs.questions[0].spans) == 2
    (warning,) = [w for w in qs.warnings if w.field == "answer"]
    assert warning.line == 1 and warning.item == "q1" and "occurs 2 times" in warning.message


def test_page_and_start_pick_one_occurrence(corpus: Corpus) -> None:
    text = corpus.page("returns").text
    second = text.rindex("Short.")
    qs = parse_questions(lines(q(answer="Short.", page="returns", start=second)), corpus=corpus)
    assert qs.warnings == ()
    assert qs.questions[0].spans == (AnswerSpan("returns", second, second + 6),)


def test_page_labels_plain_and_graded(corpus: Corpus) -> None:
    qs = parse_questions(
        lines(q(pages=["levels"]), q(id="q2", pages={"levels": 2, "returns": 0})), corpus=corpus
    )
    assert qs.questions[0].pages == {"levels": 1}
    # Grade 0 means not relevant and is dropped.
    assert qs.questions[1].pages == {"levels": 2}
    assert qs.questions[1].labels == "pages"


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ("{not json", None, "not valid JSON"),
        ("[1, 2]", None, "JSON object"),
        (q(answer=None, colour="red"), "colour", "unknown field"),
        ({"id": "q1", "split": "train", "kind": "k", "answer": None}, "question", "missing"),
        (q(answer=None, split="dev"), "split", "unknown split"),
        (q(answer="Not in any page."), "answer", "not found"),
        (q(), "answer", "missing field"),
        (q(answer=None, page="ghost"), "page", "names no page"),
        (q(answer="Short.", start=3), "start", "needs 'page'"),
        (q(pages=["ghost"]), "pages", "not in the corpus"),
        (q(pages="levels"), "pages", "list of page ids"),
    ],
)
def test_bad_lines_name_line_id_and_field(
    corpus: Corpus, line: Any, field: str | None, message: str
) -> None:
    with pytest.raises(InputError) as info:
        parse_questions(lines(q(id="ok", answer=None), line), corpus=corpus, source="qs.jsonl")
    (problem,) = info.value.problems
    assert problem.file == "qs.jsonl" and problem.line == 2
    assert problem.field == field
    assert message in problem.message
    assert ("qs.jsonl:2" in str(problem)) and (field is None or field in str(problem))


def test_duplicate_ids_and_all_problems_at_once(corpus: Corpus) -> None:
    with pytest.raises(InputError) as info:
        parse_questions(
            lines(q(answer=None), q(answer=None), "oops", q(id="q3", split="x", answer=None)),
            corpus=corpus,
        )
    found = [(p.line, p.field) for p in info.value.problems]
    assert found == [(2, "id"), (3, None), (4, "split")]


def test_load_questions_from_files(tmp_path: Path, corpus: Corpus) -> None:
    path = tmp_path / "q.jsonl"
    path.write_bytes(
        b'{"id": "q1", "split": "test", "kind": "k", "question": "caf\xe9", "answer": null}\n'
    )
    with pytest.raises(InputError, match="not UTF-8"):
        load_questions(path, corpus=corpus)
    with pytest.raises(InputError, match="cannot be read"):
        load_questions(tmp_path / "missing.jsonl", corpus=corpus)
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="no questions"):
        load_questions(path, corpus=corpus)


def _spans_by_hand(text: str, passage: str) -> list[tuple[int, int]]:
    """Oracle: the whitespace-insensitive search done the slow, obvious way: collapse the page
    character by character, remembering each kept character's original offset."""
    chars: list[str] = []
    offsets: list[int] = []
    previous_space = True
    for i, ch in enumerate(text):
        if ch.isspace():
            if not previous_space:
                chars.append(" ")
                offsets.append(i)
            previous_space = True
        else:
            chars.append(ch)
            offsets.append(i)
            previous_space = False
    flat, needle = "".join(chars), " ".join(passage.split())
    out, at = [], flat.find(needle)
    while needle and at != -1:
        out.append((offsets[at], offsets[at + len(needle) - 1] + 1))
        at = flat.find(needle, at + 1)
    return out


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from("ab .\n\t\r\u00a0\u2028"), max_size=60),
    passage=st.text(alphabet=st.sampled_from("ab .\n "), min_size=1, max_size=6),
)
def test_the_passage_locator_equals_a_character_by_character_search(
    text: str, passage: str
) -> None:
    corpus = Corpus((Page(id="p", title="P", text=text),), "<memory>")
    found = [(s.start, s.end) for s in WholeCorpusFinder(corpus).find(passage)]
    assert found == _spans_by_hand(text, passage)


def test_a_kind_rag_lab_does_not_know_is_a_warning_once(corpus: Corpus) -> None:
    qs = parse_questions(
        lines(
            q(answer=None, kind="keyword"),
            q(id="q2", answer=None, kind="how-to"),
            q(id="q3", answer=None, kind="how-to"),
            q(id="q4", answer=None, kind="beir"),
        ),
        corpus=corpus,
        source="qs.jsonl",
    )
    assert [str(w) for w in qs.warnings] == [
        "qs.jsonl:2, id q2, field 'kind': kind 'how-to' is not one of RAG lab's kinds (keyword, "
        "paraphrase, identifier, version, multi-sentence, out-of-corpus): counted as a new kind"
    ]
    assert [question.kind for question in qs] == ["keyword", "how-to", "how-to", "beir"]


def test_imported_kinds_are_the_importers_own() -> None:
    from raglab.corpus.questions import IMPORTED_KINDS
    from raglab.formats.beir import BEIR_KIND
    from raglab.formats.glasgow import GLASGOW_KIND

    assert IMPORTED_KINDS == (BEIR_KIND, GLASGOW_KIND)
