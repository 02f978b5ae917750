"""Compositions the web lab's exhibits show, built from the pipeline's own functions.

Nothing here re-implements a stage: chunking, ranking, metrics, the reranker, the end-to-end run
and the statistics all come from their modules. This module only arranges their results the way an
exhibit presents them:

- Exhibit I: :func:`intact_curve` (measured answer-intact rate of the fixed chunker against its
  size, beside the closed form's prediction) and :func:`answer_view` (an answer passage with the
  chunk boundaries that fall near it).
- Exhibit II: :func:`bm25_search` (a ranking with each term's share of every score),
  :func:`example_queries` and :func:`bm25_recall`.
- Exhibit III: :func:`lsa_spectrum`, :func:`nearest_words`, :func:`term_cosine` and
  :func:`identifier_twins` (two identifiers the embedding cannot tell apart).
- Exhibit IV: :func:`question_grid` (each question's first answer rank under BM25, LSA and a
  fusion) and :func:`three_lists`.
- Exhibit V: :func:`version_demo` (a question whose superseded copy MMR pushes out of the top 3).
- Exhibit VI: :func:`funnel` and :func:`compare_runs` (the paired exact McNemar test).
- :func:`warm` builds what the first page shows, :func:`warm_later` the rest, so requests hit
  the caches.

Results that cost more than a few milliseconds are kept in the lab's bounded cache.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import combinations
from typing import Any

import numpy as np

from raglab import _config as C
from raglab._types import IntArray
from raglab.chunking import cut_probabilities, fixed_window_spans
from raglab.metrics import first_relevant_rank
from raglab.pipeline.chunking_report import chunking_report
from raglab.pipeline.end_to_end import RunResult, RunSettings, outcomes_vector, run
from raglab.pipeline.lab import ChunkingKey, Lab
from raglab.pipeline.reranking import (
    ORDERS,
    Reranker,
    choose_lambda,
    measure_order,
    rerank,
    superseded_in_top,
    train_reranker,
    with_mmr,
)
from raglab.pipeline.retrieval import (
    RetrievalSettings,
    bm25_grid,
    bm25_ranking,
    choose_weight,
    first_rank_rows,
    lsa_ranking,
    measure,
    rank,
    ranked_chunks,
    ranker_table,
)
from raglab.questions import Question
from raglab.stats import mcnemar_exact
from raglab.text import identifiers

# Sizes at which the fixed chunker is run for the intact-rate chart (words).
CURVE_SIZES = tuple(range(20, 401, 20))
# The closed form is drawn at every whole size in this range.
CURVE_MAX_SIZE = 400
# Overlaps whose curves :func:`warm_later` builds (the web lab's overlap slider: 0 to 100 by 5).
CURVE_OVERLAPS = tuple(range(0, 101, 5))
# Characters of page text shown on each side of an answer passage.
ANSWER_CONTEXT_CHARS = 260
# Characters of a chunk's text returned with a search result.
SNIPPET_CHARS = 280
# How many example queries exhibit II offers.
EXAMPLE_QUERIES = 5
# How many words exhibit III suggests for the nearest-words box.
SAMPLE_WORDS = 6


def _cached(lab: Lab, key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
    return lab.cache.get(("exhibits", *key), build)


def question(lab: Lab, question_id: str) -> Question:
    """The question with this id; ``KeyError`` when there is none."""
    return lab.questions.by_id(question_id)


# --- Exhibit I -------------------------------------------------------------------------------


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


def intact_curve(lab: Lab, *, overlap: int = 0, split: str = "test") -> IntactCurve:
    """The fixed chunker at every size of :data:`CURVE_SIZES` above ``overlap``.

    An answer is intact when some chunk contains one of its spans, exactly as
    :func:`~raglab.pipeline.chunking_report.chunking_report` counts it. Only where the chunks
    start and end matters here, so each size takes the windows
    :func:`~raglab.chunking.chunk_fixed` would cut (:func:`~raglab.chunking.fixed_window_spans`)
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

    value = _cached(lab, ("intact_curve", overlap, split), build)
    assert isinstance(value, IntactCurve)
    return value


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


def answer_view(lab: Lab, question_id: str, key: ChunkingKey = ChunkingKey()) -> AnswerView | None:
    """The first located span of a question's answer, with the chunks of ``key`` around it.

    ``None`` for a question without an answer passage (out of corpus, or labelled by pages).
    """
    q = question(lab, question_id)
    if not q.spans:
        return None
    cs = lab.chunk_set(key)
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


# --- Exhibit II ------------------------------------------------------------------------------


_HEADING_MARKS = re.compile(r"^#{1,6}[ \t]+", re.MULTILINE)


def _snippet(text: str) -> str:
    """The start of a chunk as one line, Markdown heading marks dropped."""
    flat = " ".join(_HEADING_MARKS.sub("", text).split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1].rstrip() + "…"


def bm25_search(
    lab: Lab, query: str, *, k1: float = C.BM25_K1, b: float = C.BM25_B, top: int = 5
) -> dict[str, Any]:
    """BM25 over the heading chunks with each query term's share of every score.

    Chunks sharing no term with the query are not retrieved (as in
    :func:`~raglab.pipeline.retrieval.bm25_ranking`).
    """
    cs = lab.chunk_set()
    index = cs.bm25.with_params(k1=k1, b=b)
    tokens = lab.query_tokens(query)
    rows = ranked_chunks(lab, bm25_ranking(lab, query, k1=k1, b=b), k=top)
    for row in rows:
        chunk = cs.chunks[int(row["index"])]
        row["snippet"] = _snippet(chunk.text)
        row["words"] = chunk.n_words
        row["terms"] = [
            {
                "term": t.term,
                "tf": t.tf,
                "df": t.df,
                "idf": t.idf,
                "length_factor": t.length_factor,
                "contribution": t.contribution,
            }
            for t in index.explain(tokens, int(row["index"]))
        ]
    return {
        "query": query,
        "tokens": tokens,
        "k1": k1,
        "b": b,
        "chunks": len(cs),
        "avgdl": index.avgdl,
        "results": rows,
    }


def example_queries(lab: Lab) -> list[dict[str, str]]:
    """One training question of each kind (answerable ones), up to :data:`EXAMPLE_QUERIES`.

    Taken from the training split so that the test questions stay unseen while the reader tunes.
    """
    seen: dict[str, Question] = {}
    for q in lab.split("train", answerable=True):
        if q.kind not in seen:
            seen[q.kind] = q
    return [
        {"id": q.id, "kind": q.kind, "query": q.question}
        for q in list(seen.values())[:EXAMPLE_QUERIES]
    ]


def bm25_recall(lab: Lab, *, k1: float, b: float) -> dict[str, float]:
    """recall@5 of BM25 at (k1, b) on the training and test splits (heading chunks)."""
    settings = RetrievalSettings("bm25", k1=k1, b=b)
    key = f"recall@{C.GRID_RECALL_K}"
    return {
        "train": measure(lab, "train", settings)[key],
        "test": measure(lab, "test", settings)[key],
    }


# --- Exhibit III -----------------------------------------------------------------------------


def lsa_spectrum(lab: Lab) -> dict[str, Any]:
    """The fitted embedding's singular values and the share of ||A||^2 each keeps."""
    model = lab.lsa
    share = model.variance_share
    # Words to try first: the longest rows of U_k S_k (the words the kept dimensions express
    # most strongly), identifiers left out.
    norms = np.linalg.norm(model.U * model.s[None, :], axis=1)
    terms = model.vocabulary.terms
    samples = [
        terms[int(i)] for i in np.argsort(-norms, kind="stable") if not identifiers(terms[int(i)])
    ][:SAMPLE_WORDS]
    return {
        "rank": model.rank,
        "windows": len(lab.lsa_windows),
        "window_words": C.LSA_WINDOW_WORDS,
        "oversample": C.LSA_OVERSAMPLE,
        "power_iterations": C.LSA_POWER_ITERATIONS,
        "vocabulary": len(model.vocabulary),
        "singular_values": model.singular_values.tolist(),
        "variance_share": share.tolist(),
        "cumulative_share": np.cumsum(share).tolist(),
        "kept_share": float(share.sum()),
        "sample_words": samples,
    }


def _as_term(lab: Lab, word: str) -> str:
    tokens = lab.query_tokens(word)
    return tokens[0] if tokens else word.strip().lower()


def nearest_words(lab: Lab, word: str, *, k: int = 10) -> dict[str, Any]:
    """The ``k`` words whose LSA vectors (rows of U_k S_k) are nearest to ``word`` by cosine."""
    term = _as_term(lab, word)
    pairs = lab.lsa.neighbours(term, k=k)
    return {
        "word": word,
        "term": term,
        "in_vocabulary": term in lab.lsa.vocabulary,
        "neighbours": [{"word": w, "cosine": c} for w, c in pairs],
    }


def term_cosine(lab: Lab, a: str, b: str) -> float | None:
    """Cosine of two terms' LSA vectors (rows of U_k S_k); None when either has no vector.

    ``LSAModel.neighbours`` ranks by this cosine but has no pairwise form, so the pair is computed
    here from the same rows.
    """
    model = lab.lsa
    ia, ib = model.vocabulary.get(a), model.vocabulary.get(b)
    if ia is None or ib is None:
        return None
    rows = model.U[[ia, ib]] * model.s[None, :]
    norms = np.linalg.norm(rows, axis=1)
    if not np.all(norms > 0):
        return None
    return float(np.clip(rows[0] @ rows[1] / (norms[0] * norms[1]), -1.0, 1.0))


def _twin_candidates(lab: Lab) -> list[tuple[str, str]]:
    """Pairs of identifiers in the embedding's vocabulary that differ only by a digit slip.

    Same length, same letters in the same places, and either the same digits in another order
    (E-4107 and E-4170) or at most two digits changed.
    """
    ids = sorted(t for t in lab.lsa.vocabulary.terms if identifiers(t) == {t})
    pairs = []
    for a, b in combinations(ids, 2):
        if len(a) != len(b):
            continue
        diff = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
        if not diff or not all(x.isdigit() and y.isdigit() for x, y in diff):
            continue
        if sorted(a) == sorted(b) or len(diff) <= 2:
            pairs.append((a, b))
    return pairs


def identifier_twins(lab: Lab, a: str | None = None, b: str | None = None) -> dict[str, Any]:
    """Two identifiers the embedding places together, and how BM25 and LSA rank for each.

    Without ``a`` and ``b`` the pair is chosen from the vocabulary: among identifiers differing
    only by a digit slip (:func:`_twin_candidates`), transposed digits first, then the highest
    cosine. For each identifier the result holds its nearest words, and the top chunks of LSA and
    of BM25 when it is the whole query.
    """
    if (a is None) != (b is None):
        raise ValueError("give both identifiers, or neither to let the lab choose a pair")
    if a is not None and b is not None:
        ta, tb = _as_term(lab, a), _as_term(lab, b)
    else:

        def choose() -> tuple[str, str] | None:
            scored = [
                (sorted(x) == sorted(y), term_cosine(lab, x, y) or -1.0, x, y)
                for x, y in _twin_candidates(lab)
            ]
            if not scored:
                return None
            best = max(scored, key=lambda row: (row[0], row[1]))
            return best[2], best[3]

        pair = _cached(lab, ("twins",), choose)
        if pair is None:
            return {"a": None, "b": None, "cosine": None, "sides": []}
        ta, tb = pair
    sides = []
    for term in (ta, tb):
        sides.append(
            {
                "term": term,
                "in_vocabulary": term in lab.lsa.vocabulary,
                "neighbours": [{"word": w, "cosine": c} for w, c in lab.lsa.neighbours(term, k=5)]
                if term in lab.lsa.vocabulary
                else [],
                "lsa": ranked_chunks(lab, lsa_ranking(lab, term), k=3),
                "bm25": ranked_chunks(lab, bm25_ranking(lab, term), k=3),
            }
        )
    return {"a": ta, "b": tb, "cosine": term_cosine(lab, ta, tb), "sides": sides}


def lsa_search(lab: Lab, query: str, *, top: int = 5) -> dict[str, Any]:
    """Heading chunks ranked by cosine to the folded-in query."""
    cs = lab.chunk_set()
    rows = ranked_chunks(lab, lsa_ranking(lab, query), k=top)
    for row in rows:
        row["snippet"] = _snippet(cs.chunks[int(row["index"])].text)
    tokens = lab.query_tokens(query)
    known = [t for t in tokens if t in lab.lsa.vocabulary]
    return {"query": query, "tokens": tokens, "known_tokens": known, "results": rows}


# --- Exhibit IV ------------------------------------------------------------------------------


def fusion_settings(method: str, weight: float) -> RetrievalSettings:
    """The fused ranker of exhibit IV: ``rrf`` or ``score`` at ``weight``."""
    if method not in ("rrf", "score"):
        raise ValueError(f"fusion must be rrf or score; not {method!r}")
    return RetrievalSettings(method, weight=weight)


def question_grid(lab: Lab, fused: RetrievalSettings, *, split: str = "test") -> dict[str, Any]:
    """Every question of ``split`` with the first answer rank under BM25, LSA and ``fused``.

    Ranks come from :func:`~raglab.pipeline.retrieval.first_ranks` (None: not ranked);
    out-of-corpus questions are listed with no ranks.
    """
    rankers = {
        "bm25": RetrievalSettings("bm25"),
        "lsa": RetrievalSettings("lsa"),
        "fusion": fused,
    }
    rows = first_rank_rows(lab, split, rankers)
    return {"split": split, "questions": rows}


def three_lists(
    lab: Lab, question_id: str, fused: RetrievalSettings, *, top: int = 5
) -> dict[str, Any]:
    """One question's first ``top`` chunks under BM25, LSA and ``fused``, answers marked."""
    q = question(lab, question_id)
    cs = lab.chunk_set()
    rel = cs.relevance(q)
    lists = {}
    for name, s in (
        ("bm25", RetrievalSettings("bm25")),
        ("lsa", RetrievalSettings("lsa")),
        ("fusion", fused),
    ):
        ranking = rank(lab, q, s)
        rows = ranked_chunks(lab, ranking, k=top)
        for row in rows:
            row["relevant"] = int(row["index"]) in rel
        lists[name] = {"rows": rows, "first": first_relevant_rank(ranking, rel) if rel else None}
    return {
        "id": q.id,
        "question": q.question,
        "answer": q.answer,
        "answerable": q.answerable,
        "lists": lists,
    }


# --- Exhibit V -------------------------------------------------------------------------------


def rerank_rows(lab: Lab, reranker: Reranker, lam: float) -> list[dict[str, Any]]:
    """Exhibit V's table: every split and order, at MMR ``lam``."""
    return [
        {"split": split, "order": order, **measure_order(lab, split, reranker, order, lam)}
        for split in ("train", "test")
        for order in ORDERS
    ]


def _top_rows(lab: Lab, ranking: Any, q: Question, reranker: Reranker) -> list[dict[str, Any]]:
    cs = lab.chunk_set(reranker.first_stage.chunking)
    rel = cs.relevance(q)
    rows = ranked_chunks(lab, ranking, k=3, chunking=reranker.first_stage.chunking)
    for row in rows:
        row["relevant"] = int(row["index"]) in rel
        row["superseded"] = row["status"] == "superseded"
    return rows


def _leaves_at(lab: Lab, q: Question, reranker: Reranker) -> float | None:
    """The largest lambda on the grid at which no superseded chunk is left in the top 3."""
    reranked = rerank(lab, q, reranker)
    for lam in sorted(C.MMR_LAMBDAS, reverse=True):
        if not superseded_in_top(
            lab, with_mmr(lab, reranked, lam=lam, reranker=reranker), reranker
        ):
            return float(lam)
    return None


def version_candidates(lab: Lab, reranker: Reranker) -> list[dict[str, Any]]:
    """Answerable questions whose reranked top 3 holds a superseded chunk, best demo first.

    Best: questions of kind ``version`` first, then those whose superseded copies leave the top
    3 at the largest lambda, then test before train, then file order.
    """

    def build() -> list[dict[str, Any]]:
        found = []
        for order, q in enumerate(lab.questions):
            if not q.answerable or q.labels != "passage":
                continue
            if not superseded_in_top(lab, rerank(lab, q, reranker), reranker):
                continue
            leaves = _leaves_at(lab, q, reranker)
            found.append(
                (
                    q.kind != "version",
                    -(leaves if leaves is not None else -1.0),
                    q.split != "test",
                    order,
                    {
                        "id": q.id,
                        "split": q.split,
                        "kind": q.kind,
                        "question": q.question,
                        "leaves_at": leaves,
                    },
                )
            )
        return [row for *_, row in sorted(found, key=lambda r: r[:4])]

    value = _cached(lab, ("version_candidates", reranker.first_stage), build)
    assert isinstance(value, list)
    return value


def version_demo(
    lab: Lab, reranker: Reranker, lam: float, question_id: str | None = None
) -> dict[str, Any]:
    """A question's reranked top 3 beside its top 3 after MMR at ``lam``, superseded marked."""
    candidates = version_candidates(lab, reranker)
    if question_id is None:
        if not candidates:
            return {"candidates": [], "question": None}
        question_id = str(candidates[0]["id"])
    q = question(lab, question_id)
    reranked = rerank(lab, q, reranker)
    diversified = with_mmr(lab, reranked, lam=lam, reranker=reranker)
    return {
        "candidates": candidates,
        "question": {"id": q.id, "split": q.split, "question": q.question, "answer": q.answer},
        "lambda": lam,
        "leaves_at": _leaves_at(lab, q, reranker) if q.answerable else None,
        "reranked": _top_rows(lab, reranked, q, reranker),
        "mmr": _top_rows(lab, diversified, q, reranker),
        "superseded_reranked": superseded_in_top(lab, reranked, reranker),
        "superseded_mmr": superseded_in_top(lab, diversified, reranker),
    }


# --- Exhibit VI ------------------------------------------------------------------------------


def funnel(result: RunResult) -> dict[str, Any]:
    """Where answerable questions drop out, stage by stage, and how out-of-corpus ones fare.

    Each answerable question has one outcome, so subtracting the losses of each stage in
    pipeline order leaves exactly the correct ones.
    """
    counts = result.funnel
    stages = []
    left = result.answerable
    stages.append({"stage": "answerable", "count": left, "lost": 0, "loss": None})
    for stage, loss in (
        ("whole in one chunk", "cut"),
        (f"in the first {C.FUSION_DEPTH}", "not retrieved"),
        ("inside the budget", "past budget"),
        ("quoted correctly", "reader"),
    ):
        lost = counts.get(loss, 0)
        left -= lost
        stages.append({"stage": stage, "count": left, "lost": lost, "loss": loss})
    unanswerable = result.n - result.answerable
    return {
        "stages": stages,
        "unanswerable": unanswerable,
        "declined": unanswerable - counts.get("false answer", 0),
        "false_answers": counts.get("false answer", 0),
    }


def compare_runs(a: RunResult, b: RunResult) -> dict[str, Any]:
    """The paired exact McNemar test of two runs and the questions whose outcome changed."""
    if a.split != b.split or [o.id for o in a.outcomes] != [o.id for o in b.outcomes]:
        raise ValueError("the two runs must score the same questions (same split and data)")
    test = mcnemar_exact(outcomes_vector(a), outcomes_vector(b))
    changed = [
        {
            "id": x.id,
            "question": x.question,
            "a": x.outcome,
            "b": y.outcome,
            "better": "b" if y.outcome == "correct" else "a",
        }
        for x, y in zip(a.outcomes, b.outcomes, strict=True)
        if (x.outcome == "correct") != (y.outcome == "correct")
    ]
    return {
        "n": test.n,
        "both_right": test.both_right,
        "only_a": test.only_a,
        "only_b": test.only_b,
        "both_wrong": test.both_wrong,
        "p_value": test.p_value,
        "changed": changed,
    }


# --- warm start ------------------------------------------------------------------------------


def warm(lab: Lab, *, report: Callable[[str, float], None] | None = None) -> dict[str, float]:
    """Build what the web lab's first page shows, once; returns milliseconds per step.

    The first page asks each exhibit for its default view: the fixed chunker's report and
    intact-rate curve, BM25 (its recall and the k1 x b grid), the embedding (and the identifier
    twins), the fusion table and grid at the chosen weight, and the reranker with its table at
    the chosen lambda and the outdated-copy demo. These steps build exactly the lab's cached
    pieces those views read, so the page answers at once; everything a later interaction may ask
    for is left to :func:`warm_later`. A step the data cannot support (say, a reranker on
    questions that never find their answer) raises ValueError; it is skipped and reported as -1.
    """
    timings: dict[str, float] = {}

    def step(name: str, work: Callable[[], object]) -> None:
        start = time.perf_counter()
        try:
            work()
            ms = (time.perf_counter() - start) * 1000
        except ValueError:
            ms = -1.0
        timings[name] = ms
        if report is not None:
            report(name, ms)

    def fusion() -> None:
        weight = choose_weight(lab)
        ranker_table(lab, weight=weight)
        question_grid(lab, fusion_settings("score", weight))

    def reranker_table() -> None:
        reranker = train_reranker(lab)
        lam = choose_lambda(lab, reranker)
        rerank_rows(lab, reranker, lam)
        version_candidates(lab, reranker)

    step("chunking", lambda: chunking_report(lab, ChunkingKey("fixed")))
    step("intact curve", lambda: intact_curve(lab, overlap=C.FIXED_OVERLAP))
    step("BM25", lambda: bm25_recall(lab, k1=C.BM25_K1, b=C.BM25_B))
    step("BM25 grid", lambda: bm25_grid(lab))
    step("LSA", lambda: identifier_twins(lab))
    step("fusion weight", fusion)
    step("reranker", lambda: choose_lambda(lab, train_reranker(lab)))
    step("reranker table", reranker_table)
    return timings


def _rerank_rows_at(lab: Lab, lam: float) -> object:
    """Exhibit V's table at ``lam`` for the default reranker (one background task per lambda)."""
    return rerank_rows(lab, train_reranker(lab), lam)


def warm_later(lab: Lab) -> list[Callable[[], object]]:
    """What :func:`warm` leaves for later, as small tasks to run once the lab is serving.

    The other chunkers' reports, the reranker's table at every lambda on the slider, the
    default end-to-end run and the intact curves of the other overlaps on the slider. Each task
    takes tens of milliseconds at most, so a request that arrives while one runs waits little; a
    request needing a result before its task has run builds it itself, and the task then finds it
    cached.
    """
    tasks: list[Callable[[], object]] = [
        partial(chunking_report, lab, ChunkingKey()),
        partial(chunking_report, lab, ChunkingKey("sentence")),
    ]
    tasks += [partial(_rerank_rows_at, lab, lam) for lam in C.MMR_LAMBDAS]
    tasks.append(partial(run, lab, RunSettings()))
    tasks += [partial(intact_curve, lab, overlap=o) for o in CURVE_OVERLAPS if o != C.FIXED_OVERLAP]
    return tasks


def settings_summary(s: RunSettings) -> dict[str, Any]:
    """A run's settings as plain values (for display and for the runs table)."""
    return {
        "chunker": s.chunker,
        "size": s.chunking.size,
        "overlap": s.chunking.overlap,
        "retriever": s.retriever,
        "k1": s.k1,
        "b": s.b,
        "weight": s.weight,
        "rerank": s.rerank,
        "mmr": s.mmr,
        "mmr_lambda": s.mmr_lambda,
        "budget": s.budget,
        "threshold": s.threshold,
    }
