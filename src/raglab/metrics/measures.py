"""Ranking metrics over a set of labelled questions.

A ranking is a :class:`raglab.base.ranking.Ranking` or a 1-d integer array of chunk indices, best
first. A question's relevance labels are either a set of relevant chunk indices (binary labels)
or a mapping chunk index -> gain (graded labels, as in TREC qrels). A gain of 0 marks a chunk
judged not relevant and counts exactly as an absent one; gains must be finite and non-negative.
A chunk counts as relevant when its gain is positive.

Every measure is computed per question and averaged over the questions given: the caller passes
only the answerable questions of a split (docs/design.md#metrics). A question whose relevant set is
empty (answerable, but no chunk holds its whole answer, for instance because the chunker cut it)
scores 0 on every measure.

Measures, for one question with ranking d_1, d_2, ... and gains g(d) (0 when unlabelled), with
rel(d) = [g(d) > 0] and R = the number of relevant chunks:

- ``hit rate@k`` = [some i <= k has rel(d_i)] (:func:`hit_rate_at_k`): ranx's ``hit_rate@k`` and
  trec_eval's ``success_k``. The product shows it under the label ``recall@k`` (docs/design.md#hit-rate), and
  :func:`evaluate` keeps that key, but it is not the IR recall below: it counts a question once,
  however many of its relevant chunks are found.
- ``fractional recall@k`` = sum_{i<=k} rel(d_i) / R (:func:`fractional_recall_at_k`), the recall
  that page-labelled collections (Cranfield, TREC, BEIR) report. This is ranx's ``recall@k`` and
  trec_eval's ``recall_k``.
- ``P@k`` = sum_{i<=k} rel(d_i) / k, always divided by k, even when the ranking is shorter
  (ranx ``precision@k``, trec_eval ``P_k``).
- ``top-1`` = rel(d_1), the same number as the hit rate at 1.
- ``RR`` = 1 / min{i : rel(d_i)}, 0 when no relevant chunk is ranked; no cutoff. Its mean is MRR
  (Voorhees 1999; ranx ``mrr``, trec_eval ``recip_rank``).
- ``nDCG@k`` = DCG@k / IDCG@k with DCG@k = sum_{i<=k} g(d_i) / log2(i + 1) (Järvelin and
  Kekäläinen 2002): linear gains, so binary labels give gains 0 and 1. IDCG@k is the DCG@k of the
  ideal order, all the question's labelled gains sorted in decreasing order, whether or not the
  ranking retrieved them (ranx ``ndcg@k``, trec_eval ``ndcg_cut_k``).

Means use :func:`math.fsum`, so a mean does not depend on the order of the questions. Checking
the inputs and laying the labels against the rankings is :mod:`raglab.metrics.judging`'s job; this module
defines the measures on top of it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from raglab.base.ranking import FloatArray
from raglab.metrics.judging import (
    RankingLike,
    Relevance,
    check_cutoff,
    count_hits,
    gains_of,
    judge,
    label_arrays,
    mean_of,
    ndcg_scores,
    ranking_indices,
)

__all__ = [
    "evaluate",
    "first_relevant_rank",
    "fractional_recall_at_k",
    "fractional_recall_at_k_per_query",
    "hit_rate_at_k",
    "hit_rate_at_k_per_query",
    "mrr",
    "ndcg_at_k",
    "ndcg_at_k_per_query",
    "precision_at_k",
    "precision_at_k_per_query",
    "reciprocal_rank_per_query",
    "top1_accuracy",
    "top1_accuracy_per_query",
]

# --- public API -----------------------------------------------------------------------------


def first_relevant_rank(ranking: RankingLike, relevant: Relevance) -> int | None:
    """The 1-based rank of the first relevant chunk in ``ranking``, or None when none is ranked.

    ``ranking``: Ranking or (n,) int array, best first. ``relevant``: set of chunk indices or
    mapping chunk -> gain (a chunk is relevant when its gain is positive).
    """
    indices = ranking_indices(ranking, "ranking")
    docs, gains = label_arrays(relevant, "relevance")
    hits = np.flatnonzero(gains_of(indices, docs, gains) > 0)
    return int(hits[0]) + 1 if hits.size else None


def hit_rate_at_k_per_query(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance], *, k: int
) -> FloatArray:
    """Hit rate at ``k`` per question, shape (Q,): 1.0 when a relevant chunk is in the first k.

    hit rate@k = [some i <= k has rel(d_i)]; equals ranx ``hit_rate@k`` and trec_eval
    ``success_k``, and is what the product labels ``recall@k`` (docs/design.md#hit-rate). For the fraction of
    relevant chunks retrieved see :func:`fractional_recall_at_k_per_query`.
    """
    k = check_cutoff(k)
    return (count_hits(judge(rankings, relevant, k), k) > 0).astype(np.float64)


def hit_rate_at_k(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance], *, k: int
) -> float:
    """Mean of :func:`hit_rate_at_k_per_query` (ranx ``hit_rate@k``)."""
    return mean_of(hit_rate_at_k_per_query(rankings, relevant, k=k))


def fractional_recall_at_k_per_query(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance], *, k: int
) -> FloatArray:
    """Share of a question's relevant chunks found in the first ``k``, shape (Q,).

    recall@k = sum_{i<=k} rel(d_i) / R, 0 when R = 0; equals ranx ``recall@k`` and trec_eval
    ``recall_k``, the measure page-labelled collections (Cranfield, BEIR) report. With a single
    relevant chunk per question it equals :func:`hit_rate_at_k_per_query`.
    """
    k = check_cutoff(k)
    judged = judge(rankings, relevant, k)
    hits = count_hits(judged, k)
    out = np.zeros_like(hits)
    np.divide(hits, judged.n_relevant, out=out, where=judged.n_relevant > 0)
    return out


def fractional_recall_at_k(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance], *, k: int
) -> float:
    """Mean of :func:`fractional_recall_at_k_per_query` (ranx ``recall@k``)."""
    return mean_of(fractional_recall_at_k_per_query(rankings, relevant, k=k))


def precision_at_k_per_query(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance], *, k: int
) -> FloatArray:
    """Precision at ``k`` per question, shape (Q,): relevant chunks in the first k, divided by k.

    P@k = sum_{i<=k} rel(d_i) / k, divided by k even when the ranking holds fewer than k chunks
    (ranx ``precision@k``, trec_eval ``P_k``). The lab reports k = ``raglab.settings.PRECISION_K``.
    """
    k = check_cutoff(k)
    return count_hits(judge(rankings, relevant, k), k) / k


def precision_at_k(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance], *, k: int
) -> float:
    """Mean of :func:`precision_at_k_per_query`."""
    return mean_of(precision_at_k_per_query(rankings, relevant, k=k))


def top1_accuracy_per_query(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance]
) -> FloatArray:
    """1.0 when the first result is relevant, per question, shape (Q,); the hit rate at 1."""
    return hit_rate_at_k_per_query(rankings, relevant, k=1)


def top1_accuracy(rankings: Sequence[RankingLike], relevant: Sequence[Relevance]) -> float:
    """Share of questions whose first result is relevant."""
    return mean_of(top1_accuracy_per_query(rankings, relevant))


def reciprocal_rank_per_query(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance]
) -> FloatArray:
    """Reciprocal rank per question, shape (Q,): 1 / rank of the first relevant chunk, else 0.

    No cutoff: the whole ranking is searched (ranx ``mrr``, trec_eval ``recip_rank``).
    """
    first = judge(rankings, relevant, 1).first
    out = np.zeros(first.shape, dtype=np.float64)
    np.divide(1.0, first, out=out, where=first > 0)
    return out


def mrr(rankings: Sequence[RankingLike], relevant: Sequence[Relevance]) -> float:
    """Mean reciprocal rank (Voorhees 1999): the mean of :func:`reciprocal_rank_per_query`."""
    return mean_of(reciprocal_rank_per_query(rankings, relevant))


def ndcg_at_k_per_query(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance], *, k: int
) -> FloatArray:
    """nDCG at ``k`` per question, shape (Q,) (Järvelin and Kekäläinen 2002).

    DCG@k = sum_{i<=k} g(d_i) / log2(i + 1) with linear gains (1 for every chunk of a relevant
    set, the given gain for a mapping); IDCG@k is the DCG@k of all the question's labels sorted
    by decreasing gain; nDCG = DCG / IDCG, 0 when the question has no relevant chunk. Equals ranx
    ``ndcg@k`` and trec_eval ``ndcg_cut_k``. The lab reports k = ``raglab.settings.NDCG_K``.
    """
    k = check_cutoff(k)
    return ndcg_scores(judge(rankings, relevant, k), k)


def ndcg_at_k(rankings: Sequence[RankingLike], relevant: Sequence[Relevance], *, k: int) -> float:
    """Mean of :func:`ndcg_at_k_per_query`."""
    return mean_of(ndcg_at_k_per_query(rankings, relevant, k=k))


def evaluate(
    rankings: Sequence[RankingLike],
    relevant: Sequence[Relevance],
    *,
    ks: Sequence[int],
    ndcg_k: int,
    precision_k: int,
) -> dict[str, float]:
    """Every headline measure, averaged over the questions given, in one pass over the labels.

    Keys, in this order: ``"recall@{k}"`` for each k in ``ks`` (the hit rate,
    :func:`hit_rate_at_k`, under the product's label), ``"mrr"``, ``"ndcg@{ndcg_k}"``,
    ``"p@{precision_k}"`` and ``"top1"``; the lab's reports pass ``raglab.settings.RECALL_KS``
    (1, 3, 5, 10), ``NDCG_K`` (10) and ``PRECISION_K`` (3). Raises ValueError when no questions
    are given.
    """
    cutoffs = [check_cutoff(k, "every k in ks") for k in ks]
    ndcg_k = check_cutoff(ndcg_k, "ndcg_k")
    precision_k = check_cutoff(precision_k, "precision_k")
    if not rankings:
        raise ValueError("no questions to average over")
    judged = judge(rankings, relevant, max([*cutoffs, ndcg_k, precision_k, 1]))
    out = {f"recall@{k}": mean_of((count_hits(judged, k) > 0).astype(np.float64)) for k in cutoffs}
    rr = np.zeros(judged.first.shape, dtype=np.float64)
    np.divide(1.0, judged.first, out=rr, where=judged.first > 0)
    out["mrr"] = mean_of(rr)
    out[f"ndcg@{ndcg_k}"] = mean_of(ndcg_scores(judged, ndcg_k))
    out[f"p@{precision_k}"] = mean_of(count_hits(judged, precision_k) / precision_k)
    out["top1"] = mean_of((count_hits(judged, 1) > 0).astype(np.float64))
    return out
