"""Writing an imported collection in RAG lab's format, and the machinery the importers share.

An importer (:mod:`raglab.formats.beir`, :mod:`raglab.formats.glasgow`) reads its input into
:class:`PageRecord` values and question dicts, then :func:`write_collection` writes

- ``OUT/pages/<file_stem>.md``: one page per record, front matter ``id`` and ``title`` (on one
  line: runs of whitespace become one space; a quote at either end of a title is lost, as front
  matter drops it), the body the record's text. :func:`safe_file_stems` names the files: the id
  when it is a safe file name (letters, digits, ``.``, ``_`` and ``-``, at most 100 characters,
  not a reserved Windows name, unique ignoring case); otherwise a cleaned-up form of the id plus
  12 hex digits of its SHA-1, the real id staying in the front matter. :func:`id_problem` says
  why an id cannot survive front matter.
- ``OUT/questions.jsonl``: one question a line (:func:`question_line`).

The pages are written to a temporary folder beside ``OUT/pages`` and swapped in with the
questions file, so a failure leaves the output folder as it was. A non-empty output folder is
refused unless ``overwrite`` is true (:func:`check_output_dir`); then its ``pages/`` folder and
``questions.jsonl`` are replaced and every other file in it is left alone.

Without a split in the input, :func:`seeded_split` sends ``round(test_fraction * n)`` of the n
questions to test (:data:`TEST_FRACTION` by default); :class:`ImportSummary` is what an import
reports.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from raglab.base.files import output_error, remove_stale_temps, temp_path, write_new_text
from raglab.errors import InputError, Problem
from raglab.formats.progress import progress

# Share of questions sent to the test split by a seeded random split (a new default).
TEST_FRACTION = 0.4
PAGES_DIR = "pages"
QUESTIONS_FILE = "questions.jsonl"

_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9._-]+")
_RESERVED_NAMES = frozenset(
    {"CON", "PRN", "AUX", "NUL"} | {f"{d}{i}" for d in ("COM", "LPT") for i in range(1, 10)}
)
# Characters str.splitlines breaks at that json.dumps(ensure_ascii=False) leaves unescaped.
_LINE_BREAKS_IN_JSON = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


@dataclass(frozen=True, slots=True)
class PageRecord:
    """A page to write: ``OUT/pages/<file_stem>.md`` holding ``id``, ``title`` and ``body``."""

    id: str
    title: str
    body: str
    file_stem: str


@dataclass(frozen=True)
class ImportSummary:
    """What an import wrote.

    ``labels`` counts the (question, page) judgements kept, ``dropped_labels`` the rows with a
    grade that does not count as relevant; ``skipped_questions`` the questions left out for want
    of a relevant page; ``renamed_pages`` the pages whose id is not a safe file name (their file
    is named after a cleaned-up id and a hash); ``warnings`` the problems that did not stop the
    import; ``notes`` what it decided on its own (a qrels format recognised, a record skipped).
    """

    out_dir: str
    pages: int
    empty_pages: int
    renamed_pages: int
    questions: Mapping[str, int]
    skipped_questions: int
    labels: int
    dropped_labels: int
    warnings: tuple[Problem, ...] = field(default=())
    notes: tuple[str, ...] = field(default=())

    @property
    def pages_dir(self) -> Path:
        return Path(self.out_dir) / PAGES_DIR

    @property
    def questions_file(self) -> Path:
        return Path(self.out_dir) / QUESTIONS_FILE

    def as_dict(self) -> dict[str, Any]:
        return {
            "out_dir": self.out_dir,
            "pages_dir": str(self.pages_dir),
            "questions_file": str(self.questions_file),
            "pages": self.pages,
            "empty_pages": self.empty_pages,
            "renamed_pages": self.renamed_pages,
            "questions": dict(self.questions),
            "skipped_questions": self.skipped_questions,
            "labels": self.labels,
            "dropped_labels": self.dropped_labels,
            "warnings": [str(w) for w in self.warnings],
            "notes": list(self.notes),
        }


def check_fraction(test_fraction: float) -> None:
    if not (isinstance(test_fraction, int | float) and 0.0 <= test_fraction <= 1.0):
        raise ValueError(f"test_fraction must be a number in [0, 1], not {test_fraction!r}")


def id_problem(value: str) -> str | None:
    """Why ``value`` cannot be a page id written in front matter, or None when it can."""
    if not value.strip():
        return "is empty"
    if any(ch.isspace() for ch in value):
        return "contains whitespace, which TREC run and qrels files cannot hold"
    if value.strip("'\"") != value:
        return "starts or ends with a quote, which front matter drops"
    return None


def one_line(title: str) -> str:
    """``title`` with every run of whitespace (line breaks included) made one space."""
    return " ".join(title.split())


def safe_file_stems(ids: Sequence[str]) -> list[str]:
    """A file name (without ``.md``) for each page id, unique ignoring case.

    A safe id is its own name; any other id becomes its letters, digits, ``.``, ``_`` and ``-``
    (other runs replaced by ``-``, at most 60 characters) plus ``-`` and 12 hex digits of the
    id's SHA-1. A name already taken (ignoring case) gets ``-2``, ``-3``, ... in id order.
    """
    used: set[str] = set()
    stems: list[str] = []
    for pid in ids:
        stem = pid
        if (
            not _SAFE_NAME.fullmatch(pid)
            or pid.endswith(".")
            or pid.split(".")[0].upper() in _RESERVED_NAMES
            or pid.lower() in used
        ):
            slug = _UNSAFE_RUN.sub("-", pid).strip("-.")[:60].strip("-.") or "page"
            digest = hashlib.sha1(pid.encode("utf-8"), usedforsecurity=False).hexdigest()[:12]
            stem = f"{slug}-{digest}"
        base, n = stem, 2
        while stem.lower() in used:
            stem, n = f"{base}-{n}", n + 1
        used.add(stem.lower())
        stems.append(stem)
    return stems


def seeded_split(ids: Sequence[str], *, test_fraction: float, seed: int) -> dict[str, str]:
    """Send ``floor(test_fraction * n + 0.5)`` of the n distinct ids to test, the rest to train.

    The ids are sorted, permuted by ``numpy.random.default_rng(seed).permutation(n)``, and the
    first ids of the permutation go to test; so the split depends on the set of ids and the seed,
    not on the order the ids are given in. Returns id -> ``"train"`` or ``"test"``.
    """
    check_fraction(test_fraction)
    ordered = sorted(set(ids))
    n_test = math.floor(test_fraction * len(ordered) + 0.5)
    order = np.random.default_rng(seed).permutation(len(ordered))
    test = {ordered[int(i)] for i in order[:n_test]}
    return {qid: "test" if qid in test else "train" for qid in ordered}


def check_output_dir(out_dir: str | Path, *, overwrite: bool) -> None:
    """Raise :class:`InputError` when the import may not write into ``out_dir``.

    A missing folder is fine (it will be created); an existing one must be a folder, and empty
    unless ``overwrite``; its ``pages`` must be a folder and its ``questions.jsonl`` a file.
    """
    root = Path(out_dir)
    if not root.exists():
        return
    if not root.is_dir():
        raise InputError([Problem(str(root), "output path exists and is not a folder")])
    problems: list[Problem] = []
    pages = root / PAGES_DIR
    if pages.exists() and not pages.is_dir():
        problems.append(Problem(str(pages), "exists and is not a folder"))
    if (root / QUESTIONS_FILE).is_dir():
        problems.append(Problem(str(root / QUESTIONS_FILE), "exists and is a folder"))
    if not overwrite and any(root.iterdir()):
        problems.append(
            Problem(
                str(root),
                f"output folder is not empty; use --force (overwrite=True) to replace its "
                f"{PAGES_DIR}/ folder and {QUESTIONS_FILE} (other files are left alone)",
            )
        )
    if problems:
        raise InputError(problems)


def page_markdown(page: PageRecord) -> str:
    """The file text of a page: front matter (id, title when there is one), then the body."""
    head = ["---", f"id: {page.id}"]
    title = one_line(page.title)
    if title:
        head.append(f"title: {title}")
    head.append("---")
    body = page.body if not page.body or page.body.endswith("\n") else page.body + "\n"
    return "\n".join(head) + "\n" + body


def question_line(question: Mapping[str, Any]) -> str:
    """One JSON Lines line, readable by a reader that splits at any Unicode line break."""
    text = json.dumps(question, ensure_ascii=False)
    for char, escape in _LINE_BREAKS_IN_JSON.items():
        text = text.replace(char, escape)
    return text + "\n"


def write_collection(
    out_dir: str | Path,
    pages: Sequence[PageRecord],
    questions: Sequence[Mapping[str, Any]],
    *,
    overwrite: bool = False,
    quiet: bool = False,
) -> None:
    """Write ``OUT/pages/*.md`` and ``OUT/questions.jsonl``, all or nothing.

    Pages go to a temporary folder and the questions to a temporary file inside ``out_dir``;
    only when both are complete is the old ``pages/`` (if any) moved aside, the new one renamed
    in, the questions file replaced, and the old pages deleted. On failure the output folder is
    restored (and removed again if this call created it).
    """
    check_output_dir(out_dir, overwrite=overwrite)
    try:
        _write_collection(Path(out_dir), pages, questions, quiet=quiet)
    except OSError as exc:
        raise output_error(out_dir, exc) from None


def _write_collection(
    root: Path, pages: Sequence[PageRecord], questions: Sequence[Mapping[str, Any]], *, quiet: bool
) -> None:
    created = not root.exists()
    root.mkdir(parents=True, exist_ok=True)
    pages_dir = root / PAGES_DIR
    # A killed import leaves .pages.raglab-PID-*.tmp and friends: the next one clears them.
    remove_stale_temps(pages_dir)
    remove_stale_temps(root / QUESTIONS_FILE)
    staging = temp_path(pages_dir)
    questions_tmp = temp_path(root / QUESTIONS_FILE)
    old: Path | None = None
    swapped = False
    try:
        staging.mkdir()
        for page in progress(pages, description="Writing pages", quiet=quiet):
            (staging / f"{page.file_stem}.md").write_text(
                page_markdown(page), encoding="utf-8", newline=""
            )
        write_new_text(questions_tmp, (question_line(q) for q in questions))
        if pages_dir.exists():
            old = temp_path(pages_dir, "old")
            pages_dir.rename(old)
        staging.rename(pages_dir)
        swapped = True
        os.replace(questions_tmp, root / QUESTIONS_FILE)
    except BaseException:
        if swapped:
            shutil.rmtree(pages_dir, ignore_errors=True)
        if old is not None and old.exists():
            old.rename(pages_dir)
        shutil.rmtree(staging, ignore_errors=True)
        questions_tmp.unlink(missing_ok=True)
        if created:
            shutil.rmtree(root, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
