"""Shared fixtures: the Cranfield test collection, tokenised with the package's tokeniser.

Cranfield (1,400 aeronautics abstracts, 225 queries, graded judgements) ships with the tests in
``tests/fixtures/cranfield`` (its README.txt gives the provenance), so every checkout can run
them. Tests that use it fail, never skip, when it is missing.

The token fixtures use ``raglab.text.tokens.tokenize`` (the retrieval tokens every stage counts).
``simple_tokens`` is a plain regex tokeniser for tests that must not depend on that module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

CRANFIELD_DIR = Path(__file__).resolve().parent / "fixtures" / "cranfield"
CRANFIELD_FILES = ("cran.all.1400", "cran.qry", "cranqrel")
_FIELD = re.compile(r"^\.([TABW])\s*$")
_TOKEN = re.compile(r"[a-z0-9]+")


def simple_tokens(text: str) -> list[str]:
    """Lower-cased runs of letters and digits: a stand-in tokeniser, independent of raglab."""
    return _TOKEN.findall(text.lower())


@dataclass(frozen=True, slots=True)
class CranDoc:
    """One Cranfield document: its ``.I`` number, title (``.T``) and abstract (``.W``)."""

    id: int
    title: str
    body: str


@dataclass(frozen=True, slots=True)
class Cranfield:
    """The parsed collection.

    ``docs[i]`` is document ``i + 1``. ``queries[j]`` is query ``j + 1``: the judgements number
    queries 1..225 by their position in cran.qry, not by their ``.I`` (kept in ``query_ids``).
    ``qrels[q][d]`` is the grade of document d for query q, 1 (most relevant) to 4, or -1 (no
    interest), as in the file.
    """

    docs: tuple[CranDoc, ...]
    queries: tuple[str, ...]
    query_ids: tuple[int, ...]
    qrels: dict[int, dict[int, int]]

    def doc_tokens(self, tokenize: Callable[[str], list[str]]) -> list[list[str]]:
        """Title and abstract of every document, tokenised."""
        return [tokenize(f"{d.title}\n{d.body}", stem=False, analyzer="raglab") for d in self.docs]

    def query_tokens(self, tokenize: Callable[[str], list[str]]) -> list[list[str]]:
        return [tokenize(q, stem=False, analyzer="raglab") for q in self.queries]


def _records(text: str) -> list[tuple[int, list[str]]]:
    """Split a Glasgow-format file into (.I number, following lines) records."""
    records: list[tuple[int, list[str]]] = []
    for line in text.splitlines():
        if line.startswith(".I "):
            records.append((int(line[3:].strip()), []))
        elif records:
            records[-1][1].append(line)
    return records


def _fields(lines: Sequence[str]) -> dict[str, str]:
    """Fields .T, .A, .B, .W of one record.

    The abstract (.W) is the last field: every line after the first ``.W`` belongs to it. A few
    abstracts hold stray marker lines (``.A`` and ``.B`` inside document 240, a second ``.W`` in
    documents 576 and 578); those marker lines are dropped and the text around them kept.
    """
    fields: dict[str, list[str]] = {}
    current: str | None = None
    for line in lines:
        marker = _FIELD.match(line)
        if marker and current != "W":
            current = marker.group(1)
            fields.setdefault(current, [])
        elif marker:
            continue
        elif current is not None:
            fields[current].append(line)
    return {name: "\n".join(body).strip() for name, body in fields.items()}


def parse_cranfield(folder: Path) -> Cranfield:
    missing = [name for name in CRANFIELD_FILES if not (folder / name).is_file()]
    if missing:
        pytest.fail(
            f"Cranfield collection not found: {folder} lacks {', '.join(missing)}. The tests "
            "expect it at tests/fixtures/cranfield.",
            pytrace=False,
        )
    docs = tuple(
        CranDoc(number, fields.get("T", ""), fields.get("W", ""))
        for number, fields in (
            (n, _fields(lines))
            for n, lines in _records((folder / "cran.all.1400").read_text(encoding="ascii"))
        )
    )
    query_records = _records((folder / "cran.qry").read_text(encoding="ascii"))
    queries = tuple(_fields(lines).get("W", "") for _, lines in query_records)
    qrels: dict[int, dict[int, int]] = {}
    for row in (folder / "cranqrel").read_text(encoding="ascii").splitlines():
        if row.strip():
            qid, docid, grade = (int(x) for x in row.split())
            qrels.setdefault(qid, {})[docid] = grade
    return Cranfield(docs, queries, tuple(n for n, _ in query_records), qrels)


@pytest.fixture(scope="session")
def cranfield() -> Cranfield:
    """The Cranfield collection, parsed once per session (fails if the data is missing)."""
    return parse_cranfield(CRANFIELD_DIR)


@pytest.fixture(scope="session")
def cranfield_doc_tokens(cranfield: Cranfield) -> list[list[str]]:
    """Retrieval tokens of title and abstract of the 1,400 documents, in document order."""
    # Imported here, not at the top, so that a broken tokeniser fails only the tests that use it.
    from raglab.text.tokens import tokenize

    return cranfield.doc_tokens(tokenize)


@pytest.fixture(scope="session")
def cranfield_query_tokens(cranfield: Cranfield) -> list[list[str]]:
    """Retrieval tokens of the 225 queries, in file order (query j + 1 at index j)."""
    from raglab.text.tokens import tokenize

    return cranfield.query_tokens(tokenize)


@pytest.fixture(scope="session")
def cranfield_abstract_words(cranfield: Cranfield) -> list[str]:
    """Every abstract of the collection, in order, as whitespace-separated words."""
    return " ".join(d.body for d in cranfield.docs).split()
