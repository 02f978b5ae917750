"""Maximal marginal relevance (Carbonell and Goldstein 1998), one list at a time.

Relevance traded against redundancy with what is already picked, so near-duplicates do not crowd the top of a list.
"""

from __future__ import annotations

import numpy as np

from raglab.base.checks import as_float_vector
from raglab.base.ranking import FloatArray, IntArray
from raglab.base.topk import top_k

__all__ = ["mmr"]

# --------------------------------------------------------------------------------------------
# Maximal marginal relevance
# --------------------------------------------------------------------------------------------


def _relevance_order(relevance: FloatArray) -> IntArray:
    # Every candidate by relevance, equal relevance keeping the lower index first (top_k's order).
    return top_k(relevance)


def _mmr_kernel(relevance: FloatArray, similarity: FloatArray, lam: float, k: int) -> IntArray:
    n = relevance.shape[0]
    picked: list[int] = []
    available = np.ones(n, dtype=bool)
    # max over the picked set of sim(d, s), updated with one column per pick.
    max_sim = np.full(n, -np.inf)
    for step in range(min(k, n)):
        # The first pick is the most relevant: the redundancy term of an empty set is not defined.
        score = relevance.copy() if step == 0 else lam * relevance - (1.0 - lam) * max_sim
        score[~available] = -np.inf
        nxt = int(np.argmax(score))  # first maximum: ties go to the lower index
        picked.append(nxt)
        available[nxt] = False
        max_sim = np.maximum(max_sim, similarity[:, nxt])
    rest = [i for i in _relevance_order(relevance).tolist() if available[i]]
    return np.array(picked + rest, dtype=np.int64)


def mmr(relevance: FloatArray, similarity: FloatArray, *, lam: float, k: int) -> IntArray:
    """Maximal marginal relevance order (Carbonell and Goldstein 1998), shape (n,).

    ``relevance`` has shape (n,) (the reranker's probabilities), ``similarity`` shape (n, n)
    (``similarity[d, s]`` = sim(d, s), the TF-IDF cosine between chunks; the diagonal is unused).
    The first pick is the most relevant candidate; each later pick is

        next = argmax_{d not picked} λ · relevance(d) − (1 − λ) · max_{s picked} sim(d, s)

    for the first ``min(k, n)`` positions. Returns the order of **all** n candidates: the k
    greedy MMR picks, then the remaining candidates in relevance order. Ties go to the lower
    candidate index everywhere. λ = 1 gives the plain relevance order; λ = 0 picks for diversity
    alone after the first.
    """
    rel = as_float_vector("relevance", relevance)
    n = rel.shape[0]
    sim = np.asarray(similarity, dtype=np.float64)
    if sim.shape != (n, n):
        raise ValueError(f"similarity must have shape ({n}, {n}), got {sim.shape}")
    if not np.all(np.isfinite(sim)):
        raise ValueError("similarity must be finite")
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must lie in [0, 1], got {lam}")
    if k < 0:
        raise ValueError("k must be non-negative")
    return _mmr_kernel(rel, sim, float(lam), int(k))
