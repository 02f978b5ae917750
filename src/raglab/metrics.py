"""Ranking metrics over a set of labelled questions.

A ranking is a :class:`raglab._types.Ranking` or a 1-d integer array of chunk indices, best
first. A question's relevance labels are either a set of relevant chunk indices (binary labels)
or a mapping chunk index -> gain (graded labels, as in TREC qrels). A gain of 0 marks a chunk
judged not relevant and counts exactly as an absent one; gains must be finite and non-negative.
A chunk counts as relevant when its gain is positive.

Every measure is computed per question and averaged over the questions given: the caller passes
only the answerable questions of a split (DESIGN.md, "Metrics"). A question whose relevant set is
empty (answerable, but no chunk holds its whole answer, for instance because the chunker cut it)
scores 0 on every measure.

Measures, for one question with ranking d_1, d_2, ... and gains g(d) (0 when unlabelled), with
rel(d) = [g(d) > 0] and R = the number of relevant chunks:

- ``recall@k`` = [some i <= k has rel(d_i)], the hit rate used throughout the product (DESIGN.md).
  This is ranx's ``hit_rate@k`` and trec_eval's ``success_k``.
- ``fractional recall@k`` = sum_{i<=k} rel(d_i) / R, the recall that page-labelled collections
  (Cranfield, TREC, BEIR) report. This is ranx's ``recall@k`` and trec_eval's ``recall_k``.
- ``P@k`` = sum_{i<=k} rel(d_i) / k, always divided by k, even when the ranking is shorter
  (ranx ``precision@k``, trec_eval ``P_k``).
- ``top-1`` = rel(d_1), the same number as recall@1.
- ``RR`` = 1 / min{i : rel(d_i)}, 0 when no relevant chunk is ranked; no cutoff. Its mean is MRR
  (Voorhees 1999; ranx ``mrr``, trec_eval ``recip_rank``).
- ``nDCG@k`` = DCG@k / IDCG@k with DCG@k = sum_{i<=k} g(d_i) / log2(i + 1) (Järvelin and
  Kekäläinen 2002): linear gains, so binary labels give gains 0 and 1. IDCG@k is the DCG@k of the
  ideal order, all the question's labelled gains sorted in decreasing order, whether or not the
  ranking retrieved them (ranx ``ndcg@k``, trec_eval ``ndcg_cut_k``).

Means use :func:`math.fsum`, so a mean does not depend on the order of the questions.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from numbers import Integral, Real
from typing import TypeAlias

import numpy as np

from raglab._config import NDCG_K, RECALL_KS
from raglab._types import FloatArray, IntArray, Ranking

__all__ = [
    "PRECISION_K",
    "RankingLike",
    "Relevance",
    "evaluate",
    "first_relevant_rank",
    "fractional_recall_at_k",
    "fractional_recall_at_k_per_query",
    "mrr",
    "ndcg_at_k",
    "ndcg_at_k_per_query",
    "precision_at_k",
    "precision_at_k_per_query",
    "recall_at_k",
    "recall_at_k_per_query",
    "reciprocal_rank_per_query",
    "top1_accuracy",
    "top1_accuracy_per_query",
]

# The cutoff of the precision that :func:`evaluate` reports (P@3, DESIGN.md "Metrics"). Defined
# here because raglab._config has no constant for it.
PRECISION_K = 3

RankingLike: TypeAlias = Ranking | IntArray
Relevance: TypeAlias = Mapping[int, float] | Iterable[int]


# --- validation -----------------------------------------------------------------------------


def _indices(ranking: RankingLike, where: str) -> IntArray:
    """The ranking's chunk indices as int64, checked: 1-d, non-negative, no repeats."""
    raw = ranking.indices if isinstance(ranking, Ranking) else ranking
    if not isinstance(raw, np.ndarray):
        raise ValueError(f"{where}: a ranking must be a Ranking or a 1-d integer numpy array")
    if raw.ndim != 1 or not (raw.size == 0 or np.issubdtype(raw.dtype, np.integer)):
        raise ValueError(
            f"{where}: a ranking must be 1-d with integer chunk indices, got shape "
            f"{raw.shape} and dtype {raw.dtype}"
        )
    indices = raw.astype(np.int64, copy=False)
    if indices.size and int(indices.min()) < 0:
        raise ValueError(f"{where}: chunk indices must be non-negative")
    if indices.size > 1:
        ordered = np.sort(indices)
        repeated = ordered[1:][ordered[1:] == ordered[:-1]]
        if repeated.size:
            raise ValueError(f"{where}: chunk {int(repeated[0])} is ranked more than once")
    return indices


def _doc(value: object, where: str) -> int:
    if isinstance(value, bool | np.bool_) or not isinstance(value, Integral):
        raise ValueError(f"{where}: a relevant chunk must be an integer index, got {value!r}")
    doc = operator.index(value)
    if doc < 0:
        raise ValueError(f"{where}: chunk indices must be non-negative, got {doc}")
    return doc


def _labels(relevant: Relevance, where: str) -> tuple[IntArray, FloatArray]:
    """The relevant chunks sorted by index and their positive gains (1 for a set)."""
    pairs: dict[int, float] = {}
    if isinstance(relevant, Mapping):
        for key, value in relevant.items():
            doc = _doc(key, where)
            if isinstance(value, bool | np.bool_) or not isinstance(value, Real):
                raise ValueError(f"{where}: the gain of chunk {doc} must be a number")
            gain = float(value)
            if not math.isfinite(gain) or gain < 0:
                raise ValueError(
                    f"{where}: the gain of chunk {doc} must be finite and >= 0, got {gain}"
                )
            if gain > 0:
                pairs[doc] = gain
    elif isinstance(relevant, str | bytes) or not isinstance(relevant, Iterable):
        raise ValueError(
            f"{where}: relevance must be a set of chunk indices or a mapping chunk -> gain"
        )
    else:
        for key in relevant:
            pairs[_doc(key, where)] = 1.0
    docs = np.fromiter(pairs.keys(), dtype=np.int64, count=len(pairs))
    gains = np.fromiter(pairs.values(), dtype=np.float64, count=len(pairs))
    order = np.argsort(docs)
    return docs[order], gains[order]


def _cutoff(k: int, name: str = "k") -> int:
    if isinstance(k, bool) or not isinstance(k, Integral):
        raise ValueError(f"{name} must be a positive integer, got {k!r}")
    value = operator.index(k)
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return value


# --- kernel ---------------------------------------------------------------------------------


def _gains_of(indices: IntArray, docs: IntArray, gains: FloatArray) -> FloatArray:
    """Gain of each ranked chunk (0 when unlabelled); ``docs`` sorted ascending."""
    if docs.size == 0:
        return np.zeros(indices.shape[0], dtype=np.float64)
    slot = np.minimum(np.searchsorted(docs, indices), docs.size - 1)
    return np.where(docs[slot] == indices, gains[slot], 0.0)


@dataclass(frozen=True, slots=True)
class _Judged:
    """The labels of a batch of questions laid against their rankings.

    ``gains``: (Q, depth), the gain at each of the first ``depth`` ranks, 0 past a ranking's end.
    ``ideal``: (Q, depth), the question's gains in decreasing order, 0-padded.
    ``first``: (Q,), the 1-based rank of the first relevant chunk over the whole ranking, 0 if none.
    ``n_relevant``: (Q,), the number of relevant chunks.
    """

    gains: FloatArray
    ideal: FloatArray
    first: IntArray
    n_relevant: IntArray


def _judge(rankings: Sequence[RankingLike], relevant: Sequence[Relevance], depth: int) -> _Judged:
    if len(rankings) != len(relevant):
        raise ValueError(
            f"got {len(rankings)} rankings but {len(relevant)} relevance labels; "
            "they must be one per question"
        )
    judged = _judge_all(rankings, relevant, depth)
    # The per-question loop takes what the batch kernel declines: unusual input types, and
    # invalid input, for which it raises exactly the error of the first bad question.
    return judged if judged is not None else _judge_each(rankings, relevant, depth)


def _judge_each(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance], depth: int
) -> _Judged:
    """:func:`_judge` one question at a time, validating each ranking then its labels."""
    n = len(rankings)
    gains = np.zeros((n, depth), dtype=np.float64)
    ideal = np.zeros((n, depth), dtype=np.float64)
    first = np.zeros(n, dtype=np.int64)
    n_relevant = np.zeros(n, dtype=np.int64)
    for q, (ranking, labels) in enumerate(zip(rankings, relevant, strict=True)):
        where = f"question {q}"
        indices = _indices(ranking, where)
        docs, doc_gains = _labels(labels, where)
        n_relevant[q] = docs.size
        if docs.size == 0:
            continue
        ranked = _gains_of(indices, docs, doc_gains)
        head = ranked[:depth]
        gains[q, : head.size] = head
        hits = np.flatnonzero(ranked > 0)
        if hits.size:
            first[q] = hits[0] + 1
        best = np.sort(doc_gains)[::-1][:depth]
        ideal[q, : best.size] = best
    return _Judged(gains, ideal, first, n_relevant)


# Label containers the batch kernel reads; each can be iterated again by the per-question loop.
_PLAIN_SETS = (set, frozenset, list, tuple)
_INT = frozenset({int})
_NUMBER = frozenset({int, float})
# Keys of (question, chunk) pairs are question * width + chunk; past this the loop is used.
_MAX_KEY = 1 << 62


def _flat_labels(
    relevant: Sequence[Relevance],
) -> tuple[IntArray, IntArray, FloatArray] | None:
    """Every question's labels flattened: (question, chunk, gain), positive gains only, in
    question order and possibly repeated (a list may name a chunk twice). None unless every label
    set is a plain container of plain ints (a set, frozenset, list or tuple of chunks, or a dict
    chunk -> int or float gain) and valid: the per-question loop deals with the rest."""
    counts: list[int] = []
    docs: list[int] = []
    gains: list[float] = []
    for labels in relevant:
        if isinstance(labels, set | frozenset | list | tuple) and type(labels) in _PLAIN_SETS:
            # Plain ints (bool is not): nothing to check per element but the sign, done below.
            if not set(map(type, labels)) <= _INT:
                return None
            docs.extend(labels)
            gains.extend(repeat(1.0, len(labels)))
            counts.append(len(labels))
        elif type(labels) is dict:
            # Plain int chunks with plain int or float gains; the values are checked below.
            if not (set(map(type, labels)) <= _INT and set(map(type, labels.values())) <= _NUMBER):
                return None
            docs.extend(labels)
            gains.extend(labels.values())
            counts.append(len(labels))
        else:
            return None
    try:
        doc_arr = np.array(docs, dtype=np.int64)
        gain_arr = np.array(gains, dtype=np.float64)
    except OverflowError:
        return None
    if doc_arr.size and int(doc_arr.min()) < 0:
        return None
    if not np.all(np.isfinite(gain_arr) & (gain_arr >= 0)):
        return None
    question = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    positive = gain_arr > 0  # a gain of 0 counts as unlabelled
    return question[positive], doc_arr[positive], gain_arr[positive]


def _judge_all(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance], depth: int
) -> _Judged | None:
    """:func:`_judge` for a whole batch with a few array operations, or None (see there).

    All rankings are concatenated; each (question, chunk) pair gets the key question * width +
    chunk. Sorting the ranked keys (row by row when every ranking has the same length) finds
    repeated chunks (adjacent equal keys) and lets every label be found by binary search, giving
    its rank; the first hit of each question is its best-ranked label
    (``np.unique(return_index=True)`` over labels sorted by question and rank), and the ideal
    order sorts the labels by question and decreasing gain.
    """
    n = len(rankings)
    raws: list[np.ndarray] = []
    for ranking in rankings:
        raw = ranking.indices if isinstance(ranking, Ranking) else ranking
        if (
            not isinstance(raw, np.ndarray)
            or raw.ndim != 1
            or (raw.size and raw.dtype.kind not in "iu")
        ):
            return None
        raws.append(raw)
    labels = _flat_labels(relevant)
    if labels is None:
        return None
    label_q, label_doc, label_gain = labels
    lengths = np.fromiter((r.shape[0] for r in raws), dtype=np.int64, count=n)
    starts = np.zeros(n, dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    # Cast as astype(np.int64) does for each ranking in the loop.
    flat = (
        np.concatenate(raws, dtype=np.int64, casting="unsafe") if n else np.zeros(0, dtype=np.int64)
    )
    if flat.size and int(flat.min()) < 0:
        return None
    width = 1 + max(
        int(flat.max()) if flat.size else 0, int(label_doc.max()) if label_doc.size else 0
    )
    if n * width >= _MAX_KEY:
        return None
    ranked_keys = np.repeat(np.arange(n, dtype=np.int64) * width, lengths) + flat
    if n and int(lengths.min()) == int(lengths.max()):
        # Rankings of one length (the usual case): sorting each row is much cheaper than one
        # sort of everything, and the rows in question order are the keys in order.
        rows = np.argsort(flat.reshape(n, int(lengths[0])), axis=1)
        order = (rows + starts[:, None]).reshape(-1)
    else:
        order = np.argsort(ranked_keys, kind="stable")
    ranked_keys = ranked_keys[order]
    if np.any(ranked_keys[1:] == ranked_keys[:-1]):
        return None
    # One entry per labelled (question, chunk): a list may repeat a chunk, with the same gain 1.
    label_keys, unique = np.unique(label_q * width + label_doc, return_index=True)
    label_q, label_gain = label_q[unique], label_gain[unique]
    n_relevant = np.bincount(label_q, minlength=n).astype(np.int64)

    gains = np.zeros((n, depth), dtype=np.float64)
    ideal = np.zeros((n, depth), dtype=np.float64)
    first = np.zeros(n, dtype=np.int64)
    if ranked_keys.size and label_keys.size:
        slot = np.minimum(np.searchsorted(ranked_keys, label_keys), ranked_keys.size - 1)
        found = ranked_keys[slot] == label_keys
        hit_q = label_q[found]
        hit_rank = order[slot[found]] - starts[hit_q]  # 0-based rank in its question's list
        hit_gain = label_gain[found]
        head = hit_rank < depth
        gains[hit_q[head], hit_rank[head]] = hit_gain[head]
        by_rank = np.lexsort((hit_rank, hit_q))
        questions, first_of = np.unique(hit_q[by_rank], return_index=True)
        first[questions] = hit_rank[by_rank][first_of] + 1
    if label_keys.size:
        by_gain = np.lexsort((-label_gain, label_q))
        sorted_q = label_q[by_gain]
        place = np.arange(sorted_q.size) - np.searchsorted(sorted_q, sorted_q)
        keep = place < depth
        ideal[sorted_q[keep], place[keep]] = label_gain[by_gain][keep]
    return _Judged(gains, ideal, first, n_relevant)


def _hits(judged: _Judged, k: int) -> FloatArray:
    """Number of relevant chunks in the first ``k``, per question."""
    hits: FloatArray = (judged.gains[:, :k] > 0).sum(axis=1, dtype=np.float64)
    return hits


def _ndcg(judged: _Judged, k: int) -> FloatArray:
    discount = 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))
    dcg = judged.gains[:, :k] @ discount
    idcg = judged.ideal[:, :k] @ discount
    out = np.zeros_like(dcg)
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return out


def _mean(values: FloatArray) -> float:
    if values.size == 0:
        raise ValueError("no questions to average over")
    return math.fsum(values.tolist()) / values.size


# --- public API -----------------------------------------------------------------------------


def first_relevant_rank(ranking: RankingLike, relevant: Relevance) -> int | None:
    """The 1-based rank of the first relevant chunk in ``ranking``, or None when none is ranked.

    ``ranking``: Ranking or (n,) int array, best first. ``relevant``: set of chunk indices or
    mapping chunk -> gain (a chunk is relevant when its gain is positive).
    """
    indices = _indices(ranking, "ranking")
    docs, gains = _labels(relevant, "relevance")
    hits = np.flatnonzero(_gains_of(indices, docs, gains) > 0)
    return int(hits[0]) + 1 if hits.size else None


def recall_at_k_per_query(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance], *, k: int
) -> FloatArray:
    """Hit rate at ``k`` per question, shape (Q,): 1.0 when a relevant chunk is in the first k.

    recall@k = [some i <= k has rel(d_i)] (DESIGN.md); equals ranx ``hit_rate@k`` and trec_eval
    ``success_k``. For the fraction of relevant chunks retrieved see
    :func:`fractional_recall_at_k_per_query`.
    """
    k = _cutoff(k)
    return (_hits(_judge(rankings, relevant, k), k) > 0).astype(np.float64)


def recall_at_k(rankings: Sequence[RankingLike], relevant: Sequence[Relevance], *, k: int) -> float:
    """Mean of :func:`recall_at_k_per_query` (hit rate at ``k``, ranx ``hit_rate@k``)."""
    return _mean(recall_at_k_per_query(rankings, relevant, k=k))


def fractional_recall_at_k_per_query(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance], *, k: int
) -> FloatArray:
    """Share of a question's relevant chunks found in the first ``k``, shape (Q,).

    recall@k = sum_{i<=k} rel(d_i) / R, 0 when R = 0; equals ranx ``recall@k`` and trec_eval
    ``recall_k``, the measure page-labelled collections (Cranfield, BEIR) report. With a single
    relevant chunk per question it equals :func:`recall_at_k_per_query`.
    """
    k = _cutoff(k)
    judged = _judge(rankings, relevant, k)
    hits = _hits(judged, k)
    out = np.zeros_like(hits)
    np.divide(hits, judged.n_relevant, out=out, where=judged.n_relevant > 0)
    return out


def fractional_recall_at_k(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance], *, k: int
) -> float:
    """Mean of :func:`fractional_recall_at_k_per_query` (ranx ``recall@k``)."""
    return _mean(fractional_recall_at_k_per_query(rankings, relevant, k=k))


def precision_at_k_per_query(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance], *, k: int = PRECISION_K
) -> FloatArray:
    """Precision at ``k`` per question, shape (Q,): relevant chunks in the first k, divided by k.

    P@k = sum_{i<=k} rel(d_i) / k, divided by k even when the ranking holds fewer than k chunks
    (ranx ``precision@k``, trec_eval ``P_k``). Default k = :data:`PRECISION_K` (3).
    """
    k = _cutoff(k)
    return _hits(_judge(rankings, relevant, k), k) / k


def precision_at_k(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance], *, k: int = PRECISION_K
) -> float:
    """Mean of :func:`precision_at_k_per_query`."""
    return _mean(precision_at_k_per_query(rankings, relevant, k=k))


def top1_accuracy_per_query(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance]
) -> FloatArray:
    """1.0 when the first result is relevant, per question, shape (Q,); the same as recall@1."""
    return recall_at_k_per_query(rankings, relevant, k=1)


def top1_accuracy(rankings: Sequence[RankingLike], relevant: Sequence[Relevance]) -> float:
    """Share of questions whose first result is relevant."""
    return _mean(top1_accuracy_per_query(rankings, relevant))


def reciprocal_rank_per_query(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance]
) -> FloatArray:
    """Reciprocal rank per question, shape (Q,): 1 / rank of the first relevant chunk, else 0.

    No cutoff: the whole ranking is searched (ranx ``mrr``, trec_eval ``recip_rank``).
    """
    first = _judge(rankings, relevant, 1).first
    out = np.zeros(first.shape, dtype=np.float64)
    np.divide(1.0, first, out=out, where=first > 0)
    return out


def mrr(rankings: Sequence[RankingLike], relevant: Sequence[Relevance]) -> float:
    """Mean reciprocal rank (Voorhees 1999): the mean of :func:`reciprocal_rank_per_query`."""
    return _mean(reciprocal_rank_per_query(rankings, relevant))


def ndcg_at_k_per_query(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance], *, k: int = NDCG_K
) -> FloatArray:
    """nDCG at ``k`` per question, shape (Q,) (Järvelin and Kekäläinen 2002).

    DCG@k = sum_{i<=k} g(d_i) / log2(i + 1) with linear gains (1 for every chunk of a relevant
    set, the given gain for a mapping); IDCG@k is the DCG@k of all the question's labels sorted
    by decreasing gain; nDCG = DCG / IDCG, 0 when the question has no relevant chunk. Equals ranx
    ``ndcg@k`` and trec_eval ``ndcg_cut_k``. Default k = NDCG_K (10).
    """
    k = _cutoff(k)
    return _ndcg(_judge(rankings, relevant, k), k)


def ndcg_at_k(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance], *, k: int = NDCG_K
) -> float:
    """Mean of :func:`ndcg_at_k_per_query`."""
    return _mean(ndcg_at_k_per_query(rankings, relevant, k=k))


def evaluate(
    rankings: Sequence[RankingLike],
    relevant: Sequence[Relevance],
    *,
    ks: Sequence[int] = RECALL_KS,
    ndcg_k: int = NDCG_K,
    precision_k: int = PRECISION_K,
) -> dict[str, float]:
    """Every headline measure, averaged over the questions given, in one pass over the labels.

    Keys, in this order: ``"recall@{k}"`` for each k in ``ks`` (hit rate, default 1, 3, 5, 10),
    ``"mrr"``, ``"ndcg@{ndcg_k}"`` (default ``"ndcg@10"``), ``"p@{precision_k}"`` (default
    ``"p@3"``) and ``"top1"``. Raises ValueError when no questions are given.
    """
    cutoffs = [_cutoff(k, "every k in ks") for k in ks]
    ndcg_k = _cutoff(ndcg_k, "ndcg_k")
    precision_k = _cutoff(precision_k, "precision_k")
    if not rankings:
        raise ValueError("no questions to average over")
    judged = _judge(rankings, relevant, max([*cutoffs, ndcg_k, precision_k, 1]))
    out = {f"recall@{k}": _mean((_hits(judged, k) > 0).astype(np.float64)) for k in cutoffs}
    rr = np.zeros(judged.first.shape, dtype=np.float64)
    np.divide(1.0, judged.first, out=rr, where=judged.first > 0)
    out["mrr"] = _mean(rr)
    out[f"ndcg@{ndcg_k}"] = _mean(_ndcg(judged, ndcg_k))
    out[f"p@{precision_k}"] = _mean(_hits(judged, precision_k) / precision_k)
    out["top1"] = _mean((_hits(judged, 1) > 0).astype(np.float64))
    return out
