"""Exhibit V: a learned reranker over the first stage's top 20, then maximal marginal relevance.

The reranker is logistic regression on six features (``raglab.rerank.features.FEATURES``) of each
candidate, trained on the training split's answerable questions: a candidate is a positive row when
it holds the answer. MMR then reorders the reranked list with the reranker's probability as
relevance and the TF-IDF cosine between chunks as redundancy; its lambda is chosen on the training
split as the most variety that costs nothing there (the smallest lambda that keeps the training
recall@5 of the reranked order).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from raglab.base.ranking import FloatArray, IntArray, Ranking
from raglab.base.topk import top_k
from raglab.corpus.questions import Question
from raglab.embedding.vectors import cosine_matrix
from raglab.errors import DataLimit
from raglab.metrics.measures import evaluate
from raglab.pipeline.cache import CacheKind
from raglab.pipeline.dense import is_neural
from raglab.pipeline.indexes import ChunkSet
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import ranked, ranked_split
from raglab.rerank.features import FEATURES, candidate_features
from raglab.rerank.logistic import LogisticModel, fit_logistic
from raglab.rerank.mmr import mmr
from raglab.run_settings import ChunkingKey, RetrievalSettings
from raglab.settings import (
    CACHE_SIZE,
    MMR_DEPTH,
    MMR_LAMBDAS,
    NDCG_K,
    PRECISION_K,
    RECALL_KS,
    RERANK_DEPTH,
    RERANK_FEATURES,
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
        vectors = cs.neural_rows(idx).astype(np.float64)
        cos: FloatArray = np.clip(
            vectors @ lab.indexes.query_vector(q).astype(np.float64), -1.0, 1.0
        )
        return cos
    qp = lab.indexes.lsa.project([lab.indexes.query_tokens(q)])[0]
    docs = cs.lsa_rows(idx)
    norms = np.linalg.norm(docs, axis=1) * np.linalg.norm(qp)
    dots = np.asarray(docs @ qp, dtype=np.float64)
    out: FloatArray = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return out


def candidates(lab: Lab, q: Question | str, first_stage: RetrievalSettings) -> Ranking:
    """The first stage's top ``RERANK_DEPTH`` for a question."""
    return _candidates(lab, lab.indexes.chunk_set(first_stage.chunking), q, first_stage)


def _candidates(
    lab: Lab, cs: ChunkSet, q: Question | str, first_stage: RetrievalSettings
) -> Ranking:
    return ranked(lab, cs, q, first_stage).top(RERANK_DEPTH)


#: Where a labelled question's BM25 scores of chosen chunks are kept, if anything put them
#: there (:func:`raglab.distributed.pipeline.prime_candidate_bm25`): a dict chunk index -> score
#: under :func:`candidate_bm25_key`.
CANDIDATE_BM25: CacheKind[tuple[ChunkingKey, float, float, str], dict[int, float]] = CacheKind(
    "BM25 of candidate chunks", CACHE_SIZE * 512
)
#: A labelled question's candidate feature matrix, by (first stage, question id).
FEATURE_MATRICES: CacheKind[tuple[RetrievalSettings, str], FloatArray] = CacheKind(
    "candidate features", CACHE_SIZE * 512
)
#: A labelled question's reranked candidates, by (first stage, question id).
RERANKED: CacheKind[tuple[RetrievalSettings, str], Ranking] = CacheKind(
    "reranked lists", CACHE_SIZE * 512
)
#: TF-IDF cosines between the chunks of a list, by (chunking, the list's indices as bytes).
REDUNDANCY: CacheKind[tuple[ChunkingKey, bytes], FloatArray] = CacheKind(
    "TF-IDF cosines", CACHE_SIZE * 512
)
#: Trained rerankers, by first stage.
RERANKERS: CacheKind[RetrievalSettings, Reranker] = CacheKind("rerankers", CACHE_SIZE * 8)
#: An order's measures on a split, by (split, first stage, order, MMR's lambda or None).
ORDER_MEASURES: CacheKind[tuple[str, RetrievalSettings, str, float | None], dict[str, float]] = (
    CacheKind("order measures", CACHE_SIZE * 8)
)


def candidate_bm25_key(
    first_stage: RetrievalSettings, question_id: str
) -> tuple[ChunkingKey, float, float, str]:
    """Where a labelled question's BM25 scores of chosen chunks at the first stage's chunking,
    k1 and b are kept (:data:`CANDIDATE_BM25`)."""
    return (first_stage.chunking, float(first_stage.k1), float(first_stage.b), question_id)


def candidate_bm25(
    lab: Lab, cs: ChunkSet, q: Question | str, idx: IntArray, first_stage: RetrievalSettings
) -> FloatArray:
    """BM25 scores (first stage's k1 and b) of chunks ``idx`` for a question: those kept under
    :func:`candidate_bm25_key` when every one of them is there (scored elsewhere, the same
    floats), else from the lab's own index."""
    if not isinstance(q, str):
        kept = lab.caches.of(CANDIDATE_BM25).find(candidate_bm25_key(first_stage, q.id))
        chunks = idx.tolist()
        if kept is not None and all(i in kept for i in chunks):
            return np.array([kept[i] for i in chunks], dtype=np.float64)
    index = cs.bm25.with_params(k1=first_stage.k1, b=first_stage.b)
    scores: FloatArray = index.scores(lab.indexes.query_tokens(q))[idx]
    return scores


def features(
    lab: Lab, cs: ChunkSet, q: Question | str, cand: Ranking, first_stage: RetrievalSettings
) -> FloatArray:
    """The (m, 6) feature matrix of a question's candidates (``cs``: the first stage's chunks)."""
    idx = cand.indices
    text = q if isinstance(q, str) else q.question
    bm25 = candidate_bm25(lab, cs, q, idx, first_stage)
    with cs.holding(idx):
        return candidate_features(
            bm25=bm25,
            cosine=_cosines(lab, cs, q, idx, first_stage),
            question_identifiers=identifiers(text),
            chunk_identifiers=cs.identifiers_of(idx),
            question_terms=set(lab.indexes.query_tokens(q)),
            title_terms=cs.title_terms_of(idx),
            age_years=cs.ages_of(idx),
            rank=np.arange(1, len(idx) + 1, dtype=np.int64),
        )


def _question_features(
    lab: Lab, cs: ChunkSet, q: Question | str, cand: Ranking, first_stage: RetrievalSettings
) -> FloatArray:
    """:func:`features`, kept per labelled question: training and reranking a training question
    need the same matrix. ``cand`` is the question's :func:`candidates` under ``first_stage``,
    which the key (first stage, question) stands for."""
    if isinstance(q, str):
        return features(lab, cs, q, cand, first_stage)

    def build() -> FloatArray:
        matrix = features(lab, cs, q, cand, first_stage)
        matrix.flags.writeable = False  # shared by training and reranking
        return matrix

    return lab.caches.of(FEATURE_MATRICES).get((first_stage, q.id), build)


def train_reranker(lab: Lab, first_stage: RetrievalSettings) -> Reranker:
    """Fit the reranker on the training split's answerable questions (cached per first stage;
    ``first_stage`` resolved, :func:`raglab.pipeline.retrieval.resolve`): the split's first-stage
    rankings taken at once (:func:`raglab.pipeline.retrieval.ranked_split`), then
    :func:`fitted_reranker`."""
    cs = lab.indexes.chunk_set(first_stage.chunking)
    qs = lab.require("train", "training the reranker (or run without it: --no-rerank)")
    return fitted_reranker(lab, cs, qs, ranked_split(lab, cs, "train", first_stage), first_stage)


def fitted_reranker(
    lab: Lab,
    cs: ChunkSet,
    qs: Sequence[Question],
    rankings: Sequence[Ranking],
    first_stage: RetrievalSettings,
) -> Reranker:
    """The reranker fitted on the training questions ``qs`` and their first-stage ``rankings``
    under ``first_stage`` (``cs``: its chunk set), each question's candidates the first
    RERANK_DEPTH of its ranking (cached per first stage)."""

    def build() -> Reranker:
        xs, ys = [], []
        for q, ranking in zip(qs, rankings, strict=True):
            cand = ranking.top(RERANK_DEPTH)
            if len(cand) == 0:
                continue
            rel = cs.relevance(q)
            xs.append(_question_features(lab, cs, q, cand, first_stage))
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
            feature_names=RERANK_FEATURES,
        )
        return Reranker(model, first_stage, len(y), int(y.sum()))

    return lab.caches.of(RERANKERS).get(first_stage, build)


def _chunker_words(chunking: ChunkingKey) -> str:
    c = chunking.resolved()
    if c.method == "fixed":
        return f"fixed chunker of {c.size} words (overlap {c.overlap})"
    return f"{c.method} chunker" + (f" (at most {c.size} words)" if c.size else "")


def rerank(lab: Lab, q: Question | str, reranker: Reranker) -> Ranking:
    """The first stage's candidates reordered by the reranker's probability (ties: first stage order)."""
    return reranked(lab, lab.indexes.chunk_set(reranker.first_stage.chunking), q, reranker)


def reranked(lab: Lab, cs: ChunkSet, q: Question | str, reranker: Reranker) -> Ranking:
    """:func:`rerank` on the chunk set ``cs`` of the first stage's chunking, already at hand."""
    return _reranked_candidates(lab, cs, q, _candidates(lab, cs, q, reranker.first_stage), reranker)


def reranked_questions(
    lab: Lab,
    cs: ChunkSet,
    qs: Sequence[Question],
    rankings: Sequence[Ranking],
    reranker: Reranker,
    lam: float | None,
) -> list[Ranking]:
    """The rerank stage of a run: each question's first-stage ranking (``rankings``, in the order
    of ``qs``; ``cs``: the first stage's chunk set) cut to its first RERANK_DEPTH, reordered by
    ``reranker`` and then by MMR at ``lam`` (None: no MMR)."""
    out = []
    for q, ranking in zip(qs, rankings, strict=True):
        listed = _reranked_candidates(lab, cs, q, ranking.top(RERANK_DEPTH), reranker)
        out.append(listed if lam is None else mmr_ordered(lab, cs, listed, lam=lam))
    return out


def _reranked_candidates(
    lab: Lab, cs: ChunkSet, q: Question | str, cand: Ranking, reranker: Reranker
) -> Ranking:
    """A question's candidates ``cand`` (its first stage's top RERANK_DEPTH) reordered by the
    reranker's probability, ties in first stage order (cached per labelled question)."""
    if isinstance(q, str):
        return _rerank(lab, cs, q, cand, reranker)
    key = (reranker.first_stage, q.id)
    return lab.caches.of(RERANKED).get(key, lambda: _rerank(lab, cs, q, cand, reranker))


def _rerank(
    lab: Lab, cs: ChunkSet, q: Question | str, cand: Ranking, reranker: Reranker
) -> Ranking:
    if len(cand) == 0:
        return cand
    x = _question_features(lab, cs, q, cand, reranker.first_stage)
    p = reranker.model.predict_proba(x)
    order = top_k(p)  # every candidate; equal probabilities keep the first stage's order
    return Ranking(cand.indices[order], p[order])


def _redundancy(lab: Lab, cs: ChunkSet, indices: IntArray) -> FloatArray:
    """TF-IDF cosines between the chunks of a list, in its order (cached per list).

    A question's reranked list is reordered at every lambda on the grid, and the cosines do not
    depend on lambda, so they are computed once per list rather than once per lambda.
    """

    def build() -> FloatArray:
        sim = cosine_matrix(cs.tfidf_rows(indices))
        sim.flags.writeable = False  # shared by every lambda: nobody may change it
        return sim

    return lab.caches.of(REDUNDANCY).get((cs.key, indices.tobytes()), build)


def with_mmr(lab: Lab, reranked: Ranking, *, lam: float, reranker: Reranker) -> Ranking:
    """MMR over a reranked list: relevance = probability, redundancy = TF-IDF cosine."""
    return mmr_ordered(lab, lab.indexes.chunk_set(reranker.first_stage.chunking), reranked, lam=lam)


def mmr_ordered(lab: Lab, cs: ChunkSet, reranked: Ranking, *, lam: float) -> Ranking:
    """:func:`with_mmr` on the chunk set ``cs`` of the first stage's chunking, already at hand:
    the first MMR_DEPTH (3) picked by MMR at ``lam``, the rest in the reranked order."""
    if len(reranked) == 0:
        return reranked
    sim = _redundancy(lab, cs, reranked.indices)
    # Relevance on the scale of the cosine: the probability over the best candidate's, so the
    # first pick scores 1 and lambda trades like against like.
    relevance = reranked.scores / max(float(reranked.scores.max()), 1e-12)
    order = mmr(relevance, sim, lam=lam, k=MMR_DEPTH)
    return Ranking(reranked.indices[order], reranked.scores[order])


def ordered(lab: Lab, q: Question, reranker: Reranker, order: str, lam: float) -> Ranking:
    """A question's list in one of ``ORDERS``."""
    return _ordered(
        lab, lab.indexes.chunk_set(reranker.first_stage.chunking), q, reranker, order, lam
    )


def _ordered(
    lab: Lab, cs: ChunkSet, q: Question, reranker: Reranker, order: str, lam: float
) -> Ranking:
    if order == "fusion":
        return _candidates(lab, cs, q, reranker.first_stage)
    first = reranked(lab, cs, q, reranker)
    if order == "reranked":
        return first
    if order == "reranked + MMR":
        return mmr_ordered(lab, cs, first, lam=lam)
    raise ValueError(f"order must be one of {ORDERS}; not {order!r}")


def measure_order(
    lab: Lab, split: str, reranker: Reranker, order: str, lam: float
) -> dict[str, float]:
    cs = lab.indexes.chunk_set(reranker.first_stage.chunking)
    qs = lab.split(split, answerable=True)
    key = (split, reranker.first_stage, order, lam if order == ORDERS[2] else None)

    def build() -> dict[str, float]:
        lists = [_ordered(lab, cs, q, reranker, order, lam) for q in qs]
        return evaluate(
            lists,
            [cs.relevance(q) for q in qs],
            ks=RECALL_KS,
            ndcg_k=NDCG_K,
            precision_k=PRECISION_K,
        )

    return lab.caches.of(ORDER_MEASURES).get(key, build)


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
    cs = lab.indexes.chunk_set(reranker.first_stage.chunking)
    return [
        cs.chunks[i].id for i in ranking.indices[:k].tolist() if cs.chunks[i].status == "superseded"
    ]
