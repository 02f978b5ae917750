"""Reading a corpus: a folder of Markdown or plain-text pages.

A Markdown page may open with front matter between ``---`` lines holding ``id``, ``title``,
``updated`` (ISO date), ``status`` (``current`` or ``superseded``) and ``supersedes`` (a page id),
or with Hugo's TOML front matter between ``+++`` lines holding the same keys (read by
:mod:`tomllib`; a table's keys are kept dotted, ``params.math``).
Missing fields get defaults: the id from the file name, the title from the first ``#`` heading
(else from the file name), no date, status current. Headings ``#``, ``##`` and ``###`` divide the
page into sections; every section is a character span of the page text (the text after the front
matter), running from its heading line to the next heading of any level.

Real folders are untidy, so three things are warnings (:attr:`Corpus.warnings`), not errors: a
front-matter key RAG lab does not know (``layout``, ``hide-toc``: kept as :attr:`Page.meta`; refused
with ``strict=True``), a page that is not UTF-8 (its encoding detected with ``charset-normalizer``,
or forced with ``encoding=``; a file no encoding fits is skipped), and a page with no words.
"""

from __future__ import annotations

import abc
import codecs
import contextlib
import dataclasses
import re
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from importlib import resources
from pathlib import Path
from typing import TypeVar, cast, overload

from raglab.corpus.documents.read import DOCUMENT_SUFFIXES, DocumentReader
from raglab.corpus.listing import corpus_files
from raglab.errors import InputError, Problem
from raglab.settings import CLIENT_SECTION_PAGES
from raglab.text.tokens import count_words

FRONT_MATTER_FIELDS = ("id", "title", "updated", "status", "supersedes")
_FIELD_LIST = ", ".join(FRONT_MATTER_FIELDS)
STATUSES = ("current", "superseded")
_HEADING = re.compile(r"^(#{1,3})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^(```|~~~)")
# tomllib's error messages end with "(at line N, column M)", N counted in the TOML text, or
# "(at end of document)".
_TOML_WHERE = re.compile(r"\s*\(at (?:line (\d+), column \d+|end of document)\)")
_WORD = re.compile(r"\w")
_HEAD = 1 << 16
# C0 controls and DEL, less tab, line feed, form feed and carriage return: bytes a text page
# never holds (a binary file saved as .txt, a NUL-padded export).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
# The detector ranks single-byte code pages by how messy their text looks, and on a short Western
# page several tie (cp1250 and cp437 read "café" as cleanly as cp1252 does). cp1252, what Windows
# editors save Western text in (a superset of Latin-1's printable range), wins unless its reading
# is messier than the detector's best by more than this (mess ratios run from 0 to 1).
_WESTERN = "cp1252"
_WESTERN_SLACK = 0.1
# A UTF-8 page with a stray byte or two (a paste from elsewhere) fits no encoding as a whole: it
# is read as UTF-8 with each bad sequence replaced by U+FFFD while there is one, or they are at
# most this share of its bytes (a binary file's share is far larger, and it holds control bytes).
_REPAIR_SHARE = 0.01
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Section:
    """A heading's span of its page: ``text[start:end]`` (heading line included).

    ``level`` is 1 to 3 (0 for text before the first heading); ``path`` holds the headings from
    the page's top level down to this one.
    """

    heading: str
    level: int
    path: tuple[str, ...]
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Page:
    """One document of the corpus. ``text`` is the page after its front matter."""

    id: str
    title: str
    text: str
    updated: date | None = None
    status: str = "current"
    supersedes: str | None = None
    sections: tuple[Section, ...] = ()
    source: str = "<string>"
    # Line number in the source file of the first line of ``text``, for error messages.
    first_line: int = field(default=1, compare=False)
    # Front-matter keys RAG lab does not use (``layout``, ``hide-toc``), shown, never used.
    meta: Mapping[str, str] = field(default_factory=dict, compare=False)

    @property
    def n_words(self) -> int:
        """Whitespace-separated words in the page text (counted block by block, so a long page
        never becomes one list of words)."""
        return count_words(self.text)


class PageTexts:
    """Where :class:`HeldPage` texts come from: ``fetch(ids)`` giving the texts of pages ``ids``
    in order, one round trip a call (None until they can be fetched: a Dask cluster's workers
    once it is open), with the texts last used kept up to ``budget`` characters in all (the one
    just fetched always: a bound on this process's memory whatever the corpus's size, while a
    corpus under it is fetched once a page). The bound holds while a batch arrives too: room
    for it is made before it is fetched.

    A stage that will read many pages says which, in the order it reads them (:func:`reading`,
    :meth:`ahead`): a page it lacks is then fetched with the pages after it in that order which
    are not kept, as many as fit the budget beside it, in one call (so a batch of pages costs
    one round trip per budget's worth of text, not one a page). ``fetched`` counts the page
    texts fetched, ``round_trips`` the calls of ``fetch``."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.fetch: Callable[[list[str]], list[str]] | None = None
        self.fetched = 0
        self.round_trips = 0
        self.kept_chars = 0
        self._kept: dict[str, str] = {}
        # The sections of the kept pages whose sections were asked for last, dropped with their
        # text, and at most CLIENT_SECTION_PAGES pages' (the last used first out).
        self._sections: dict[str, tuple[Section, ...]] = {}
        # What a stage found in a kept page's text (its sentences' bounds, say), by (page id,
        # what), dropped with the text, and at most CLIENT_SECTION_PAGES pages' of each kind.
        self._found: dict[tuple[str, str], object] = {}
        # Each held page's length in characters, known when it was read: what a batch weighs.
        self._sizes: dict[str, int] = {}
        #: A page's length in characters (None: not held), from :meth:`hold`'s notes unless
        #: something holding the pages' lengths already says (a Dask client's pages).
        self.size_of: Callable[[str], int | None] = self._sizes.get
        # The pages the stages now running will read, in order (page id -> place), oldest first.
        self._plans: list[tuple[list[str], dict[str, int]]] = []

    def hold(self, page_id: str, n_chars: int) -> None:
        """Note that page ``page_id``, of ``n_chars`` characters, is held elsewhere."""
        self._sizes[page_id] = n_chars

    @contextlib.contextmanager
    def ahead(self, ids: Iterable[str]) -> Iterator[None]:
        """While the block runs, a page of ``ids`` that is not kept is fetched with the pages
        after it in ``ids`` that are not kept either, up to the budget (see the class); blocks
        may nest."""
        order = list(dict.fromkeys(ids))
        plan = (order, {page_id: k for k, page_id in enumerate(order)})
        self._plans.append(plan)
        try:
            yield
        finally:
            # Not always the newest: a generator's block ends when the generator does.
            self._plans = [other for other in self._plans if other is not plan]

    def _batch(self, page_id: str) -> list[str]:
        """``page_id`` and, after it, the pages each plan naming it reads after it that are not
        kept, the plans taken oldest first (the widest: a batch of questions before one
        question's), while the batch's texts fit the budget beside the kept pages it passes.
        Those are about to be read: they count against the budget and are marked as used now,
        so that the batch never evicts them (which cost the reranker's and the packing's
        questions a second round trip when a page of theirs was kept from the question before).
        """
        batch = {page_id: None}
        total = self.size_of(page_id) or 0
        passed: dict[str, None] = {}
        for order, place in self._plans:
            k = place.get(page_id)
            if k is None:
                continue
            for j in range(k + 1, len(order)):  # not a slice: a plan may name every page
                other = order[j]
                size = self.size_of(other)
                if size is None or other in batch or other in passed:
                    continue
                if total + size > self.budget:
                    break
                if other in self._kept:
                    passed[other] = None
                else:
                    batch[other] = None
                total += size
            else:
                continue
            break
        for other in passed:
            self._kept[other] = self._kept.pop(other)
        return list(batch)

    def text(self, page_id: str) -> str:
        """The text of page ``page_id``, fetched unless kept from an earlier read (with the
        planned pages after it: :meth:`ahead`)."""
        if page_id in self._kept:
            # Least recently used first out: the dict keeps the order of use.
            self._kept[page_id] = self._kept.pop(page_id)
            return self._kept[page_id]
        if self.fetch is None:
            raise RuntimeError(
                f"the text of page {page_id!r} is held elsewhere, and nothing fetches it"
            )
        batch = self._batch(page_id)
        # Room is made before the batch comes, not after: the texts it replaces would
        # otherwise be held beside it while it arrives (two budgets' worth of text, and the
        # message's frames), and which pages go is the same either way (the oldest).
        incoming = sum((self.size_of(other) or 0) for other in batch)
        self._drop_oldest(self.budget - incoming, keep=0)
        got = self.fetch(batch)
        self.round_trips += 1
        self.fetched += len(batch)
        for other, text in zip(batch, got, strict=True):
            self._kept[other] = text
            self.kept_chars += len(text)
        # A page over the budget comes alone and stays; a text longer than it was when held
        # (a file changed meanwhile) is the only other way past the budget.
        self._drop_oldest(self.budget, keep=1)
        return self._kept[page_id]

    def _drop_oldest(self, room: int, *, keep: int) -> None:
        """Let the least recently used texts go, with what was found in them, until at most
        ``room`` characters are kept or only ``keep`` texts are left."""
        while self.kept_chars > max(room, 0) and len(self._kept) > keep:
            oldest = next(iter(self._kept))
            self.kept_chars -= len(self._kept.pop(oldest))
            self._sections.pop(oldest, None)
            for key in [key for key in self._found if key[0] == oldest]:
                del self._found[key]

    def sections(self, page_id: str, title: str) -> tuple[Section, ...]:
        """The sections of page ``page_id`` (title ``title``), found in its text
        (:func:`find_sections`, as :func:`parse_page` finds them) and kept while the text is,
        for the last :data:`~raglab.settings.CLIENT_SECTION_PAGES` pages asked at most."""
        text = self.text(page_id)
        found = self._sections.pop(page_id, None)
        if found is None:
            found = find_sections(text, title=title)
        self._sections[page_id] = found
        while len(self._sections) > CLIENT_SECTION_PAGES:
            self._sections.pop(next(iter(self._sections)))
        return found

    def found_in(self, page_id: str, what: str, find: Callable[[str], T]) -> T:
        """``find(text)`` of page ``page_id``'s text, kept under ``what`` while the text is,
        for the last :data:`~raglab.settings.CLIENT_SECTION_PAGES` pages asked for ``what`` at
        most (as :meth:`sections`): what a stage derives from a page it reads stays no longer
        than the text it came from."""
        text = self.text(page_id)
        key = (page_id, what)
        found = self._found.pop(key, None)
        if found is None:
            found = find(text)
        self._found[key] = found
        same = [other for other in self._found if other[1] == what]
        for other in same[: max(0, len(same) - CLIENT_SECTION_PAGES)]:
            del self._found[other]
        return cast(T, found)


_HELD_FIELDS = tuple(f for f in dataclasses.fields(Page) if f.name not in ("text", "sections"))


class HeldPage(Page):
    """A :class:`Page` whose text is held elsewhere and fetched when read (:class:`PageTexts`):
    the same fields, the text and the sections (found in the text, as :func:`parse_page` finds
    them: one object a heading, the size of the chunk list again where a chunk is a section)
    read on demand; its word count kept from when it was read. Pickled as the plain
    :class:`Page` it stands for."""

    __slots__ = ("_n_words", "_texts")
    _n_words: int
    _texts: PageTexts

    @classmethod
    def of(cls, page: Page, texts: PageTexts) -> HeldPage:
        """``page`` without its text, which ``texts`` gives when it is read."""
        texts.hold(page.id, len(page.text))
        return cls.made(
            texts, page.n_words, **{f.name: getattr(page, f.name) for f in _HELD_FIELDS}
        )

    @classmethod
    def made(cls, texts: PageTexts, n_words: int, **fields: object) -> HeldPage:
        """The page of ``fields`` (every :class:`Page` field but ``text`` and ``sections``)
        and ``n_words`` words, whose text ``texts`` holds (its size known there already)."""
        held = object.__new__(cls)
        for f in _HELD_FIELDS:
            object.__setattr__(held, f.name, fields[f.name])
        object.__setattr__(held, "_n_words", n_words)
        object.__setattr__(held, "_texts", texts)
        return held

    @property
    def text(self) -> str:
        return self._texts.text(self.id)

    @property
    def sections(self) -> tuple[Section, ...]:
        return self._texts.sections(self.id, self.title)

    @property
    def n_words(self) -> int:
        return self._n_words

    def found_in(self, what: str, find: Callable[[str], T]) -> T:
        """``find(text)``, kept while this page's text is (:meth:`PageTexts.found_in`)."""
        return self._texts.found_in(self.id, what, find)

    def __reduce__(self) -> tuple[type[Page], tuple[object, ...]]:
        return Page, tuple(getattr(self, f.name) for f in dataclasses.fields(Page))


@contextlib.contextmanager
def reading(pages: Iterable[Page]) -> Iterator[None]:
    """While the block runs, ``pages`` are those it will read, in this order: the held ones
    (:class:`HeldPage`) are fetched in batches, one round trip per budget's worth of the texts
    not kept (:meth:`PageTexts.ahead`); a page that holds its text costs nothing."""
    plans: dict[PageTexts, list[str]] = {}
    for page in pages:
        if isinstance(page, HeldPage):
            plans.setdefault(page._texts, []).append(page.id)
    with contextlib.ExitStack() as stack:
        for texts, ids in plans.items():
            stack.enter_context(texts.ahead(ids))
        yield


class PageShelf(Sequence[Page]):
    """A corpus's pages, in order, read by row, their ids' rows found in :attr:`rows` (the
    first row of an id given twice), and told which will be read next (:meth:`prefetch`): those
    :func:`load_corpus` reads here (a list), or a Dask cluster's held on its workers
    (:class:`raglab.distributed.pages.RemotePages`)."""

    @property
    @abc.abstractmethod
    def rows(self) -> Mapping[str, int]:
        """Page id -> its row (the first, for an id given twice)."""

    def prefetch(self, rows: Iterable[int]) -> None:
        """Say that pages ``rows`` are about to be read: a shelf whose pages are held
        elsewhere fetches those it lacks at once (:func:`prefetch`); here, nothing."""

    def prefetch_ids(self, ids: Iterable[str]) -> None:
        """As :meth:`prefetch`, the pages named by their ids (an id no page has is let be)."""


class _PageList(PageShelf):
    """The :class:`PageShelf` of a corpus that holds its pages, texts and all: added one by
    one as they are read."""

    def __init__(self) -> None:
        self._pages: list[Page] = []

    def add(self, page: Page) -> None:
        """Keep ``page`` as the next row."""
        self._pages.append(page)

    @property
    def rows(self) -> Mapping[str, int]:
        rows: dict[str, int] = {}
        for k, page in enumerate(self._pages):
            rows.setdefault(page.id, k)
        return rows

    def __len__(self) -> int:
        return len(self._pages)

    @overload
    def __getitem__(self, i: int) -> Page: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Page]: ...
    def __getitem__(self, i: int | slice) -> Page | Sequence[Page]:
        return self._pages[i]


@dataclass(frozen=True)
class Corpus:
    """An ordered collection of pages with unique ids, with the warnings found while reading
    them (a page read in a detected encoding, a file skipped, an empty page, keys kept as
    metadata). ``pages``: a tuple, or a sequence that finds its own ids (a
    :class:`PageShelf`: a Dask client's pages held on its workers), kept as it is."""

    pages: Sequence[Page]
    root: str = "<memory>"
    warnings: tuple[Problem, ...] = field(default=(), compare=False)
    _rows: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        rows: Mapping[str, int] | None = getattr(self.pages, "rows", None)
        if rows is None:
            object.__setattr__(self, "pages", tuple(self.pages))
            rows = {p.id: k for k, p in enumerate(self.pages)}
        object.__setattr__(self, "_rows", rows)

    def __iter__(self) -> Iterator[Page]:
        return iter(self.pages)

    def __len__(self) -> int:
        return len(self.pages)

    def __contains__(self, page_id: object) -> bool:
        return page_id in self._rows

    def page(self, page_id: str) -> Page:
        """The page with this id; ``KeyError`` when there is none."""
        return self.pages[self._rows[page_id]]

    def row(self, page_id: str) -> int:
        """The place of the page with this id among :attr:`pages`; ``KeyError`` when none."""
        return self._rows[page_id]

    @property
    def ids(self) -> Sequence[str]:
        """Every page's id, in order, read without making the pages where they are held
        elsewhere (a shelf with ``ids``)."""
        ids: Sequence[str] | None = getattr(self.pages, "ids", None)
        return [p.id for p in self.pages] if ids is None else ids

    @property
    def sources(self) -> Sequence[str]:
        """Every page's source (its file), in order, as :attr:`ids` reads them."""
        sources: Sequence[str] | None = getattr(self.pages, "sources", None)
        return [p.source for p in self.pages] if sources is None else sources

    @property
    def n_words(self) -> int:
        total: int | None = getattr(self.pages, "total_words", None)
        return sum(p.n_words for p in self.pages) if total is None else total

    def prefetch_ids(self, ids: Iterable[str]) -> None:
        """Say that the pages ``ids`` are about to be read (:meth:`PageShelf.prefetch_ids`)."""
        if isinstance(self.pages, PageShelf):
            self.pages.prefetch_ids(ids)


def prefetch(pages: Sequence[Page], rows: Iterable[int]) -> None:
    """Say that ``pages[r]`` for ``r`` in ``rows`` are about to be read: a
    :class:`PageShelf` whose pages are held elsewhere fetches them in one round trip, not one a
    page when each is read; pages held here cost nothing."""
    if isinstance(pages, PageShelf):
        pages.prefetch(rows)


def bundled_handbook_dir() -> Path:
    """The folder of the bundled Ostler Instruments handbook."""
    return Path(str(resources.files("raglab") / "data" / "handbook"))


def _title_from_name(stem: str) -> str:
    words = re.sub(r"[-_]+", " ", stem).strip()
    return words[:1].upper() + words[1:] if words else stem


def find_sections(text: str, *, title: str) -> tuple[Section, ...]:
    """Split ``text`` at ``#``/``##``/``###`` headings outside code fences.

    Text before the first heading becomes a level-0 section named after the page title.
    """
    heads: list[tuple[int, int, str]] = []  # (offset, level, heading)
    offset = 0
    in_fence = False
    for line in text.splitlines(keepends=True):
        stripped = line.rstrip("\r\n")
        if _FENCE.match(stripped):
            in_fence = not in_fence
        elif not in_fence:
            m = _HEADING.match(stripped)
            if m:
                heads.append((offset, len(m.group(1)), m.group(2).strip()))
        offset += len(line)
    sections: list[Section] = []
    if not heads or text[: heads[0][0]].strip():
        end = heads[0][0] if heads else len(text)
        sections.append(Section(title, 0, (title,), 0, end))
    stack: list[tuple[int, str]] = []
    for i, (start, level, heading) in enumerate(heads):
        end = heads[i + 1][0] if i + 1 < len(heads) else len(text)
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        sections.append(Section(heading, level, tuple(h for _, h in stack), start, end))
    return tuple(sections)


def parse_page(raw: str, *, stem: str, source: str = "<string>", strict: bool = False) -> Page:
    """Parse one page's text; raises :class:`InputError` naming the line at fault.

    A front-matter key other than ``id``, ``title``, ``updated``, ``status`` and ``supersedes`` is
    kept in :attr:`Page.meta` (its indented or ``- item`` lines joined to its value);
    ``strict=True`` refuses it instead. Front matter between ``+++`` lines is TOML (Hugo's),
    read the same way: TOML that does not parse is a problem naming its line.
    """
    problems: list[Problem] = []
    meta: dict[str, tuple[str, int]] = {}
    extra: dict[str, list[str]] = {}
    last_extra: str | None = None
    text = raw
    first_line = 1
    # Front matter sits at the top: only the head of a long page is split into lines.
    lines = raw[:_HEAD].splitlines(keepends=True)
    if len(raw) > _HEAD and lines:
        lines.pop()  # may be cut mid-line
    fence = lines[0].strip() if lines and lines[0].strip() in ("---", "+++") else None
    if (
        fence is not None
        and len(raw) > _HEAD
        and not any(line.strip() == fence for line in lines[1:])
    ):
        lines = raw.splitlines(keepends=True)
    if fence == "+++":
        # Hugo's TOML front matter: read with the standard library's TOML parser.
        closing = next((i for i in range(1, len(lines)) if lines[i].strip() == "+++"), None)
        if closing is None:
            problems.append(Problem(source, "front matter opened with '+++' is never closed", 1))
        else:
            _toml_front_matter(lines[1:closing], source, strict, meta, extra, problems)
            text = raw[sum(len(line) for line in lines[: closing + 1]) :]
            first_line = closing + 2
    elif fence == "---":
        closing = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if closing is None:
            problems.append(Problem(source, "front matter opened with '---' is never closed", 1))
        else:
            for i in range(1, closing):
                line = lines[i].strip()
                if not line or line.startswith("#"):
                    continue
                if last_extra is not None and (lines[i][:1] in " \t" or line.startswith("- ")):
                    # A YAML list or folded value under a key RAG lab does not use.
                    extra[last_extra].append(line)
                    continue
                last_extra = None
                key, sep, value = line.partition(":")
                key = key.strip()
                if not sep or not key:
                    problems.append(
                        Problem(source, f"front matter line is not 'key: value': {line!r}", i + 1)
                    )
                elif key not in FRONT_MATTER_FIELDS and not strict:
                    if key not in extra:
                        extra[key] = [value.strip().strip("'\"")] if value.strip() else []
                        last_extra = key
                elif key not in FRONT_MATTER_FIELDS:
                    problems.append(
                        Problem(
                            source,
                            f"unknown front-matter field (expected one of {_FIELD_LIST})",
                            i + 1,
                            key,
                        )
                    )
                elif key in meta:
                    problems.append(Problem(source, "front-matter field given twice", i + 1, key))
                else:
                    meta[key] = (value.strip().strip("'\""), i + 1)
            text = raw[sum(len(line) for line in lines[: closing + 1]) :]
            first_line = closing + 2
    page_id = meta["id"][0] if "id" in meta else stem
    if not page_id:
        problems.append(Problem(source, "id is empty", meta["id"][1], "id"))
    elif any(ch.isspace() for ch in page_id):
        # A TREC run or qrels line is split at whitespace, so such an id cannot be exported.
        fix = "give an id without spaces" if "id" in meta else "rename the file or add 'id: ...'"
        problems.append(
            Problem(
                source,
                f"page id {page_id!r} contains whitespace, which TREC run files cannot hold: {fix}",
                meta["id"][1] if "id" in meta else None,
                "id",
            )
        )
    bad = _CONTROL.search(text)
    if bad is not None:
        at_line = first_line + text.count("\n", 0, bad.start())
        column = bad.start() - (text.rfind("\n", 0, bad.start()) + 1) + 1
        problems.append(
            Problem(
                source,
                f"holds control character U+{ord(bad.group()):04X} at column {column} (a binary "
                "file, or text with NUL padding?): a page must be plain UTF-8 text",
                at_line,
            )
        )
    updated: date | None = None
    if "updated" in meta:
        value, line_no = meta["updated"]
        try:
            updated = date.fromisoformat(value)
        except ValueError:
            problems.append(
                Problem(
                    source, f"not an ISO date (YYYY-MM-DD): {value!r}", line_no, "updated", page_id
                )
            )
    status = "current"
    if "status" in meta:
        status, line_no = meta["status"]
        if status not in STATUSES:
            problems.append(
                Problem(
                    source,
                    f"status must be 'current' or 'superseded', not {status!r}",
                    line_no,
                    "status",
                    page_id,
                )
            )
    if problems:
        raise InputError(problems)
    title = meta["title"][0] if "title" in meta and meta["title"][0] else ""
    if not title:
        m = next(
            (m for m in map(_HEADING.match, text.splitlines()) if m and len(m.group(1)) == 1), None
        )
        title = m.group(2).strip() if m else _title_from_name(stem)
    supersedes = meta["supersedes"][0] if "supersedes" in meta and meta["supersedes"][0] else None
    return Page(
        id=page_id,
        title=title,
        text=text,
        updated=updated,
        status=status,
        supersedes=supersedes,
        sections=find_sections(text, title=title),
        source=source,
        first_line=first_line,
        meta={key: " ".join(parts) for key, parts in extra.items()},
    )


def _toml_front_matter(
    lines: list[str],
    source: str,
    strict: bool,
    meta: dict[str, tuple[str, int]],
    extra: dict[str, list[str]],
    problems: list[Problem],
) -> None:
    """Read TOML front matter ``lines`` (those between the ``+++`` lines, the first being line 2
    of the file) into ``meta`` (known key -> (value, line)) and ``extra`` (other keys, a table's
    keys dotted: ``params.math``), as the ``---`` front matter is read. A date is written in ISO
    form, a list as its items joined by ", "; TOML that does not parse is one problem naming its
    line."""
    try:
        data = tomllib.loads("".join(lines))
    except tomllib.TOMLDecodeError as exc:
        where = _TOML_WHERE.search(str(exc))
        reason = _TOML_WHERE.sub("", str(exc)).strip()
        # At the end: the last line of the front matter, where a value was left open.
        line = int(where.group(1)) + 1 if where and where.group(1) else len(lines) + 1
        problems.append(Problem(source, f"TOML front matter does not parse: {reason}", line))
        return
    for key, value in _toml_items(data):
        line = _toml_key_line(lines, key)
        if key in FRONT_MATTER_FIELDS:
            if key == "updated" and isinstance(value, datetime):
                value = value.date()  # the page's date; its time of day is not used
            meta[key] = (_toml_text(value), line)
        elif strict:
            problems.append(
                Problem(
                    source, f"unknown front-matter field (expected one of {_FIELD_LIST})", line, key
                )
            )
        else:
            extra[key] = [_toml_text(value)]


def _toml_items(data: Mapping[str, object], prefix: str = "") -> Iterator[tuple[str, object]]:
    for key, value in data.items():
        if isinstance(value, Mapping):
            yield from _toml_items(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def _toml_text(value: object) -> str:
    if isinstance(value, date):  # a TOML date or date-time (datetime is a date)
        return value.isoformat()
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return ", ".join(_toml_text(v) for v in value)
    return str(value)


def _toml_key_line(lines: list[str], key: str) -> int:
    """The file line (the ``+++`` being line 1) where the dotted ``key`` is set (written whole,
    ``params.math = 1``, or by its last part under a table), else the first line."""
    for name in dict.fromkeys((key, key.rpartition(".")[2])):
        pattern = re.compile(rf"^\s*[\"']?{re.escape(name)}[\"']?\s*=")
        found = next((i + 2 for i, line in enumerate(lines) if pattern.match(line)), None)
        if found is not None:
            return found
    return 2


def _decode(data: bytes, source: str, encoding: str | None) -> tuple[str | None, Problem | None]:
    """A page's text and the warning to give with it (None for plain UTF-8 or the encoding asked
    for); no text when no encoding fits, the warning then saying why the file is skipped."""
    if encoding is not None:
        codec = "utf-8-sig" if codecs.lookup(encoding).name == "utf-8" else encoding
        try:
            return data.decode(codec), None
        except UnicodeDecodeError as exc:
            return None, Problem(
                source,
                f"cannot be decoded as {encoding} (byte 0x{data[exc.start]:02x} at offset "
                f"{exc.start}): skipped",
                data[: exc.start].count(b"\n") + 1,
            )
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        at = f"byte 0x{data[exc.start]:02x} at offset {exc.start}"
        line = data[: exc.start].count(b"\n") + 1
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    western = from_bytes(data, cp_isolation=[_WESTERN]).best()
    if western is not None and (best is None or western.chaos <= best.chaos + _WESTERN_SLACK):
        best = western
    if best is None:
        repaired = data.decode("utf-8", "replace")
        bad = repaired.count("\ufffd") - data.count("\ufffd".encode())
        if bad <= max(1, _REPAIR_SHARE * len(data)) and not _CONTROL.search(repaired):
            return repaired, Problem(
                source,
                f"is not UTF-8 ({at}): read as UTF-8 with {bad} undecodable "
                f"{'sequence' if bad == 1 else 'sequences'} replaced by U+FFFD (--encoding "
                "forces one)",
                line,
            )
        return None, Problem(
            source,
            f"is not UTF-8 ({at}) and no encoding fits (a binary file?): skipped; "
            "--encoding forces one",
            line,
        )
    return str(best), Problem(
        source,
        f"is not UTF-8 ({at}): read as {best.encoding} (detected; --encoding forces one)",
        line,
    )


def _read_page(
    path: Path, encoding: str | None, problems: list[Problem], warnings: list[Problem]
) -> str | None:
    try:
        data = path.read_bytes()
    except OSError as exc:  # keep going: every file's problem is listed at once
        problems.append(Problem(str(path), f"cannot be read: {exc.strerror or exc}"))
        return None
    text, warning = _decode(data, str(path), encoding)
    if warning is not None:
        warnings.append(warning)
    return text


def read_page_file(
    path: Path,
    *,
    encoding: str | None = None,
    strict: bool = False,
    documents: DocumentReader | None = None,
) -> tuple[Page | None, list[Problem], list[Problem]]:
    """One corpus file read as :func:`load_corpus` reads each: ``(page, problems, warnings)``.

    The page is None when the file is skipped (a warning says why) or has problems (front matter
    that does not parse, an unreadable file). A ``.html``/``.pdf``/``.docx`` file is read by
    ``documents`` (a :class:`~raglab.corpus.documents.read.DocumentReader`, whose warnings are
    :class:`~raglab.errors.RaglabWarning`; a new one, finished here, when None); any other file
    is decoded as :func:`load_corpus` says (``encoding``) and parsed (``strict``). The Dask
    workers read their pages with this too, so they read what this machine reads."""
    problems: list[Problem] = []
    warnings: list[Problem] = []
    if path.suffix.lower() in DOCUMENT_SUFFIXES:
        reader = DocumentReader() if documents is None else documents
        document = reader.read(path)
        if documents is None:
            reader.finish()
        if document is None:
            return None, problems, warnings
        raw: str | None = document.text
        title = document.title
    else:
        raw = _read_page(path, encoding, problems, warnings)
        title = None
    if raw is None:
        return None, problems, warnings
    try:
        page = parse_page(raw, stem=path.stem, source=str(path), strict=strict)
    except InputError as exc:
        problems.extend(exc.problems)
        return None, problems, warnings
    if title:
        page = dataclasses.replace(
            page, title=title, sections=find_sections(page.text, title=title)
        )
    return page, problems, warnings


def load_corpus(
    path: str | Path | None = None,
    *,
    progress: Callable[[Sequence[str]], Iterable[str]] | None = None,
    encoding: str | None = None,
    strict: bool = False,
) -> Corpus:
    """Load every ``*.md`` and ``*.txt`` page under ``path`` (recursively, in sorted order).

    ``.html``/``.htm``, ``.pdf`` and ``.docx`` files are read too, as Markdown-like text with ``#``
    heading lines (:mod:`raglab.corpus.documents`); one that cannot be read is skipped with a
    :class:`~raglab.errors.RaglabWarning` naming it and the reason.

    ``path=None`` loads the bundled Ostler Instruments handbook. Raises :class:`InputError` listing
    every problem: an unreadable file, front matter that does not parse, duplicate page ids, a
    ``supersedes`` naming no page, or an empty corpus. ``progress`` wraps the list of files as
    they are read (the command line passes a progress bar).

    A page that is not UTF-8 is read in the encoding ``charset-normalizer`` detects (``encoding``,
    a Python codec name, forces one for every page), a UTF-8 page with a stray byte or so is read
    with each replaced by U+FFFD, a file no encoding fits is skipped, and front-matter keys RAG
    lab does not use are kept as :attr:`Page.meta` (``strict=True`` refuses them): each is one of
    :attr:`Corpus.warnings`, as is every page without a word. ``ValueError`` for an ``encoding``
    Python does not know.
    """
    root = corpus_folder(path, encoding)
    files = corpus_files(root)
    # Each problem with where it goes among the others: the files in the order read, a
    # duplicate id just after its file (a file with a page has no problem of its own).
    found: list[tuple[int, Problem]] = []
    warnings: list[Problem] = []
    pages = _PageList()
    # Whether each page has a word, found while its text is at hand.
    worded = bytearray()
    documents = DocumentReader()  # .html/.pdf/.docx: Markdown-like text, or a warning and skip
    for file in files if progress is None else progress(files):
        page, file_problems, file_warnings = read_page_file(
            Path(file), encoding=encoding, strict=strict, documents=documents
        )
        found.extend((len(pages), problem) for problem in file_problems)
        warnings.extend(file_warnings)
        if page is None:
            continue
        worded.append(has_words(page.text))
        pages.add(page)
    documents.finish()
    said = check_pages(root, len(files), page_checks(pages, worded), found, warnings)
    return Corpus(tuple(pages), str(root), said)


def has_words(text: str) -> bool:
    """Whether ``text`` holds a word character: a page without one is empty to the indexes."""
    return _WORD.search(text) is not None


@dataclass(frozen=True)
class PageChecks:
    """What :func:`check_pages` needs of a corpus's pages, found where they are held (one
    machine's pages, :func:`page_checks`, or a Dask cluster's partitions and id buckets,
    :mod:`raglab.distributed.pages`), each list in row order.

    ``twice``: each page whose id an earlier page has, (row, id, source, the earlier page's
    source); ``dangling``: each page, not one of ``twice``, whose ``supersedes`` names no page,
    (row, id, source, supersedes); ``empty``: each page without a word (:func:`has_words`),
    (source, id); ``with_meta``: the pages carrying front-matter keys RAG lab does not use, and
    ``meta_keys`` those keys."""

    n_pages: int
    twice: Sequence[tuple[int, str, str, str]] = ()
    dangling: Sequence[tuple[int, str, str, str]] = ()
    empty: Sequence[tuple[str, str]] = ()
    with_meta: int = 0
    meta_keys: frozenset[str] = frozenset()


def page_checks(pages: PageShelf, worded: bytes | bytearray) -> PageChecks:
    """:class:`PageChecks` of ``pages`` (``worded``: (n_pages,) whether each has a word): the
    ids given twice found over the shelf's index (no dict of every id), a held page made when
    read and let go after."""
    rows = pages.rows
    twice: list[tuple[int, str, str, str]] = []
    repeated: set[int] = set()
    for k, page in enumerate(pages):
        first = rows[page.id]
        if first != k:
            repeated.add(k)
            twice.append((k, page.id, page.source, pages[first].source))
    dangling = [
        (k, page.id, page.source, page.supersedes)
        for k, page in enumerate(pages)
        if k not in repeated and page.supersedes is not None and page.supersedes not in rows
    ]
    with_meta = 0
    meta_keys: set[str] = set()
    for page in pages:
        with_meta += bool(page.meta)
        meta_keys.update(page.meta)
    empty = [(page.source, page.id) for k, page in enumerate(pages) if not worded[k]]
    return PageChecks(len(pages), twice, dangling, empty, with_meta, frozenset(meta_keys))


def duplicate_id(page_id: str, source: str, first: str) -> Problem:
    """The problem of page ``page_id`` read from ``source`` whose id the page of ``first``
    has already."""
    return Problem(source, f"duplicate page id, also used by {first}", None, "id", page_id)


def superseding_nothing(page_id: str, source: str, supersedes: str) -> Problem:
    """The problem of page ``page_id`` read from ``source`` whose ``supersedes`` names no
    page of the corpus."""
    return Problem(
        source,
        f"supersedes {supersedes!r}, which is not a page of the corpus",
        None,
        "supersedes",
        page_id,
    )


def check_pages(
    root: Path,
    n_files: int,
    checks: PageChecks,
    found: Sequence[tuple[int, Problem]],
    warnings: Sequence[Problem],
) -> tuple[Problem, ...]:
    """The warnings of the corpus read from ``n_files`` files under ``root``, checked as a
    whole, or :class:`InputError` with every problem: :func:`load_corpus`'s checks after
    reading, shared by a Dask client whose workers read the files and find the ``checks``
    (:func:`raglab.distributed.pages.load_corpus_on_cluster`).

    ``found``: each file's problems, with the row the next page read after it took (they come
    in that order, a duplicate id just after its page's file); ``warnings``: the files'
    warnings, in file order. Adds the duplicate ids, the ``supersedes`` naming no page, an
    empty folder or corpus, the empty pages' and the unused front-matter keys' warnings."""
    keyed = [((row, 0), problem) for row, problem in found]
    keyed.extend(
        ((k, 1), duplicate_id(page_id, source, first)) for k, page_id, source, first in checks.twice
    )
    problems = [problem for _, problem in sorted(keyed, key=lambda one: one[0])]
    problems.extend(
        superseding_nothing(page_id, source, supersedes)
        for _, page_id, source, supersedes in checks.dangling
    )
    if not n_files:
        problems.append(Problem(str(root), "no *.md or *.txt pages found"))
    elif not checks.n_pages and not problems:
        # Every file was skipped: why each was is the error (a document's reason was warned).
        problems.extend(warnings)
        problems.append(Problem(str(root), "no page could be read (each file is named above)"))
    elif not problems and len(checks.empty) == checks.n_pages:
        problems.append(Problem(str(root), "every page is empty (no words to index)"))
    if problems:
        raise InputError(problems)
    said = list(warnings)
    said.extend(
        Problem(
            source,
            "page is empty (no words to index): nothing in it can be found",
            None,
            None,
            page_id,
        )
        for source, page_id in checks.empty
    )
    if checks.with_meta:
        keys = sorted(checks.meta_keys)
        listing = ", ".join(keys[:8]) + (f" and {len(keys) - 8} more" if len(keys) > 8 else "")
        n = checks.with_meta
        said.append(
            Problem(
                str(root),
                f"{n} {'page carries' if n == 1 else 'pages carry'} "
                f"front-matter keys RAG lab does not use ({listing}): kept as metadata "
                "(--strict refuses them)",
            )
        )
    return tuple(said)


def corpus_folder(path: str | Path | None, encoding: str | None = None) -> Path:
    """The folder :func:`load_corpus` reads for ``path`` (None: the bundled handbook), or
    :class:`InputError` when it is not a folder; ``ValueError`` for an ``encoding`` Python does
    not know."""
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise ValueError(
                f"unknown encoding {encoding!r} (give a Python codec name, such as cp1252)"
            ) from None
    root = bundled_handbook_dir() if path is None else Path(path)
    if not root.exists():
        raise InputError([Problem(str(root), "corpus folder does not exist")])
    if not root.is_dir():
        raise InputError([Problem(str(root), "corpus must be a folder of *.md or *.txt pages")])
    return root
