"""``/api/neural/view`` and the neural rows of ``/api/fusion/table``, against the library.

Oracles: the library's own functions on an independent lab (``first_rank_rows``, ``measure``,
``choose_weight``), the two identifiers' vectors dotted by numpy, and LSA's term cosine.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from raglab.cli.main import main
from raglab.embedding.neural.timing import encode_timing
from raglab.pipeline.exhibits.lsa import term_cosine
from raglab.pipeline.exhibits.neural import TIMED_CHUNKS, TWINS
from raglab.pipeline.exhibits.rerank import fitted_reranker, rerank_rows
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import choose_weight, first_rank_rows, measure
from raglab.run_settings import RetrievalSettings
from raglab.settings import NEURAL_RETRIEVERS, RETRIEVERS


@pytest.mark.parametrize("split", ["test", "train"])
def test_the_view_equals_the_library(api: Any, lab: Lab, split: str) -> None:
    data = api.get("/api/neural/view", split=split).json()
    assert data["available"] is True and data["split"] == split
    rankers = {name: RetrievalSettings(name) for name in ("bm25", "lsa", "neural")}
    want = [
        r
        for r in first_rank_rows(lab, split, rankers)
        if r["kind"] == "paraphrase" and r["answerable"]
    ]
    assert data["questions"] == want and len(want) >= 5


def test_twin_cosines_are_the_dot_products_of_the_vectors(api: Any, lab: Lab) -> None:
    t = api.get("/api/neural/view").json()["twins"]
    a, b, other = TWINS
    assert t["pair"] == [a, b] and t["other"] == other
    for key, second in (("twin", b), ("unrelated", other)):
        va, vb = (lab.indexes.neural_model.encode([x])[0].astype(np.float64) for x in (a, second))
        assert t[key]["neural"] == pytest.approx(float(va @ vb), abs=1e-6)
        assert t[key]["lsa"] == term_cosine(lab, a.lower(), second.lower())
    # LSA puts the twins far closer than an unrelated code; the neural model much less so.
    assert t["twin"]["lsa"] - t["unrelated"]["lsa"] > t["twin"]["neural"] - t["unrelated"]["neural"]


def test_a_typed_question_ranks_the_chunks_by_the_float64_dot_of_the_vectors(
    api: Any, lab: Lab
) -> None:
    # The tab reaches the server's cosines only if both sum in float64 (float32's rounding
    # depends on BLAS's order): the scores are numpy's float64 products, not float32's.
    text = "how do I keep the batteries warm in winter"
    data = api.get("/api/neural/search", q=f"  {text} ", top=5).json()
    assert data["query"] == text
    cs = lab.indexes.chunk_set()
    q = lab.indexes.neural_model.encode([text])[0].astype(np.float64)
    scores = np.clip(cs.neural.vectors.astype(np.float64) @ q, -1.0, 1.0)
    order = sorted(range(len(cs)), key=lambda i: (-scores[i], i))[:5]
    assert [r["index"] for r in data["results"]] == order
    for row in data["results"]:
        assert row["score"] == pytest.approx(float(scores[row["index"]]), abs=1e-6)
        assert row["chunk"] == cs.chunks[row["index"]].id and row["snippet"]
    assert api.get("/api/neural/search", q="   ").status_code == 422


def test_costs_are_measured_and_counted(api: Any, lab: Lab) -> None:
    c = api.get("/api/neural/view").json()["costs"]
    n = len(lab.indexes.chunk_set())
    assert c["chunks"] == n and c["dim"] == 384 and c["layers"] == 6
    assert c["vector_bytes"] == n * 384 * 4 and c["bytes_per_1000_chunks"] == 1000 * 384 * 4
    assert c["encode_ms_per_chunk"] > 0 and c["timed_chunks"] == TIMED_CHUNKS
    assert 80e6 < c["weights_bytes"] < 100e6 and "billion sentence pairs" in c["training"]
    # The figure is the one kept on disk for this machine, model and sample: a later process
    # reads it back instead of timing again.
    sample = [chunk.text for chunk in lab.indexes.chunk_set().chunks[:TIMED_CHUNKS]]
    kept = encode_timing(lab.indexes.neural_model, sample)
    assert kept.cached and (kept.ms_per_text, kept.measured_at) == (
        c["encode_ms_per_chunk"],
        c["timed_at"],
    )


def test_the_fusion_table_has_the_neural_rows(api: Any, lab: Lab) -> None:
    data = api.get("/api/fusion/table").json()
    assert list(data["rankers"]) == list(RETRIEVERS) and data["unavailable"] == {}
    for name in NEURAL_RETRIEVERS:
        assert data["rankers"][name] == measure(lab, "test", RetrievalSettings(name))
    assert data["neural_weight"] == choose_weight(lab, RetrievalSettings("neural-score"))


def test_the_reranker_takes_the_neural_first_stage_on_every_face(
    api: Any, lab: Lab, capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: the library's fitted_reranker and rerank_rows over the neural first stage; the
    CLI's ``raglab rerank --retriever neural --json`` and the API give the same numbers."""
    reranker, chosen = fitted_reranker(lab, RetrievalSettings("neural"))
    trained = api.post("/api/rerank/train?retriever=neural").json()
    assert trained["weights"] == pytest.approx(reranker.weights, abs=0)
    assert trained["chosen_lambda"] == chosen
    table = api.get("/api/rerank/table", retriever="neural").json()
    assert table["retriever"] == "neural"
    assert table["rows"] == rerank_rows(lab, reranker, chosen)
    default = api.get("/api/rerank/table").json()
    assert default["rows"] != table["rows"]
    assert main(["rerank", "--retriever", "neural", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert cli["retriever"] == "neural" and cli["rows"] == table["rows"]
    assert cli["weights"] == trained["weights"]
