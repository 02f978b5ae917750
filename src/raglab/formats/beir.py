"""Importing a BEIR collection, and writing any imported collection in RAG lab's format.

A BEIR folder (Thakur et al. 2021, "BEIR: A Heterogeneous Benchmark for Zero-shot Evaluation of
Information Retrieval Models") holds ``corpus.jsonl`` (one object a line: ``_id``, ``title``,
``text``), ``queries.jsonl`` (``_id``, ``text``) and ``qrels/<split>.tsv`` (tab-separated
``query-id corpus-id score`` with that header line). The import writes

- ``OUT/pages/<name>.md``: one page per document, front matter ``id`` and ``title``, the body the
  document's text. ``<name>`` is the id when it is a safe file name (letters, digits, ``.``, ``_``
  and ``-``, at most 100 characters, not a reserved Windows name, unique ignoring case); otherwise
  a cleaned-up form of the id plus 12 hex digits of its SHA-1, the real id staying in the front
  matter. Ids must survive front matter: no line breaks, no leading, trailing or repeated spaces,
  no quote at either end. Titles are written on one line (runs of whitespace become one space;
  a quote at either end of a title is lost, as front matter drops it).
- ``OUT/questions.jsonl``: one question per query with at least one relevant document, kind
  ``beir``, labelled by ``pages``: document id -> grade, from the qrels rows with a positive score
  (rows scored 0 or less are dropped and counted). Queries with no relevant document are skipped
  and counted.

Splits: ``split`` given puts every question there. Otherwise, with several qrels files, each
question takes its file's split (``train.tsv`` and ``dev.tsv`` give train, ``test.tsv`` test);
with a single qrels file (many BEIR sets have only ``test.tsv``), a seeded random split sends
``round(test_fraction * n)`` of the n questions to test (see :func:`seeded_split`).

Nothing is written until every input file has been read without a problem; then the pages are
written to a temporary folder beside ``OUT/pages`` and swapped in with the questions file, so a
failure leaves the output folder as it was. A non-empty output folder is refused unless
``overwrite`` is true; then its ``pages/`` folder and ``questions.jsonl`` are replaced and every
other file in it is left alone.

The writing helpers here (:func:`check_output_dir`, :func:`safe_file_stems`,
:func:`seeded_split`, :func:`write_collection`) are shared with :mod:`raglab.formats.glasgow`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import secrets
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from raglab._config import SEED
from raglab.errors import InputError, Problem
from raglab.formats.progress import progress
from raglab.formats.trec import cap_problems, parse_int, read_text_lines
from raglab.questions import SPLITS

# Share of questions sent to the test split by a seeded random split (a new default).
TEST_FRACTION = 0.4
BEIR_KIND = "beir"
PAGES_DIR = "pages"
QUESTIONS_FILE = "questions.jsonl"
# BEIR's qrels file names and the split each feeds (we have no dev split: tuning uses train).
QRELS_SPLITS = {"train": "train", "dev": "train", "test": "test"}
QRELS_HEADER = ("query-id", "corpus-id", "score")

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
    import.
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
        }


# ---------------------------------------------------------------------------------------------
# Helpers shared by the importers.


def check_fraction(test_fraction: float) -> None:
    if not (isinstance(test_fraction, int | float) and 0.0 <= test_fraction <= 1.0):
        raise ValueError(f"test_fraction must be a number in [0, 1], not {test_fraction!r}")


def id_problem(value: str) -> str | None:
    """Why ``value`` cannot be a page id written in front matter, or None when it can."""
    if not value.strip():
        return "is empty"
    if " ".join(value.split()) != value:
        return "has a line break, or leading, trailing, repeated or non-space whitespace"
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
    root = Path(out_dir)
    created = not root.exists()
    root.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(6)
    staging = root / f".{PAGES_DIR}.{token}.tmp"
    questions_tmp = root / f".{QUESTIONS_FILE}.{token}.tmp"
    pages_dir = root / PAGES_DIR
    old: Path | None = None
    swapped = False
    try:
        staging.mkdir()
        for page in progress(pages, description="Writing pages", quiet=quiet):
            (staging / f"{page.file_stem}.md").write_text(
                page_markdown(page), encoding="utf-8", newline=""
            )
        with open(questions_tmp, "x", encoding="utf-8", newline="") as handle:
            handle.writelines(question_line(q) for q in questions)
            handle.flush()
            os.fsync(handle.fileno())
        if pages_dir.exists():
            old = root / f".{PAGES_DIR}.{token}.old"
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


# ---------------------------------------------------------------------------------------------
# Reading BEIR files.


def _json_object(
    raw: str, source: str, number: int, problems: list[Problem]
) -> dict[str, Any] | None:
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        problems.append(
            Problem(source, f"not valid JSON ({exc.msg} at column {exc.colno})", number)
        )
        return None
    if not isinstance(obj, dict):
        problems.append(Problem(source, "each line must be a JSON object", number))
        return None
    return obj


def _read_id(obj: dict[str, Any], source: str, number: int, problems: list[Problem]) -> str | None:
    value = obj.get("_id")
    if value is None:
        problems.append(Problem(source, "missing field", number, "_id"))
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        problems.append(Problem(source, "must be a string", number, "_id"))
        return None
    why = id_problem(value)
    if why is not None:
        problems.append(Problem(source, f"id {value!r} {why}", number, "_id"))
        return None
    return value


def _read_string(
    obj: dict[str, Any],
    key: str,
    source: str,
    number: int,
    item: str | None,
    problems: list[Problem],
    *,
    required: bool,
) -> str | None:
    value = obj.get(key)
    if value is None:
        if required:
            problems.append(Problem(source, "missing field", number, key, item))
            return None
        return ""
    if not isinstance(value, str):
        problems.append(Problem(source, "must be a string", number, key, item))
        return None
    return value


def _read_jsonl(
    path: Path, kind: str, problems: list[Problem], *, quiet: bool
) -> list[tuple[str, str, str]]:
    """``(id, title, text)`` for each line of ``corpus.jsonl`` (kind "corpus") or
    ``queries.jsonl`` (kind "queries": no title, and the text must not be empty)."""
    source = str(path)
    try:
        lines = read_text_lines(path)
    except InputError as exc:
        problems.extend(exc.problems)
        return []
    records: list[tuple[str, str, str]] = []
    first: dict[str, int] = {}
    for number, raw in enumerate(
        progress(lines, description=f"Reading {path.name}", quiet=quiet), start=1
    ):
        if not raw.strip():
            continue
        obj = _json_object(raw, source, number, problems)
        if obj is None:
            continue
        before = len(problems)
        rid = _read_id(obj, source, number, problems)
        title = ""
        if kind == "corpus":
            title = _read_string(obj, "title", source, number, rid, problems, required=False) or ""
        text = _read_string(obj, "text", source, number, rid, problems, required=True)
        if kind == "queries" and text is not None and not text.strip():
            problems.append(Problem(source, "question text is empty", number, "text", rid))
        if rid is not None:
            if rid in first:
                problems.append(
                    Problem(source, f"duplicate id, first on line {first[rid]}", number, "_id", rid)
                )
            else:
                first[rid] = number
        if len(problems) == before and rid is not None and text is not None:
            records.append((rid, title, text))
    if not records and not problems:
        problems.append(Problem(source, "no records found"))
    return records


def _qrels_paths(root: Path, qrels_file: str | Path | None, problems: list[Problem]) -> list[Path]:
    if qrels_file is not None:
        path = Path(qrels_file)
        if not path.is_absolute() and not path.exists():
            path = root / "qrels" / path
        if not path.is_file():
            problems.append(Problem(str(path), "qrels file does not exist"))
            return []
        return [path]
    folder = root / "qrels"
    paths = sorted(folder.glob("*.tsv")) if folder.is_dir() else []
    if not paths:
        problems.append(Problem(str(folder), "no qrels/*.tsv files found"))
    return paths


@dataclass
class _Labels:
    grades: dict[str, dict[str, int]] = field(default_factory=dict)
    split_of: dict[str, tuple[str | None, str]] = field(default_factory=dict)  # (split, file)
    first: dict[tuple[str, str], str] = field(default_factory=dict)
    dropped: int = 0


def _read_qrels_tsv(
    path: Path,
    split: str | None,
    queries: Mapping[str, object],
    docs: Mapping[str, object],
    labels: _Labels,
    problems: list[Problem],
    *,
    check_ids: bool,
) -> None:
    source = str(path)
    try:
        lines = read_text_lines(path)
    except InputError as exc:
        problems.extend(exc.problems)
        return
    seen_header = False
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        # BEIR separates by tabs, which lets ids hold spaces; tolerate spaces when there is no tab.
        cols = [c.strip() for c in raw.split("\t")] if "\t" in raw else raw.split()
        if not seen_header:
            seen_header = True
            if tuple(cols) == QRELS_HEADER:
                continue
        if len(cols) != len(QRELS_HEADER):
            problems.append(
                Problem(
                    source,
                    f"expected 3 columns '{' '.join(QRELS_HEADER)}', found {len(cols)}",
                    number,
                    "columns",
                )
            )
            continue
        qid, docid, score_text = cols
        here: list[Problem] = []
        score = parse_int(score_text)
        if score is None:
            here.append(Problem(source, f"not an integer: {score_text!r}", number, "score", qid))
        if check_ids and qid not in queries:
            here.append(
                Problem(source, f"no query {qid!r} in queries.jsonl", number, "query-id", qid)
            )
        if check_ids and docid not in docs:
            here.append(
                Problem(source, f"no document {docid!r} in corpus.jsonl", number, "corpus-id", qid)
            )
        where = f"{path.name}:{number}"
        if (qid, docid) in labels.first:
            here.append(
                Problem(
                    source,
                    f"document {docid!r} judged twice for this query "
                    f"(first at {labels.first[(qid, docid)]})",
                    number,
                    "corpus-id",
                    qid,
                )
            )
        previous = labels.split_of.get(qid)
        if previous is not None and previous[0] != split:
            here.append(
                Problem(
                    source,
                    f"query is also labelled in {previous[1]}, which feeds the "
                    f"{previous[0]} split, not {split}",
                    number,
                    "query-id",
                    qid,
                )
            )
        if here or score is None:
            problems.extend(here)
            continue
        labels.first[(qid, docid)] = where
        labels.split_of.setdefault(qid, (split, path.name))
        if score > 0:
            labels.grades.setdefault(qid, {})[docid] = score
        else:
            labels.dropped += 1


def import_beir(
    folder: str | Path,
    out_dir: str | Path,
    *,
    split: str | None = None,
    test_fraction: float = TEST_FRACTION,
    seed: int = SEED,
    qrels_file: str | Path | None = None,
    overwrite: bool = False,
    quiet: bool = False,
) -> ImportSummary:
    """Import the BEIR collection in ``folder`` into ``out_dir`` (see the module docstring).

    ``split``: ``"train"`` or ``"test"`` for every question (default: from the qrels file names,
    or a seeded random split with ``test_fraction`` and ``seed`` when there is one qrels file).
    ``qrels_file``: read only this qrels file (a path, or a name inside ``folder/qrels``).
    ``overwrite``: replace ``pages/`` and ``questions.jsonl`` in a non-empty ``out_dir``.
    ``quiet``: no progress bars. Raises :class:`InputError` listing every problem in the input
    (file, line, field) before anything is written; ``ValueError`` on bad arguments.
    """
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS} or None, not {split!r}")
    check_fraction(test_fraction)
    root = Path(folder)
    check_output_dir(out_dir, overwrite=overwrite)
    if not root.is_dir():
        raise InputError([Problem(str(root), "BEIR folder does not exist or is not a folder")])
    problems: list[Problem] = []
    docs = _read_jsonl(root / "corpus.jsonl", "corpus", problems, quiet=quiet)
    queries = _read_jsonl(root / "queries.jsonl", "queries", problems, quiet=quiet)
    paths = _qrels_paths(root, qrels_file, problems)
    random_split = split is None and len(paths) == 1
    file_splits: dict[Path, str | None] = {}
    for path in paths:
        if split is not None:
            file_splits[path] = split
        elif random_split:
            file_splits[path] = None
        elif path.stem.lower() in QRELS_SPLITS:
            file_splits[path] = QRELS_SPLITS[path.stem.lower()]
        else:
            problems.append(
                Problem(
                    str(path),
                    "cannot tell the split from the file name (expected train.tsv, dev.tsv or "
                    "test.tsv): choose one qrels file (--qrels) or give --split",
                )
            )
    labels = _Labels()
    # Unknown ids are only worth reporting once both id lists were read without a problem.
    check_ids = not problems
    query_ids = {qid: None for qid, _, _ in queries}
    doc_ids = {pid: None for pid, _, _ in docs}
    for path, path_split in file_splits.items():
        _read_qrels_tsv(path, path_split, query_ids, doc_ids, labels, problems, check_ids=check_ids)
    if problems:
        raise InputError(cap_problems(problems, str(root)))

    kept = [(qid, text) for qid, _, text in queries if labels.grades.get(qid)]
    if split is not None:
        splits = {qid: split for qid, _ in kept}
    elif random_split:
        splits = seeded_split([qid for qid, _ in kept], test_fraction=test_fraction, seed=seed)
    else:
        splits = {qid: labels.split_of[qid][0] or "train" for qid, _ in kept}
    questions = [
        {
            "id": qid,
            "split": splits[qid],
            "kind": BEIR_KIND,
            "question": one_line(text),
            "pages": labels.grades[qid],
        }
        for qid, text in kept
    ]
    stems = safe_file_stems([pid for pid, _, _ in docs])
    pages = [
        PageRecord(pid, title, text, stem)
        for (pid, title, text), stem in zip(docs, stems, strict=True)
    ]
    write_collection(out_dir, pages, questions, overwrite=overwrite, quiet=quiet)
    return ImportSummary(
        out_dir=str(out_dir),
        pages=len(pages),
        empty_pages=sum(not p.body.strip() for p in pages),
        renamed_pages=sum(p.file_stem != p.id for p in pages),
        questions={s: sum(q["split"] == s for q in questions) for s in SPLITS},
        skipped_questions=len(queries) - len(kept),
        labels=sum(len(g) for g in labels.grades.values()),
        dropped_labels=labels.dropped,
    )
