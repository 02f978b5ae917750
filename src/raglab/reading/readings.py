"""One question read: the packed context's sentences, the reader's best one, and where it lies.

One job: :func:`read_prepared` reads a prepared question (:class:`ReadingInput`: the packed
chunks' bounds, the sentences lying inside them and their texts, the question's term weights or, for the cosine
scoring, the question's and the candidate sentences' neural vectors, the first answer chunk's rank
and the depth the final list was cut at) into a :class:`Reading`, a pure function of those
values. The threshold is laid over a reading afterwards (:meth:`Reading.found`), so one
reading serves every threshold: the one chosen on train, the run's, and exhibit VI's sweep.
Gathering the input from a lab is the pipeline's (:mod:`raglab.pipeline.reading`); a Dask cluster
runs this step on its workers (:mod:`raglab.distributed.end_to_end`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from raglab.corpus.questions import Question
from raglab.reading.reader import (
    COVERAGE_EPSILON,
    ReaderAnswer,
    Vectors,
    quote_relation,
    read,
    read_cosine,
)
from raglab.settings import READER_ANALYZER
from raglab.text.tokens import tokenize

__all__ = ["Reading", "ReadingInput", "candidates", "read_prepared"]

# A sentence of a page: (page id, start, end), character offsets into the page text.
SentenceSpan = tuple[str, int, int]


@dataclass(frozen=True, slots=True)
class Reading:
    """What the reader saw for one question, before a threshold is applied.

    ``rank`` is the first answer chunk's rank in the final list (None: none there), ``depth``
    the depth that list was cut at (the reranker's 20, or the first stage's depth without it),
    ``k_budget`` how many of its chunks the context holds; ``cut`` says the chunking kept no chunk
    holding the answer whole."""

    q: Question
    rank: int | None
    k_budget: int
    depth: int
    best: tuple[str, int, int] | None  # (page, start, end) of the best sentence
    best_text: str | None
    best_chunk: str | None
    coverage: float  # the best sentence's score: its coverage, or its cosine
    relation: str  # the best sentence against the answer (raglab.reading.reader.quote_relation)
    cut: bool

    def found(self, threshold: float) -> bool:
        """Whether the reader quotes its best sentence at ``threshold``."""
        return self.best is not None and self.coverage >= threshold - COVERAGE_EPSILON

    @property
    def quote_correct(self) -> bool:
        return self.relation in ("inside", "contains")


@dataclass(frozen=True, slots=True)
class ReadingInput:
    """Everything :func:`read_prepared` needs for one question, and nothing of the lab.

    ``packed`` holds the chunks packed into the context, in ranking order, as (chunk id, page
    id, start, end); ``sentences`` the quotable sentences of their pages (those lying whole
    inside a packed chunk are all it needs) and ``texts`` the texts of the candidate sentences
    (:func:`candidates`) by (page, start, end); ``rank`` the first relevant chunk's rank in the final ranking (None: none
    there), ``depth`` the depth the final ranking was cut at, ``relevant`` whether the chunking
    kept any chunk holding the answer whole, ``weights`` the reader's term weights (None: plain
    coverage). For the cosine scoring ``question_vector`` holds the question's neural vector,
    shape (dim,), and ``sentence_vectors`` every candidate sentence's (:func:`candidates`) by its
    (page, start, end); both None for the other scorings."""

    q: Question
    rank: int | None
    k_budget: int
    depth: int
    relevant: bool
    packed: tuple[tuple[str, str, int, int], ...]
    sentences: Mapping[str, tuple[tuple[int, int, frozenset[str]], ...]]
    texts: Mapping[SentenceSpan, str]
    weights: Mapping[str, float] | None
    question_vector: Vectors | None = None
    sentence_vectors: Mapping[SentenceSpan, Vectors] | None = None


def candidates(
    packed: tuple[tuple[str, str, int, int], ...],
    sentences: Mapping[str, tuple[tuple[int, int, frozenset[str]], ...]],
) -> list[tuple[str, SentenceSpan, frozenset[str]]]:
    """The reader's candidate sentences, in context order: each page sentence lying whole inside
    a packed chunk, as (chunk id, (page, start, end), stemmed terms). A sentence inside two packed
    chunks (overlapping windows) is a candidate twice, once per chunk."""
    return [
        (chunk_id, (page_id, a, b), words)
        for chunk_id, page_id, start, end in packed
        for a, b, words in sentences[page_id]
        if start <= a and b <= end
    ]


def read_prepared(inp: ReadingInput) -> Reading:
    """Read one prepared question (threshold not applied: the best sentence is kept whatever
    its score, for any threshold to be laid over it)."""
    q = inp.q
    found = candidates(inp.packed, inp.sentences)
    spans = [span for _, span, _ in found]
    chunk_ids = [chunk_id for chunk_id, _, _ in found]
    answer: ReaderAnswer
    if inp.question_vector is not None:
        if inp.sentence_vectors is None:
            raise ValueError("the cosine scoring needs the candidate sentences' vectors")
        dim = len(inp.question_vector)
        vectors = np.array([inp.sentence_vectors[span] for span in spans], dtype=np.float64)
        answer = read_cosine(inp.question_vector, vectors.reshape(len(spans), dim), threshold=0.0)
    else:
        q_terms = set(tokenize(q.question, stem=True, analyzer=READER_ANALYZER))
        terms = [words for _, _, words in found]
        answer = read(q_terms, terms, threshold=0.0, weights=inp.weights)
    best = spans[answer.sentence] if answer.sentence is not None else None
    best_text = None if best is None else inp.texts[best]
    answer_spans = [(a.page_id, a.start, a.end) for a in q.spans]
    return Reading(
        q=q,
        rank=inp.rank,
        k_budget=inp.k_budget,
        depth=inp.depth,
        best=best,
        best_text=best_text,
        best_chunk=chunk_ids[answer.sentence] if answer.sentence is not None else None,
        coverage=float(answer.coverage) if answer.sentence is not None else 0.0,
        relation=quote_relation(best, answer_spans),
        cut=q.answerable and not inp.relevant,
    )
