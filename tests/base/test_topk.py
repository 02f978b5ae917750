"""raglab.base.topk.top_k: the one top-k selection, and every ranker using it.

Oracle: ``numpy.lexsort((np.arange(n), -scores))``, the full sort by (-score, index) the selection
replaces: higher score first, ties to the lower index, NaN after every number.
"""

from __future__ import annotations

import numpy as np
import pytest

import raglab.bm25.batch as bm25_batch
import raglab.bm25.maxscore as bm25_topk
import raglab.embedding.lsa as lsa_module
import raglab.rerank.mmr as mmr_module
from raglab.base.topk import top_k


def full_sort(scores: np.ndarray) -> np.ndarray:
    return np.lexsort((np.arange(scores.shape[0]), -scores))


def test_every_k_is_the_head_of_the_full_sort() -> None:
    rng = np.random.default_rng(11)
    for _ in range(300):
        n = int(rng.integers(1, 40))
        scores = rng.integers(-2, 3, size=n).astype(np.float64)
        if rng.random() < 0.5:
            scores[rng.random(n) < 0.2] = np.nan
        if rng.random() < 0.5:
            scores[rng.integers(0, n)] = -np.inf
        if rng.random() < 0.3:
            scores[rng.integers(0, n)] = np.inf
        full = full_sort(scores)
        for k in range(0, n + 2):
            np.testing.assert_array_equal(top_k(scores, k), full[:k])
        np.testing.assert_array_equal(top_k(scores), full)


def test_ties_go_to_the_lower_index_in_long_runs_of_zeros() -> None:
    rng = np.random.default_rng(12)
    scores = np.zeros(5000)
    hits = rng.choice(5000, size=30, replace=False)
    scores[hits] = rng.integers(1, 4, size=30).astype(np.float64)
    for k in (1, 5, 30, 31, 100, 4999, 5000):
        np.testing.assert_array_equal(top_k(scores, k), full_sort(scores)[:k])


def test_continuous_scores_match_the_full_sort() -> None:
    rng = np.random.default_rng(13)
    scores = np.clip(rng.normal(size=3000), -1.0, 1.0)
    for k in (1, 10, 100, 2999):
        np.testing.assert_array_equal(top_k(scores, k), full_sort(scores)[:k])


def test_returns_int64_and_rejects_a_matrix() -> None:
    assert top_k(np.array([0.5, 1.0]), 1).dtype == np.int64
    assert top_k(np.zeros(0), 3).tolist() == []
    with pytest.raises(ValueError, match="one-dimensional"):
        top_k(np.zeros((2, 2)), 1)


def test_bm25_lsa_and_the_reranker_share_the_one_selection() -> None:
    assert bm25_topk.top_k is top_k
    scores = np.array([0.2, 0.9, 0.9, np.nan, 0.2, -np.inf])
    expected = full_sort(scores)
    assert lsa_module._ranking(scores, 4).indices.tolist() == expected[:4].tolist()
    finite = np.array([0.3, 0.7, 0.3, 0.7, 0.1])
    assert mmr_module._relevance_order(finite).tolist() == [1, 3, 0, 2, 4]


def test_bm25_rows_follow_the_same_order() -> None:
    rng = np.random.default_rng(14)
    scores = rng.integers(0, 3, size=(6, 200)).astype(np.float64)
    for k in (3, 8, 9, 50):
        cols, _ = bm25_batch.top_k_rows(scores, k)
        for row in range(scores.shape[0]):
            assert cols[row].tolist() == top_k(scores[row], k).tolist()
