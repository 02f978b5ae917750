"""What the reader sees for one question, before any threshold is applied.

One job: take a question through the final ranking (first stage, reranker, MMR), pack the context
(:func:`raglab.reading.reader.pack`), collect the page sentences lying whole inside the packed chunks and
let the reader pick its best one (:func:`raglab.reading.reader.read`), by plain coverage or by IDF-weighted
coverage with the IDF over the run's chunks (:func:`reader_df`; docs/design.md#reader). The
threshold is laid over a :class:`Reading` afterwards (:meth:`Reading.found`), so that one reading
serves every threshold: the one chosen on train, the run's, and the sweep of exhibit VI.

A question is read in two steps: :func:`prepare_reading` ranks and packs it with the lab and
gathers what reading needs into a :class:`ReadingInput` (the packed chunks' bounds, their
pages' sentences and texts, the question's term weights), and :func:`read_prepared`, a pure
function of that input, reads and diagnoses it. A Dask cluster runs the second step on its
workers for slices of the questions (:mod:`raglab.distributed.end_to_end`); one machine runs
both, :func:`read_question`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from raglab.base.ranking import Ranking
from raglab.corpus.questions import Question
from raglab.metrics.measures import first_relevant_rank
from raglab.pipeline.lab import ChunkingKey, Lab
from raglab.pipeline.reranking import rerank, train_reranker, with_mmr
from raglab.pipeline.retrieval import rank
from raglab.reading.reader import (
    COVERAGE_EPSILON,
    document_frequencies,
    idf_weights,
    pack,
    quote_relation,
    read,
)
from raglab.settings import default
from raglab.text.tokens import tokenize

if TYPE_CHECKING:  # end_to_end imports this module; the settings are only read here
    from raglab.pipeline.end_to_end import RunSettings

__all__ = [
    "Reading",
    "ReadingInput",
    "final_ranking",
    "prepare_reading",
    "read_prepared",
    "read_question",
    "reader_df",
]


@dataclass(frozen=True, slots=True)
class Reading:
    """What the reader saw for one question, before a threshold is applied."""

    q: Question
    rank: int | None
    k_budget: int
    in_retrieved: bool
    best: tuple[str, int, int] | None  # (page, start, end) of the best sentence
    best_text: str | None
    best_chunk: str | None
    coverage: float
    relation: str  # the best sentence against the answer (raglab.reading.reader.quote_relation)
    cut: bool

    def found(self, threshold: float) -> bool:
        """Whether the reader quotes its best sentence at ``threshold``."""
        return self.best is not None and self.coverage >= threshold - COVERAGE_EPSILON

    @property
    def quote_correct(self) -> bool:
        return self.relation in ("inside", "contains")


def final_ranking(lab: Lab, q: Question, s: RunSettings, lam: float | None) -> Ranking:
    """The list the context is packed from: the first stage, reranked and reordered by MMR as
    ``s`` asks (``lam`` MMR's lambda, None without MMR)."""
    if not s.rerank:
        return rank(lab, q, s.retrieval)
    reranker = train_reranker(lab, s.retrieval)
    reranked = rerank(lab, q, reranker)
    if s.mmr and lam is not None:
        return with_mmr(lab, reranked, lam=lam, reranker=reranker)
    return reranked


@dataclass(frozen=True, slots=True)
class ReadingInput:
    """Everything :func:`read_prepared` needs for one question, and nothing of the lab.

    ``packed`` holds the chunks packed into the context, in ranking order, as (chunk id, page
    id, start, end); ``sentences`` the quotable sentences of their pages
    (:meth:`Lab.sentences`) and ``texts`` those pages' texts; ``rank`` the first relevant
    chunk's rank in the final ranking (None: none there), ``relevant`` whether the chunking
    kept any chunk holding the answer whole, ``weights`` the reader's term weights (None: plain
    coverage)."""

    q: Question
    rank: int | None
    k_budget: int
    relevant: bool
    packed: tuple[tuple[str, str, int, int], ...]
    sentences: Mapping[str, tuple[tuple[int, int, frozenset[str]], ...]]
    texts: Mapping[str, str]
    weights: Mapping[str, float] | None


def prepare_reading(lab: Lab, q: Question, s: RunSettings, lam: float | None) -> ReadingInput:
    """Rank and pack one question with the settings ``s`` (``lam``: MMR's lambda, None without
    MMR) and gather what reading it needs."""
    cs = lab.chunk_set(s.chunking)
    ranking = final_ranking(lab, q, s, lam)
    rel = cs.relevance(q)
    first = first_relevant_rank(ranking, rel) if rel else None
    k_budget = pack([int(cs.n_words[i]) for i in ranking.indices.tolist()], budget=s.budget)
    packed = tuple(
        (c.id, c.page_id, c.start, c.end)
        for c in (cs.chunks[i] for i in ranking.indices[:k_budget].tolist())
    )
    pages = dict.fromkeys(page for _, page, _, _ in packed)
    weights = None
    if s.reader_scoring == "idf":
        n_chunks, df = reader_df(lab, s.chunking)
        weights = idf_weights(set(tokenize(q.question, stem=True)), df, n_chunks)
    return ReadingInput(
        q=q,
        rank=first,
        k_budget=k_budget,
        relevant=bool(rel),
        packed=packed,
        sentences={page: tuple(lab.sentences(page)) for page in pages},
        texts={page: lab.corpus.page(page).text for page in pages},
        weights=weights,
    )


def read_prepared(inp: ReadingInput) -> Reading:
    """Read one prepared question (threshold not applied: the best sentence is kept whatever
    its coverage, for any threshold to be laid over it) and diagnose where its answer went."""
    q = inp.q
    spans: list[tuple[str, int, int]] = []
    terms: list[frozenset[str]] = []
    chunk_ids: list[str] = []
    for chunk_id, page_id, start, end in inp.packed:
        for a, b, words in inp.sentences[page_id]:
            if start <= a and b <= end:
                spans.append((page_id, a, b))
                terms.append(words)
                chunk_ids.append(chunk_id)
    q_terms = set(tokenize(q.question, stem=True))
    answer = read(q_terms, terms, threshold=0.0, weights=inp.weights)
    best = spans[answer.sentence] if answer.sentence is not None else None
    # Only the quoted sentence's text is cut from its page: a sentence can be a page long.
    best_text = None if best is None else inp.texts[best[0]][best[1] : best[2]]
    answer_spans = [(a.page_id, a.start, a.end) for a in q.spans]
    first = inp.rank
    return Reading(
        q=q,
        rank=first,
        k_budget=inp.k_budget,
        # Retrieval hands the reranker its first FUSION_DEPTH; a chunk packed into the context
        # was retrieved too, however generous the budget.
        in_retrieved=first is not None and first <= max(default("fusion_depth"), inp.k_budget),
        best=best,
        best_text=best_text,
        best_chunk=chunk_ids[answer.sentence] if answer.sentence is not None else None,
        coverage=float(answer.coverage) if answer.sentence is not None else 0.0,
        relation=quote_relation(best, answer_spans),
        cut=q.answerable and not inp.relevant,
    )


def read_question(lab: Lab, q: Question, s: RunSettings, lam: float | None) -> Reading:
    """Rank, pack and read one question with the settings ``s``: :func:`read_prepared` of
    :func:`prepare_reading`."""
    return read_prepared(prepare_reading(lab, q, s, lam))


def reader_df(lab: Lab, chunking: ChunkingKey) -> tuple[int, dict[str, int]]:
    """(N, df) of the reader's terms (stemmed, as it reads sentences) over one chunking's chunks:
    what IDF-weighted coverage weighs the question's terms with."""

    def build() -> tuple[int, dict[str, int]]:
        chunks = lab.chunk_set(chunking).chunks
        return document_frequencies(tokenize(c.text, stem=True) for c in chunks)

    value = lab.cache.get(("reader df", chunking), build)
    assert isinstance(value, tuple)
    return value
