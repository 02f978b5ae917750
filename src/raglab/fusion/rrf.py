"""Reciprocal rank fusion (Cormack, Clarke and Buettcher 2009): RRF(d) = sum_r 1 / (k + rank_r(d)).

Positions, not scores: a chunk earns 1 / (k + rank) from each list that holds it within its first
``depth``; :func:`rrf` fuses one question, :func:`rrf_all` many at once through the shared kernel
(:func:`raglab.fusion.kernel.fuse`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real

import numpy as np

from raglab.base.ranking import IntArray, Ranking
from raglab.fusion.kernel import check_batch, check_depth, count_questions, fuse, head_indices

__all__ = ["rrf", "rrf_all"]


def rrf_all(
    runs: Sequence[Sequence[Ranking | IntArray]],
    *,
    k: float,
    depth: int,
) -> list[Ranking]:
    """Reciprocal rank fusion of many questions at once.

    ``runs[r][q]`` is ranker r's ranking for question q (a Ranking or an (n,) int array of chunk
    indices, best first; scores are not used). Every ranker must hold one ranking per question.
    Returns one fused Ranking per question; see :func:`rrf` for the formula.
    """
    depth = check_depth(depth)
    if isinstance(k, bool) or not isinstance(k, Real) or not math.isfinite(k) or k < 0:
        raise ValueError(f"k must be a finite number >= 0, got {k!r}")
    n_questions = count_questions(runs)
    heads = [
        head_indices(ranking, depth, f"ranker {r}, question {q}")
        for r, run in enumerate(runs)
        for q, ranking in enumerate(run)
    ]
    lengths = np.fromiter((h.size for h in heads), dtype=np.int64, count=len(heads))
    doc = np.concatenate([*heads, np.zeros(0, dtype=np.int64)])
    question = np.repeat(np.tile(np.arange(n_questions, dtype=np.int64), len(runs)), lengths)
    ranker = np.repeat(np.repeat(np.arange(len(runs), dtype=np.int64), n_questions), lengths)
    check_batch(question, ranker, doc)
    # 1-based rank of each entry inside its own list.
    rank = np.arange(doc.size, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    # 1 / (k + rank) falls as the rank grows: the reversed rank orders each chunk's
    # contributions by ascending value.
    within = (int(rank.max()) if rank.size else 0) - rank
    return fuse(question, doc, 1.0 / (float(k) + (rank + 1)), n_questions, within)


def rrf(
    rankings: Sequence[Ranking | IntArray],
    *,
    k: float,
    depth: int,
) -> Ranking:
    """Reciprocal rank fusion of one question's rankings (Cormack, Clarke and Buettcher 2009).

    Each ranker contributes its first ``depth`` results (the lab passes its ``fusion_depth``
    setting), and RRF(d) = sum over rankers r that list d of 1 / (k + rank_r(d)), rank 1-based
    (the lab passes ``raglab.settings.RRF_K``, the paper's k). ``rankings``: Rankings or (n,) int arrays of chunk indices, best first.
    Returns the union of the contributed chunks ordered by decreasing RRF, ties by ascending
    chunk index; the Ranking's scores are the RRF values.
    """
    return rrf_all([[ranking] for ranking in rankings], k=k, depth=depth)[0]
