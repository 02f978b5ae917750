"""A report: every exhibit's tables for one corpus, one question set and one run's settings.

:func:`build_report` gathers what the six exhibits show into one JSON-serialisable dict, so that a
run can be written to disk (``raglab report``), rendered as Markdown or HTML (:mod:`raglab.report`)
and compared, question by question, with a later run (:func:`compare_reports`, ``raglab check``).
Nothing here computes a measure of its own: chunk counts, intact rates, the BM25 grid, the LSA
spectrum, the ranker table, the reranker and the end-to-end run all come from the pipeline.

The report's sections, under the keys of :data:`SECTIONS`:

- ``chunking`` (I): the run's chunker and, for reference, the heading, sentence and fixed
  (FIXED_SIZE / FIXED_OVERLAP words) chunkers: chunk counts, answer-intact rates and whether each
  answer of the split survives each one.
- ``bm25`` (II): training recall@5 over the k1 x b grid, the best cell, and recall@5 on the
  training and report splits at the defaults and at the best cell.
- ``lsa`` (III): rank, windows, singular values and the share of ||A||^2 each keeps.
- ``rankers`` (IV): BM25, LSA, RRF and score fusion (weight chosen on train) with each question's
  rank of its first relevant chunk under each.
- ``reranker`` (V): the reranker of the run's first stage, its weights, the lambda chosen on train
  and the train/test x order table.
- ``end_to_end`` (VI): accuracy, Wilson interval, bound, funnel and every question's outcome.

Exhibits II to V are measured as the lab shows them (BM25 at the default k1 and b, the fusion
weight chosen on the training split) but on the run's chunker, which is the heading chunker of the
lab unless the settings say otherwise; the run itself (VI) uses every setting.

When the questions are labelled by relevant pages instead of answer passages, ``chunking`` and
``end_to_end`` hold ``"supported": false`` and a ``reason``; the other sections still work.

The report also holds ``settings`` (every setting resolved: the reader threshold and MMR lambda
chosen on train included), ``data`` (where the corpus and questions came from, with counts),
``fingerprint``, ``version`` and ``created``. ``created`` is the only field that differs between
two builds on the same data and settings.

Fingerprint: sha256 of the corpus digest, the questions digest and the settings digest, each a
sha256 (:func:`data_digests`, :func:`settings_digest`). The corpus digest runs over the pages'
file bytes in sorted order of their paths relative to the corpus folder, each framed by its path
and length; a page that was not read from a file (a corpus built in memory) contributes its parsed
fields instead. The questions digest is over the questions file's bytes (or, in memory, over the
parsed questions). The settings digest is over the settings as canonical JSON (sorted keys, no
spaces).

:data:`RECALL_K` (5, the exhibits' headline recall@5) is the depth at which the gate compares
rankers question by question.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

import raglab
from raglab import _config as C
from raglab.pipeline.chunking_report import ChunkingReport, chunking_report
from raglab.pipeline.end_to_end import (
    RUN_SETTING_NAMES,
    TUNED_NAMES,
    RunSettings,
    plain_settings,
    resolve_run,
    run,
)
from raglab.pipeline.exhibits import funnel, lsa_spectrum, rerank_rows
from raglab.pipeline.lab import ChunkingKey, Lab
from raglab.pipeline.reranking import choose_lambda, train_reranker
from raglab.pipeline.retrieval import (
    RetrievalSettings,
    bm25_grid,
    choose_weight,
    first_rank_rows,
    measure,
    ranker_settings,
)
from raglab.questions import SPLITS
from raglab.settings import TUNED, setting, settings_in
from raglab.stats import mcnemar_exact

#: Marks a JSON document as a RAG lab report; ``schema`` changes when the layout does.
REPORT_FORMAT = "raglab-report"
REPORT_SCHEMA = 1
#: The recall depth of the gate: a question counts as found by a ranker when its first relevant
#: chunk is in the first RECALL_K (the exhibits' headline recall@5).
RECALL_K = 5
#: Report sections in exhibit order, with the titles every rendering uses.
SECTIONS = (
    ("chunking", "I. Where the cuts land"),
    ("bm25", "II. BM25 and the exact word"),
    ("lsa", "III. Meaning from co-occurrence"),
    ("rankers", "IV. Two rankers beat one"),
    ("reranker", "V. A second look at the top 20"),
    ("end_to_end", "VI. Where the answers are lost"),
)
#: The chunkers shown beside the run's chunker in section I.
REFERENCE_CHUNKERS = (
    ChunkingKey("heading"),
    ChunkingKey("sentence"),
    ChunkingKey("fixed", C.FIXED_SIZE, C.FIXED_OVERLAP),
)
#: The rankers of section IV: every retriever of the lab.
RANKERS = C.RETRIEVERS
#: The gate also compares the run's final list (after reranking and MMR) under this name.
FINAL_LIST = "final"
#: Settings the pipeline chooses on the training split when they are not given.
CHOSEN_SETTINGS = TUNED_NAMES
# Settings a report of an earlier version may lack: they take their defaults.
_ADDED_LATER = frozenset({"depth", "fusion_depth"})
# Floats closer than this count as equal when the gate compares two rates (rounding only).
_EPS = 1e-9

_NO_PASSAGES = (
    "the questions of this split are labelled by relevant pages, not by answer passages: "
    "whether an answer survives a cut, and whether the reader quoted it, needs the passage"
)
_PAGES_RUN = (
    "the end-to-end run needs answer passages: these questions are labelled by relevant pages, "
    "which say where an answer is but not which sentence states it"
)


# --- settings and fingerprints -----------------------------------------------------------------


def settings_record(
    settings: RunSettings,
    *,
    split: str,
    resolved: RunSettings | None = None,
    data: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Every setting of a report as plain values, resolved (:data:`raglab.settings.SETTINGS`).

    ``size`` and ``overlap`` are the chunker's resolved values. A setting whose default is
    "chosen on the training split" holds the value the run used (``resolved``; None when the run
    did not use it or the labels do not support a run), and ``chosen_on_train`` lists those the
    given ``settings`` left TUNED and the run chose, so a rerun chooses them again. ``data`` gives the settings
    fixed when the lab was built (analyzer, stem, windows; their defaults when absent).
    """
    values = plain_settings((resolved or settings).values())
    # Left TUNED and used by the run (a weight is chosen only for score fusion).
    chosen = [
        name
        for name in TUNED_NAMES
        if getattr(settings, name) is TUNED
        and (resolved is None or getattr(resolved, name) is not TUNED)
    ]
    fixed = {s.name: s.default for s in settings_in("data")}
    fixed.update(data or {})
    return {
        **values,
        **fixed,
        "split": split,
        "chosen_on_train": chosen,
    }


def lab_settings(lab: Lab) -> dict[str, Any]:
    """The data settings a lab was built with, by name."""
    return {"analyzer": lab.analyzer, "stem": lab.stem, "windows": lab.windows}


def run_settings_from(record: Mapping[str, Any]) -> RunSettings:
    """The :class:`RunSettings` a settings record (:func:`settings_record`) was made from.

    Settings listed in ``chosen_on_train`` are TUNED again, so the pipeline chooses them anew on
    the training split. A setting newer than the record (the depths) takes its default. Raises
    ValueError naming the first setting that is missing or not allowed.
    """
    chosen = record.get("chosen_on_train", [])
    if not isinstance(chosen, list):
        raise ValueError("setting 'chosen_on_train' must be a list of setting names")
    values: dict[str, Any] = {}
    for name in RUN_SETTING_NAMES:
        s = setting(name)
        if name in chosen or (s.tuned and record.get(name, 0) is None):
            values[name] = TUNED
        elif name in record:
            try:
                values[name] = s.check(record[name])
            except ValueError as exc:
                raise ValueError(f"setting {name!r}: {exc}") from None
        elif name not in _ADDED_LATER:
            raise ValueError(f"setting {name!r} is missing")
    return RunSettings(**values)


def data_settings_from(record: Mapping[str, Any]) -> dict[str, Any]:
    """The data settings (analyzer, stem, windows) of a settings record, checked."""
    out = {}
    for s in settings_in("data"):
        value = record.get(s.name, s.default)
        try:
            out[s.name] = s.check(value)
        except ValueError as exc:
            raise ValueError(f"setting {s.name!r}: {exc}") from None
    return out


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _frame(h: Any, name: str, data: bytes) -> None:
    # Name and length before the bytes, so no two different corpora hash the same stream.
    h.update(name.encode("utf-8") + b"\0" + str(len(data)).encode("ascii") + b"\0")
    h.update(data)


def _page_files(lab: Lab) -> list[tuple[str, bytes]]:
    root = Path(lab.corpus.root)
    found = []
    for page in lab.corpus:
        source = Path(page.source)
        if source.is_file():
            try:
                name = source.resolve().relative_to(root.resolve()).as_posix()
            except ValueError:
                name = source.as_posix()
            found.append((name, source.read_bytes()))
        else:
            fields = {
                "id": page.id,
                "title": page.title,
                "text": page.text,
                "updated": None if page.updated is None else page.updated.isoformat(),
                "status": page.status,
                "supersedes": page.supersedes,
            }
            found.append((f"<page {page.id}>", _canonical(fields)))
    return sorted(found)


def data_digests(lab: Lab) -> dict[str, str]:
    """sha256 of the corpus pages (``corpus``) and of the questions file (``questions``)."""
    corpus = hashlib.sha256()
    for name, data in _page_files(lab):
        _frame(corpus, name, data)
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


# --- sections ----------------------------------------------------------------------------------


def chunker_label(key: ChunkingKey) -> str:
    """A chunker setting in words: "heading, cap 300", "sentence, 120", "fixed, 200/0"."""
    k = key.resolved()
    if k.method == "fixed":
        return f"fixed, {k.size}/{k.overlap}"
    if k.method == "heading":
        return f"heading, cap {k.size}"
    return f"sentence, {k.size}"


def _lab_key(key: ChunkingKey) -> ChunkingKey:
    """The key the lab's exhibits use for this chunker.

    The exhibits name the default heading chunker ``ChunkingKey()``; the report names it the
    same way, so that it finds the rankings and measures the lab has already cached.
    """
    return ChunkingKey() if key.resolved() == ChunkingKey().resolved() else key.resolved()


def _passage_split(lab: Lab, split: str) -> bool:
    return any(q.spans for q in lab.split(split))


def _chunker_row(report: ChunkingReport, role: str, supported: bool) -> dict[str, Any]:
    k = report.key
    return {
        "role": role,
        "label": chunker_label(k),
        "method": k.method,
        "size": k.size,
        "overlap": k.overlap,
        "chunks": report.n_chunks,
        "expected_chunks": report.expected_chunks,
        "mean_words": report.mean_words,
        "intact": report.intact if supported else None,
        "total": report.total if supported else None,
        "intact_rate": report.intact_rate if supported else None,
        "predicted_intact": report.predicted_intact if supported else None,
    }


def _chunking_section(lab: Lab, key: ChunkingKey, split: str) -> dict[str, Any]:
    supported = _passage_split(lab, split)
    keys = [("chosen", key), *(("reference", k) for k in REFERENCE_CHUNKERS)]
    reports = [(role, chunking_report(lab, k, split=split)) for role, k in keys]
    section: dict[str, Any] = {
        "supported": supported,
        "reason": None if supported else _NO_PASSAGES,
        "split": split,
        "chunkers": [_chunker_row(r, role, supported) for role, r in reports],
        "answers": [],
    }
    if supported:
        per_chunker = [{a.id: a for a in r.answers} for _, r in reports]
        section["answers"] = [
            {
                "id": a.id,
                "kind": a.kind,
                "words": a.words,
                "intact": [by_id[a.id].intact for by_id in per_chunker],
                "predicted_cut": [by_id[a.id].predicted_cut for by_id in per_chunker],
            }
            for a in reports[0][1].answers
            if a.split == split
        ]
    return section


def _bm25_section(lab: Lab, key: ChunkingKey, split: str) -> dict[str, Any]:
    grid = bm25_grid(lab, chunking=key)
    name = f"recall@{grid.k}"

    def recall(k1: float, b: float, on: str) -> float:
        return measure(lab, on, RetrievalSettings("bm25", k1=k1, b=b, chunking=key))[name]

    return {
        "chunker": chunker_label(key),
        "tuned_on": grid.split,
        "k": grid.k,
        "split": split,
        "k1s": list(grid.k1s),
        "bs": list(grid.bs),
        "train_recall": grid.recall.tolist(),
        "best": {
            "k1": grid.best_k1,
            "b": grid.best_b,
            "train_recall": grid.best_recall,
            "split_recall": recall(grid.best_k1, grid.best_b, split),
        },
        "default": {
            "k1": C.BM25_K1,
            "b": C.BM25_B,
            "train_recall": recall(C.BM25_K1, C.BM25_B, "train"),
            "split_recall": recall(C.BM25_K1, C.BM25_B, split),
        },
    }


def _rankers_section(lab: Lab, key: ChunkingKey, split: str) -> dict[str, Any]:
    weight = choose_weight(lab, chunking=key)
    settings = ranker_settings(RetrievalSettings(chunking=key), weight=weight)
    table = {name: measure(lab, split, s) for name, s in settings.items()}
    rows = first_rank_rows(lab, split, settings, with_text=False)
    return {
        "split": split,
        "chunker": chunker_label(key),
        "k1": C.BM25_K1,
        "b": C.BM25_B,
        "weight": weight,
        "weight_tuned_on": "train",
        "recall_k": RECALL_K,
        "answerable": sum(row["answerable"] for row in rows),
        "table": table,
        "questions": rows,
    }


def _reranker_section(lab: Lab, settings: RunSettings, lam: float | None) -> dict[str, Any]:
    about = {
        "first_stage": settings.retriever,
        "chunker": chunker_label(settings.chunking),
        "used_by_run": settings.rerank,
        "mmr_used_by_run": settings.mmr,
    }
    try:
        reranker = train_reranker(lab, settings.retrieval)
        chosen = choose_lambda(lab, reranker)
    except ValueError as exc:
        # Too few or one-sided training rows (a tiny corpus): say so, keep the other sections.
        return {
            "supported": False,
            "reason": f"the reranker cannot be trained on this data: {exc}",
            **about,
        }
    shown = lam if lam is not None else chosen
    return {
        "supported": True,
        "reason": None,
        **about,
        "weights": reranker.weights,
        "bias": float(reranker.model.bias),
        "training_rows": reranker.rows,
        "positives": reranker.positives,
        "chosen_lambda": chosen,
        "lambda": shown,
        "rows": rerank_rows(lab, reranker, shown),
    }


def _end_to_end_section(
    lab: Lab, settings: RunSettings, split: str
) -> tuple[dict[str, Any], RunSettings]:
    """The end-to-end section and the settings resolved as far as the data allows (without a
    run, the fusion weight and MMR's lambda are still chosen; the threshold stays TUNED)."""
    if any(q.labels == "pages" for q in lab.questions):
        return {"supported": False, "reason": _PAGES_RUN, "split": split}, _resolved(lab, settings)
    try:
        result = run(lab, settings, split=split)
    except ValueError as exc:
        # The settings were checked before (build_report), so this is the data: say so plainly.
        reason = f"the run could not be made: {exc}"
        return {"supported": False, "reason": reason, "split": split}, _resolved(lab, settings)
    flow = funnel(result)
    return {
        "supported": True,
        "reason": None,
        "split": split,
        "accuracy": result.accuracy,
        "correct": result.correct,
        "n": result.n,
        "interval": list(result.interval),
        "answerable": result.answerable,
        "answerable_correct": result.answerable_correct,
        "bound": result.bound,
        "threshold": result.threshold,
        "mmr_lambda": result.mmr_lambda,
        "budget": settings.budget,
        "funnel": dict(result.funnel),
        "stages": flow["stages"],
        "unanswerable": flow["unanswerable"],
        "declined": flow["declined"],
        "false_answers": flow["false_answers"],
        "outcomes": [
            {
                "id": o.id,
                "kind": o.kind,
                "question": o.question,
                "answerable": o.answerable,
                "outcome": o.outcome,
                "rank": o.rank,
                "k_budget": o.k_budget,
                "quote": o.quote,
                "quote_chunk": o.quote_chunk,
                "coverage": o.coverage,
            }
            for o in result.outcomes
        ],
    }, result.resolved


def _data_section(lab: Lab, digests: Mapping[str, str]) -> dict[str, Any]:
    labels = {q.labels for q in lab.questions if q.labels != "none"}
    counts = {}
    for split in SPLITS:
        qs = lab.split(split)
        answerable = sum(q.answerable for q in qs)
        counts[split] = {
            "questions": len(qs),
            "answerable": answerable,
            "out_of_corpus": len(qs) - answerable,
        }
    return {
        "corpus": lab.corpus.root,
        "pages": len(lab.corpus),
        "words": lab.corpus.n_words,
        "questions": lab.questions.source,
        "labels": "mixed" if len(labels) > 1 else (labels.pop() if labels else "none"),
        "counts": counts,
        "sha256": dict(digests),
    }


def _resolved(lab: Lab, settings: RunSettings) -> RunSettings:
    try:
        return resolve_run(lab, settings, upto="mmr_lambda")
    except ValueError:
        # No reranker to choose lambda with (the reranker section says why): the weight alone.
        return resolve_run(lab, settings, upto="weight")


def _plain(value: Any) -> Any:
    """Plain JSON values: numpy scalars unwrapped, tuples as lists, non-finite floats as None."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        return _plain(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def build_report(
    lab: Lab,
    settings: RunSettings = RunSettings(),
    *,
    split: str = "test",
    created: datetime | None = None,
) -> dict[str, Any]:
    """Every exhibit's tables for ``lab`` under ``settings``, measured on ``split``.

    Returns a dict of plain JSON values (see the module docstring for the layout). ``created``
    (default: now) is written as a UTC ISO 8601 time; it is the only field that differs between
    two builds on the same data and settings. Raises ValueError for an unknown split.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}; not {split!r}")
    when = (created or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    key = _lab_key(settings.chunking)
    lab.chunk_set(key)  # a chunker setting the pipeline refuses raises ValueError here
    end_to_end, resolved = _end_to_end_section(lab, settings, split)
    lam = resolved.mmr_lambda if resolved.mmr and resolved.mmr_lambda is not TUNED else None
    record = settings_record(settings, split=split, resolved=resolved, data=lab_settings(lab))
    digests = data_digests(lab)
    report = {
        "format": REPORT_FORMAT,
        "schema": REPORT_SCHEMA,
        "version": raglab.__version__,
        "created": when.isoformat().replace("+00:00", "Z"),
        "fingerprint": fingerprint(digests, record),
        "split": split,
        "settings": record,
        "data": _data_section(lab, digests),
        "chunking": _chunking_section(lab, key, split),
        "bm25": _bm25_section(lab, key, split),
        "lsa": lsa_spectrum(lab),
        "rankers": _rankers_section(lab, key, split),
        "reranker": _reranker_section(lab, resolved, lam),
        "end_to_end": end_to_end,
    }
    plain: dict[str, Any] = _plain(report)
    return plain


def headline(report: Mapping[str, Any]) -> dict[str, Any]:
    """The numbers a report leads with: accuracy, interval and bound (when the labels support a
    run), recall@RECALL_K of every ranker, and the fingerprint."""
    e2e = report["end_to_end"]
    table = report["rankers"]["table"]
    return {
        "split": report["split"],
        "accuracy": e2e.get("accuracy") if e2e.get("supported") else None,
        "correct": e2e.get("correct") if e2e.get("supported") else None,
        "n": e2e.get("n") if e2e.get("supported") else None,
        "interval": e2e.get("interval") if e2e.get("supported") else None,
        "bound": e2e.get("bound") if e2e.get("supported") else None,
        "recall": {name: table[name][f"recall@{RECALL_K}"] for name in table},
        "fingerprint": report["fingerprint"],
    }


# --- reading and comparing reports -------------------------------------------------------------


def validate_report(value: Any) -> list[str]:
    """What keeps ``value`` from being a RAG lab report the gate can compare (empty: nothing)."""
    if not isinstance(value, dict):
        return ["the JSON document is not an object"]
    if value.get("format") != REPORT_FORMAT:
        return [f'it has no "format": "{REPORT_FORMAT}" field']
    if value.get("schema") != REPORT_SCHEMA:
        return [
            f"its schema {value.get('schema')!r} is not {REPORT_SCHEMA}, the one this raglab reads"
        ]
    problems = []
    for name in ("settings", "data", "rankers", "end_to_end"):
        if not isinstance(value.get(name), dict):
            problems.append(f"its {name!r} section is missing")
    if problems:
        return problems
    if not isinstance(value["data"].get("sha256"), dict):
        problems.append("its data section has no sha256 digests")
    rows = value["rankers"].get("questions")
    if not isinstance(rows, list) or not all(
        isinstance(r, dict)
        and isinstance(r.get("id"), str)
        and isinstance(r.get("answerable"), bool)
        and isinstance(r.get("ranks"), dict)
        for r in rows
    ):
        problems.append("its rankers section has no per-question ranks")
    e2e = value["end_to_end"]
    if not isinstance(e2e.get("supported"), bool):
        problems.append("its end_to_end section does not say whether it is supported")
    elif e2e["supported"]:
        outcomes = e2e.get("outcomes")
        if not isinstance(outcomes, list) or not all(
            isinstance(o, dict)
            and isinstance(o.get("id"), str)
            and isinstance(o.get("outcome"), str)
            and isinstance(o.get("answerable"), bool)
            for o in outcomes
        ):
            problems.append("its end_to_end section has no per-question outcomes")
    return problems


def _found(rank: Any) -> bool:
    return isinstance(rank, int) and not isinstance(rank, bool) and rank <= RECALL_K


def _hits(report: Mapping[str, Any]) -> dict[str, dict[str, bool]]:
    """Per measure, question id -> right: recall@RECALL_K of each ranker (answerable questions),
    the final list's recall and end-to-end correctness (when supported)."""
    out: dict[str, dict[str, bool]] = {}
    rows = [r for r in report["rankers"]["questions"] if r["answerable"]]
    names = sorted({name for r in rows for name in r["ranks"]}, key=_ranker_order)
    for name in names:
        out[f"recall@{RECALL_K} {name}"] = {r["id"]: _found(r["ranks"].get(name)) for r in rows}
    e2e = report["end_to_end"]
    if e2e.get("supported"):
        answered = [o for o in e2e["outcomes"] if o["answerable"]]
        out[f"recall@{RECALL_K} {FINAL_LIST}"] = {o["id"]: _found(o.get("rank")) for o in answered}
        out["accuracy"] = {o["id"]: o["outcome"] == "correct" for o in e2e["outcomes"]}
    return out


def _ranker_order(name: str) -> tuple[int, str]:
    return (RANKERS.index(name) if name in RANKERS else len(RANKERS), name)


def _question_ids(report: Mapping[str, Any]) -> list[str]:
    return [str(r["id"]) for r in report["rankers"]["questions"]]


def compare_reports(
    baseline: Mapping[str, Any],
    current: Mapping[str, Any],
    *,
    tolerance_recall: float = 0.0,
    tolerance_accuracy: float = 0.0,
) -> dict[str, Any]:
    """Compare two reports question by question, on the question ids both share.

    Measures: recall@RECALL_K of each ranker of section IV and of the run's final list (a
    question is right when its first relevant chunk ranks within RECALL_K), and end-to-end
    correctness. For each: the rate in both reports over the shared questions, the questions that
    got worse and better, and the exact McNemar test (:func:`raglab.stats.mcnemar_exact`, baseline
    as ``a``, current as ``b``). A measure *fell* when its rate dropped by more than its tolerance
    (``tolerance_recall`` for recall, ``tolerance_accuracy`` for accuracy, both in [0, 1]);
    A measure only the baseline has (the current report could not make its run) is *lost*:
    listed under ``lost`` with the current report's reason, and it fails the gate too, since a
    pipeline that stopped answering has not held its ground. A measure only the current report
    has is listed under ``skipped``. ``verdict`` is "fail" when any measure fell or was lost, else
    "pass". Differences of data (digests) and of settings are returned for the caller to warn
    about; they never stop the comparison.
    """
    for name, tol in (
        ("tolerance_recall", tolerance_recall),
        ("tolerance_accuracy", tolerance_accuracy),
    ):
        if not (isinstance(tol, int | float) and 0.0 <= tol <= 1.0):
            raise ValueError(f"{name} must lie in [0, 1], not {tol!r}")
    base_ids, cur_ids = _question_ids(baseline), _question_ids(current)
    cur_set, base_set = set(cur_ids), set(base_ids)
    base_hits, cur_hits = _hits(baseline), _hits(current)
    measures = []
    skipped = []
    lost = []
    for name in [*base_hits, *(n for n in cur_hits if n not in base_hits)]:
        if name not in cur_hits:
            reason = current["end_to_end"].get("reason") or "the current report lacks it"
            lost.append({"measure": name, "reason": str(reason)})
            continue
        if name not in base_hits:
            reason = baseline["end_to_end"].get("reason") or "the baseline lacks it"
            skipped.append({"measure": name, "reason": f"the baseline has none: {reason}"})
            continue
        b, c = base_hits[name], cur_hits[name]
        ids = [i for i in cur_ids if i in b and i in c]
        a_right = [b[i] for i in ids]
        c_right = [c[i] for i in ids]
        test = mcnemar_exact(a_right, c_right)
        n = len(ids)
        base_rate = sum(a_right) / n if n else None
        cur_rate = sum(c_right) / n if n else None
        tolerance = tolerance_accuracy if name == "accuracy" else tolerance_recall
        fell = (
            base_rate is not None
            and cur_rate is not None
            and base_rate - cur_rate > tolerance + _EPS
        )
        measures.append(
            {
                "measure": name,
                "n": n,
                "baseline": base_rate,
                "current": cur_rate,
                "change": None if base_rate is None or cur_rate is None else cur_rate - base_rate,
                "tolerance": tolerance,
                "fell": fell,
                "worse": [i for i in ids if b[i] and not c[i]],
                "better": [i for i in ids if c[i] and not b[i]],
                "mcnemar": {
                    "n": test.n,
                    "both_right": test.both_right,
                    "only_baseline": test.only_a,
                    "only_current": test.only_b,
                    "both_wrong": test.both_wrong,
                    "p_value": test.p_value,
                },
            }
        )
    base_settings = dict(baseline.get("settings", {}))
    cur_settings = dict(current.get("settings", {}))
    changed = {
        k: {"baseline": base_settings.get(k), "current": cur_settings.get(k)}
        for k in sorted(set(base_settings) | set(cur_settings))
        if base_settings.get(k) != cur_settings.get(k)
    }
    base_digests = baseline["data"].get("sha256", {})
    cur_digests = current["data"].get("sha256", {})
    data_changed = [k for k in ("corpus", "questions") if base_digests.get(k) != cur_digests.get(k)]
    return {
        "verdict": "fail" if lost or any(m["fell"] for m in measures) else "pass",
        "fell": [m["measure"] for m in measures if m["fell"]],
        "lost": lost,
        "same_data": not data_changed,
        "data_changed": data_changed,
        "settings_changed": changed,
        "versions": {"baseline": baseline.get("version"), "current": current.get("version")},
        "fingerprints": {
            "baseline": baseline.get("fingerprint"),
            "current": current.get("fingerprint"),
        },
        "questions": {
            "shared": sum(i in base_set for i in cur_ids),
            "only_baseline": [i for i in base_ids if i not in cur_set],
            "only_current": [i for i in cur_ids if i not in base_set],
        },
        "tolerance": {"recall": tolerance_recall, "accuracy": tolerance_accuracy},
        "measures": measures,
        "skipped": skipped,
    }


__all__ = [
    "RECALL_K",
    "REPORT_FORMAT",
    "REPORT_SCHEMA",
    "SECTIONS",
    "build_report",
    "chunker_label",
    "compare_reports",
    "data_digests",
    "fingerprint",
    "headline",
    "run_settings_from",
    "settings_digest",
    "settings_record",
    "validate_report",
]
