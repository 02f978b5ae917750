"""Reading a saved report: its format marker, its schema, and what keeps it from the gate.

One job: say whether a JSON document is a RAG lab report the gate (:mod:`raglab.pipeline.gate`)
can compare (:func:`validate_report`); :data:`REPORT_FORMAT` and :data:`REPORT_SCHEMA` are the
marks :func:`raglab.pipeline.report.build_report` writes.
"""

from __future__ import annotations

from typing import Any

#: Marks a JSON document as a RAG lab report; ``schema`` changes when the layout does.
REPORT_FORMAT = "raglab-report"
REPORT_SCHEMA = 1


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


__all__ = ["REPORT_FORMAT", "REPORT_SCHEMA", "validate_report"]
