"""Exhibit I: the fixed chunker's answer-intact rate against its size, and an answer among its chunks.

:func:`intact_curve` (measured answer-intact rate of the fixed chunker against its size, beside the
closed form's prediction) and :func:`answer_view` (an answer passage with the chunk boundaries that
fall near it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from raglab.base.ranking import IntArray
from raglab.chunking.chunkers import fixed_window_spans
from raglab.chunking.closed_forms import cut_probabilities
from raglab.corpus.questions import Question
from raglab.pipeline.cache import CacheKind
from raglab.pipeline.exhibits._shared import question
from raglab.pipeline.lab import Lab
from raglab.run_settings import ChunkingKey

# Sizes at which the fixed chunker is run for the intact-rate chart (words).
CURVE_SIZES = tuple(range(20, 401, 20))
# The closed form is drawn at every whole size in this range.
CURVE_MAX_SIZE = 400
# Overlaps whose curves :func:`warm_later` builds (the web lab's overlap slider: 0 to 100 by 5).
CURVE_OVERLAPS = tuple(range(0, 101, 5))
# Characters of page text shown on each side of an answer passage.
ANSWER_CONTEXT_CHARS = 260


@dataclass(frozen=True, slots=True)
class IntactCurve:
    """Answer-intact rate of the fixed chunker at one overlap, measured and predicted.

    ``sizes``/``measured`` are the chunker run for real; ``predicted_sizes``/``predicted`` are the
    closed form 1 - mean P(cut) over the same answers at every whole size.
    """

    overlap: int
    split: str
    total: int
    sizes: tuple[int, ...]
    measured: tuple[float, ...]
    intact: tuple[int, ...]
    predicted_sizes: tuple[int, ...]
    predicted: tuple[float, ...]


def _passage_questions(lab: Lab, split: str) -> list[Question]:
    return [q for q in lab.questions if q.spans and (split == "all" or q.split == split)]


def _window_contains(windows: tuple[IntArray, IntArray] | None, start: int, end: int) -> bool:
    """Whether one of a page's fixed windows (starts, ends; both ascending) holds [start, end)."""
    if windows is None:
        return False
    starts, ends = windows
    k = int(np.searchsorted(starts, start, side="right"))
    return bool((ends[:k] >= end).any())


#: The answer-intact curve by (overlap, split).
INTACT_CURVES: CacheKind[tuple[int, str], IntactCurve] = CacheKind("intact curves", 64)


def intact_curve(lab: Lab, *, overlap: int, split: str = "test") -> IntactCurve:
    """The fixed chunker at every size of :data:`CURVE_SIZES` above ``overlap``.

    An answer is intact when some chunk contains one of its spans, exactly as
    :func:`~raglab.pipeline.chunking_report.chunking_report` counts it. Only where the chunks
    start and end matters here, so each size takes the windows
    :func:`~raglab.chunking.chunkers.chunk_fixed` would cut (:func:`~raglab.chunking.chunkers.fixed_window_spans`)
    from the lab's word offsets instead of building chunks, and the sweep does not crowd the
    lab's cache of tokenised chunk sets.
    """
    if split not in ("train", "test", "all"):
        raise ValueError(f"split must be train, test or all; not {split!r}")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 0:
        raise ValueError(f"overlap must be a whole number of words >= 0, not {overlap!r}")
    if overlap >= CURVE_MAX_SIZE:
        raise ValueError(f"overlap must be below {CURVE_MAX_SIZE} words for the chart")

    def build() -> IntactCurve:
        qs = _passage_questions(lab, split)
        sizes = [s for s in CURVE_SIZES if s > overlap]
        pages = sorted({sp.page_id for q in qs for sp in q.spans})
        intact: list[int] = []
        for size in sizes:
            windows = {
                page: fixed_window_spans(lab.word_offsets[page], size=size, overlap=overlap)
                for page in pages
                if page in lab.word_offsets
            }
            intact.append(
                sum(
                    any(
                        _window_contains(windows.get(sp.page_id), sp.start, sp.end)
                        for sp in q.spans
                    )
                    for q in qs
                )
            )
        total = len(qs)
        lengths = [q.answer_words for q in qs]
        predicted_sizes = list(range(max(overlap + 1, 2), CURVE_MAX_SIZE + 1))
        predicted = [
            1.0 - sum(cut_probabilities(lengths, size=s, overlap=overlap)) / total if total else 1.0
            for s in predicted_sizes
        ]
        return IntactCurve(
            overlap=overlap,
            split=split,
            total=total,
            sizes=tuple(sizes),
            measured=tuple(n / total if total else 1.0 for n in intact),
            intact=tuple(intact),
            predicted_sizes=tuple(predicted_sizes),
            predicted=tuple(predicted),
        )

    return lab.caches.of(INTACT_CURVES).get((overlap, split), build)


@dataclass(frozen=True, slots=True)
class Boundary:
    """A chunk edge inside an answer's excerpt: ``offset`` is relative to the excerpt."""

    offset: int
    kind: str  # "start" or "end"
    chunk: str


@dataclass(frozen=True, slots=True)
class AnswerView:
    """An answer passage in its page, with the chunk boundaries drawn through it."""

    id: str
    page: str
    title: str
    excerpt: str
    answer_start: int  # offsets into ``excerpt``
    answer_end: int
    boundaries: tuple[Boundary, ...]
    intact: bool
    containing: tuple[str, ...]  # chunks that hold the whole answer
    touching: tuple[str, ...]  # chunks that hold some of it


def answer_view(lab: Lab, question_id: str, key: ChunkingKey) -> AnswerView | None:
    """The first located span of a question's answer, with the chunks of ``key`` around it.

    ``None`` for a question without an answer passage (out of corpus, or labelled by pages).
    """
    q = question(lab, question_id)
    if not q.spans:
        return None
    cs = lab.indexes.chunk_set(key)
    span = q.spans[0]
    page = lab.corpus.page(span.page_id)
    text = page.text
    lo = max(0, span.start - ANSWER_CONTEXT_CHARS)
    hi = min(len(text), span.end + ANSWER_CONTEXT_CHARS)
    # Snap the excerpt to whitespace so it opens and closes on whole words.
    if lo > 0:
        gap = text.find(" ", lo, span.start)
        lo = gap + 1 if gap != -1 else lo
    if hi < len(text):
        gap = text.rfind(" ", span.end, hi)
        hi = gap if gap != -1 else hi
    boundaries: list[Boundary] = []
    touching: list[str] = []
    for c in cs.chunks:
        if c.page_id != page.id or c.end <= lo or c.start >= hi:
            continue
        if lo <= c.start <= hi:
            boundaries.append(Boundary(c.start - lo, "start", c.id))
        if lo <= c.end <= hi:
            boundaries.append(Boundary(c.end - lo, "end", c.id))
        if c.start < span.end and c.end > span.start:
            touching.append(c.id)
    boundaries.sort(key=lambda b: (b.offset, b.kind != "end"))
    containing = tuple(cs.chunks[i].id for i in sorted(cs.relevance(q)))
    return AnswerView(
        id=q.id,
        page=page.id,
        title=page.title,
        excerpt=text[lo:hi],
        answer_start=span.start - lo,
        answer_end=span.end - lo,
        boundaries=tuple(boundaries),
        intact=bool(containing),
        containing=containing,
        touching=tuple(touching),
    )
