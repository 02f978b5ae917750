"""Exhibit VI: the whole pipeline, from the cut to the quoted sentence, with a diagnosis per miss.

For each question: rank the chunks, pack them in rank order into a budget of W words (k_budget is
how many fit), take the page sentences lying whole inside the packed chunks, and let the reader
quote the one covering the largest share of the question's stemmed content terms (below the
threshold it says "not found").

Every miss gets one diagnosis, checked in pipeline order (DESIGN.md): ``cut`` (no chunk holds the
whole answer), ``not retrieved`` (no answer chunk in the first FUSION_DEPTH), ``past budget`` (an
answer chunk ranked, but past k_budget), ``reader`` (the answer was in the context but the reader
quoted another sentence or none); an out-of-corpus question answered anyway is a ``false answer``.
Accuracy carries a Wilson 95% interval; the bound is the share of answerable questions whose answer
chunk fits the budget, which caps the accuracy on answerable questions.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from raglab import _config as C
from raglab._types import Ranking
from raglab.metrics import first_relevant_rank
from raglab.pipeline.lab import ChunkingKey, Lab
from raglab.pipeline.reranking import choose_lambda, rerank, train_reranker, with_mmr
from raglab.pipeline.retrieval import RetrievalSettings, rank
from raglab.questions import Question
from raglab.reader import is_correct, pack, read
from raglab.stats import wilson_interval
from raglab.text import tokenize

DIAGNOSES = ("cut", "not retrieved", "past budget", "reader", "false answer")
OUTCOMES = ("correct", *DIAGNOSES)


@dataclass(frozen=True, slots=True)
class RunSettings:
    """Every setting of an end-to-end run. ``threshold=None`` and ``mmr_lambda=None`` with
    ``mmr=True`` mean "choose on the training split"."""

    chunker: str = C.RETRIEVAL_CHUNKER
    size: int | None = None
    overlap: int | None = None
    retriever: str = C.DEFAULT_RETRIEVER
    k1: float = C.BM25_K1
    b: float = C.BM25_B
    weight: float = 0.5
    rerank: bool = True
    mmr: bool = True
    mmr_lambda: float | None = None
    budget: int = C.BUDGET_WORDS
    threshold: float | None = None

    def __post_init__(self) -> None:
        if self.budget < 1:
            raise ValueError(f"budget must be at least 1 word, not {self.budget}")
        if self.threshold is not None and not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"threshold must lie in [0, 1], not {self.threshold}")
        if self.mmr_lambda is not None and not 0.0 <= self.mmr_lambda <= 1.0:
            raise ValueError(f"mmr_lambda must lie in [0, 1], not {self.mmr_lambda}")
        if self.mmr and not self.rerank:
            raise ValueError("MMR reorders the reranker's list: it needs rerank=True")
        self.retrieval  # validates chunker and retriever  # noqa: B018

    @property
    def chunking(self) -> ChunkingKey:
        return ChunkingKey(self.chunker, self.size, self.overlap).resolved()

    @property
    def retrieval(self) -> RetrievalSettings:
        return RetrievalSettings(self.retriever, self.k1, self.b, self.weight, self.chunking)


@dataclass(frozen=True, slots=True)
class QuestionOutcome:
    id: str
    question: str
    kind: str
    answerable: bool
    outcome: str  # "correct" or a diagnosis
    rank: int | None  # rank of the first answer chunk in the final list
    k_budget: int
    quote: str | None
    quote_chunk: str | None
    coverage: float


@dataclass(frozen=True, slots=True)
class RunResult:
    settings: RunSettings
    split: str
    threshold: float
    mmr_lambda: float | None
    outcomes: tuple[QuestionOutcome, ...]
    correct: int
    n: int
    accuracy: float
    interval: tuple[float, float]
    answerable: int
    answerable_correct: int
    bound: float
    funnel: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class _Reading:
    """What the reader saw for one question, before a threshold is applied."""

    q: Question
    rank: int | None
    k_budget: int
    in_retrieved: bool
    best: tuple[str, int, int] | None  # (page, start, end) of the best sentence
    best_text: str | None
    best_chunk: str | None
    coverage: float
    quote_correct: bool
    cut: bool


def final_ranking(lab: Lab, q: Question, s: RunSettings, lam: float | None) -> Ranking:
    if not s.rerank:
        return rank(lab, q, s.retrieval)
    reranker = train_reranker(lab, s.retrieval)
    reranked = rerank(lab, q, reranker)
    if s.mmr and lam is not None:
        return with_mmr(lab, reranked, lam=lam, reranker=reranker)
    return reranked


def _read_one(lab: Lab, q: Question, s: RunSettings, lam: float | None) -> _Reading:
    cs = lab.chunk_set(s.chunking)
    ranking = final_ranking(lab, q, s, lam)
    rel = cs.relevance(q)
    first = first_relevant_rank(ranking, rel) if rel else None
    k_budget = pack([int(cs.n_words[i]) for i in ranking.indices.tolist()], budget=s.budget)
    spans: list[tuple[str, int, int]] = []
    terms: list[set[str]] = []
    texts: list[str] = []
    chunk_ids: list[str] = []
    for i in ranking.indices[:k_budget].tolist():
        c = cs.chunks[i]
        page = lab.corpus.page(c.page_id)
        for a, b, words in lab.sentences(c.page_id):
            if c.start <= a and b <= c.end:
                spans.append((c.page_id, a, b))
                texts.append(page.text[a:b])
                terms.append(set(words))
                chunk_ids.append(c.id)
    answer = read(set(tokenize(q.question, stem=True)), terms, threshold=0.0)
    best = spans[answer.sentence] if answer.sentence is not None else None
    answer_spans = [(a.page_id, a.start, a.end) for a in q.spans]
    return _Reading(
        q=q,
        rank=first,
        k_budget=k_budget,
        in_retrieved=first is not None and first <= C.FUSION_DEPTH,
        best=best,
        best_text=texts[answer.sentence] if answer.sentence is not None else None,
        best_chunk=chunk_ids[answer.sentence] if answer.sentence is not None else None,
        coverage=float(answer.coverage) if answer.sentence is not None else 0.0,
        quote_correct=best is not None and bool(answer_spans) and is_correct(best, answer_spans),
        cut=q.answerable and not rel,
    )


def _outcome(r: _Reading, threshold: float) -> str:
    found = r.best is not None and r.coverage >= threshold - 1e-12
    if not r.q.answerable:
        return "correct" if not found else "false answer"
    if found and r.quote_correct:
        return "correct"
    if r.cut:
        return "cut"
    if not r.in_retrieved:
        return "not retrieved"
    if r.rank is None or r.rank > r.k_budget:
        return "past budget"
    return "reader"


def _readings(lab: Lab, split: str, s: RunSettings, lam: float | None) -> list[_Reading]:
    key = ("readings", split, s, lam)
    value = lab.cache.get(key, lambda: [_read_one(lab, q, s, lam) for q in lab.split(split)])
    assert isinstance(value, list)
    return value


def resolve_lambda(lab: Lab, s: RunSettings) -> float | None:
    if not (s.rerank and s.mmr):
        return None
    if s.mmr_lambda is not None:
        return s.mmr_lambda
    return choose_lambda(lab, train_reranker(lab, s.retrieval))


def choose_threshold(lab: Lab, s: RunSettings) -> float:
    """The reader threshold maximising training accuracy; ties go to the smallest threshold."""
    readings = _readings(lab, "train", s, resolve_lambda(lab, s))
    best = max(
        C.READER_THRESHOLDS,
        key=lambda t: (sum(_outcome(r, t) == "correct" for r in readings), -t),
    )
    return float(best)


def run(lab: Lab, s: RunSettings = RunSettings(), *, split: str = "test") -> RunResult:
    """Run the whole pipeline on a split and diagnose every miss."""
    if any(q.labels == "pages" for q in lab.questions):
        raise ValueError(
            "the end-to-end run needs answer passages: these questions are labelled by relevant "
            "pages, which say where an answer is but not which sentence states it"
        )
    lam = resolve_lambda(lab, s)
    threshold = choose_threshold(lab, s) if s.threshold is None else s.threshold
    outcomes = []
    for r in _readings(lab, split, s, lam):
        outcome = _outcome(r, threshold)
        found = r.best is not None and r.coverage >= threshold - 1e-12
        outcomes.append(
            QuestionOutcome(
                id=r.q.id,
                question=r.q.question,
                kind=r.q.kind,
                answerable=r.q.answerable,
                outcome=outcome,
                rank=r.rank,
                k_budget=r.k_budget,
                quote=r.best_text if found else None,
                quote_chunk=r.best_chunk if found else None,
                coverage=r.coverage,
            )
        )
    n = len(outcomes)
    correct = sum(o.outcome == "correct" for o in outcomes)
    answerable = [o for o in outcomes if o.answerable]
    fits = sum(o.rank is not None and o.rank <= o.k_budget for o in answerable)
    funnel = {name: sum(o.outcome == name for o in outcomes) for name in OUTCOMES}
    return RunResult(
        settings=s,
        split=split,
        threshold=threshold,
        mmr_lambda=lam,
        outcomes=tuple(outcomes),
        correct=correct,
        n=n,
        accuracy=correct / n if n else 0.0,
        interval=wilson_interval(correct, n) if n else (0.0, 0.0),
        answerable=len(answerable),
        answerable_correct=sum(o.outcome == "correct" for o in answerable),
        bound=fits / len(answerable) if answerable else 0.0,
        funnel=funnel,
    )


def outcomes_vector(result: RunResult) -> list[bool]:
    """Right or wrong per question, in question order, for a paired comparison."""
    return [o.outcome == "correct" for o in result.outcomes]


_ = np  # numpy is used by callers through Ranking; keep the import explicit for typing tools
