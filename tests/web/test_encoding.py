"""The neural vectors encoded in the background from a server's start, on an empty cache.

A real server (``python -m raglab.cli.serve``) on an empty ``RAGLAB_CACHE_DIR``: it answers at
once, every route that needs the neural vectors says "encoding, n of N" (202, or its neural rows
marked) while nothing else waits, and once encoded the numbers are the library's and the vectors
are in the cache. Oracles: the library on the session's own lab (``neural_view``), and the count
of the chunks' distinct texts for the files in the cache. No timing is asserted: the encoding of
the handbook takes seconds, the first answers come before it ends.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from raglab.pipeline.exhibits.neural import neural_view
from raglab.pipeline.lab import Lab
from raglab.settings import NEURAL_RETRIEVERS
from raglab.web.app import create_app
from raglab.web.encoding import NeuralEncoding, query_texts
from tests.web.conftest import serving

ENCODED_WITHIN_S = 600


def _wait_until_ready(client: httpx.Client) -> dict[str, Any]:
    deadline = time.monotonic() + ENCODED_WITHIN_S
    while time.monotonic() < deadline:
        progress: dict[str, Any] = client.get("/api/neural/encoding").json()
        if progress["ready"]:
            return progress
        time.sleep(0.5)
    pytest.fail(f"the vectors were not encoded within {ENCODED_WITHIN_S} s")


def test_a_server_on_an_empty_cache_serves_at_once_and_encodes_in_the_background(
    tmp_path: Path, lab: Lab
) -> None:
    cache = tmp_path / "cache"
    with (
        serving(
            "--quiet", log_name="web-server-cold.log", env={"RAGLAB_CACHE_DIR": str(cache)}
        ) as base,
        httpx.Client(base_url=base, timeout=120) as client,
    ):
        first = client.get("/api/neural/encoding").json()
        assert first["ready"] is False and first["error"] is None
        chunks = len(lab.indexes.chunk_set().chunks)
        assert first["total"] >= chunks and 0 <= first["done"] < first["total"]
        view = client.get("/api/neural/view")
        assert view.status_code == 202 and view.headers["retry-after"] == "1"
        assert view.json()["encoding"]["total"] == first["total"]
        assert f"of {first['total']}" in view.json()["detail"]
        assert client.post("/api/run", json={"retriever": "neural"}).status_code == 202
        train = client.post("/api/rerank/train", params={"retriever": "neural-rrf"})
        assert train.status_code == 202
        # Meanwhile everything else answers, runs included.
        assert client.post("/api/run", json={"retriever": "bm25"}).status_code == 200
        assert client.get("/api/bm25/examples").status_code == 200
        table = client.get("/api/fusion/table").json()
        assert set(table["rankers"]) == {"bm25", "lsa", "rrf", "score"}
        assert table["encoding"]["ready"] is False
        for name in NEURAL_RETRIEVERS:
            assert "encoding" in table["unavailable"][name]
        # All of the above was answered while the encoding ran.
        assert client.get("/api/neural/encoding").json()["ready"] is False

        done = _wait_until_ready(client)
        assert done["done"] == done["total"] == first["total"]
        view = client.get("/api/neural/view")
        assert view.status_code == 200
        assert view.json()["questions"] == neural_view(lab)["questions"]
        run = client.post("/api/run", json={"retriever": "neural"})
        assert run.status_code == 200 and run.json()["settings"]["retriever"] == "neural"
        table = client.get("/api/fusion/table").json()
        assert set(NEURAL_RETRIEVERS) <= set(table["rankers"]) and table["unavailable"] == {}
    texts = {c.text for c in lab.indexes.chunk_set().chunks}
    (folder,) = (cache / "neural").iterdir()  # one model
    assert len(list(folder.glob("*.npy"))) == len(texts)  # the chunks' vectors, kept


def test_a_cache_holding_every_vector_is_ready_at_once(lab: Lab, warm_neural_cache: Path) -> None:
    """Nothing to encode (the chunks' vectors are in the session's cache, and every question's
    is put there first): ready on return from start, no thread, nothing counted."""
    for text in query_texts(lab):
        lab.indexes.query_vector(text)
    encoding = NeuralEncoding(lab, threading.RLock())
    encoding.start()
    assert encoding.ready() and encoding.progress() == {
        "ready": True,
        "done": 0,
        "total": 0,
        "error": None,
    }


def _vector_files(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*.npy"))


def test_a_stopped_encoding_writes_nothing_more_and_starts_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """stop() once the first batch of the handbook's chunks is encoded (eight batches of 32 to
    go) ends the thread: it is gone, no chunk vector is written then or later (they are written
    once a chunking's last batch is done), no error is recorded and the count stops where it
    is; a later start() begins again."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(cache))
    lab = Lab.load()
    encoding = NeuralEncoding(lab, threading.RLock())
    encoding.start()
    try:
        deadline = time.monotonic() + ENCODED_WITHIN_S
        while encoding.progress()["done"] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        encoding.stop()
        assert not encoding.running
        progress = encoding.progress()
        assert progress["ready"] is False and progress["error"] is None
        assert 0 < progress["done"] == progress["total"] < len(lab.indexes.chunk_set().chunks)
        assert _vector_files(cache) == []
        time.sleep(0.5)
        assert _vector_files(cache) == []
        encoding.start()
        assert encoding.running
    finally:
        encoding.stop()


def test_a_server_shutting_down_stops_its_encoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leaving the app's lifespan (the server's shutdown) ends the encoding it started: no
    thread of the stopped server writes a vector afterwards, not even into a cache folder set
    after it stopped."""
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(tmp_path / "cache"))
    app = create_app(Lab.load())  # the handbook: seconds of encoding, on an empty cache
    state = app.state.raglab

    async def serve_briefly() -> None:
        async with app.router.lifespan_context(app):
            deadline = time.monotonic() + 60
            while not state.encoding.running and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            assert state.encoding.running

    asyncio.run(serve_briefly())
    assert not state.encoding.running and state.closing.is_set()
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(tmp_path / "later"))
    time.sleep(0.5)
    assert not (tmp_path / "later").exists()
    assert not state.encoding.progress()["ready"]
