"""Fingerprints of a report's data and settings: sha256 digests, framed and canonical.

One job: say, with a sha256, exactly which corpus, questions and settings a report measured.

- :func:`data_digests`: the corpus digest runs over the pages' file bytes in sorted order of their
  paths relative to the corpus folder, each framed by its path and length; a page that was not
  read from a file (a corpus built in memory) contributes its parsed fields instead. The
  questions digest is over the questions file's bytes (or, in memory, over the parsed questions).
- :func:`settings_digest`: the settings as canonical JSON (sorted keys, no spaces).
- :func:`fingerprint`: sha256 over the corpus, questions and settings digests (a report's
  ``fingerprint``).
- :func:`data_fingerprint`: sha256 over the corpus and questions digests alone, the one
  fingerprint of a lab's data (the web app's ``/meta`` shows its first 16 hex digits).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from raglab.pipeline.lab import Lab


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _frame(h: Any, name: str, data: bytes) -> None:
    # Name and length before the bytes, so no two different corpora hash the same stream.
    h.update(name.encode("utf-8") + b"\0" + str(len(data)).encode("ascii") + b"\0")
    h.update(data)


def _page_files(lab: Lab) -> list[tuple[str, Callable[[], bytes]]]:
    # Each file's bytes read only when hashed, one file at a time: the corpus is never held
    # whole (a lab on a cluster holds no page's text, and its digest reads none).
    root = Path(lab.corpus.root)
    found: list[tuple[str, Callable[[], bytes]]] = []
    for page in lab.corpus:
        source = Path(page.source)
        if source.is_file():
            try:
                name = source.resolve().relative_to(root.resolve()).as_posix()
            except ValueError:
                name = source.as_posix()
            found.append((name, source.read_bytes))
        else:
            fields = {
                "id": page.id,
                "title": page.title,
                "text": page.text,
                "updated": None if page.updated is None else page.updated.isoformat(),
                "status": page.status,
                "supersedes": page.supersedes,
            }
            found.append((f"<page {page.id}>", partial(_canonical, fields)))
    return sorted(found, key=lambda item: item[0])


def data_digests(lab: Lab) -> dict[str, str]:
    """sha256 of the corpus pages (``corpus``) and of the questions file (``questions``)."""
    corpus = hashlib.sha256()
    for name, read in _page_files(lab):
        _frame(corpus, name, read())
    source = Path(lab.questions.source)
    if source.is_file():
        questions = hashlib.sha256(source.read_bytes()).hexdigest()
    else:
        rows = [
            {
                "id": q.id,
                "split": q.split,
                "kind": q.kind,
                "question": q.question,
                "answer": q.answer,
                "spans": [[s.page_id, s.start, s.end] for s in q.spans],
                "pages": dict(q.pages or {}),
            }
            for q in lab.questions
        ]
        questions = hashlib.sha256(_canonical(rows)).hexdigest()
    return {"corpus": corpus.hexdigest(), "questions": questions}


def settings_digest(settings: Mapping[str, Any]) -> str:
    """sha256 of a settings record as canonical JSON."""
    return hashlib.sha256(_canonical(dict(settings))).hexdigest()


def fingerprint(digests: Mapping[str, str], settings: Mapping[str, Any]) -> str:
    """sha256 over the corpus digest, the questions digest and the settings digest."""
    h = hashlib.sha256()
    for name, value in (
        ("corpus", digests["corpus"]),
        ("questions", digests["questions"]),
        ("settings", settings_digest(settings)),
    ):
        _frame(h, name, value.encode("ascii"))
    return h.hexdigest()


def data_fingerprint(lab: Lab) -> str:
    """sha256 over the corpus digest and the questions digest (:func:`data_digests`): which data
    a lab holds, whatever the settings. Two labs on the same page and question files agree."""
    digests = data_digests(lab)
    h = hashlib.sha256()
    for name in ("corpus", "questions"):
        _frame(h, name, digests[name].encode("ascii"))
    return h.hexdigest()


__all__ = ["data_digests", "data_fingerprint", "fingerprint", "settings_digest"]
