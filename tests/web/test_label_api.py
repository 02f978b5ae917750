"""The labelling API (raglab.web.label): pages, questions written, refused writes, the guard.

Oracles: the pages of tests/labelling_corpus.py (where each sentence lies, worked by hand with
``str.index``), ``raglab.corpus.questions.load_questions`` (the checks ``raglab validate`` makes)
reading the file back, and the guard's documented status codes.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from raglab.corpus.labelling import assign_split
from raglab.corpus.pages import load_corpus
from raglab.corpus.questions import BUNDLED_KINDS, SPLITS, load_questions
from raglab.web.label import create_label_app
from tests.labelling_corpus import PAGES, SHARED, write_corpus


def send(app: FastAPI, method: str, path: str, **kwargs: Any) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as c:
            return await c.request(method, path, **kwargs)

    return asyncio.run(go())


@pytest.fixture
def setup(tmp_path: Path) -> tuple[FastAPI, Path]:
    corpus = load_corpus(write_corpus(tmp_path / "pages"))
    path = tmp_path / "questions.jsonl"
    return create_label_app(corpus, path), path


def span(page: str, sentence: str, nth: int = 0) -> dict[str, Any]:
    text = PAGES[page]
    at = -1
    for _ in range(nth + 1):
        at = text.index(sentence, at + 1)
    return {"page": page, "start": at, "end": at + len(sentence)}


def test_meta_serves_the_kinds_and_splits_of_the_questions_module(
    setup: tuple[FastAPI, Path],
) -> None:
    app, path = setup
    meta = send(app, "GET", "/api/label/meta").json()
    assert meta["kinds"] == list(BUNDLED_KINDS)
    assert meta["splits"] == list(SPLITS)
    assert meta["file"] == str(path)


def test_pages_are_searched_with_bm25_and_served_whole(setup: tuple[FastAPI, Path]) -> None:
    app, _ = setup
    # "grease" is on gamma only; "mount" on alpha and gamma; an empty query lists every page.
    hits = send(app, "GET", "/api/label/pages", params={"q": "grease"}).json()["pages"]
    assert [h["id"] for h in hits] == ["gamma"]
    hits = send(app, "GET", "/api/label/pages", params={"q": "mount"}).json()["pages"]
    assert sorted(h["id"] for h in hits) == ["alpha", "gamma"]
    hits = send(app, "GET", "/api/label/pages", params={"q": ""}).json()["pages"]
    assert sorted(h["id"] for h in hits) == sorted(PAGES)
    page = send(app, "GET", "/api/label/page/delta").json()
    assert page["text"] == PAGES["delta"]  # no front matter: the text is the whole file
    assert page["title"] == "Batteries"
    assert send(app, "GET", "/api/label/page/nope").status_code == 404


def test_create_edit_delete_keeps_a_valid_file(setup: tuple[FastAPI, Path]) -> None:
    app, path = setup
    assert send(app, "GET", "/api/label/questions").json()["total"] == 0
    first = send(
        app,
        "POST",
        "/api/label/questions",
        json={"question": "How is it packed?", "kind": "keyword", **span("alpha", SHARED, 1)},
    )
    assert first.status_code == 201, first.text
    q1 = first.json()["question"]
    assert q1["id"] == "q1" and q1["split"] == assign_split("q1")
    assert (q1["page"], q1["start"]) == ("alpha", span("alpha", SHARED, 1)["start"])
    second = send(
        app,
        "POST",
        "/api/label/questions",
        json={"question": "Pizza?", "kind": "out-of-corpus", "split": "test"},
    ).json()
    assert second["counts"]["test"].get("out-of-corpus") == 1
    assert second["total"] == 2
    loaded = load_questions(path, corpus=app.state.label.corpus)
    # The passage occurs three times; the file names the one selected, so no warning.
    assert [(s.page_id, s.start) for s in loaded.by_id("q1").spans] == [
        ("alpha", span("alpha", SHARED, 1)["start"])
    ]
    assert loaded.by_id("q2").answer is None
    edited = send(
        app,
        "PUT",
        "/api/label/questions/q1",
        json={
            "question": "How cold?",
            "kind": "paraphrase",
            "split": "train",
            **span("gamma", "The grease stiffens below minus ten degrees"),
        },
    )
    assert edited.status_code == 200, edited.text
    loaded = load_questions(path, corpus=app.state.label.corpus)
    assert loaded.by_id("q1").question == "How cold?"
    assert loaded.by_id("q1").spans[0].page_id == "gamma"
    assert send(app, "DELETE", "/api/label/questions/q2").json()["total"] == 1
    assert [q.id for q in load_questions(path, corpus=app.state.label.corpus)] == ["q1"]
    assert send(app, "DELETE", "/api/label/questions/q2").status_code == 404


def test_a_refused_write_is_422_and_leaves_the_file(setup: tuple[FastAPI, Path]) -> None:
    app, path = setup
    body = {"id": "x", "question": "Pizza?", "kind": "out-of-corpus", "split": "test"}
    assert send(app, "POST", "/api/label/questions", json=body).status_code == 201
    before = path.read_bytes()
    again = send(app, "POST", "/api/label/questions", json=body)
    assert again.status_code == 422 and "duplicate id" in again.json()["detail"]
    blank = send(app, "POST", "/api/label/questions", json={**body, "id": "y", "question": "   "})
    assert blank.status_code == 422 and "question" in blank.json()["detail"]
    outside = send(
        app,
        "POST",
        "/api/label/questions",
        json={**body, "id": "z", "page": "delta", "start": 5, "end": 10_000},
    )
    assert outside.status_code == 422 and "not a range" in outside.json()["detail"]
    bad_split = send(app, "POST", "/api/label/questions", json={**body, "id": "w", "split": "dev"})
    assert bad_split.status_code == 422
    assert path.read_bytes() == before
    assert send(app, "GET", "/api/label/questions").json()["total"] == 1


def test_the_guard_refuses_other_hosts_and_origins(setup: tuple[FastAPI, Path]) -> None:
    app, path = setup
    body = {"question": "Pizza?", "kind": "out-of-corpus"}
    foreign = send(
        app,
        "POST",
        "/api/label/questions",
        json=body,
        headers={"origin": "http://attacker.example"},
    )
    assert foreign.status_code == 403
    other_host = send(app, "GET", "/api/label/questions", headers={"host": "attacker.example"})
    assert other_host.status_code == 400
    assert not path.exists()


def test_an_existing_invalid_file_is_refused_at_start(tmp_path: Path) -> None:
    from raglab.errors import InputError

    corpus = load_corpus(write_corpus(tmp_path / "pages"))
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "q1", "split": "train"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="missing field"):
        create_label_app(corpus, path)


def test_a_hand_written_answer_is_located_for_editing(tmp_path: Path) -> None:
    """A file written by hand may give a passage without ``page``: the listing says where it
    lies (its first occurrence), so the page can show it selected."""
    corpus = load_corpus(write_corpus(tmp_path / "pages"))
    path = tmp_path / "q.jsonl"
    answer = "Couriers collect on weekdays."
    record = {"id": "h1", "split": "test", "kind": "keyword", "question": "When?", "answer": answer}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    app = create_label_app(corpus, path)
    listing = send(app, "GET", "/api/label/questions").json()
    at = PAGES["beta"].index(answer)
    assert listing["located"] == {"h1": {"page": "beta", "start": at, "end": at + len(answer)}}


def test_a_file_that_cannot_be_written_is_500_and_nothing_changes(tmp_path: Path) -> None:
    import shutil

    corpus = load_corpus(write_corpus(tmp_path / "pages"))
    folder = tmp_path / "labels"
    folder.mkdir()
    app = create_label_app(corpus, folder / "q.jsonl")
    shutil.rmtree(folder)  # the folder goes away while the server runs
    body = {"question": "Pizza?", "kind": "out-of-corpus"}
    response = send(app, "POST", "/api/label/questions", json=body)
    assert response.status_code == 500
    assert response.json()["detail"].endswith("does not exist")
    assert send(app, "GET", "/api/label/questions").json()["total"] == 0


def test_a_question_labelled_by_pages_is_edited_through_the_checked_save(tmp_path: Path) -> None:
    """Issue #30. A question labelled by relevant pages (an imported collection's) is edited:
    its text, kind, split and pages list (kept a list, or graded) are written, and the file
    read back by ``load_questions`` (``raglab validate``'s checks) has them; a page not in the
    corpus, or both a passage and pages, is 422 and leaves the file as it was."""
    corpus = load_corpus(write_corpus(tmp_path / "pages"))
    path = tmp_path / "q.jsonl"
    listed = {"id": "c1", "split": "train", "kind": "glasgow", "question": "Packing?"}
    graded = {"id": "c2", "split": "test", "kind": "glasgow", "question": "Cold?"}
    path.write_text(
        json.dumps({**listed, "pages": ["alpha"]})
        + "\n"
        + json.dumps({**graded, "pages": {"gamma": 2}})
        + "\n",
        encoding="utf-8",
    )
    app = create_label_app(corpus, path)
    body = {"question": "How is a unit packed?", "kind": "paraphrase", "split": "test"}
    response = send(
        app, "PUT", "/api/label/questions/c1", json={**body, "pages": ["alpha", "beta"]}
    )
    assert response.status_code == 200, response.text
    response = send(
        app, "PUT", "/api/label/questions/c2", json={**graded, "pages": {"gamma": 1, "delta": 3}}
    )
    assert response.status_code == 200, response.text
    lines = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    assert lines == [
        {"id": "c1", "split": "test", "kind": "paraphrase", "question": "How is a unit packed?",
         "pages": ["alpha", "beta"]},
        {**graded, "pages": {"gamma": 1, "delta": 3}},
    ]  # fmt: skip
    loaded = load_questions(path, corpus=corpus)
    assert loaded.by_id("c1").pages == {"alpha": 1, "beta": 1}
    assert loaded.by_id("c2").pages == {"gamma": 1, "delta": 3}
    before = path.read_bytes()
    for bad, reason in (
        ({"pages": ["alpha", "nowhere"]}, "names pages not in the corpus: nowhere"),
        ({"pages": []}, "name at least one relevant page"),
        ({"pages": {"alpha": 0}}, "whole number of 1 or more"),
        ({"pages": ["alpha"], **span("beta", "Couriers")}, "not both"),
    ):
        response = send(app, "PUT", "/api/label/questions/c1", json={**body, **bad})
        assert response.status_code == 422 and reason in response.json()["detail"]
    assert path.read_bytes() == before
