"""What a questions file asks to locate, and a finder over passages located beforehand.

Oracles: hand-written lines (which pairs each gives) and :class:`WholeCorpusFinder` on the
handbook (what the fallback finds).
"""

from __future__ import annotations

import json

from raglab.corpus.pages import load_corpus
from raglab.corpus.passages import AnswerSpan, LocatedPassages, WholeCorpusFinder, answer_needles


def test_needles_are_the_answers_with_their_pages() -> None:
    lines = [
        json.dumps({"id": "a", "answer": "E-4107 fault", "page": "p1"}),
        "",
        json.dumps({"id": "b", "answer": "E-4107 fault"}),
        json.dumps({"id": "c", "answer": None}),
        json.dumps({"id": "d", "answer": "   "}),
        json.dumps({"id": "e", "answer": "twice", "page": 7}),  # a bad page: every page
        "not json",
        "[1, 2]",
        json.dumps({"id": "f", "answer": "E-4107 fault", "page": "p1"}),  # asked again
    ]
    assert answer_needles(lines) == [
        ("E-4107 fault", "p1"),
        ("E-4107 fault", None),
        ("twice", None),
    ]


def test_located_passages_answer_from_their_table_then_the_fallback() -> None:
    corpus = load_corpus()
    whole = WholeCorpusFinder(corpus)
    built: list[int] = []

    def fallback() -> WholeCorpusFinder:
        built.append(1)
        return whole

    span = AnswerSpan("somewhere", 3, 9)
    located = LocatedPassages({("kept", None): [span]}, fallback)
    assert located.find("kept") == [span]
    assert built == []
    want = whole.find("the", None)
    assert len(want) > 1
    assert located.find("the") == want
    assert built == [1]


def test_a_finder_over_some_pages_finds_only_there() -> None:
    corpus = load_corpus()
    page = next(iter(corpus))
    whole = WholeCorpusFinder([page])
    words = " ".join(page.text.split()[:5])
    spans = whole.find(words)
    assert spans and all(s.page_id == page.id for s in spans)
