"""Exhibits II to IV composed from the stages: the grid, fusion, the tables."""

from __future__ import annotations

import numpy as np
import pytest

from raglab.base.sentinels import TUNED
from raglab.fusion.rrf import rrf
from raglab.fusion.score import score_fusion
from raglab.metrics.measures import evaluate
from raglab.pipeline.grid import bm25_grid
from raglab.pipeline.lab import Lab
from raglab.pipeline.reranking import train_reranker
from raglab.pipeline.retrieval import (
    _rank,
    choose_weight,
    measure,
    rank,
    rank_split,
    ranker_table,
    relevance_of,
    resolve,
)
from raglab.run_settings import ChunkingKey, RetrievalSettings, RunSettings
from raglab.settings import CHUNK_SIZES, FUSION_WEIGHTS, RETRIEVERS, RRF_K, default


def test_grid_cells_equal_a_direct_measurement(lab: Lab) -> None:
    """Oracle: the same recall@5 computed by ranking each question at that (k1, b)."""
    grid = bm25_grid(lab, k=5)
    assert grid.recall.shape == (16, 11)
    # b = 0.75, the default, lies between grid columns 0.7 and 0.8.
    for k1, b in ((1.2, 0.7), (0.0, 0.0), (3.0, 1.0), (grid.best_k1, grid.best_b)):
        i, j = grid.k1s.index(k1), grid.bs.index(b)
        direct = measure(lab, "train", RetrievalSettings("bm25", k1=k1, b=b))["recall@5"]
        assert grid.recall[i, j] == pytest.approx(direct, abs=1e-12)
    assert grid.best_recall == grid.recall.max()


def test_bm25_drops_chunks_sharing_no_word(lab: Lab) -> None:
    ranking = rank(lab, "zzzz qqqq", RetrievalSettings("bm25"))
    assert len(ranking) == 0
    assert np.all(rank(lab, "tripod head", RetrievalSettings("bm25")).scores > 0)


def test_fusion_rankings_are_the_fusion_of_the_two_lists(lab: Lab) -> None:
    q = lab.split("test", answerable=True)[0]
    bm25 = rank(lab, q, RetrievalSettings("bm25"))
    lsa = rank(lab, q, RetrievalSettings("lsa"))
    fused = rank(lab, q, RetrievalSettings("rrf"))
    expected = rrf([bm25, lsa], k=RRF_K, depth=default("fusion_depth"))
    np.testing.assert_array_equal(fused.indices, expected.indices)
    weighted = rank(lab, q, RetrievalSettings("score", weight=0.3))
    np.testing.assert_array_equal(
        weighted.indices, score_fusion(bm25, lsa, weight=0.3, depth=default("fusion_depth")).indices
    )


def test_table_rows_equal_metrics_of_the_rankings(lab: Lab) -> None:
    """Oracle: raglab.metrics.measures.evaluate (itself checked against ranx) on the same lists."""
    table = ranker_table(lab, weight=0.5)
    assert list(table) == list(RETRIEVERS)
    for name, row in table.items():
        # The weight given is the BM25 + LSA fusion's; the neural one is chosen on train.
        settings = resolve(lab, RetrievalSettings(name, weight=0.5 if name == "score" else TUNED))
        assert row == evaluate(
            rank_split(lab, "test", settings),
            relevance_of(lab, "test"),
            ks=(1, 3, 5, 10),
            ndcg_k=10,
            precision_k=3,
        )


def test_ranking_never_chooses_a_weight(lab: Lab) -> None:
    """A score fusion whose weight is left TUNED is refused by rank() and rank_split(): the
    weight is chosen once, where a run or a face starts (resolve), never while ranking."""
    tuned = RetrievalSettings("score")
    q = lab.split("test", answerable=True)[0]
    with pytest.raises(ValueError, match="needs its fusion weight"):
        rank(lab, q, tuned)
    with pytest.raises(ValueError, match="needs its fusion weight"):
        rank_split(lab, "test", tuned)
    chosen = resolve(lab, tuned)
    assert chosen.weight == choose_weight(lab) and chosen.resolved


def test_weight_is_chosen_on_training_questions_only(lab: Lab) -> None:
    w = choose_weight(lab)
    assert w in FUSION_WEIGHTS
    best = measure(lab, "train", RetrievalSettings("score", weight=w))
    for other in FUSION_WEIGHTS:
        m = measure(lab, "train", RetrievalSettings("score", weight=other))
        assert (m["recall@5"], m["mrr"]) <= (best["recall@5"], best["mrr"])


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="retriever must be one of"):
        RetrievalSettings("dense")
    with pytest.raises(ValueError, match="weight"):
        RetrievalSettings("score", weight=1.5)


@pytest.mark.parametrize(
    "settings",
    [
        RetrievalSettings("rrf"),
        RetrievalSettings("score", weight=0.35),
        RetrievalSettings("score", weight=1.0, k1=0.6, b=0.3),
        RetrievalSettings("rrf", chunking=ChunkingKey("fixed", 120, 20)),
    ],
)
@pytest.mark.parametrize("split", ["train", "test"])
def test_a_split_fused_in_one_batch_equals_each_question_fused_alone(
    settings: RetrievalSettings, split: str
) -> None:
    """Oracle: the one-question fusion (rrf or score_fusion of the question's own two lists, as
    rank() computes it for a question alone), bit for bit, on a fresh lab whose fused rankings
    all come from the batch; rank() afterwards hands out the very rankings the batch stored."""
    fresh = Lab.load()
    batch = rank_split(fresh, split, settings)
    qs = fresh.split(split, answerable=True)
    assert len(batch) == len(qs)
    for q, fused in zip(qs, batch, strict=True):
        alone = _rank(fresh, fresh.indexes.chunk_set(settings.chunking), q, settings)
        np.testing.assert_array_equal(fused.indices, alone.indices)
        assert fused.scores.tobytes() == alone.scores.tobytes()
        assert rank(fresh, q, settings) is fused


def test_settings_naming_the_same_chunker_are_equal_and_share_their_results(lab: Lab) -> None:
    """The default chunker left out or spelled out is one setting, so the reranker the web lab
    trains (RetrievalSettings()) is the one the end-to-end run uses (RunSettings().retrieval)."""
    spelled = RetrievalSettings(chunking=ChunkingKey("heading", CHUNK_SIZES["heading"]))
    assert RetrievalSettings() == spelled == RunSettings().retrieval
    assert RetrievalSettings().chunking == ChunkingKey().resolved()
    assert train_reranker(lab, RetrievalSettings()) is train_reranker(lab, RunSettings().retrieval)
    with pytest.raises(ValueError, match="chunker must be one of"):
        RetrievalSettings(chunking=ChunkingKey("paragraph"))
