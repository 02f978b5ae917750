"""Exhibit II's API: counts beside shares, the cells tied with the best, the rule that picks it,
test recall only on commit, and stemming switched per request.

Oracle: a second, independent :class:`Lab` (the ``lab`` fixture, and one loaded with
``stem=True``): its grid, first relevant ranks and rankings, counted here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fastapi.responses import JSONResponse

from raglab.pipeline.exhibits.bm25 import bm25_search
from raglab.pipeline.grid import bm25_grid, grid_rule
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import first_ranks, measure
from raglab.run_settings import RetrievalSettings
from raglab.settings import GRID_B, GRID_K1, GRID_RECALL_K, default
from raglab.web.state import plain

K = GRID_RECALL_K


@pytest.fixture(scope="module")
def stemmed(handbook_lab: Lab) -> Lab:
    """The session's handbook with stemmed retrieval tokens (its sibling, built once)."""
    return handbook_lab.with_stem(True)


def hits(lab: Lab, split: str, k1: float, b: float) -> int:
    ranks = first_ranks(lab, split, RetrievalSettings("bm25", k1=k1, b=b))
    return sum(r is not None and r <= K for r in ranks)


@pytest.mark.parametrize("stem", [False, True])
def test_the_grid_gives_counts_ties_and_the_rule(
    api: Any, lab: Lab, stemmed: Lab, stem: bool
) -> None:
    """Oracle: bm25_grid's shares times the number of training questions; ties counted from
    those counts; the defaults' hits from first_ranks; the rule from grid_rule."""
    expected = stemmed if stem else lab
    data = api.get("/api/bm25/grid", stem=stem).json()
    grid = bm25_grid(expected, k=5)
    n = len(expected.split("train", answerable=True))
    counts = np.rint(grid.recall * n).astype(int)
    assert data["stem"] is stem and data["questions"] == n
    assert data["recall"] == grid.recall.tolist()
    assert data["hits"] == counts.tolist()
    assert data["cells"] == len(GRID_K1) * len(GRID_B)
    i, j = GRID_K1.index(grid.best_k1), GRID_B.index(grid.best_b)
    assert data["best"]["hits"] == counts[i, j] and data["best"]["at"] == [i, j]
    tied = [[int(a), int(c)] for a, c in zip(*np.nonzero(counts == counts[i, j]), strict=True)]
    assert data["tied"] == tied and [i, j] in tied
    # No cell does better than the tied ones, and every untied cell does worse.
    assert all(
        counts[a, c] < counts[i, j] for a, c in np.ndindex(counts.shape) if [a, c] not in tied
    )
    cell = data["default"]
    assert (cell["k1"], cell["b"]) == (default("k1"), default("b"))
    assert cell["hits"] == hits(expected, "train", default("k1"), default("b"))
    assert cell["recall"] == measure(expected, "train", RetrievalSettings("bm25"))["recall@5"]
    # k1 = 1.2 is the seventh row; b = 0.75 lies halfway between the columns of 0.7 and 0.8.
    assert cell["at"] == [6.0, 7.5]
    assert data["rule"] == grid_rule(K, "train")


def test_the_handbook_grid_ties_widely_and_the_best_is_one_question_ahead(
    api: Any, lab: Lab
) -> None:
    """Oracle: the lesson as the issue states it, from the library's counts: most cells tie at
    the best, which finds one training question more than the defaults."""
    data = api.get("/api/bm25/grid", stem=False).json()
    assert len(data["tied"]) > data["cells"] / 2
    assert data["best"]["hits"] == data["default"]["hits"] + 1
    assert f"k1 = {default('k1')}, b = {default('b')}" in data["rule"]


def test_recall_is_training_only_and_test_comes_on_its_own_route(
    api: Any, lab: Lab, stemmed: Lab
) -> None:
    """Oracle: measure and first_ranks of the independent labs at the same setting."""
    for stem, expected in ((False, lab), (True, stemmed)):
        r = api.get("/api/bm25/recall", k1=1.6, b=0.5, stem=stem).json()
        settings = RetrievalSettings("bm25", k1=1.6, b=0.5)
        assert (r["split"], r["k"], r["stem"]) == ("train", K, stem)
        assert r["recall"] == measure(expected, "train", settings)["recall@5"]
        assert r["hits"] == hits(expected, "train", 1.6, 0.5)
        assert r["questions"] == len(expected.split("train", answerable=True))
        assert "test" not in r
        t = api.get("/api/bm25/test", k1=1.6, b=0.5, stem=stem).json()
        assert (t["split"], t["stem"]) == ("test", stem)
        assert t["recall"] == measure(expected, "test", settings)["recall@5"]
        assert t["hits"] == hits(expected, "test", 1.6, 0.5)
        assert t["questions"] == len(expected.split("test", answerable=True))


def test_recall_names_the_training_questions_stemming_fixes_and_breaks(
    api: Any, lab: Lab, stemmed: Lab
) -> None:
    """Oracle: first ranks of each training question without and with stemming, compared."""
    for k1, b in ((default("k1"), default("b")), (0.0, 0.0)):
        effect = api.get("/api/bm25/recall", k1=k1, b=b).json()["stemming"]
        settings = RetrievalSettings("bm25", k1=k1, b=b)
        plain, stem = first_ranks(lab, "train", settings), first_ranks(stemmed, "train", settings)
        qs = lab.split("train", answerable=True)
        found = [
            (r is not None and r <= K, s is not None and s <= K)
            for r, s in zip(plain, stem, strict=True)
        ]
        assert [x["id"] for x in effect["fixes"]] == [
            q.id for q, (p, s) in zip(qs, found, strict=True) if s and not p
        ]
        assert [x["id"] for x in effect["breaks"]] == [
            q.id for q, (p, s) in zip(qs, found, strict=True) if p and not s
        ]
        assert effect["questions"] == len(qs)
    # On the handbook stemming fixes questions at the defaults and breaks one at k1 = b = 0.
    assert api.get("/api/bm25/recall").json()["stemming"]["fixes"]
    assert api.get("/api/bm25/recall", k1=0, b=0).json()["stemming"]["breaks"]


def test_stemming_switches_the_search(api: Any, lab: Lab, stemmed: Lab) -> None:
    """Oracle: bm25_search on the independent labs; "locks" appears in no chunk as written,
    and every chunk found with stemming on holds the stem "lock"."""
    off = api.get("/api/bm25/search", q="locks", stem=False).json()
    on = api.get("/api/bm25/search", q="locks", stem=True).json()
    assert off["stem"] is False and off["results"] == [] and off["stemmed"] == []
    assert (
        off["tokens"]
        == bm25_search(lab, "locks", k1=default("k1"), b=default("b"))["tokens"]
        == ["locks"]
    )
    assert on["stem"] is True and on["tokens"] == ["lock"]
    assert on["stemmed"] == [{"word": "locks", "stem": "lock"}]
    want = bm25_search(stemmed, "locks", k1=default("k1"), b=default("b"))
    assert [r["chunk"] for r in on["results"]] == [r["chunk"] for r in want["results"]]
    assert [r["score"] for r in on["results"]] == [r["score"] for r in want["results"]]
    cs = stemmed.indexes.chunk_set()
    assert on["results"] and all("lock" in cs.tokens[r["index"]] for r in on["results"])
    # Absent: the served lab's own stemming (off for the handbook).
    assert api.get("/api/bm25/search", q="locks").json()["stem"] is False


def test_each_terms_share_is_its_part_of_the_score(api: Any) -> None:
    """Oracle: contribution / score, and the shares of a chunk summing to 1."""
    data = api.get("/api/bm25/search", q="When should an agent escalate a ticket?").json()
    for row in data["results"]:
        for t in row["terms"]:
            assert t["share"] == pytest.approx(t["contribution"] / row["score"])
        assert sum(t["share"] for t in row["terms"]) == pytest.approx(1.0)


def test_a_cached_search_is_answered_from_the_event_loop(
    api: Any, lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first search computes in the thread pool; the same search again is sent from the
    event loop, the bytes cached, with no thread-pool hop (made impossible here). Oracle: the
    bytes FastAPI's JSONResponse gives for bm25_search on the independent lab."""
    import raglab.web.state as web_state

    params = {"q": "tripod head wobble", "k1": 1.1, "b": 0.6, "top": 4}
    first = api.get("/api/bm25/search", **params)
    want = JSONResponse(plain(bm25_search(lab, "tripod head wobble", k1=1.1, b=0.6, top=4)))
    assert first.status_code == 200 and first.content == bytes(want.body)
    assert first.headers["content-type"] == "application/json"

    async def no_thread(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a cached answer went to the thread pool")

    monkeypatch.setattr(web_state, "run_in_threadpool", no_thread)
    again = api.get("/api/bm25/search", **params)
    assert again.status_code == 200 and again.content == first.content
    # Another setting is a miss: it needs the thread pool, which this test took away.
    assert api.get("/api/bm25/search", **{**params, "top": 3}).status_code == 500
