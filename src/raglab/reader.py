"""The end-to-end stage: packing the context and the extractive reader.

After ranking, the pipeline packs chunks in rank order into a context window of
:data:`~raglab._config.BUDGET_WORDS` words (:func:`pack`). The reader (:func:`read`) looks at the
sentences of the packed context and quotes the one that covers the largest share of the question's
content terms, or says "not found" when even the best sentence covers too little. No language
model runs: the answer is one sentence of the context, so its correctness (:func:`is_correct`) is a
comparison of character spans.

Public API: :func:`pack`, :class:`ReaderAnswer`, :func:`read`, :func:`is_correct`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from raglab._config import BUDGET_WORDS
from raglab._types import FloatArray

# New constant of this module: coverages are ratios of small integers compared against decimal
# thresholds (0.35 = 7/20), so "equal to the threshold" is decided with this float slack.
COVERAGE_EPSILON = 1e-12

# A span of a page: (page id, start, end), character offsets into the page text, end exclusive.
Span = tuple[str, int, int]


def pack(chunk_words: Sequence[int], *, budget: int = BUDGET_WORDS) -> int:
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
    sentences (``None`` when not found); ``coverage`` is the best sentence's coverage (reported
    even when it falls below the threshold); ``coverages`` has shape (n_sentences,) and holds every
    sentence's coverage, for display.
    """

    found: bool
    sentence: int | None
    coverage: float
    coverages: FloatArray


def read(
    question_terms: Collection[str],
    sentences: Sequence[Collection[str]],
    *,
    threshold: float,
) -> ReaderAnswer:
    """Quote the sentence that covers the largest share of the question's content terms.

    With Q the set of the question's content terms and S_j the terms of sentence j of the packed
    context (in context order, so earlier sentences come from higher-ranked chunks):

        coverage_j = |Q ∩ S_j| / |Q|

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
    if not q or n == 0:
        return ReaderAnswer(False, None, 0.0, np.zeros(n, dtype=np.float64))
    coverages = np.array([len(q.intersection(s)) for s in sentences], dtype=np.float64) / len(q)
    best = int(np.argmax(coverages))  # first maximum: the earliest sentence wins a tie
    coverage = float(coverages[best])
    found = coverage > 0.0 and coverage >= threshold - COVERAGE_EPSILON
    return ReaderAnswer(found, best if found else None, coverage, coverages)


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
