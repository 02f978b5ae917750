"""The bundled Ostler Instruments handbook and its 80 questions meet their specification."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from raglab.corpus.pages import Corpus, load_corpus
from raglab.corpus.questions import BUNDLED_KINDS, QuestionSet, load_questions
from raglab.text.tokens import identifiers, tokenize

TWINS = [
    ("e-4107", "e-4170"),
    ("e-4012", "e-4021"),
    ("ot-220b", "ot-202b"),
    ("v3.2.1", "v3.1.2"),
    ("e-2201", "e-2210"),
    ("e-3150", "e-3105"),
    ("lr-1500", "lr-1050"),
    ("ps-1210", "ps-1201"),
    ("sv-318", "sv-381"),
    ("ft-340", "ft-430"),
    ("v2.4.0", "v2.0.4"),
]
# Customers' words against the handbook's terms (handbook-design.md, "Vocabulary gaps").
GAPS = [
    ("send it back", "return merchandise authorisation"),
    ("broken on arrival", "transit damage"),
    ("out of true", "collimation"),
    ("top bit", "tripod head"),
]


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


@pytest.fixture(scope="module")
def questions(corpus: Corpus) -> QuestionSet:
    return load_questions(corpus=corpus)


def test_size_and_shape(corpus: Corpus) -> None:
    assert 12_000 <= corpus.n_words <= 16_000
    assert 40 <= len(corpus) <= 70
    for page in corpus:
        assert page.updated is not None, page.id
        assert page.title and page.id
        assert sum(s.level == 2 for s in page.sections) >= 2, page.id
        assert page.text.isascii(), page.id


def test_identifier_twins_appear_in_similar_contexts(corpus: Corpus) -> None:
    """Each twin is on the same kind of page: both codes occur, and on a shared or sibling page."""
    where: dict[str, set[str]] = {}
    for page in corpus:
        for ident in identifiers(page.text):
            where.setdefault(ident, set()).add(page.id)
    present = [(a, b) for a, b in TWINS if a in where and b in where]
    assert len(present) >= 6
    for a, b in present:
        assert where[a] & where[b], (a, b)


def test_superseded_policies(corpus: Corpus) -> None:
    superseded = [p for p in corpus if p.status == "superseded"]
    chains: dict[str, list[str]] = {}
    for page in corpus:
        if page.status == "current" and page.supersedes:
            chain = [page.id]
            older = page.supersedes
            while older:
                chain.append(older)
                old = corpus.page(older)
                assert old.status == "superseded"
                assert (
                    old.updated is not None
                    and page.updated is not None
                    and old.updated < page.updated
                )
                older = old.supersedes or ""
            chains[page.id] = chain
    assert len(chains) >= 3 and max(len(c) for c in chains.values()) >= 3
    assert {p.id for p in superseded} <= {i for c in chains.values() for i in c[1:]}


def test_vocabulary_gaps(corpus: Corpus) -> None:
    """The handbook speaks its own terms; customers' phrases are rare and glossed in one guide."""
    text = " ".join(p.text.lower() for p in corpus)
    guide = corpus.page("customer-language").text.lower()
    for customer, term in GAPS:
        assert customer in guide and term in guide
        assert text.count(term) >= 3 * text.count(customer), (customer, term)


def test_question_counts(questions: QuestionSet) -> None:
    assert len(questions) == 80
    train, test = questions.split("train"), questions.split("test")
    assert (len(train), len(test)) == (50, 30)
    assert sum(q.answerable for q in test) == 26
    assert 5 <= sum(not q.answerable for q in train) <= 8
    for split in (train, test):
        assert {q.kind for q in split} == set(BUNDLED_KINDS)
    assert [q.id for q in questions] == [f"q{i:02d}" for i in range(1, 81)]


def test_every_answer_occurs_exactly_once(questions: QuestionSet) -> None:
    assert questions.warnings == ()
    for q in questions:
        assert (len(q.spans) == 1) == (q.kind != "out-of-corpus"), q.id
        assert (q.answer is None) == (q.kind == "out-of-corpus"), q.id


def test_multi_sentence_answers_are_two_to_four_sentences_of_40_to_90_words(
    questions: QuestionSet,
) -> None:
    multi = [q for q in questions if q.kind == "multi-sentence"]
    assert len(multi) >= 8
    for q in multi:
        assert q.answer is not None
        sentences = len(re.findall(r"[.!?](?:\s|$)", q.answer.strip()))
        assert 2 <= sentences <= 4 and 40 <= q.answer_words <= 90, q.id


def test_version_answers_come_from_current_pages_with_superseded_versions(
    corpus: Corpus, questions: QuestionSet
) -> None:
    for q in questions:
        if q.kind == "version":
            page = corpus.page(q.spans[0].page_id)
            assert page.status == "current" and page.supersedes, q.id


def test_identifier_questions_name_a_twin(questions: QuestionSet) -> None:
    twins = {x for pair in TWINS for x in pair}
    for q in questions:
        if q.kind == "identifier":
            assert identifiers(q.question) & twins, q.id


def test_some_answers_use_a_word_form_the_question_does_not(questions: QuestionSet) -> None:
    """Word forms: a question token absent from its answer whose stem the answer has."""
    found = []
    for q in questions:
        if q.answer is None:
            continue
        said = set(tokenize(q.answer, stem=False, analyzer="raglab"))
        said_stems = set(tokenize(q.answer, stem=True, analyzer="raglab"))
        if any(
            t not in said and tokenize(t, stem=True, analyzer="raglab")[0] in said_stems
            for t in set(tokenize(q.question, stem=False, analyzer="raglab"))
        ):
            found.append(q.id)
    assert len(found) >= 3, found


def test_kinds_in_both_splits(questions: QuestionSet) -> None:
    counts = Counter((q.split, q.kind) for q in questions)
    for kind in BUNDLED_KINDS:
        assert counts["train", kind] >= 1 and counts["test", kind] >= 1
