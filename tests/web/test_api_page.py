"""``GET /api/page/{id}``: a page's text as retrieval sees it, as ``raglab show PAGE`` shows it."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from raglab.pipeline.lab import Lab
from raglab.web.app import create_app


def test_every_answer_passage_is_found_at_the_offsets_the_route_gives(api: Any, lab: Lab) -> None:
    """Oracle: the questions file itself: every labelled answer passage of the handbook, cut
    from the route's text at the route's offsets, is the passage as written; and the text is
    the page's text as the library reads it."""
    checked = 0
    for page_id in sorted({s.page_id for q in lab.questions for s in q.spans}):
        shown = api.get(f"/api/page/{quote(page_id, safe='')}").json()
        assert shown["id"] == page_id and shown["text"] == lab.corpus.page(page_id).text
        for answer in shown["answers"]:
            q = lab.questions.by_id(answer["question"])
            assert shown["text"][answer["start"] : answer["end"]] == q.answer
            checked += 1
    assert checked == sum(len(q.spans) for q in lab.questions) > 0


def test_an_unknown_page_is_404_naming_it(api: Any) -> None:
    answer = api.get("/api/page/no-such-page")
    assert answer.status_code == 404
    assert answer.json()["detail"] == "no page with id 'no-such-page' in the corpus"


def test_an_id_needing_url_encoding_and_unknown_front_matter_come_back(
    tmp_path: Path, api_for: Any
) -> None:
    """Oracle: the page written here: an id holding ``/``, ``?``, ``#``, ``%`` and ``&``, a key
    RAG lab does not use (kept as metadata), a file in a sub-folder."""
    odd = "guides/set-up?v=2#top%20&more"
    (tmp_path / "guides").mkdir()
    (tmp_path / "guides" / "setup.md").write_text(
        f"---\nid: {odd}\ntitle: Setting up\nlayout: docs\n---\n# Setting up\n\nPlug it in.\n",
        encoding="utf-8",
    )
    (tmp_path / "other.md").write_text("# Other\n\nNothing here.\n", encoding="utf-8")
    served = api_for(create_app(Lab.load(tmp_path)))
    shown = served.get(f"/api/page/{quote(odd, safe='')}")
    assert shown.status_code == 200
    assert shown.json() == {
        "id": odd,
        "title": "Setting up",
        "path": "guides/setup.md",
        "format": "md",
        "status": "current",
        "updated": None,
        "supersedes": None,
        "meta": {"layout": "docs"},
        "words": 6,
        "text": "# Setting up\n\nPlug it in.\n",
        "headings": [{"heading": "Setting up", "level": 1, "start": 0, "end": 26}],
        "answers": [],
    }
    # The id cut at its "?" or "#", as an unencoded URL would cut it, is no page.
    assert served.get("/api/page/guides/set-up").status_code == 404
