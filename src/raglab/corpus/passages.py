"""Locating answer passages in pages: where a question's answer lies.

A passage is located with every run of whitespace compared as one space, so a passage copied
across a line break still matches (:class:`WholeCorpusFinder`). Questions are parsed with any
:class:`PassageFinder`: the whole corpus's, or the passages located beforehand on the Dask
workers that hold the pages (:class:`LocatedPassages`, :mod:`raglab.distributed.locating`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from raglab.base.ranking import IntArray
from raglab.corpus.pages import Page
from raglab.text.tokens import whitespace_blocks

__all__ = [
    "AnswerSpan",
    "LocatedPassages",
    "Needle",
    "PassageFinder",
    "WholeCorpusFinder",
    "answer_needles",
]

_SPACE = re.compile(r"\s+")
_LONG_SPACE = re.compile(r"\s\s+")

#: What a questions file asks to locate: (answer passage, page id or None for every page).
Needle = tuple[str, str | None]


@dataclass(frozen=True, slots=True)
class AnswerSpan:
    """Where an answer passage lies: ``corpus.page(page_id).text[start:end]``."""

    page_id: str
    start: int
    end: int


class PassageFinder(Protocol):
    """Locates answer passages: :meth:`WholeCorpusFinder.find`'s contract."""

    def find(self, passage: str, page_id: str | None = None) -> list[AnswerSpan]: ...


class WholeCorpusFinder:
    """Finds a passage in every page with runs of whitespace collapsed to one space.

    For each page it keeps the collapsed text and, for each run of whitespace that collapsing
    shortened, where the shortened run ends in the collapsed text and how many characters were
    removed up to there. A collapsed offset maps back to the original one by adding the removed
    count of the last such run before it, so a match maps back to an exact span of the original
    text. Memory stays near one copy of the corpus (a 50 MB page costs about 50 MB more, not
    a Python object per character).
    """

    def __init__(self, pages: Iterable[Page]) -> None:
        self._pages: list[tuple[str, str, IntArray, IntArray]] = []
        for page in pages:
            text = page.text
            # Block by block: re.sub over a whole 50 MB page holds millions of pieces at once.
            collapsed = "".join(_SPACE.sub(" ", block) for block in whitespace_blocks(text))
            at: list[int] = []
            removed: list[int] = []
            shift = 0
            lead = _SPACE.match(text)
            if lead is not None:  # leading whitespace is dropped whole
                collapsed = collapsed[1:]
                shift = lead.end()
                at.append(0)
                removed.append(shift)
            # Only runs of two or more characters shorten the text (one "\n" becomes one " ").
            for m in _LONG_SPACE.finditer(text, lead.end() if lead is not None else 0):
                a, b = m.span()
                shift += b - a - 1
                at.append(a - (shift - (b - a - 1)) + 1)
                removed.append(shift)
            self._pages.append(
                (page.id, collapsed, np.asarray(at, dtype=np.int64), np.asarray(removed, np.int64))
            )

    @staticmethod
    def _original(offset: int, at: IntArray, removed: IntArray) -> int:
        k = int(np.searchsorted(at, offset, side="right")) - 1
        return offset + (int(removed[k]) if k >= 0 else 0)

    def find(self, passage: str, page_id: str | None = None) -> list[AnswerSpan]:
        """Every occurrence of ``passage`` (whitespace runs compared as one space), in page
        order and, within a page, by start; only in page ``page_id`` when given."""
        needle = _SPACE.sub(" ", passage).strip()
        found: list[AnswerSpan] = []
        if not needle:
            return found
        for pid, text, at, removed in self._pages:
            if page_id is not None and pid != page_id:
                continue
            hit = text.find(needle)
            while hit != -1:
                start = self._original(hit, at, removed)
                end = self._original(hit + len(needle) - 1, at, removed) + 1
                found.append(AnswerSpan(pid, start, end))
                hit = text.find(needle, hit + 1)
        return found


def _objects(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The lines of a questions file that are JSON objects, parsed; the others left out (the
    questions' parser says what is wrong with them)."""
    for raw in lines:
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            yield obj


def answer_needles(lines: Iterable[str]) -> list[Needle]:
    """The (answer, page) pairs a questions file will ask to locate, in first-seen order: each
    line that is a JSON object with a non-blank string ``answer`` gives it with its ``page``
    when that is a string. A line the parser will refuse may give one that is never asked for;
    one it asks for is always here."""
    out: dict[Needle, None] = {}
    for obj in _objects(lines):
        answer, page = obj.get("answer"), obj.get("page")
        if isinstance(answer, str) and answer.strip():
            out[(answer, page if isinstance(page, str) else None)] = None
    return list(out)


def named_pages(lines: Iterable[str]) -> list[str]:
    """The page ids a questions file names (each line's ``page`` and ``pages``), in first-seen
    order: what checking it will look up in the corpus. A line the parser will refuse may name
    one it never looks up; one it looks up is always here."""
    out: dict[str, None] = {}
    for obj in _objects(lines):
        page, pages = obj.get("page"), obj.get("pages")
        if isinstance(page, str):
            out[page] = None
        if isinstance(pages, dict | list):
            out.update((one, None) for one in pages if isinstance(one, str))
    return list(out)


@dataclass(frozen=True)
class LocatedPassages:
    """A :class:`PassageFinder` over passages located beforehand: ``found[(passage, page)]``
    holds what :meth:`WholeCorpusFinder.find` gives for them. A pair not located beforehand is
    found by ``fallback()``'s finder, built on first need."""

    found: Mapping[Needle, list[AnswerSpan]]
    fallback: Callable[[], PassageFinder]

    def find(self, passage: str, page_id: str | None = None) -> list[AnswerSpan]:
        key = (passage, page_id)
        if key in self.found:
            return list(self.found[key])
        return self.fallback().find(passage, page_id)
