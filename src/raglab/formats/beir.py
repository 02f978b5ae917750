"""Importing a BEIR collection into RAG lab's format.

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

The writing itself (pages, questions file, seeded split, output-folder checks) lives in
:mod:`raglab.formats.collection`, shared with :mod:`raglab.formats.glasgow`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from raglab.base.files import read_text_lines
from raglab.corpus.questions import SPLITS
from raglab.errors import InputError, Problem
from raglab.formats.collection import (
    TEST_FRACTION,
    ImportSummary,
    PageRecord,
    check_fraction,
    check_output_dir,
    id_problem,
    one_line,
    safe_file_stems,
    seeded_split,
    write_collection,
)
from raglab.formats.progress import progress
from raglab.formats.trec import cap_problems, parse_int

BEIR_KIND = "beir"
# BEIR's qrels file names and the split each feeds (we have no dev split: tuning uses train).
QRELS_SPLITS = {"train": "train", "dev": "train", "test": "test"}
QRELS_HEADER = ("query-id", "corpus-id", "score")


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


#: Reads ``corpus.jsonl`` into (id, title, text) records, adding what is wrong to ``problems``.
CorpusReader = Callable[[Path, list[Problem]], list[tuple[str, str, str]]]


def import_beir(
    folder: str | Path,
    out_dir: str | Path,
    *,
    split: str | None = None,
    test_fraction: float = TEST_FRACTION,
    seed: int,
    qrels_file: str | Path | None = None,
    overwrite: bool = False,
    quiet: bool = False,
    read_corpus: CorpusReader | None = None,
) -> ImportSummary:
    """Import the BEIR collection in ``folder`` into ``out_dir`` (see the module docstring).

    ``split``: ``"train"`` or ``"test"`` for every question (default: from the qrels file names,
    or a seeded random split with ``test_fraction`` and ``seed`` when there is one qrels file).
    ``qrels_file``: read only this qrels file (a path, or a name inside ``folder/qrels``).
    ``overwrite``: replace ``pages/`` and ``questions.jsonl`` in a non-empty ``out_dir``.
    ``quiet``: no progress bars. ``read_corpus``: how ``corpus.jsonl`` is read, as
    ``read_corpus(path, problems)`` giving its (id, title, text) records and adding its problems
    (default: line by line here; :mod:`raglab.distributed.importing` reads it on Dask workers,
    to the same records and problems). Raises :class:`InputError` listing every problem in the input
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
    if read_corpus is None:
        docs = _read_jsonl(root / "corpus.jsonl", "corpus", problems, quiet=quiet)
    else:
        docs = read_corpus(root / "corpus.jsonl", problems)
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
