"""Exhibit V: a learned reranker over the first stage's top 20, then maximal marginal relevance.

The reranker is logistic regression on six features (``raglab.rerank.features.FEATURES``) of each
candidate, trained on the training split's answerable questions: a candidate is a positive row when
it holds the answer. MMR then reorders the reranked list with the reranker's probability as
relevance and the TF-IDF cosine between chunks as redundancy; its lambda is chosen on the training
split as the most variety that costs nothing there (the smallest lambda that keeps the training
recall@5 of the reranked order).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

from raglab.base.ranking import FloatArray, IntArray, Ranking
from raglab.base.topk import top_k
from raglab.corpus.questions import Question
from raglab.embedding.vectors import cosine_matrix
from raglab.errors import DataLimit
from raglab.metrics.measures import evaluate
from raglab.pipeline.dense import is_neural
from raglab.pipeline.lab import ChunkingKey, ChunkSet, Lab
from raglab.pipeline.retrieval import RetrievalSettings, rank, rank_split
from raglab.rerank.features import FEATURES, candidate_features
from raglab.rerank.logistic import LogisticModel, fit_logistic
from raglab.rerank.mmr import mmr
from raglab.settings import (
    MMR_DEPTH,
    MMR_LAMBDAS,
    RERANK_DEPTH,
    RERANK_ITERATIONS,
    RERANK_L2,
    RERANK_LEARNING_RATE,
    SEED,
)
from raglab.text.tokens import identifiers

ORDERS = ("fusion", "reranked", "reranked + MMR")


@dataclass(frozen=True, slots=True)
class Reranker:
    """A trained reranker and the first stage it reranks."""

    model: LogisticModel
    first_stage: RetrievalSettings
    rows: int
    positives: int

    @property
    def weights(self) -> dict[str, float]:
        return dict(zip(FEATURES, self.model.weights.tolist(), strict=True))


def _cosines(
    lab: Lab, cs: ChunkSet, q: Question | str, idx: np.ndarray, first_stage: RetrievalSettings
) -> FloatArray:
    """The embedding cosine of the question with each candidate: the neural model's when the
    first stage uses it (the reranker then learns from the vectors that ranked the candidates),
    LSA's otherwise."""
    if is_neural(first_stage.retriever):
        vectors = cs.neural.vectors[idx].astype(np.float64)
        cos: FloatArray = np.clip(vectors @ lab.query_vector(q).astype(np.float64), -1.0, 1.0)
        return cos
    qp = lab.lsa.project([lab.query_tokens(q)])[0]
    docs = cs.lsa_projections[idx]
    norms = np.linalg.norm(docs, axis=1) * np.linalg.norm(qp)
    dots = np.asarray(docs @ qp, dtype=np.float64)
    out: FloatArray = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return out


def candidates(lab: Lab, q: Question | str, first_stage: RetrievalSettings) -> Ranking:
    """The first stage's top ``RERANK_DEPTH`` for a question."""
    return rank(lab, q, first_stage).top(RERANK_DEPTH)


def candidate_bm25_key(first_stage: RetrievalSettings, question_id: str) -> Hashable:
    """Where a labelled question's BM25 scores of chosen chunks at the first stage's chunking,
    k1 and b are kept (``lab.per_question``; a dict chunk index -> score), if anything put them
    there (:func:`raglab.distributed.pipeline.prime_candidate_bm25`)."""
    chunking = (first_stage.chunking or ChunkingKey()).resolved()
    return ("bm25 of chunks", chunking, float(first_stage.k1), float(first_stage.b), question_id)


def candidate_bm25(
    lab: Lab, q: Question | str, idx: IntArray, first_stage: RetrievalSettings
) -> FloatArray:
    """BM25 scores (first stage's k1 and b) of chunks ``idx`` for a question: those kept under
    :func:`candidate_bm25_key` when every one of them is there (scored elsewhere, the same
    floats), else from the lab's own index."""
    if not isinstance(q, str):
        kept = lab.per_question.find(candidate_bm25_key(first_stage, q.id))
        chunks = idx.tolist()
        if isinstance(kept, dict) and all(i in kept for i in chunks):
            return np.array([kept[i] for i in chunks], dtype=np.float64)
    cs = lab.chunk_set(first_stage.chunking)
    index = cs.bm25.with_params(k1=first_stage.k1, b=first_stage.b)
    scores: FloatArray = index.scores(lab.query_tokens(q))[idx]
    return scores


def features(
    lab: Lab, q: Question | str, cand: Ranking, first_stage: RetrievalSettings
) -> FloatArray:
    """The (m, 6) feature matrix of a question's candidates."""
    cs = lab.chunk_set(first_stage.chunking)
    idx = cand.indices
    text = q if isinstance(q, str) else q.question
    bm25 = candidate_bm25(lab, q, idx, first_stage)
    return candidate_features(
        bm25=bm25,
        cosine=_cosines(lab, cs, q, idx, first_stage),
        question_identifiers=identifiers(text),
        chunk_identifiers=[cs.identifiers[i] for i in idx],
        question_terms=set(lab.query_tokens(q)),
        title_terms=[cs.title_terms[i] for i in idx],
        age_years=cs.age_years[idx],
        rank=np.arange(1, len(idx) + 1, dtype=np.int64),
    )


def _question_features(
    lab: Lab, q: Question | str, cand: Ranking, first_stage: RetrievalSettings
) -> FloatArray:
    """:func:`features`, kept per labelled question: training and reranking a training question
    need the same matrix. ``cand`` is the question's :func:`candidates` under ``first_stage``,
    which the key (first stage, question) stands for."""
    if isinstance(q, str):
        return features(lab, q, cand, first_stage)

    def build() -> FloatArray:
        matrix = features(lab, q, cand, first_stage)
        matrix.flags.writeable = False  # shared by training and reranking
        return matrix

    value = lab.per_question.get(("features", first_stage, q.id), build)
    assert isinstance(value, np.ndarray)
    return value


def train_reranker(lab: Lab, first_stage: RetrievalSettings = RetrievalSettings()) -> Reranker:
    """Fit the reranker on the training split's answerable questions (cached per first stage)."""

    def build() -> Reranker:
        cs = lab.chunk_set(first_stage.chunking)
        # The whole split's first-stage rankings at once (one batch for a fusion), so that
        # candidates() below finds every one of them cached.
        qs = lab.require("train", "training the reranker (or run without it: --no-rerank)")
        rank_split(lab, "train", first_stage)
        xs, ys = [], []
        for q in qs:
            cand = candidates(lab, q, first_stage)
            if len(cand) == 0:
                continue
            rel = cs.relevance(q)
            xs.append(_question_features(lab, q, cand, first_stage))
            ys.append(np.array([1.0 if i in rel else 0.0 for i in cand.indices.tolist()]))
        y = np.concatenate(ys) if ys else np.zeros(0)
        if not y.any():
            # The reranker learns "holds the answer" against "does not": with no chunk holding
            # a whole answer there is nothing to learn (fixed chunks smaller than the answers).
            raise DataLimit(
                f"the reranker has no example to learn from: no training question's answer lies "
                f"whole in one of its first {RERANK_DEPTH} candidate chunks with the "
                f"{_chunker_words(first_stage.chunking)}; use larger chunks (--size), another "
                "--chunker, or run without the reranker (--no-rerank)"
            )
        if y.all():
            raise DataLimit(
                f"the reranker has no example to learn from: every one of the {len(y)} candidate "
                "chunks of the training questions holds the answer, so there is nothing to tell "
                "apart; add pages or questions, use smaller chunks (--size), or run without the "
                "reranker (--no-rerank)"
            )
        X = np.vstack(xs)
        model = fit_logistic(
            X,
            y,
            l2=RERANK_L2,
            learning_rate=RERANK_LEARNING_RATE,
            iterations=RERANK_ITERATIONS,
            seed=SEED,
        )
        return Reranker(model, first_stage, len(y), int(y.sum()))

    value = lab.cache.get(("reranker", first_stage), build)
    assert isinstance(value, Reranker)
    return value


def _chunker_words(chunking: ChunkingKey) -> str:
    c = chunking.resolved()
    if c.method == "fixed":
        return f"fixed chunker of {c.size} words (overlap {c.overlap})"
    return f"{c.method} chunker" + (f" (at most {c.size} words)" if c.size else "")


def rerank(lab: Lab, q: Question | str, reranker: Reranker) -> Ranking:
    """The first stage's candidates reordered by the reranker's probability (ties: first stage order)."""
    if isinstance(q, str):
        return _rerank(lab, q, reranker)
    key = ("rerank", reranker.first_stage, q.id)
    value = lab.per_question.get(key, lambda: _rerank(lab, q, reranker))
    assert isinstance(value, Ranking)
    return value


def _rerank(lab: Lab, q: Question | str, reranker: Reranker) -> Ranking:
    cand = candidates(lab, q, reranker.first_stage)
    if len(cand) == 0:
        return cand
    p = reranker.model.predict_proba(_question_features(lab, q, cand, reranker.first_stage))
    order = top_k(p)  # every candidate; equal probabilities keep the first stage's order
    return Ranking(cand.indices[order], p[order])


def _redundancy(lab: Lab, chunking: ChunkingKey, indices: IntArray) -> FloatArray:
    """TF-IDF cosines between the chunks of a list, in its order (cached per list).

    A question's reranked list is reordered at every lambda on the grid, and the cosines do not
    depend on lambda, so they are computed once per list rather than once per lambda.
    """
    key = ("tfidf cosines", chunking, indices.tobytes())

    def build() -> FloatArray:
        sim = cosine_matrix(lab.chunk_set(chunking).tfidf[indices])
        sim.flags.writeable = False  # shared by every lambda: nobody may change it
        return sim

    value = lab.per_question.get(key, build)
    assert isinstance(value, np.ndarray)
    return value


def with_mmr(lab: Lab, reranked: Ranking, *, lam: float, reranker: Reranker) -> Ranking:
    """MMR over a reranked list: relevance = probability, redundancy = TF-IDF cosine."""
    if len(reranked) == 0:
        return reranked
    sim = _redundancy(lab, reranker.first_stage.chunking, reranked.indices)
    # Relevance on the scale of the cosine: the probability over the best candidate's, so the
    # first pick scores 1 and lambda trades like against like.
    relevance = reranked.scores / max(float(reranked.scores.max()), 1e-12)
    order = mmr(relevance, sim, lam=lam, k=MMR_DEPTH)
    return Ranking(reranked.indices[order], reranked.scores[order])


def ordered(lab: Lab, q: Question, reranker: Reranker, order: str, lam: float) -> Ranking:
    """A question's list in one of ``ORDERS``."""
    if order == "fusion":
        return candidates(lab, q, reranker.first_stage)
    reranked = rerank(lab, q, reranker)
    if order == "reranked":
        return reranked
    if order == "reranked + MMR":
        return with_mmr(lab, reranked, lam=lam, reranker=reranker)
    raise ValueError(f"order must be one of {ORDERS}; not {order!r}")


def measure_order(
    lab: Lab, split: str, reranker: Reranker, order: str, lam: float
) -> dict[str, float]:
    cs = lab.chunk_set(reranker.first_stage.chunking)
    qs = lab.split(split, answerable=True)
    key = ("order", split, reranker.first_stage, order, lam if order == ORDERS[2] else None)

    def build() -> dict[str, float]:
        return evaluate(
            [ordered(lab, q, reranker, order, lam) for q in qs], [cs.relevance(q) for q in qs]
        )

    value = lab.cache.get(key, build)
    assert isinstance(value, dict)
    return value


def choose_lambda(lab: Lab, reranker: Reranker) -> float:
    """The smallest lambda in MMR_LAMBDAS whose training R@5 is no lower than without MMR.

    MMR exists to buy variety; with one relevant chunk per question it rarely raises a relevance
    measure, so the rule takes the most variety that costs no training recall@5.
    """
    plain = measure_order(lab, "train", reranker, ORDERS[1], 1.0)["recall@5"]
    for lam in sorted(MMR_LAMBDAS):
        if measure_order(lab, "train", reranker, ORDERS[2], lam)["recall@5"] >= plain - 1e-12:
            return float(lam)
    return 1.0


def superseded_in_top(lab: Lab, ranking: Ranking, reranker: Reranker, k: int = 3) -> list[str]:
    """Ids of superseded chunks in the first ``k`` of a list."""
    cs = lab.chunk_set(reranker.first_stage.chunking)
    return [
        cs.chunks[i].id for i in ranking.indices[:k].tolist() if cs.chunks[i].status == "superseded"
    ]
