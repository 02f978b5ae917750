"""Judging rankings against relevance labels: the checks and the kernel behind the metrics.

One job: lay a batch of rankings against their labels (:func:`judge`) and hand
:mod:`raglab.metrics.measures` the gains at each rank, the ideal order, the first relevant rank and the
number of relevant chunks of every question (:class:`Judged`), after checking every input
(:func:`ranking_indices`, :func:`label_arrays`, :func:`check_cutoff`). Relevance labels are a set
of relevant chunk indices (binary) or a mapping chunk index -> gain (graded, as in TREC qrels); a
gain of 0 counts as unlabelled, and gains must be finite and non-negative. Private to the
package: the measures themselves, and their documentation, are in :mod:`raglab.metrics.measures`.
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

from raglab.base.ranking import FloatArray, IntArray, Ranking

RankingLike: TypeAlias = Ranking | IntArray
Relevance: TypeAlias = Mapping[int, float] | Iterable[int]


# --- validation -----------------------------------------------------------------------------


def index_array(ranking: RankingLike, where: str) -> IntArray:
    """The ranking's chunk indices, checked to be a 1-d integer array (values not checked)."""
    raw = ranking.indices if isinstance(ranking, Ranking) else ranking
    if not isinstance(raw, np.ndarray):
        raise ValueError(f"{where}: a ranking must be a Ranking or a 1-d integer numpy array")
    if raw.ndim != 1 or not (raw.size == 0 or np.issubdtype(raw.dtype, np.integer)):
        raise ValueError(
            f"{where}: a ranking must be 1-d with integer chunk indices, got shape "
            f"{raw.shape} and dtype {raw.dtype}"
        )
    return raw


def ranking_indices(ranking: RankingLike, where: str) -> IntArray:
    """The ranking's chunk indices as int64, checked: 1-d, non-negative, no repeats."""
    indices = index_array(ranking, where).astype(np.int64, copy=False)
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


def label_arrays(relevant: Relevance, where: str) -> tuple[IntArray, FloatArray]:
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


def check_cutoff(k: int, name: str = "k") -> int:
    if isinstance(k, bool) or not isinstance(k, Integral):
        raise ValueError(f"{name} must be a positive integer, got {k!r}")
    value = operator.index(k)
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return value


# --- kernel ---------------------------------------------------------------------------------


def gains_of(indices: IntArray, docs: IntArray, gains: FloatArray) -> FloatArray:
    """Gain of each ranked chunk (0 when unlabelled); ``docs`` sorted ascending."""
    if docs.size == 0:
        return np.zeros(indices.shape[0], dtype=np.float64)
    slot = np.minimum(np.searchsorted(docs, indices), docs.size - 1)
    return np.where(docs[slot] == indices, gains[slot], 0.0)


@dataclass(frozen=True, slots=True)
class Judged:
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


def judge(rankings: Sequence[RankingLike], relevant: Sequence[Relevance], depth: int) -> Judged:
    if len(rankings) != len(relevant):
        raise ValueError(
            f"got {len(rankings)} rankings but {len(relevant)} relevance labels; "
            "they must be one per question"
        )
    judged = judge_all(rankings, relevant, depth)
    # The per-question loop takes what the batch kernel declines: unusual input types, and
    # invalid input, for which it raises exactly the error of the first bad question.
    return judged if judged is not None else judge_each(rankings, relevant, depth)


def judge_each(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance], depth: int
) -> Judged:
    """:func:`judge` one question at a time, validating each ranking then its labels."""
    n = len(rankings)
    gains = np.zeros((n, depth), dtype=np.float64)
    ideal = np.zeros((n, depth), dtype=np.float64)
    first = np.zeros(n, dtype=np.int64)
    n_relevant = np.zeros(n, dtype=np.int64)
    for q, (ranking, labels) in enumerate(zip(rankings, relevant, strict=True)):
        where = f"question {q}"
        indices = ranking_indices(ranking, where)
        docs, doc_gains = label_arrays(labels, where)
        n_relevant[q] = docs.size
        if docs.size == 0:
            continue
        ranked = gains_of(indices, docs, doc_gains)
        head = ranked[:depth]
        gains[q, : head.size] = head
        hits = np.flatnonzero(ranked > 0)
        if hits.size:
            first[q] = hits[0] + 1
        best = np.sort(doc_gains)[::-1][:depth]
        ideal[q, : best.size] = best
    return Judged(gains, ideal, first, n_relevant)


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


def judge_all(
    rankings: Sequence[RankingLike], relevant: Sequence[Relevance], depth: int
) -> Judged | None:
    """:func:`judge` for a whole batch with a few array operations, or None (see there).

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
    return Judged(gains, ideal, first, n_relevant)


def count_hits(judged: Judged, k: int) -> FloatArray:
    """Number of relevant chunks in the first ``k``, per question."""
    hits: FloatArray = (judged.gains[:, :k] > 0).sum(axis=1, dtype=np.float64)
    return hits


def _discounted_sums(gains: FloatArray, discount: FloatArray) -> FloatArray:
    # Each row's sum of gain / log2(rank + 1), added rank after rank, left to right: a row's
    # value then depends on that row alone. A matrix product (BLAS gemv) may group a row's
    # additions by where the row falls in the matrix, so a question's nDCG would change in its
    # last bit with the other questions measured beside it (a Dask worker's slice, say).
    out = np.zeros(gains.shape[0], dtype=np.float64)
    for j in range(min(gains.shape[1], discount.shape[0])):
        out += gains[:, j] * discount[j]
    return out


def ndcg_scores(judged: Judged, k: int) -> FloatArray:
    discount = 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))
    dcg = _discounted_sums(judged.gains[:, :k], discount)
    idcg = _discounted_sums(judged.ideal[:, :k], discount)
    out = np.zeros_like(dcg)
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return out


def mean_of(values: FloatArray) -> float:
    if values.size == 0:
        raise ValueError("no questions to average over")
    return math.fsum(values.tolist()) / values.size


__all__ = [
    "Judged",
    "RankingLike",
    "Relevance",
    "check_cutoff",
    "count_hits",
    "gains_of",
    "judge",
    "judge_all",
    "judge_each",
    "label_arrays",
    "mean_of",
    "ndcg_scores",
    "ranking_indices",
]
