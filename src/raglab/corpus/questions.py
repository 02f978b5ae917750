"""Reading labelled questions: JSON Lines, one question a line.

Each line is an object with ``id``, ``split`` (``train`` or ``test``), ``kind`` (free text),
``question`` and ``answer``: a passage copied verbatim from one page, or ``null`` when the corpus
cannot answer. Whitespace differences are ignored when the passage is located. ``page`` (a page id)
and ``start`` (a character offset into that page's text) pick one occurrence; without them a passage
found several times is a warning and every occurrence counts as relevant. Collections labelled by
relevant pages rather than passages may give ``pages`` instead of ``answer``: a list of page ids,
or an object mapping page ids to positive integer grades.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from raglab.base.files import read_text
from raglab.corpus.pages import Corpus, bundled_handbook_dir, load_corpus
from raglab.corpus.passages import AnswerSpan, PassageFinder, WholeCorpusFinder
from raglab.errors import InputError, Problem

SPLITS = ("train", "test")
BUNDLED_KINDS = (
    "keyword",
    "paraphrase",
    "identifier",
    "version",
    "multi-sentence",
    "out-of-corpus",
)
#: The kinds ``raglab import`` gives a collection's questions (formats.beir.BEIR_KIND and
#: formats.glasgow.GLASGOW_KIND): known too, so an import is not warned about.
IMPORTED_KINDS = ("beir", "glasgow")
QUESTION_FIELDS = ("id", "split", "kind", "question", "answer", "page", "start", "pages")
_REQUIRED = ("id", "split", "kind", "question")


@dataclass(frozen=True, slots=True)
class Question:
    """One labelled question.

    ``spans`` holds every located occurrence of the answer passage (empty for an out-of-corpus
    question or a page-labelled one); ``pages`` maps relevant page ids to grades for page-labelled
    questions (empty otherwise); ``line`` is the 1-based line in the questions file.
    """

    id: str
    split: str
    kind: str
    question: str
    answer: str | None
    spans: tuple[AnswerSpan, ...] = ()
    pages: Mapping[str, int] | None = None
    line: int = 0

    @property
    def answerable(self) -> bool:
        """True when the corpus holds an answer (a passage or relevant pages)."""
        return bool(self.spans) or bool(self.pages)

    @property
    def labels(self) -> str:
        """``"passage"``, ``"pages"`` or ``"none"`` (out of corpus)."""
        if self.spans:
            return "passage"
        return "pages" if self.pages else "none"

    @property
    def answer_words(self) -> int:
        """Length of the answer passage in whitespace words (0 without one)."""
        return len(self.answer.split()) if self.answer else 0


@dataclass(frozen=True, slots=True)
class QuestionSet:
    """Questions in file order, with the warnings found while loading them."""

    questions: tuple[Question, ...]
    source: str = "<memory>"
    warnings: tuple[Problem, ...] = ()

    def __iter__(self) -> Iterator[Question]:
        return iter(self.questions)

    def __len__(self) -> int:
        return len(self.questions)

    def split(self, name: str) -> tuple[Question, ...]:
        """The questions of one split, in file order."""
        if name not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, not {name!r}")
        return tuple(q for q in self.questions if q.split == name)

    def by_id(self, question_id: str) -> Question:
        for q in self.questions:
            if q.id == question_id:
                return q
        raise KeyError(question_id)


def bundled_questions_path() -> Path:
    """The bundled handbook's ``questions.jsonl``."""
    return bundled_handbook_dir() / "questions.jsonl"


def _parse_pages(value: Any) -> dict[str, int] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return {v: 1 for v in value}
    if isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
        for k, v in value.items()
    ):
        return {k: v for k, v in value.items() if v > 0}
    return None


def parse_questions(
    lines: list[str],
    *,
    corpus: Corpus,
    source: str = "<string>",
    finder: PassageFinder | None = None,
) -> QuestionSet:
    """Parse question lines against ``corpus``; raises :class:`InputError` with every problem.

    ``finder`` locates the answer passages (None: :class:`~raglab.corpus.passages.WholeCorpusFinder`
    over ``corpus``; a Dask cluster's workers locate them in the pages they read,
    :mod:`raglab.distributed.locating`)."""
    first = next(((n, line) for n, line in enumerate(lines, start=1) if line.strip()), None)
    if first is not None and first[1].lstrip().startswith("["):
        # One message, not one per line of a pretty-printed array.
        raise InputError(
            [
                Problem(
                    source,
                    "is a JSON array; questions are JSON Lines, one object per line "
                    "(convert with: jq -c '.[]' FILE > questions.jsonl)",
                    first[0],
                )
            ]
        )
    if finder is None:
        finder = WholeCorpusFinder(corpus)
    problems: list[Problem] = []
    warnings: list[Problem] = []
    questions: list[Question] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(
                Problem(source, f"not valid JSON ({exc.msg} at column {exc.colno})", number)
            )
            continue
        if not isinstance(obj, dict):
            problems.append(Problem(source, "each line must be a JSON object", number))
            continue
        qid = obj.get("id") if isinstance(obj.get("id"), str) else None
        here: list[Problem] = []

        def bad(
            message: str,
            field: str,
            *,
            qid: str | None = qid,
            at: int = number,
            sink: list[Problem] = here,
        ) -> None:
            sink.append(Problem(source, message, at, field, qid))

        for key in obj:
            if key not in QUESTION_FIELDS:
                bad(f"unknown field (expected {', '.join(QUESTION_FIELDS)})", key)
        for key in _REQUIRED:
            if key not in obj:
                bad("missing field", key)
            elif not isinstance(obj[key], str) or not obj[key].strip():
                bad("must be a non-empty string", key)
        if "answer" not in obj and "pages" not in obj:
            bad("missing field (use null for a question the corpus cannot answer)", "answer")
        if "split" in obj and isinstance(obj["split"], str) and obj["split"] not in SPLITS:
            bad(f"unknown split {obj['split']!r} (expected 'train' or 'test')", "split")
        if qid is not None:
            if qid in first_line:
                bad(f"duplicate id, first used on line {first_line[qid]}", "id")
            else:
                first_line[qid] = number
        answer = obj.get("answer")
        if answer is not None and (not isinstance(answer, str) or not answer.strip()):
            bad("must be a non-empty string or null", "answer")
            answer = None
        page_id = obj.get("page")
        if page_id is not None and (not isinstance(page_id, str) or page_id not in corpus):
            bad(f"names no page of the corpus: {page_id!r}", "page")
            page_id = None
        start = obj.get("start")
        if start is not None and (
            not isinstance(start, int) or isinstance(start, bool) or start < 0
        ):
            bad("must be a non-negative integer offset", "start")
            start = None
        if start is not None and page_id is None and not any(p.field == "page" for p in here):
            bad("needs 'page' to say which page the offset is in", "start")
        pages: dict[str, int] | None = None
        if "pages" in obj:
            pages = _parse_pages(obj["pages"])
            if pages is None:
                bad("must be a list of page ids or an object of page id to integer grade", "pages")
            else:
                missing = sorted(p for p in pages if p not in corpus)
                if missing:
                    bad(f"names pages not in the corpus: {', '.join(missing[:5])}", "pages")
                if answer is not None:
                    bad("give either 'answer' or 'pages', not both", "pages")
        spans: list[AnswerSpan] = []
        if isinstance(answer, str) and not here:
            spans = finder.find(answer, page_id)
            if start is not None:
                spans = [s for s in spans if s.start == start]
            if not spans:
                where = f" in page {page_id!r}" if page_id else " in any page"
                at_start = f" at offset {start}" if start is not None else ""
                bad(f"answer passage not found{where}{at_start} (whitespace ignored)", "answer")
            elif len(spans) > 1:
                listing = ", ".join(f"{s.page_id}@{s.start}" for s in spans[:5])
                warnings.append(
                    Problem(
                        source,
                        f"answer passage occurs {len(spans)} times ({listing}); every occurrence "
                        "counts as relevant: add 'page' and 'start' to pick one",
                        number,
                        "answer",
                        qid,
                    )
                )
        problems.extend(here)
        if not here:
            questions.append(
                Question(
                    id=str(obj["id"]),
                    split=str(obj["split"]),
                    kind=str(obj["kind"]),
                    question=str(obj["question"]),
                    answer=answer,
                    spans=tuple(spans),
                    pages=pages,
                    line=number,
                )
            )
    if not questions and not problems:
        problems.append(Problem(source, "no questions found"))
    warnings.extend(_kind_warnings(questions, source))
    if problems:
        raise InputError(problems)
    return QuestionSet(tuple(questions), source, tuple(warnings))


def _kind_warnings(questions: list[Question], source: str) -> list[Problem]:
    """A warning for each kind that differs from an earlier kind only in case, spacing or
    punctuation ("Keyword" after "keyword"): one group split in two in every per-kind table; and
    one for each other kind RAG lab does not know (a typo makes a kind of its own), at its first
    question. Kinds are otherwise free text."""
    first: dict[str, Question] = {}
    for q in questions:
        first.setdefault(q.kind, q)
    canonical: dict[str, str] = {}
    out: list[Problem] = []
    known = (*BUNDLED_KINDS, *IMPORTED_KINDS)
    for kind, q in first.items():
        folded = _fold(kind)
        other = canonical.setdefault(folded, kind)
        if other == kind and kind not in known:
            out.append(
                Problem(
                    source,
                    f"kind {kind!r} is not one of RAG lab's kinds ({', '.join(BUNDLED_KINDS)}): "
                    "counted as a new kind",
                    q.line,
                    "kind",
                    q.id,
                )
            )
        elif other != kind:
            out.append(
                Problem(
                    source,
                    f"kind {kind!r} differs from {other!r} only in case, spacing or punctuation: "
                    "they are counted as two kinds",
                    q.line,
                    "kind",
                    q.id,
                )
            )
    return out


def split_warnings(questions: QuestionSet) -> list[Problem]:
    """What the commands will refuse for want of questions: every tuned value is chosen on the
    training split's answerable questions, and every reported number is measured on the test
    split. ``raglab validate`` shows them; an import of a test-only collection is not wrong."""
    source = questions.source
    out: list[Problem] = []
    if not any(q.split == "train" and q.answerable for q in questions):
        out.append(
            Problem(
                source,
                "no training question with an answer in the corpus: BM25's grid, the fusion "
                "weight, the reranker, MMR's lambda and the reader's threshold are chosen on "
                "them, so run, fuse, rerank and report will stop; mark some answerable "
                'questions "split": "train"',
                None,
                "split",
            )
        )
    if not any(q.split == "test" for q in questions):
        out.append(
            Problem(
                source,
                "no test question: every reported number is measured on the test split, so "
                'run, fuse and report will stop; mark some questions "split": "test"',
                None,
                "split",
            )
        )
    return out


def _fold(kind: str) -> str:
    return re.sub(r"[\W_]+", "", kind.casefold())


def load_questions(
    path: str | Path | None = None,
    *,
    corpus: Corpus | None = None,
    finder: PassageFinder | None = None,
) -> QuestionSet:
    """Load and validate questions; ``path=None`` loads the bundled handbook's questions.

    ``corpus=None`` uses the bundled handbook. Raises :class:`InputError` listing every problem
    (file, line, question id and field).
    """
    file = bundled_questions_path() if path is None else Path(path)
    if corpus is None:
        corpus = load_corpus()
    text = read_text(file)
    return parse_questions(text.splitlines(), corpus=corpus, source=str(file), finder=finder)
