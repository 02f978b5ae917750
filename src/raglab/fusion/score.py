"""Min-max score fusion: fused(d) = w mm(BM25)(d) + (1 - w) mm(cos)(d).

Scores, not positions: each ranker's first ``depth`` scores are stretched onto [0, 1]
(:func:`minmax`) and mixed with the weight w of BM25; :func:`score_fusion` fuses one question,
:func:`score_fusion_all` many at once through the shared kernel (:func:`raglab.fusion.kernel.fuse`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real

import numpy as np

from raglab.base.ranking import FloatArray, IntArray, Ranking
from raglab.fusion.kernel import (
    check_batch,
    check_depth,
    count_questions,
    fuse,
    head_indices,
    head_scores,
)

__all__ = ["minmax", "minmax_segments", "score_fusion", "score_fusion_all"]


def minmax_segments(scores: FloatArray, lengths: IntArray) -> FloatArray:
    """:func:`minmax` applied to each consecutive segment of ``scores`` of the given lengths."""
    if scores.size == 0:
        return np.zeros(0, dtype=np.float64)
    kept = lengths[lengths > 0]
    starts = np.concatenate(([0], np.cumsum(kept)[:-1]))
    lo = np.repeat(np.minimum.reduceat(scores, starts), kept)
    hi = np.repeat(np.maximum.reduceat(scores, starts), kept)
    span = hi - lo
    out = np.zeros_like(scores)
    np.divide(scores - lo, span, out=out, where=span > 0)
    return out


def minmax(scores: FloatArray) -> FloatArray:
    """Min-max scaling of one ranker's scores, shape (n,) -> (n,).

    mm(x) = (x - min) / (max - min), so the best score maps to 1 and the worst to 0. When all
    scores are equal (one result, or a ranker that cannot tell its results apart, such as BM25
    with no query term in the corpus) there is no scale to use: every score maps to 0, so the
    ranker adds nothing to a score fusion, as if it had returned no results. An empty array gives
    an empty array. Scores must be finite.
    """
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"scores must be 1-d, got shape {values.shape}")
    if not np.isfinite(values).all():
        raise ValueError("scores must be finite")
    return minmax_segments(values, np.array([values.size], dtype=np.int64))


def score_fusion_all(
    bm25: Sequence[Ranking],
    cosine: Sequence[Ranking],
    *,
    weight: float,
    depth: int,
) -> list[Ranking]:
    """Min-max score fusion of many questions at once; ``bm25[q]`` and ``cosine[q]`` pair up.

    See :func:`score_fusion` for the formula. Returns one fused Ranking per question.
    """
    depth = check_depth(depth)
    if (
        isinstance(weight, bool)
        or not isinstance(weight, Real)
        or not math.isfinite(weight)
        or not 0 <= weight <= 1
    ):
        raise ValueError(f"weight must be a number in [0, 1], got {weight!r}")
    runs = (bm25, cosine)
    n_questions = count_questions(runs)
    heads: list[IntArray] = []
    scores: list[FloatArray] = []
    for r, run in enumerate(runs):
        for q, ranking in enumerate(run):
            where = f"ranker {r}, question {q}"
            scores.append(head_scores(ranking, depth, where))
            heads.append(head_indices(ranking, depth, where))
    lengths = np.fromiter((h.size for h in heads), dtype=np.int64, count=len(heads))
    doc = np.concatenate([*heads, np.zeros(0, dtype=np.int64)])
    raw = np.concatenate([*scores, np.zeros(0, dtype=np.float64)])
    question = np.repeat(np.tile(np.arange(n_questions, dtype=np.int64), 2), lengths)
    ranker = np.repeat(np.repeat(np.arange(2, dtype=np.int64), n_questions), lengths)
    check_batch(question, ranker, doc)
    if not np.isfinite(raw).all():
        at = int(np.argmin(np.isfinite(raw)))
        raise ValueError(
            f"ranker {int(ranker[at])}, question {int(question[at])}: scores must be finite"
        )
    w = float(weight)
    value = minmax_segments(raw, lengths) * np.where(ranker == 0, w, 1.0 - w)
    # Two contributions at most per chunk, and a + b == b + a exactly: any order within works.
    return fuse(question, doc, value, n_questions, ranker)


def score_fusion(bm25: Ranking, cosine: Ranking, *, weight: float, depth: int) -> Ranking:
    """Weighted min-max score fusion of a BM25 and a cosine ranking for one question.

    Each ranker contributes its first ``depth`` results (the lab passes ``fusion_depth``); its scores
    are min-max scaled over those results alone (:func:`minmax`), and a chunk missing from a list
    gets 0 there: fused(d) = w * mm(BM25)(d) + (1 - w) * mm(cos)(d), ``weight`` = w in [0, 1].
    A list's last result also scales to 0, so it ties with the chunks missing from that list.
    Returns the union ordered by decreasing fused score, ties by ascending chunk index. With
    w = 1 the order is BM25's (distinct scores) followed by the zero-scored chunks by index; with
    w = 0 likewise the cosine's.
    """
    return score_fusion_all([bm25], [cosine], weight=weight, depth=depth)[0]
