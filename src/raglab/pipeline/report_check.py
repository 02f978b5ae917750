"""Reading a saved report back: its bounds, its published schema and the rules a schema cannot say.

One job: say whether a JSON document is a RAG lab report the gate (:mod:`raglab.pipeline.gate`)
can trust (:func:`validate_report`), each problem naming its field (``end_to_end.outcomes[3].rank``).
:data:`REPORT_FORMAT` and :data:`REPORT_SCHEMA` are the marks
:func:`raglab.pipeline.report.build_report` writes.

A report is checked in four steps, each only once the one before passed:

1. Its marks: a JSON object with ``"format": "raglab-report"`` and ``"schema": 1``.
2. No number is NaN or infinite (Python's JSON reader accepts ``NaN``, ``Infinity`` and ``1e999``;
   the report writer never writes them).
3. The published JSON Schema (draft 2020-12), shipped as ``report.schema.json`` beside this
   module and printed by ``raglab report --schema`` (:func:`report_schema`): every key known, every
   type, range and allowed word. An integer is a JSON number written without a fraction (``1``,
   not ``1.0``), a rank a positive integer or null, an outcome one of
   :data:`raglab.reading.diagnosis.OUTCOMES`.
4. The invariants (:func:`invariants`): the counts add up (``correct`` is the number of correct
   outcomes, ``n`` the number of outcomes, each funnel count the number of its outcome, the
   accuracy ``correct / n``, the grid's recalls its hits over its questions), every section is on
   the report's split, the question ids are unique and the same in the rankers' rows and the
   end-to-end outcomes, a question without an answer has no rank, and every setting is one
   :data:`raglab.settings.SETTINGS` allows.

:data:`MAX_REPORT_BYTES` and :data:`MAX_REPORT_DEPTH` bound what is read at all
(:func:`size_problem`, :func:`nesting_problem`): a report is a few levels deep (five), so a
document nested deeper than that many times over is refused before it is parsed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from raglab.pipeline.record import data_settings_from, run_settings_from

#: Marks a JSON document as a RAG lab report; ``schema`` changes when the layout does.
REPORT_FORMAT = "raglab-report"
REPORT_SCHEMA = 1
#: The published JSON Schema of the layout, package data beside this module.
SCHEMA_FILE = "report.schema.json"
#: The largest report read, in bytes (64 MiB: the handbook's report is 0.1 MiB, and a report
#: grows by about 1 KiB a question, so tens of thousands of questions fit).
MAX_REPORT_BYTES = 64 * 1024 * 1024
#: The deepest nesting of arrays and objects read (a report nests five deep).
MAX_REPORT_DEPTH = 32
#: The most problems one check lists (the rest are counted).
MAX_PROBLEMS = 10
# Rates computed from counts agree with them to rounding only.
_EPS = 1e-9
# A JSON string (skipped whole) or one bracket; what lies between them cannot nest.
_NESTING = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def size_problem(size: int) -> str | None:
    """Why ``size`` bytes are too many for a report, or None."""
    if size > MAX_REPORT_BYTES:
        return (
            f"it is larger than {MAX_REPORT_BYTES // (1024 * 1024)} MiB, the most a report may be"
        )
    return None


def nesting_problem(text: str) -> str | None:
    """Why ``text`` nests arrays and objects too deep to be a report (deeper than
    :data:`MAX_REPORT_DEPTH`), or None. Strings are skipped whole, so brackets inside them do
    not count; the scan stops at the first level too deep."""
    depth = 0
    for match in _NESTING.finditer(text):
        bracket = match.group()
        if bracket in "[{":
            depth += 1
            if depth > MAX_REPORT_DEPTH:
                line = text.count("\n", 0, match.start()) + 1
                return (
                    f"its arrays and objects nest more than {MAX_REPORT_DEPTH} deep (at line "
                    f"{line}); a report nests five deep"
                )
        elif bracket in "]}":
            depth -= 1
    return None


@cache
def schema_text() -> str:
    """The published JSON Schema of a report, as shipped (``raglab report --schema``)."""
    return resources.files("raglab.pipeline").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


def report_schema() -> dict[str, Any]:
    """The published JSON Schema of a report, parsed (a new dict on each call)."""
    value: dict[str, Any] = json.loads(schema_text())
    return value


def field_name(path: Sequence[str | int]) -> str:
    """A path into the report as one field name: ``end_to_end.outcomes[3].rank``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "the report"


def _non_finite(value: Any) -> Iterator[str]:
    """The fields holding NaN or an infinity (depth-first, without recursion)."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            word = "NaN" if item != item else ("Infinity" if item > 0 else "-Infinity")
            yield f"{field_name(path)}: {word} is not a number a report may hold"
        elif isinstance(item, dict):
            stack.extend((v, (*path, k)) for k, v in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((v, (*path, i)) for i, v in reversed(list(enumerate(item))))


@cache
def _validator() -> Any:
    """The schema's validator, whose integers are JSON integers only (``1``, not ``1.0``: the
    gate reads a rank of 1.0 as no rank)."""
    import jsonschema  # type: ignore[import-untyped]

    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine(
        "integer", lambda _checker, v: isinstance(v, int) and not isinstance(v, bool)
    )
    strict = jsonschema.validators.extend(base, type_checker=checker)
    return strict(report_schema())


def _schema_problems(error: Any) -> list[str]:
    """One schema error in words, naming its field (a field each where several are missing or
    unknown)."""
    path = list(error.absolute_path)
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        return [f"{field_name([*path, k])}: missing" for k in missing]
    if error.validator == "additionalProperties":
        known = set(error.schema.get("properties", {}))
        extra = sorted(str(k) for k in error.instance if k not in known)
        return [f"{field_name([*path, k])}: not a field of a report" for k in extra]
    if "propertyNames" in error.schema_path:  # the key itself is at fault: name it
        return [f"{field_name([*path, str(error.instance)])}: not a known name ({error.message})"]
    return [f"{field_name(path)}: {error.message}"]


def _counted(problems: list[str]) -> list[str]:
    if len(problems) <= MAX_PROBLEMS:
        return problems
    return [*problems[:MAX_PROBLEMS], f"and {len(problems) - MAX_PROBLEMS} more problems"]


def validate_report(value: Any) -> list[str]:
    """What keeps ``value`` from being a RAG lab report the gate can trust (empty: nothing),
    each problem naming its field; at most :data:`MAX_PROBLEMS` and a count of the rest."""
    if not isinstance(value, dict):
        return ["the JSON document is not an object"]
    if value.get("format") != REPORT_FORMAT:
        return [f'it has no "format": "{REPORT_FORMAT}" field']
    if value.get("schema") != REPORT_SCHEMA:
        return [
            f"its schema {value.get('schema')!r} is not {REPORT_SCHEMA}, the one this raglab reads"
        ]
    problems = list(_non_finite(value))
    if problems:
        return _counted(problems)
    errors = sorted(_validator().iter_errors(value), key=lambda e: [str(p) for p in e.path])
    problems = list(dict.fromkeys(p for e in errors for p in _schema_problems(e)))
    if problems:
        return _counted(problems)
    return _counted(invariants(value))


# --- the invariants --------------------------------------------------------------------------


def _unique(rows: Sequence[Mapping[str, Any]], where: str) -> list[str]:
    seen: set[str] = set()
    out = []
    for i, row in enumerate(rows):
        if row["id"] in seen:
            out.append(f"{where}[{i}].id: {row['id']!r} appears twice")
        seen.add(row["id"])
    return out


def _rate(rate: float, count: int, total: int) -> bool:
    """Whether ``rate`` is ``count / total`` (to rounding)."""
    return total > 0 and abs(rate - count / total) <= _EPS


def _settings(record: Mapping[str, Any]) -> list[str]:
    try:
        run_settings_from(record)
        data_settings_from(record)
    except ValueError as exc:
        return [f"settings: {exc}"]
    return []


def _splits(report: Mapping[str, Any]) -> list[str]:
    split = report["split"]
    out = []
    for section in ("settings", "chunking", "bm25", "rankers", "end_to_end"):
        if report[section]["split"] != split:
            out.append(
                f"{section}.split: {report[section]['split']!r} is not the report's split {split!r}"
            )
    return out


def _rankers(report: Mapping[str, Any]) -> list[str]:
    section, split = report["rankers"], report["split"]
    rows = section["questions"]
    out = _unique(rows, "rankers.questions")
    counts = report["data"]["counts"]
    for name, c in counts.items():
        if c["answerable"] + c["out_of_corpus"] != c["questions"]:
            out.append(
                f"data.counts.{name}: answerable {c['answerable']} + out_of_corpus "
                f"{c['out_of_corpus']} is not questions {c['questions']}"
            )
    answerable = sum(row["answerable"] for row in rows)
    if len(rows) != counts[split]["questions"]:
        out.append(
            f"rankers.questions: {len(rows)} rows, but data.counts.{split}.questions is "
            f"{counts[split]['questions']}"
        )
    for where, count in (
        ("rankers.answerable", section["answerable"]),
        (f"data.counts.{split}.answerable", counts[split]["answerable"]),
    ):
        if count != answerable:
            out.append(
                f"{where}: {count}, but {answerable} rows of rankers.questions are answerable"
            )
    names = set(section["table"])
    both = sorted(names & set(section["unavailable"]))
    if both:
        out.append(f"rankers.unavailable: {', '.join(both)} also measured in rankers.table")
    for i, row in enumerate(rows):
        if set(row["ranks"]) != names:
            out.append(
                f"rankers.questions[{i}].ranks: has {', '.join(sorted(row['ranks'])) or 'none'}, "
                f"not the rankers of rankers.table ({', '.join(sorted(names)) or 'none'})"
            )
        if not row["answerable"] and any(r is not None for r in row["ranks"].values()):
            out.append(f"rankers.questions[{i}].ranks: a question without an answer has no rank")
    return out


def _end_to_end(report: Mapping[str, Any]) -> list[str]:
    e2e = report["end_to_end"]
    if not e2e["supported"]:
        return []
    outcomes = e2e["outcomes"]
    out = _unique(outcomes, "end_to_end.outcomes")
    rows = {row["id"]: row for row in report["rankers"]["questions"]}
    for i, o in enumerate(outcomes):
        where = f"end_to_end.outcomes[{i}]"
        row = rows.get(o["id"])
        if row is None:
            out.append(f"{where}.id: {o['id']!r} is not a question of rankers.questions")
        elif row["answerable"] != o["answerable"]:
            out.append(
                f"{where}.answerable: {o['answerable']} here, {row['answerable']} in rankers"
            )
        if not o["answerable"] and o["outcome"] not in ("correct", "false answer"):
            out.append(
                f"{where}.outcome: {o['outcome']!r} for a question without an answer (it is "
                "correct or a false answer)"
            )
        if o["answerable"] and o["outcome"] == "false answer":
            out.append(f"{where}.outcome: a false answer needs a question without an answer")
    missing = sorted(set(rows) - {o["id"] for o in outcomes})
    if missing:
        out.append(f"end_to_end.outcomes: no outcome for {', '.join(missing)}")
    n = len(outcomes)
    kinds = [o["outcome"] for o in outcomes]
    answerable = sum(o["answerable"] for o in outcomes)
    expected = {
        "n": n,
        "correct": kinds.count("correct"),
        "answerable": answerable,
        "answerable_correct": sum(o["answerable"] and o["outcome"] == "correct" for o in outcomes),
        "unanswerable": n - answerable,
        "false_answers": kinds.count("false answer"),
        "declined": n - answerable - kinds.count("false answer"),
    }
    for key, value in expected.items():
        if e2e[key] != value:
            out.append(f"end_to_end.{key}: {e2e[key]}, but the outcomes give {value}")
    for key, count in e2e["funnel"].items():
        if count != kinds.count(key):
            out.append(
                f"end_to_end.funnel.{key}: {count}, but {kinds.count(key)} outcomes are {key!r}"
            )
    if not _rate(e2e["accuracy"], expected["correct"], n):
        out.append(f"end_to_end.accuracy: {e2e['accuracy']} is not correct / n of the outcomes")
    lo, hi = e2e["interval"]
    if not lo - _EPS <= e2e["accuracy"] <= hi + _EPS:
        out.append(f"end_to_end.interval: [{lo}, {hi}] does not hold the accuracy")
    return out


def _grids(report: Mapping[str, Any]) -> list[str]:
    out = []
    bm25 = report["bm25"]
    shape = (len(bm25["k1s"]), len(bm25["bs"]))
    if bm25["cells"] != shape[0] * shape[1]:
        out.append(f"bm25.cells: {bm25['cells']}, not {shape[0]} k1s x {shape[1]} bs")
    for key in ("train_recall", "train_hits"):
        if len(bm25[key]) != shape[0] or any(len(row) != shape[1] for row in bm25[key]):
            out.append(f"bm25.{key}: not {shape[0]} rows of {shape[1]} (bm25.k1s x bm25.bs)")
    if not out:
        n = bm25["train_questions"]
        for i, (rates, hits) in enumerate(
            zip(bm25["train_recall"], bm25["train_hits"], strict=True)
        ):
            for j, (rate, hit) in enumerate(zip(rates, hits, strict=True)):
                # No training question: no rate to hold to a count.
                if hit > n or (n and rate is not None and not _rate(rate, hit, n)):
                    out.append(f"bm25.train_recall[{i}][{j}]: {rate} is not {hit} hits of {n}")
    lsa = report["lsa"]
    for key in ("singular_values", "variance_share", "cumulative_share"):
        if len(lsa[key]) != lsa["rank"]:
            out.append(f"lsa.{key}: {len(lsa[key])} values for rank {lsa['rank']}")
    for i, row in enumerate(report["chunking"]["chunkers"]):
        if row["intact"] is not None and row["total"] is not None:
            if row["intact"] > row["total"]:
                out.append(f"chunking.chunkers[{i}].intact: {row['intact']} of {row['total']}")
            elif (
                row["total"]  # no answer to cut: the rate is 1 by convention
                and row["intact_rate"] is not None
                and not _rate(row["intact_rate"], row["intact"], row["total"])
            ):
                out.append(f"chunking.chunkers[{i}].intact_rate: not intact / total")
    return out


def invariants(report: Mapping[str, Any]) -> list[str]:
    """What a schema cannot say about a report that passed it (module docstring, step 4), each
    problem naming its field; empty when all hold."""
    return [
        *_settings(report["settings"]),
        *_splits(report),
        *_rankers(report),
        *_end_to_end(report),
        *_grids(report),
    ]


__all__ = [
    "MAX_REPORT_BYTES",
    "MAX_REPORT_DEPTH",
    "REPORT_FORMAT",
    "REPORT_SCHEMA",
    "SCHEMA_FILE",
    "field_name",
    "invariants",
    "nesting_problem",
    "report_schema",
    "schema_text",
    "size_problem",
    "validate_report",
]
