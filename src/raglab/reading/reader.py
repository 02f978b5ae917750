"""Packing the context into the word budget, and the extractive reader that quotes one sentence.

After ranking, the pipeline packs chunks in rank order into a context window of
``budget`` words, the run's ``budget`` setting (:func:`pack`). The reader (:func:`read`) looks at the
sentences of the packed context and quotes the one that covers the largest share of the question's
content terms, or says "not found" when even the best sentence covers too little. No language
model runs: the answer is one sentence of the context, so its correctness (:func:`is_correct`,
:func:`quote_relation`) is a comparison of character spans.

Coverage is plain (every question term counts once) or IDF-weighted (rare terms count more), with
the IDF taken over a collection of documents (:func:`document_frequencies`, :func:`idf_weights`).
A third scoring shares no word at all: :func:`read_cosine` quotes the sentence whose neural vector
lies closest to the question's, so a paraphrase can be found. All three are defined in
docs/design.md#reader.

Public API: :func:`pack`, :class:`ReaderAnswer`, :func:`read`, :func:`read_cosine`,
:func:`cosines`, :func:`is_correct`, :func:`quote_relation`, :func:`document_frequencies`,
:func:`idf_weights`.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from raglab.base.ranking import FloatArray, IntArray

# New constant of this module: coverages are ratios of small integers compared against decimal
# thresholds (0.35 = 7/20), so "equal to the threshold" is decided with this float slack.
COVERAGE_EPSILON = 1e-12

# Vectors of any float type: the neural encoder's float32, or float64.
Vectors = npt.NDArray[np.floating[Any]]

# A span of a page: (page id, start, end), character offsets into the page text, end exclusive.
Span = tuple[str, int, int]


def pack(chunk_words: Sequence[int] | IntArray, *, budget: int) -> int:
    """k_budget: how many chunks, taken in rank order, fit a context of ``budget`` words.

    ``chunk_words[i]`` is the word count of the chunk at rank i + 1. Chunks are taken while the
    running total stays within the budget, k_budget = max{k : Σ_{i<k} words_i ≤ W}; packing stops
    at the first chunk that does not fit (a smaller chunk further down is not used to fill the
    gap, so the context is always a prefix of the ranking). A first chunk larger than W gives 0.
    """
    words = np.asarray(chunk_words)
    if words.ndim != 1:
        raise ValueError("chunk_words must be a 1-d sequence of word counts")
    if words.size and not np.issubdtype(words.dtype, np.integer):
        raise ValueError("chunk_words must hold integers")
    if np.any(words < 0):
        raise ValueError("word counts must be non-negative")
    if budget < 0:
        raise ValueError("budget must be non-negative")
    over = np.flatnonzero(np.cumsum(words, dtype=np.int64) > budget)
    return int(over[0]) if over.size else int(words.size)


@dataclass(frozen=True, slots=True)
class ReaderAnswer:
    """The reader's answer for one question.

    ``found`` says whether a sentence is quoted; ``sentence`` is its index into the context's
    sentences (``None`` when not found); ``coverage`` is the best sentence's score, its coverage
    or, from :func:`read_cosine`, its cosine (reported even when it falls below the threshold);
    ``coverages`` has shape (n_sentences,) and holds every sentence's score, for display.
    """

    found: bool
    sentence: int | None
    coverage: float
    coverages: FloatArray


def document_frequencies(docs: Iterable[Collection[str]]) -> tuple[int, dict[str, int]]:
    """(N, df): the number of documents, and for each term n_t, how many documents hold it.

    A term repeated inside one document counts once for it.
    """
    n = 0
    df: dict[str, int] = {}
    for doc in docs:
        n += 1
        for term in set(doc):
            df[term] = df.get(term, 0) + 1
    return n, df


def idf_weights(terms: Collection[str], df: Mapping[str, int], n_docs: int) -> dict[str, float]:
    """Each term's IDF over a collection of ``n_docs`` documents, n_t of which hold it:

        idf(t) = ln(1 + (N − n_t + 0.5) / (n_t + 0.5))

    Lucene's IDF, as BM25 uses it (docs/design.md#bm25): always positive and finite, so a term
    found in no document (n_t = 0) gets the largest weight rather than an infinite one.
    """
    if n_docs < 0:
        raise ValueError("n_docs must be non-negative")
    out = {}
    for t in set(terms):
        n_t = df.get(t, 0)
        if not 0 <= n_t <= n_docs:
            raise ValueError(f"document frequency of {t!r} must lie in [0, {n_docs}], got {n_t}")
        out[t] = math.log1p((n_docs - n_t + 0.5) / (n_t + 0.5))
    return out


def read(
    question_terms: Collection[str],
    sentences: Sequence[Collection[str]],
    *,
    threshold: float,
    weights: Mapping[str, float] | None = None,
) -> ReaderAnswer:
    """Quote the sentence that covers the largest share of the question's content terms.

    With Q the set of the question's content terms and S_j the terms of sentence j of the packed
    context (in context order, so earlier sentences come from higher-ranked chunks):

        coverage_j = |Q ∩ S_j| / |Q|                                  (weights None)
        coverage_j = Σ_{t ∈ Q ∩ S_j} w(t) / Σ_{t ∈ Q} w(t)            (weights w, e.g. IDF)

    With every w(t) equal the two agree; with IDF weights a rare question word counts more than a
    common one. ``weights`` must give every term of Q a finite weight above 0 (sums use
    :func:`math.fsum`, so they do not depend on the order of the terms).

    The reader quotes j* = argmax_j coverage_j, ties going to the earliest sentence. It answers
    "not found" when coverage_{j*} < ``threshold``; a coverage equal to the threshold counts as
    found (compared with a 1e-12 slack for floating point, so 7/20 meets a threshold of 0.35).
    It also answers "not found" when the question has no content terms, when there are no
    sentences, or when no sentence shares a single term with the question (so a threshold of 0
    never quotes a sentence unrelated to the question). Terms are compared as sets: repeats
    count once.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must lie in [0, 1], got {threshold}")
    q = set(question_terms)
    n = len(sentences)
    if weights is not None:
        for t in q:
            w = weights.get(t)
            if w is None or not math.isfinite(w) or w <= 0:
                raise ValueError(f"weight of {t!r} must be a finite number above 0, got {w!r}")
    if not q or n == 0:
        return ReaderAnswer(False, None, 0.0, np.zeros(n, dtype=np.float64))
    if weights is None:
        coverages = np.array([len(q.intersection(s)) for s in sentences], dtype=np.float64) / len(q)
    else:
        total = math.fsum(weights[t] for t in q)
        shared = [math.fsum(weights[t] for t in q.intersection(s)) for s in sentences]
        coverages = np.array(shared, dtype=np.float64) / total
    best = int(np.argmax(coverages))  # first maximum: the earliest sentence wins a tie
    coverage = float(coverages[best])
    found = coverage > 0.0 and coverage >= threshold - COVERAGE_EPSILON
    return ReaderAnswer(found, best if found else None, coverage, coverages)


def cosines(question_vector: Vectors, sentence_vectors: Vectors) -> FloatArray:
    """cos_j = q · s_j / (‖q‖ ‖s_j‖) for each row s_j of ``sentence_vectors``, shape (n, dim),
    against ``question_vector`` q, shape (dim,): shape (n,), float64, clipped to [-1, 1].

    Computed in float64 whatever the vectors' type; a zero vector (q or a row) has cosine 0.
    """
    q = np.asarray(question_vector, dtype=np.float64)
    s = np.asarray(sentence_vectors, dtype=np.float64)
    if q.ndim != 1:
        raise ValueError(f"question_vector must be 1-d, got shape {q.shape}")
    if s.ndim != 2 or s.shape[1] != q.shape[0]:
        raise ValueError(f"sentence_vectors must have shape (n, {q.shape[0]}), got shape {s.shape}")
    if not (np.isfinite(q).all() and np.isfinite(s).all()):
        raise ValueError("the vectors must be finite")
    norms = np.linalg.norm(s, axis=1) * np.linalg.norm(q)
    dots = s @ q
    out = np.zeros(s.shape[0], dtype=np.float64)
    np.divide(dots, norms, out=out, where=norms > 0)
    return np.clip(out, -1.0, 1.0)


def read_cosine(
    question_vector: Vectors, sentence_vectors: Vectors, *, threshold: float
) -> ReaderAnswer:
    """Quote the sentence whose vector lies closest to the question's, by cosine.

    With q the question's neural vector and s_j that of sentence j of the packed context (in
    context order), each encoded alone by the same model:

        cos_j = q · s_j / (‖q‖ ‖s_j‖)                               (:func:`cosines`)

    The reader quotes j* = argmax_j cos_j, ties going to the earliest sentence, exactly as
    :func:`read` does with coverage. It answers "not found" when cos_{j*} < ``threshold`` (equal
    counts as found, with the same 1e-12 slack), when there are no sentences, or when cos_{j*}
    ≤ 0: no sentence points the question's way at all, the cosine's "shares no term" (so a
    threshold of 0 never quotes a sentence unrelated to the question). Unlike coverage it needs
    no shared word, so a sentence that paraphrases the question can be quoted.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must lie in [0, 1], got {threshold}")
    scores = cosines(question_vector, sentence_vectors)
    if scores.size == 0:
        return ReaderAnswer(False, None, 0.0, scores)
    best = int(np.argmax(scores))  # first maximum: the earliest sentence wins a tie
    score = float(scores[best])
    found = score > 0.0 and score >= threshold - COVERAGE_EPSILON
    return ReaderAnswer(found, best if found else None, score, scores)


def _check_span(name: str, span: Span) -> None:
    if len(span) != 3:
        raise ValueError(f"{name} must be a (page_id, start, end) triple, got {span!r}")
    _, start, end = span
    if not 0 <= start <= end:
        raise ValueError(f"{name} must satisfy 0 <= start <= end, got {span!r}")


def is_correct(quote_span: Span | None, answer_spans: Sequence[Span]) -> bool:
    """Whether the reader's quote answers the question.

    Spans are ``(page_id, start, end)`` triples of character offsets into the page text, end
    exclusive. ``quote_span`` is the quoted sentence (``None`` for "not found"); ``answer_spans``
    lists every occurrence of the answer passage (empty for an out-of-corpus question).

    Answerable: correct when, on the same page as some answer span, the quote lies inside it
    (a long answer passage) or contains it (an answer shorter than a sentence); a partial overlap
    or another page is wrong, and so is "not found". Out of corpus: correct only when nothing was
    quoted.
    """
    for i, span in enumerate(answer_spans):
        _check_span(f"answer_spans[{i}]", span)
    if quote_span is None:
        return len(answer_spans) == 0
    _check_span("quote_span", quote_span)
    page, q_start, q_end = quote_span
    return any(
        page == a_page
        and ((a_start <= q_start and q_end <= a_end) or (q_start <= a_start and a_end <= q_end))
        for a_page, a_start, a_end in answer_spans
    )


#: How a quote lies against the answer, best first: the first two are correct quotes.
QUOTE_RELATIONS = (
    "inside",
    "contains",
    "overlaps",
    "same page",
    "other page",
    "no answer",
    "not found",
)


def quote_relation(quote_span: Span | None, answer_spans: Sequence[Span]) -> str:
    """Where the quote lies against the nearest answer occurrence (:data:`QUOTE_RELATIONS`).

    ``inside`` (the quote lies within an answer occurrence), ``contains`` (the quote holds a
    whole occurrence, an answer shorter than a sentence), ``overlaps`` (they share characters
    but neither holds the other), ``same page`` (elsewhere on an answer's page), ``other page``,
    ``no answer`` (a quote, for a question without an answer occurrence) or ``not found`` (no
    quote). With several occurrences the first relation in that order wins.
    A quote is correct (:func:`is_correct`, answerable question) exactly when the relation is
    ``inside`` or ``contains``.
    """
    for i, span in enumerate(answer_spans):
        _check_span(f"answer_spans[{i}]", span)
    if quote_span is None:
        return "not found"
    _check_span("quote_span", quote_span)
    if not answer_spans:
        return "no answer"
    page, q_start, q_end = quote_span
    found = {"other page"}
    for a_page, a_start, a_end in answer_spans:
        if a_page != page:
            continue
        if a_start <= q_start and q_end <= a_end:
            found.add("inside")
        elif q_start <= a_start and a_end <= q_end:
            found.add("contains")
        elif q_start < a_end and a_start < q_end:
            found.add("overlaps")
        else:
            found.add("same page")
    return next(r for r in QUOTE_RELATIONS if r in found)
