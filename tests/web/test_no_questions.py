"""The web lab on a corpus alone: it serves search, and what needs labels answers 409 saying so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from raglab.pipeline.lab import Lab
from raglab.web.app import create_app

NEEDS_LABELS = "needs labelled questions: give --questions FILE"


def test_a_corpus_alone_is_served(tmp_path: Path, api_for: Any) -> None:
    (tmp_path / "alpha.md").write_text("# Alpha\n\nThe alpha pump moves water.\n", "utf-8")
    (tmp_path / "beta.md").write_text("# Beta\n\nThe beta valve closes at two bar.\n", "utf-8")
    alone = api_for(create_app(Lab.load(tmp_path)))
    meta = alone.get("/api/meta")
    assert meta.status_code == 200 and meta.json()["questions"]["total"] == 0
    found = alone.get("/api/bm25/search", q="valve")
    assert found.status_code == 200
    assert found.json()["results"][0]["page"] == "beta"  # the one page saying "valve"
    for method, path in [
        ("get", "/api/bm25/grid"),
        ("get", "/api/fusion/table"),
        ("get", "/api/rerank/table"),
        ("post", "/api/run"),
    ]:
        answer = alone.get(path) if method == "get" else alone.post(path, {})
        assert answer.status_code == 409 and answer.json()["detail"].endswith(NEEDS_LABELS), path
