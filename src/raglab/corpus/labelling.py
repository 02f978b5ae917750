"""Labelling questions by hand: split assignment, question records, and a validated atomic save.

The questions file stays the JSON Lines format :mod:`raglab.corpus.questions` reads. A record is
made from what a labeller picked: a page and a character range of its text (the answer passage,
copied from the page, its surrounding whitespace dropped, with ``page`` and ``start`` written so an
answer found on several pages or twice on one page names the occurrence meant), or no passage (a
question the documents cannot answer, ``answer: null``), or, for a question labelled by relevant
pages (an imported collection's), the list of those pages (``pages``: ids, or ids to grades).
Every save checks the whole resulting
file with :func:`~raglab.corpus.questions.parse_questions`, the checks ``raglab validate`` makes,
and only then replaces the file atomically (:func:`~raglab.base.files.atomic_write_text`), so a
refused or interrupted save leaves the previous file whole.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from raglab.base.files import atomic_write_text, read_text_lines
from raglab.corpus.pages import Corpus
from raglab.corpus.questions import QUESTION_FIELDS, SPLITS, QuestionSet, parse_questions
from raglab.errors import InputError

#: The share of questions (in percent) a split chosen by the id puts in training, as in the
#: bundled handbook's roughly 60/40 train/test labelled set.
TRAIN_PERCENT = 60
#: The kind of a question the documents cannot answer.
NO_ANSWER_KIND = "out-of-corpus"
#: New ids: this prefix and the next free number.
ID_PREFIX = "q"

Record = dict[str, Any]


def assign_split(question_id: str) -> str:
    """``"train"`` or ``"test"``, fixed by the id: sha256(id) mod 100 < :data:`TRAIN_PERCENT`
    gives train, so about 60 in 100 ids train and the same id always gets the same split."""
    digest = int.from_bytes(hashlib.sha256(question_id.encode("utf-8")).digest()[:8], "big")
    return SPLITS[0] if digest % 100 < TRAIN_PERCENT else SPLITS[1]


def next_id(records: Sequence[Mapping[str, Any]]) -> str:
    """The first ``q<n>`` (n = count + 1, then up) that no record uses."""
    used = {r.get("id") for r in records}
    n = len(records) + 1
    while f"{ID_PREFIX}{n}" in used:
        n += 1
    return f"{ID_PREFIX}{n}"


def passage(corpus: Corpus, page_id: str, start: int, end: int) -> tuple[str, int]:
    """The answer ``corpus.page(page_id).text[start:end]`` without its surrounding whitespace,
    and its start offset; ``ValueError`` for an unknown page, a range outside the text or one
    holding only whitespace."""
    if page_id not in corpus:
        raise ValueError(f"page: names no page of the corpus: {page_id!r}")
    text = corpus.page(page_id).text
    if not 0 <= start < end <= len(text):
        raise ValueError(f"start, end: {start}..{end} is not a range of the page's text")
    chosen = text[start:end]
    if not chosen.strip():
        raise ValueError("answer: the selected passage holds only whitespace")
    lead = len(chosen) - len(chosen.lstrip())
    return chosen.strip(), start + lead


def make_record(
    corpus: Corpus,
    *,
    question_id: str,
    question: str,
    kind: str,
    split: str | None = None,
    page: str | None = None,
    start: int | None = None,
    end: int | None = None,
    pages: Sequence[str] | Mapping[str, int] | None = None,
) -> Record:
    """One line of the questions file, fields in :data:`QUESTION_FIELDS` order. ``page`` with
    ``start`` and ``end``: the answer is that range of the page (:func:`passage`); ``pages``:
    the question is labelled by these relevant pages (a list of ids, or ids to grades of 1 or
    more, written as given); neither: the documents cannot answer (``answer: null``).
    ``split=None``: :func:`assign_split`. ``ValueError`` names the field at fault."""
    record: Record = {
        "id": question_id,
        "split": split or assign_split(question_id),
        "kind": kind,
        "question": question,
    }
    if pages is not None:
        record["pages"] = relevant_pages(corpus, pages, with_passage=page is not None)
        return record
    if page is None:
        record["answer"] = None
        return record
    if start is None or end is None:
        raise ValueError("start, end: a passage needs both offsets")
    answer, at = passage(corpus, page, start, end)
    record.update(answer=answer, page=page, start=at)
    return {k: record[k] for k in QUESTION_FIELDS if k in record}


def relevant_pages(
    corpus: Corpus, pages: Sequence[str] | Mapping[str, int], *, with_passage: bool = False
) -> list[str] | dict[str, int]:
    """``pages`` checked as a question's relevant pages: one or more, each a page of ``corpus``
    named once, each grade a whole number of 1 or more; ``ValueError`` otherwise (and when
    ``with_passage``: a question has an answer passage or relevant pages, not both)."""
    if with_passage:
        raise ValueError("pages: give either an answer passage or relevant pages, not both")
    ids = list(pages)
    if not ids:
        raise ValueError("pages: name at least one relevant page")
    if len(set(ids)) != len(ids):
        raise ValueError("pages: a page is named twice")
    missing = [p for p in ids if p not in corpus]
    if missing:
        raise ValueError(f"pages: names pages not in the corpus: {', '.join(missing[:5])}")
    if not isinstance(pages, Mapping):
        return ids
    grades = dict(pages)
    if any(isinstance(g, bool) or not isinstance(g, int) or g < 1 for g in grades.values()):
        raise ValueError("pages: each grade must be a whole number of 1 or more")
    return grades


def read_records(path: str | Path, corpus: Corpus) -> list[Record]:
    """The records of an existing questions file, checked (:class:`InputError` listing every
    problem); ``[]`` when the file does not exist or holds no line."""
    file = Path(path)
    if not file.exists():
        return []
    lines = read_text_lines(file)
    if not any(line.strip() for line in lines):
        return []
    parse_questions(lines, corpus=corpus, source=str(file))
    return [json.loads(line) for line in lines if line.strip()]


def check_records(
    records: Sequence[Mapping[str, Any]], corpus: Corpus, source: str
) -> QuestionSet | None:
    """The records checked as ``raglab validate`` checks a file (None when there are none);
    :class:`InputError` listing every problem."""
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    if not lines:
        return None
    return parse_questions(lines, corpus=corpus, source=source)


def save_records(path: str | Path, records: Sequence[Mapping[str, Any]], corpus: Corpus) -> None:
    """Check the whole file-to-be (:func:`check_records`), then replace ``path`` atomically; a
    refused save raises :class:`InputError` and leaves ``path`` untouched."""
    check_records(records, corpus, str(path))
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    atomic_write_text(path, text)


def counts(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """How many questions each split holds of each kind: ``{split: {kind: n}}``, every split
    present, kinds sorted."""
    out: dict[str, dict[str, int]] = {}
    for split in SPLITS:
        tally = Counter(str(r.get("kind")) for r in records if r.get("split") == split)
        out[split] = dict(sorted(tally.items()))
    return out


def problem_text(exc: InputError) -> str:
    """An :class:`InputError`'s problems as one line."""
    return "; ".join(str(p) for p in exc.problems)


__all__ = [
    "ID_PREFIX",
    "NO_ANSWER_KIND",
    "TRAIN_PERCENT",
    "assign_split",
    "check_records",
    "counts",
    "make_record",
    "next_id",
    "passage",
    "problem_text",
    "read_records",
    "relevant_pages",
    "save_records",
]
