"""The JSON API, in-process: every route with good and bad input, against the library's numbers.

Expected values come from a second, independent :class:`Lab` (the ``lab`` fixture), so a number the
API shows is checked against the pipeline computed afresh, never against the app's own caches.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from raglab.base.sentinels import NOT_GIVEN
from raglab.bm25.formula import lucene_idf
from raglab.metrics.measures import first_relevant_rank
from raglab.metrics.stats import mcnemar_exact
from raglab.pipeline.chunking_report import chunking_report
from raglab.pipeline.end_to_end import outcomes_vector, run_pipeline
from raglab.pipeline.exhibits.chunking import intact_curve
from raglab.pipeline.exhibits.lsa import identifier_twins, term_cosine
from raglab.pipeline.grid import bm25_grid
from raglab.pipeline.lab import Lab
from raglab.pipeline.reranking import (
    ORDERS,
    choose_lambda,
    measure_order,
    rerank,
    superseded_in_top,
    train_reranker,
    with_mmr,
)
from raglab.pipeline.retrieval import (
    choose_weight,
    first_ranks,
    measure,
    rank,
    ranker_table,
)
from raglab.run_settings import ChunkingKey, RetrievalSettings, RunSettings
from raglab.settings import GRID_K1, LSA_RANK, MMR_LAMBDAS, default
from raglab.text.tokens import identifiers
from raglab.web.app import create_app


def detail(response: Any) -> str:
    body = response.json()
    assert isinstance(body["detail"], str) and body["detail"]
    return str(body["detail"])


def first_passage_question(lab: Lab, split: str = "test") -> str:
    return next(q.id for q in lab.split(split, answerable=True) if q.spans)


def out_of_corpus_question(lab: Lab) -> str:
    return next(q.id for q in lab.questions if not q.answerable)


# --- meta -------------------------------------------------------------------------------------


def test_meta_counts_and_defaults_match_the_library(api: Any, lab: Lab) -> None:
    data = api.get("/api/meta").json()
    assert data["bundled"] is True
    assert data["corpus"]["pages"] == len(lab.corpus)
    assert data["corpus"]["words"] == lab.corpus.n_words
    assert data["questions"]["total"] == len(lab.questions)
    for split in ("train", "test"):
        assert data["questions"]["splits"][split] == {
            "total": len(lab.split(split)),
            "answerable": len(lab.split(split, answerable=True)),
        }
    # The settings table only: no second dict of defaults beside it.
    assert "defaults" not in data
    d = {s["name"]: s["default"] for s in data["settings"]}
    f = {row["name"]: row["value"] for row in data["fixed"]}
    assert (d["k1"], d["b"], f["lsa_rank"]) == (default("k1"), default("b"), LSA_RANK)
    assert f["grid_k1"] == list(GRID_K1) and f["mmr_lambdas"] == list(MMR_LAMBDAS)
    assert re.fullmatch(r"[0-9a-f]{16}", data["fingerprint"])


def test_questions_in_file_order_and_filtered_by_split(api: Any, lab: Lab) -> None:
    everything = api.get("/api/questions").json()["questions"]
    assert [q["id"] for q in everything] == [q.id for q in lab.questions]
    test = api.get("/api/questions", split="test").json()["questions"]
    assert [q["id"] for q in test] == [q.id for q in lab.split("test")]
    by_id = {q["id"]: q for q in everything}
    for q in lab.questions:
        assert by_id[q.id]["answer"] == q.answer
        assert by_id[q.id]["answerable"] == q.answerable
    bad = api.get("/api/questions", split="dev")
    assert bad.status_code == 422
    assert "split" in detail(bad)


# --- I. chunking ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "size", "overlap"),
    [("fixed", 150, 10), ("fixed", 60, 0), ("sentence", 80, None), ("heading", None, None)],
)
def test_chunking_report_matches_the_library(
    api: Any, lab: Lab, method: str, size: int | None, overlap: int | None
) -> None:
    params = {"method": method, "size": size, "overlap": overlap}
    data = api.timed_get(
        f"chunking {method} {size}/{overlap}",
        "/api/chunking",
        **{k: v for k, v in params.items() if v is not None},
    ).json()
    report = chunking_report(lab, ChunkingKey(method, size, overlap))
    assert data["n_chunks"] == report.n_chunks
    assert data["expected_chunks"] == report.expected_chunks
    assert data["intact"] == report.intact and data["total"] == report.total
    assert data["intact_rate"] == report.intact_rate
    assert data["predicted_intact"] == report.predicted_intact
    assert data["mean_words"] == pytest.approx(report.mean_words, rel=1e-12)
    assert {a["id"]: a["intact"] for a in data["answers"]} == {
        a.id: a.intact for a in report.answers
    }
    if method == "fixed":
        assert data["expected_chunks"] == data["n_chunks"]


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({"method": "fixed", "size": 50, "overlap": 50}, "overlap must be smaller than size"),
        ({"method": "fixed", "size": 0}, "size"),
        ({"method": "fixed", "size": 100, "overlap": -1}, "overlap"),
        ({"method": "diagonal"}, "method"),
        ({"method": "fixed", "size": "many"}, "size"),
        ({"method": "sentence", "overlap": 10}, "overlap applies only to the fixed chunker"),
        ({"split": "dev"}, "split"),
    ],
)
def test_chunking_rejects_bad_settings_with_a_message(
    api: Any, params: dict[str, Any], needle: str
) -> None:
    response = api.get("/api/chunking", **params)
    assert response.status_code == 422
    assert needle in detail(response)


def test_intact_curve_agrees_with_the_chunking_report(api: Any, lab: Lab) -> None:
    overlap = 20
    data = api.timed_get("chunking curve, new overlap", "/api/chunking/curve", overlap=overlap)
    curve = data.json()
    assert curve["sizes"] == [s for s in range(20, 401, 20) if s > overlap]
    for size in (60, 200):
        report = chunking_report(lab, ChunkingKey("fixed", size, overlap))
        i = curve["sizes"].index(size)
        assert curve["measured"][i] == report.intact_rate
        assert curve["intact"][i] == report.intact
        j = curve["predicted_sizes"].index(size)
        assert curve["predicted"][j] == pytest.approx(report.predicted_intact, abs=1e-12)
    assert curve == api.get("/api/chunking/curve", overlap=overlap).json()
    local = intact_curve(lab, overlap=overlap)
    assert tuple(curve["measured"]) == local.measured
    assert api.get("/api/chunking/curve", overlap=400).status_code == 422


def test_answer_view_draws_the_chunk_edges_through_the_passage(api: Any, lab: Lab) -> None:
    key = ChunkingKey("fixed", 40, 0)
    report = chunking_report(lab, key, split="all")
    cut = next(a.id for a in report.answers if not a.intact)
    whole = next(a.id for a in report.answers if a.intact)
    cs = lab.indexes.chunk_set(key)
    chunks = {c.id: c for c in cs.chunks}
    for qid, intact in ((cut, False), (whole, True)):
        data = api.get(f"/api/chunking/answer/{qid}", method="fixed", size=40, overlap=0).json()
        view = data["view"]
        q = lab.questions.by_id(qid)
        span = q.spans[0]
        page = lab.corpus.page(span.page_id)
        assert (
            view["excerpt"][view["answer_start"] : view["answer_end"]]
            == page.text[span.start : span.end]
        )
        assert view["intact"] is intact
        assert view["containing"] == [cs.chunks[i].id for i in sorted(cs.relevance(q))]
        for edge in view["boundaries"]:
            chunk = chunks[edge["chunk"]]
            rest = view["excerpt"][edge["offset"] :]
            if edge["kind"] == "start":
                assert chunk.text.startswith(rest[: len(chunk.text)])
            else:
                before = view["excerpt"][: edge["offset"]]
                assert chunk.text.endswith(before[-len(chunk.text) :])
        if not intact:
            assert len(view["touching"]) >= 2
    none = api.get(f"/api/chunking/answer/{out_of_corpus_question(lab)}").json()
    assert none["view"] is None and none["labels"] == "none"
    missing = api.get("/api/chunking/answer/no-such-question")
    assert missing.status_code == 404
    assert "no-such-question" in detail(missing)


# --- II. BM25 ---------------------------------------------------------------------------------


def test_bm25_search_matches_the_library_and_explains_every_score(api: Any, lab: Lab) -> None:
    query = lab.split("train", answerable=True)[0].question
    k1, b = 0.9, 0.4
    data = api.timed_get("BM25 search", "/api/bm25/search", q=query, k1=k1, b=b, top=5).json()
    ranking = rank(lab, query, RetrievalSettings("bm25", k1, b))
    cs = lab.indexes.chunk_set()
    assert [r["chunk"] for r in data["results"]] == [
        cs.chunks[i].id for i in ranking.indices[:5].tolist()
    ]
    assert [r["score"] for r in data["results"]] == ranking.scores[:5].tolist()
    assert data["tokens"] == lab.indexes.query_tokens(query)
    index = cs.bm25.with_params(k1=k1, b=b)
    for row in data["results"]:
        assert sum(t["contribution"] for t in row["terms"]) == pytest.approx(row["score"])
        length = len(cs.tokens[row["index"]])
        for t in row["terms"]:
            assert t["length_factor"] == pytest.approx(1 - b + b * length / index.avgdl)
            assert t["idf"] == pytest.approx(float(lucene_idf(t["df"], len(cs))))
    nothing = api.get("/api/bm25/search", q="the and of").json()
    assert nothing["tokens"] == [] and nothing["results"] == []


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({"q": "   "}, "q: type a word (whitespace alone is refused)"),
        ({}, "q: Field required"),
        ({"q": "tripod", "k1": -1}, "k1"),
        ({"q": "tripod", "b": 1.5}, "b"),
        ({"q": "tripod", "k1": "nan"}, "finite"),
        ({"q": "tripod", "top": 0}, "top"),
        ({"q": "x" * 501}, "q"),
    ],
)
def test_bm25_search_rejects_bad_input(api: Any, params: dict[str, Any], needle: str) -> None:
    response = api.get("/api/bm25/search", **params)
    assert response.status_code == 422
    assert needle in detail(response)


def test_bm25_grid_and_recall_match_the_library(api: Any, lab: Lab) -> None:
    data = api.get("/api/bm25/grid").json()
    grid = bm25_grid(lab, k=5)
    assert data["recall"] == grid.recall.tolist()
    best = {k: data["best"][k] for k in ("k1", "b", "recall")}
    assert best == {"k1": grid.best_k1, "b": grid.best_b, "recall": grid.best_recall}
    assert data["default"]["recall"] == measure(lab, "train", RetrievalSettings("bm25"))["recall@5"]
    recall = api.timed_get("BM25 recall at a new cell", "/api/bm25/recall", k1=2.2, b=0.3).json()
    settings = RetrievalSettings("bm25", k1=2.2, b=0.3)
    assert recall["split"] == "train"
    assert recall["recall"] == measure(lab, "train", settings)["recall@5"]
    # The test split is never measured on a slider's move: only /api/bm25/test gives it.
    assert "test" not in recall
    test = api.get("/api/bm25/test", k1=2.2, b=0.3).json()
    assert test["split"] == "test"
    assert test["recall"] == measure(lab, "test", settings)["recall@5"]
    assert api.get("/api/bm25/recall", k1=11).status_code == 422
    assert api.get("/api/bm25/test", b=2).status_code == 422


def test_bm25_examples_are_training_questions(api: Any, lab: Lab) -> None:
    examples = api.get("/api/bm25/examples").json()["examples"]
    train = {q.id: q for q in lab.split("train", answerable=True)}
    assert examples
    assert len({x["kind"] for x in examples}) == len(examples)
    for x in examples:
        assert x["query"] == train[x["id"]].question


# --- III. LSA ---------------------------------------------------------------------------------


def test_lsa_spectrum_neighbours_and_search_match_the_library(api: Any, lab: Lab) -> None:
    data = api.get("/api/lsa").json()
    model = lab.indexes.lsa
    assert data["rank"] == model.rank == LSA_RANK
    assert data["singular_values"] == model.singular_values.tolist()
    assert data["variance_share"] == model.variance_share.tolist()
    assert data["kept_share"] == pytest.approx(float(model.variance_share.sum()))
    assert data["windows"] == len(lab.indexes.lsa_windows) == 100
    assert (data["window_words"], data["windows_by_rule"], data["windows_set"]) == (256, 100, False)
    assert data["power_iterations"] == 3
    assert data["windows_rule"] == (
        "One window of 256 words for every 256 words of the corpus, rounded up and never fewer "
        "than 100, so that the windows cover every word: 14,067 words give 100 windows."
    )
    assert all(w in model.vocabulary and not identifiers(w) for w in data["sample_words"])
    word = data["sample_words"][0]
    near = api.timed_get("LSA nearest words", "/api/lsa/neighbours", word=word.upper()).json()
    assert near["term"] == word
    assert [(n["word"], n["cosine"]) for n in near["neighbours"]] == model.neighbours(word, k=10)
    query = lab.split("train", answerable=True)[1].question
    found = api.timed_get("LSA search", "/api/lsa/search", q=query, top=5).json()
    ranking = rank(lab, query, RetrievalSettings("lsa"))
    assert [r["index"] for r in found["results"]] == ranking.indices[:5].tolist()
    assert [r["score"] for r in found["results"]] == ranking.scores[:5].tolist()
    unknown = api.get("/api/lsa/neighbours", word="zzzzqqq").json()
    assert unknown["in_vocabulary"] is False and unknown["neighbours"] == []


def test_lsa_route_reports_a_set_window_count(api_for: Any, lab: Lab) -> None:
    """Oracle: the setting and the rule worked by hand; the handbook set to 150 windows fits on
    150 (the rule would give max(100, ceil(14,067 / 256)) = 100) with 3 * (1 + 1) = 6 passes."""
    other = api_for(create_app(Lab(lab.corpus, lab.questions, windows=150)))
    data = other.get("/api/lsa").json()
    assert (data["windows"], data["windows_by_rule"], data["windows_set"]) == (150, 100, True)
    assert data["power_iterations"] == 6 and data["window_words"] == 256
    assert data["windows_rule"] == (
        "This lab is set to 150 windows, where the rule would give 100: one window of 256 words "
        "for every 256 words of the corpus, rounded up and never fewer than 100, so that the "
        "windows cover every word."
    )


def test_lsa_twins_are_two_identifiers_the_embedding_cannot_separate(api: Any, lab: Lab) -> None:
    data = api.get("/api/lsa/twins").json()
    a, b = data["a"], data["b"]
    assert identifiers(a) == {a} and identifiers(b) == {b} and a != b and len(a) == len(b)
    assert data["cosine"] == term_cosine(lab, a, b)
    library = identifier_twins(lab)
    assert (library["a"], library["b"], library["cosine"]) == (a, b, data["cosine"])
    for side, term in zip(data["sides"], (a, b), strict=True):
        assert side["term"] == term
        assert [r["index"] for r in side["lsa"]] == rank(
            lab, term, RetrievalSettings("lsa")
        ).indices[:3].tolist()
        assert [r["index"] for r in side["bm25"]] == rank(
            lab, term, RetrievalSettings("bm25")
        ).indices[:3].tolist()
    # The pair the lab picks is at least as close as any other digit slip it considered.
    rows = lab.indexes.lsa.U * lab.indexes.lsa.s
    ia, ib = lab.indexes.lsa.vocabulary.get(a), lab.indexes.lsa.vocabulary.get(b)
    assert ia is not None and ib is not None
    manual = rows[ia] @ rows[ib] / (np.linalg.norm(rows[ia]) * np.linalg.norm(rows[ib]))
    assert data["cosine"] == pytest.approx(float(manual))
    chosen = api.get("/api/lsa/twins", a="E-4107", b="E-4170").json()
    assert (chosen["a"], chosen["b"]) == ("e-4107", "e-4170")
    assert chosen["cosine"] == term_cosine(lab, "e-4107", "e-4170")


@pytest.mark.parametrize(
    ("path", "params", "needle"),
    [
        ("/api/lsa/twins", {"a": "E-4107"}, "give both identifiers"),
        ("/api/lsa/neighbours", {"word": "  "}, "type a word"),
        ("/api/lsa/neighbours", {"word": "tripod", "top": 0}, "top"),
        ("/api/lsa/search", {}, "q: Field required"),
        ("/api/lsa/search", {"q": "tripod", "top": 51}, "top"),
    ],
)
def test_lsa_rejects_bad_input(api: Any, path: str, params: dict[str, Any], needle: str) -> None:
    response = api.get(path, **params)
    assert response.status_code == 422
    assert needle in detail(response)


# --- IV. fusion -------------------------------------------------------------------------------


def test_fusion_table_matches_the_library_at_the_chosen_and_other_weights(
    api: Any, lab: Lab
) -> None:
    chosen = choose_weight(lab)
    data = api.get("/api/fusion/table").json()
    assert data["chosen_weight"] == chosen == data["weight"]
    assert data["rankers"] == ranker_table(lab, weight=chosen)
    assert data["questions"] == len(lab.split("test", answerable=True))
    other = api.timed_get("fusion table, new weight", "/api/fusion/table", weight=0.65).json()
    assert other["weight"] == 0.65 and other["chosen_weight"] == chosen
    assert other["rankers"] == ranker_table(lab, weight=0.65)
    train = api.get("/api/fusion/table", weight=0.3, split="train").json()
    assert train["rankers"]["score"] == measure(
        lab, "train", RetrievalSettings("score", weight=0.3)
    )


def test_fusion_grid_gives_every_test_question_its_three_ranks(api: Any, lab: Lab) -> None:
    data = api.timed_get("fusion grid", "/api/fusion/grid", method="score", weight=0.45).json()
    questions = data["questions"]
    assert [q["id"] for q in questions] == [q.id for q in lab.split("test")]
    answerable = [q for q in questions if q["answerable"]]
    for name, settings in (
        ("bm25", RetrievalSettings("bm25")),
        ("lsa", RetrievalSettings("lsa")),
        ("fusion", RetrievalSettings("score", weight=0.45)),
    ):
        assert [q["ranks"][name] for q in answerable] == first_ranks(lab, "test", settings)
    assert all(
        q["ranks"] == {"bm25": None, "lsa": None, "fusion": None}
        for q in questions
        if not q["answerable"]
    )
    rrf = api.get("/api/fusion/grid", method="rrf").json()
    assert [q["ranks"]["fusion"] for q in rrf["questions"] if q["answerable"]] == first_ranks(
        lab, "test", RetrievalSettings("rrf")
    )


def test_fusion_lists_show_each_rankers_first_chunks(api: Any, lab: Lab) -> None:
    qid = first_passage_question(lab)
    q = lab.questions.by_id(qid)
    data = api.get(f"/api/fusion/lists/{qid}", method="rrf", top=5).json()
    rel = lab.indexes.chunk_set().relevance(q)
    for name, settings in (
        ("bm25", RetrievalSettings("bm25")),
        ("lsa", RetrievalSettings("lsa")),
        ("fusion", RetrievalSettings("rrf")),
    ):
        ranking = rank(lab, q, settings)
        block = data["lists"][name]
        assert [r["index"] for r in block["rows"]] == ranking.indices[:5].tolist()
        assert [r["relevant"] for r in block["rows"]] == [
            i in rel for i in ranking.indices[:5].tolist()
        ]
        assert block["first"] == first_relevant_rank(ranking, rel)


@pytest.mark.parametrize(
    ("path", "params", "status", "needle"),
    [
        ("/api/fusion/table", {"weight": 1.5}, 422, "weight"),
        ("/api/fusion/table", {"split": "all"}, 422, "split"),
        ("/api/fusion/grid", {"method": "max"}, 422, "method"),
        ("/api/fusion/lists/q-none", {}, 404, "q-none"),
        ("/api/fusion/lists/q01", {"top": 21}, 422, "top"),
    ],
)
def test_fusion_rejects_bad_input(
    api: Any, path: str, params: dict[str, Any], status: int, needle: str
) -> None:
    response = api.get(path, **params)
    assert response.status_code == status
    assert needle in detail(response)


# --- V. reranker ------------------------------------------------------------------------------


def test_reranker_training_and_table_match_the_library(api: Any, lab: Lab) -> None:
    reranker = train_reranker(lab, RetrievalSettings())
    chosen = choose_lambda(lab, reranker)
    model = api.timed_post("train the reranker (cached)", "/api/rerank/train").json()
    assert model["weights"] == reranker.weights
    assert model["bias"] == reranker.model.bias
    assert (model["rows"], model["positives"]) == (reranker.rows, reranker.positives)
    assert model["chosen_lambda"] == chosen
    table = api.get("/api/rerank/table").json()
    assert table["lambda"] == chosen
    lam = 0.4
    other = api.timed_get("reranker table, new lambda", "/api/rerank/table", lam=lam).json()
    expected = [
        {"split": split, "order": order, **measure_order(lab, split, reranker, order, lam)}
        for split in ("train", "test")
        for order in ORDERS
    ]
    assert other["rows"] == expected
    assert api.get("/api/rerank/train").status_code == 405


def test_version_demo_moves_a_superseded_copy_out_of_the_top_three(api: Any, lab: Lab) -> None:
    reranker = train_reranker(lab, RetrievalSettings())
    first = api.get("/api/rerank/version", lam=1.0).json()
    assert first["candidates"], "the handbook should hold a version question with a stale copy"
    q = lab.questions.by_id(first["question"]["id"])
    reranked = rerank(lab, q, reranker)
    assert first["superseded_reranked"] == superseded_in_top(lab, reranked, reranker)
    assert first["superseded_reranked"]
    leaves = first["leaves_at"]
    assert leaves is not None
    low = api.get("/api/rerank/version", lam=leaves, question_id=q.id).json()
    assert (
        low["superseded_mmr"]
        == []
        == superseded_in_top(lab, with_mmr(lab, reranked, lam=leaves, reranker=reranker), reranker)
    )
    cs = lab.indexes.chunk_set()
    assert [r["index"] for r in low["mmr"]] == with_mmr(
        lab, reranked, lam=leaves, reranker=reranker
    ).indices[:3].tolist()
    assert all(
        r["superseded"] == (cs.chunks[r["index"]].status == "superseded") for r in low["mmr"]
    )
    assert api.get("/api/rerank/version", question_id="nope").status_code == 404
    assert api.get("/api/rerank/version", lam=-0.1).status_code == 422
    assert api.get("/api/rerank/table", lam="half").status_code == 422


# --- VI. end to end ---------------------------------------------------------------------------


def _same_result(data: dict[str, Any], lab: Lab, settings: RunSettings) -> None:
    result = run_pipeline(lab, settings)
    assert data["correct"] == result.correct and data["n"] == result.n
    assert data["accuracy"] == result.accuracy
    assert data["interval"] == list(result.interval)
    assert data["bound"] == result.bound
    assert data["threshold"] == result.threshold
    assert data["mmr_lambda"] == result.mmr_lambda
    assert [(o["id"], o["outcome"], o["rank"], o["quote"]) for o in data["outcomes"]] == [
        (o.id, o.outcome, o.rank, o.quote) for o in result.outcomes
    ]
    assert data["funnel"] == result.funnel
    stages = data["stages"]["stages"]
    assert stages[0]["count"] == result.answerable
    assert stages[-1]["count"] == result.answerable_correct


def test_run_matches_the_library_for_several_settings(api: Any, lab: Lab) -> None:
    data = api.timed_post("end-to-end run, warmed default", "/api/run", {}).json()
    _same_result(data, lab, RunSettings())
    # With the reranker off and MMR left out, MMR is off too, as on the command line.
    plain = api.post("/api/run", {"rerank": False, "threshold": 0.3}).json()
    _same_result(plain, lab, RunSettings(rerank=False, mmr=False, threshold=0.3))
    bm25 = api.post(
        "/api/run", {"retriever": "bm25", "mmr_lambda": 0.6, "budget": 250, "threshold": 0.4}
    ).json()
    _same_result(
        bm25, lab, RunSettings(retriever="bm25", mmr_lambda=0.6, budget=250, threshold=0.4)
    )
    score = api.post("/api/run", {"retriever": "score", "weight": 0.4, "rerank": False}).json()
    _same_result(score, lab, RunSettings(retriever="score", weight=0.4, rerank=False, mmr=False))


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"budget": 0}, "budget"),
        ({"threshold": 1.2}, "threshold"),
        ({"retriever": "grep"}, "retriever"),
        ({"colour": "red"}, "colour"),
        ({"chunker": "fixed", "size": 30, "overlap": 30}, "overlap must be smaller than size"),
        ({"chunker": "heading", "overlap": 5}, "overlap applies only to the fixed chunker"),
        ({"split": "dev"}, "split"),
        ({"rerank": False, "mmr": True}, "MMR reorders the reranker's list"),
    ],
)
def test_run_rejects_bad_settings(api: Any, body: dict[str, Any], needle: str) -> None:
    response = api.post("/api/run", body)
    assert response.status_code == 422
    assert needle in detail(response)


def test_compare_two_runs_with_the_exact_mcnemar_test(api: Any, lab: Lab) -> None:
    a_body = {"rerank": False, "threshold": 0.3}
    b_body = {"threshold": 0.3}
    data = api.timed_post("compare two runs", "/api/run/compare", {"a": a_body, "b": b_body}).json()
    a = run_pipeline(lab, RunSettings(rerank=False, mmr=False, threshold=0.3))
    b = run_pipeline(lab, RunSettings(threshold=0.3))
    test = mcnemar_exact(outcomes_vector(a), outcomes_vector(b))
    assert (data["only_a"], data["only_b"], data["both_right"], data["both_wrong"]) == (
        test.only_a,
        test.only_b,
        test.both_right,
        test.both_wrong,
    )
    assert data["p_value"] == test.p_value
    changed = [
        x.id
        for x, y in zip(a.outcomes, b.outcomes, strict=True)
        if (x.outcome == "correct") != (y.outcome == "correct")
    ]
    assert [c["id"] for c in data["changed"]] == changed
    assert len(changed) == test.only_a + test.only_b
    mismatch = api.post("/api/run/compare", {"a": {}, "b": {"split": "train"}})
    assert mismatch.status_code == 422
    assert "same questions" in detail(mismatch)
    assert api.post("/api/run/compare", {"a": {}}).status_code == 422


# --- the page, the docs and unknown paths -----------------------------------------------------


def test_unknown_paths_are_404(api: Any) -> None:
    for path in ("/api/nothing", "/nothing", "/static/nothing.js", "/api/chunking/extra/deep"):
        response = api.get(path)
        assert response.status_code == 404, path


def test_docs_page_lists_every_route_and_loads_nothing_from_outside(api: Any) -> None:
    schema = api.get("/openapi.json").json()
    paths = set(schema["paths"])
    expected = {
        "/api/meta",
        "/api/questions",
        "/api/page/{page_id}",
        "/api/chunking",
        "/api/chunking/curve",
        "/api/chunking/answer/{question_id}",
        "/api/bm25/search",
        "/api/bm25/examples",
        "/api/bm25/grid",
        "/api/bm25/recall",
        "/api/bm25/test",
        "/api/lsa",
        "/api/lsa/neighbours",
        "/api/lsa/search",
        "/api/lsa/twins",
        "/api/lsa/pairs",
        "/api/neural/view",
        "/api/neural/search",
        "/api/neural/encoding",
        "/api/fusion/table",
        "/api/fusion/grid",
        "/api/fusion/lists/{question_id}",
        "/api/rerank/train",
        "/api/rerank/table",
        "/api/rerank/version",
        "/api/rerank/sweep",
        "/api/run",
        "/api/run/compare",
    }
    assert paths == expected
    docs = api.get("/docs")
    assert docs.status_code == 200 and docs.headers["content-type"].startswith("text/html")
    for path in expected:
        assert path in docs.text
    assert not re.search(r"""(src|href)=["']https?://""", docs.text)


def test_page_and_its_modules_are_served_without_outside_requests(api: Any) -> None:
    index = api.get("/")
    assert index.status_code == 200
    html = index.text
    # Relative, so the written site (raglab site) works under any folder of a static host.
    assert '<script type="module" src="static/app.js">' in html
    assert not re.search(r"""(src|href)=["']https?://""", html)
    assert html.count("<math") >= 12
    static = Path(__file__).resolve().parents[2] / "src" / "raglab" / "web" / "static"
    modules = sorted(p.name for p in static.glob("*.js"))
    assert {"app.js", "charts.js", "chunking.js", "bm25.js", "lsa.js", "fusion.js"} <= set(modules)
    for name in [*modules, "styles.css"]:
        response = api.get(f"/static/{name}")
        assert response.status_code == 200, name
        assert "http://" not in response.text.replace("http://www.w3.org/2000/svg", "")
        assert "https://" not in response.text
    for section in ("chunking", "bm25", "lsa", "fusion", "rerank", "end-to-end"):
        block = html[html.index(f'id="{section}"') :]
        block = block[: block.index("</section>\n\n")] if "</section>\n\n" in block else block
        assert "The maths" in block and "In practice" in block and "Watch out" in block


# --- a user's own small corpus: every route answers, none fails -------------------------------


def _small_corpus(tmp: Path, *, pages_labels: bool) -> Lab:
    docs = tmp / "docs"
    docs.mkdir()
    (docs / "alpha.md").write_text(
        "---\nid: alpha\ntitle: Alpha\n---\n# Alpha\n\n## Setup\n\nThe AX-12 unit needs a 9 V "
        "battery. Replace it every year.\n\n## Errors\n\nCode E-101 means the lid is open. "
        "Code E-110 means the battery is low.\n",
        encoding="utf-8",
    )
    (docs / "beta.md").write_text(
        "# Beta\n\n## Returns\n\nItems may be returned within 30 days. Keep the receipt.\n",
        encoding="utf-8",
    )
    rows = [
        ("a1", "train", "What battery does the AX-12 need?", "The AX-12 unit needs a 9 V battery."),
        ("a2", "train", "What does E-101 mean?", "Code E-101 means the lid is open."),
        ("a3", "test", "How long to return items?", "Items may be returned within 30 days."),
        ("a4", "test", "What does E-110 mean?", "Code E-110 means the battery is low."),
        ("a5", "test", "Who founded the company?", None),
    ]
    lines = []
    for qid, split, question, answer in rows:
        item: dict[str, Any] = {"id": qid, "split": split, "kind": "k", "question": question}
        if pages_labels and answer is not None:
            item["pages"] = ["alpha"] if "E-" in question or "AX" in question else ["beta"]
        else:
            item["answer"] = answer
        lines.append(json.dumps(item))
    (tmp / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Lab.load(docs, tmp / "questions.jsonl")


@pytest.mark.parametrize("pages_labels", [False, True])
def test_a_tiny_user_corpus_gets_answers_or_422_never_a_failure(
    tmp_path: Path, pages_labels: bool, api_for: Any
) -> None:
    small = api_for(create_app(_small_corpus(tmp_path, pages_labels=pages_labels)))
    meta = small.get("/api/meta").json()
    assert meta["bundled"] is False and meta["corpus"]["pages"] == 2
    gets: list[tuple[str, dict[str, Any]]] = [
        ("/api/questions", {}),
        ("/api/chunking", {"method": "fixed", "size": 8, "overlap": 2}),
        ("/api/chunking/curve", {}),
        ("/api/chunking/answer/a1", {}),
        ("/api/bm25/search", {"q": "battery AX-12"}),
        ("/api/bm25/examples", {}),
        ("/api/bm25/grid", {}),
        ("/api/bm25/recall", {}),
        ("/api/bm25/test", {}),
        ("/api/bm25/recall", {"stem": True}),
        ("/api/bm25/grid", {"stem": True}),
        ("/api/lsa", {}),
        ("/api/lsa/neighbours", {"word": "battery"}),
        ("/api/lsa/search", {"q": "battery"}),
        ("/api/lsa/twins", {}),
        ("/api/fusion/table", {}),
        ("/api/fusion/grid", {}),
        ("/api/fusion/lists/a3", {}),
        ("/api/rerank/table", {}),
        ("/api/rerank/version", {}),
    ]
    statuses = {}
    for path, params in gets:
        response = small.get(path, **params)
        statuses[path] = response.status_code
        assert response.status_code in (200, 422), (path, response.text)
        if response.status_code == 422:
            assert detail(response)
    posts: list[tuple[str, dict[str, Any]]] = [
        ("/api/rerank/train", {}),
        ("/api/run", {}),
        ("/api/run/compare", {"a": {}, "b": {}}),
    ]
    for path, body in posts:
        response = small.post(path, body)
        statuses[path] = response.status_code
        assert response.status_code in (200, 422), (path, response.text)
    assert statuses["/api/chunking"] == 200 and statuses["/api/bm25/search"] == 200
    lsa = small.get("/api/lsa").json()
    assert lsa["rank"] <= lsa["windows"] and len(lsa["singular_values"]) == lsa["rank"]
    assert lsa["windows"] == 1 and lsa["windows_rule"].endswith(
        "words fit in one window, which holds them all."
    )
    if pages_labels:
        run_response = small.post("/api/run", {})
        assert run_response.status_code == 422
        assert "answer passages" in detail(run_response)


def test_meta_lists_the_corpus_warnings(tmp_path: Path, api_for: Any) -> None:
    """A cp1252 page and an unknown front-matter key: /api/meta says each, as ``raglab validate``
    words it (oracle: the messages written out by hand)."""
    _small_corpus(tmp_path, pages_labels=False)  # writes docs/ and questions.jsonl
    docs = tmp_path / "docs"
    (docs / "cafe.md").write_bytes("# Café\n\nLe café est très chaud.\n".encode("cp1252"))
    (docs / "site.md").write_text("---\nlayout: post\n---\n# Site\n\nWords.\n", encoding="utf-8")
    lab = Lab.load(docs, tmp_path / "questions.jsonl")
    meta = api_for(create_app(lab)).get("/api/meta").json()
    assert meta["corpus"]["warnings"] == [
        f"{docs / 'cafe.md'}:1: is not UTF-8 (byte 0xe9 at offset 5): read as cp1252 (detected; "
        "--encoding forces one)",
        f"{docs}: 1 page carries front-matter keys RAG lab does not use (layout): kept as "
        "metadata (--strict refuses them)",
    ]


# --- the serve command ------------------------------------------------------------------------


def test_serve_registers_its_options_and_binds_locally_by_default() -> None:
    import argparse

    from raglab.cli import serve

    parser = argparse.ArgumentParser(prog="raglab")
    serve.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["serve"])
    assert (args.host, args.port, args.open) == ("127.0.0.1", 8000, False)
    assert args.stem is NOT_GIVEN  # the lab's default, from the settings table
    assert args.handler is serve.run
    args = parser.parse_args(
        ["serve", "--host", "0.0.0.0", "--port", "9001", "--open", "--stem", "--corpus", "d"]
    )
    assert (args.host, args.port, args.open, args.stem, args.corpus) == (
        "0.0.0.0",
        9001,
        True,
        True,
        "d",
    )
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", "--port", "eighty"])
    args = parser.parse_args(["serve", "--analyzer", "lucene", "--windows", "150"])
    assert (args.analyzer, args.windows) == ("lucene", 150)


def test_serve_reports_bad_input_before_starting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from raglab.cli import serve

    status = serve.main(["--questions", str(tmp_path / "q.jsonl"), "--port", "1"])
    assert status == 1
    assert "--questions needs --corpus" in capsys.readouterr().err
    missing = serve.main(["--corpus", str(tmp_path / "none"), "--questions", "q.jsonl"])
    assert missing == 1
    with pytest.raises(SystemExit) as usage:  # argparse's usage error (exit status 2)
        serve.main(["--port", "70000"])
    assert usage.value.code == 2
    assert "--port: 70000 is not a port: give one in 0..65535" in capsys.readouterr().err


def test_serve_pauses_the_collector_for_its_startup_only() -> None:
    """The cyclic collector is off while the server starts and on again afterwards, also when
    the startup fails; what a successful startup built is frozen out of the collector's way."""
    import gc

    from raglab.cli.serve import _collector_paused

    assert gc.isenabled()
    with pytest.raises(RuntimeError), _collector_paused():
        assert not gc.isenabled()
        raise RuntimeError("the data has a problem")
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    try:
        with _collector_paused():
            assert not gc.isenabled()
        assert gc.isenabled()
        assert gc.get_freeze_count() > frozen
    finally:
        gc.unfreeze()
