"""The gate: two reports compared question by question (``raglab check``).

One job: :func:`compare_reports` lays a current report beside a baseline on the questions both
share and says, measure by measure (recall@RECALL_K of every ranker and of the run's final list,
end-to-end accuracy), whether the current one fell further than its tolerance, with the exact
McNemar test of the change. :data:`RECALL_K` (5, the exhibits' headline recall@5) is the depth at
which the gate compares rankers. Around the comparison, the gate's other rules: which baseline
can be used (:func:`read_baseline`), the settings a check rebuilds the report with
(:func:`baseline_settings`), and when no verdict can be given (:func:`blocker`: no shared
question, or a change of data not accepted). A face only translates its arguments and words the
result.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from raglab.corpus.questions import SPLITS
from raglab.metrics.stats import mcnemar_exact
from raglab.pipeline.record import data_settings_from, run_settings_from
from raglab.pipeline.report_check import (
    MAX_REPORT_BYTES,
    nesting_problem,
    size_problem,
    validate_report,
)
from raglab.run_settings import RunSettings
from raglab.settings import RETRIEVERS

#: The recall depth of the gate: a question counts as found by a ranker when its first relevant
#: chunk is in the first RECALL_K (the exhibits' headline recall@5).
RECALL_K = 5
#: The rankers of section IV, in the order the gate lists them: every retriever of the lab.
RANKERS = RETRIEVERS
#: The gate also compares the run's final list (after reranking and MMR) under this name.
FINAL_LIST = "final"
# Floats closer than this count as equal when the gate compares two rates (rounding only).
_EPS = 1e-9


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


def _missing_reason(report: Mapping[str, Any], measure: str) -> str | None:
    """Why ``report`` has no ``measure``: a ranker it could not run (the neural model not
    installed), else why its end-to-end run is missing."""
    ranker = measure.removeprefix(f"recall@{RECALL_K} ")
    why = report["rankers"].get("unavailable", {}).get(ranker)
    return str(why) if why else report["end_to_end"].get("reason")


def _question_ids(report: Mapping[str, Any]) -> list[str]:
    return [str(r["id"]) for r in report["rankers"]["questions"]]


def compare_reports(
    baseline: Mapping[str, Any],
    current: Mapping[str, Any],
    *,
    tolerance_recall: float = 0.0,
    tolerance_accuracy: float = 0.0,
    allow_skip: bool = False,
) -> dict[str, Any]:
    """Compare two reports question by question, on the question ids both share.

    Measures: recall@RECALL_K of each ranker of section IV and of the run's final list (a
    question is right when its first relevant chunk ranks within RECALL_K), and end-to-end
    correctness. For each: the rate in both reports over the shared questions, the questions that
    got worse and better, and the exact McNemar test (:func:`raglab.metrics.stats.mcnemar_exact`, baseline
    as ``a``, current as ``b``). A measure *fell* when its rate dropped by more than its tolerance
    (``tolerance_recall`` for recall, ``tolerance_accuracy`` for accuracy, both in [0, 1]);
    A measure only the baseline has (the current report could not make its run) is *lost*:
    listed under ``lost`` with the current report's reason, and it fails the gate too, since a
    pipeline that stopped answering has not held its ground.

    A check the gate cannot make is *skipped*, listed under ``skipped`` with its reason: a
    measure only the current report has, a measure with no shared question to compare on, and
    end-to-end accuracy when neither report has a run (questions labelled by pages). A gate
    that skipped a check has not vouched for it, so it does not pass unless ``allow_skip``.

    ``verdict``: "fail" when any measure fell or was lost; else "incomplete" when a check was
    skipped and ``allow_skip`` is False; else "pass". Differences of data (digests) and of
    settings are returned for the caller to warn about; they never stop the comparison.
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
            reason = _missing_reason(current, name) or "the current report lacks it"
            lost.append({"measure": name, "reason": str(reason)})
            continue
        if name not in base_hits:
            reason = _missing_reason(baseline, name) or "the baseline lacks it"
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
        if n == 0:
            skipped.append({"measure": name, "reason": "no shared question to compare it on"})
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
    if "accuracy" not in base_hits and "accuracy" not in cur_hits:
        why = _missing_reason(current, "accuracy") or _missing_reason(baseline, "accuracy")
        skipped.append(
            {"measure": "accuracy", "reason": f"neither report has an end-to-end run: {why}"}
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
        "verdict": _verdict(measures, lost, skipped, allow_skip),
        "allow_skip": allow_skip,
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


def _verdict(
    measures: Sequence[Mapping[str, Any]],
    lost: Sequence[object],
    skipped: Sequence[object],
    allow_skip: bool,
) -> str:
    if lost or any(m["fell"] for m in measures):
        return "fail"
    return "incomplete" if skipped and not allow_skip else "pass"


__all__ = ["FINAL_LIST", "RANKERS", "RECALL_K", "compare_reports"]


class BaselineError(Exception):
    """The baseline file cannot be used; the message names the file and says why."""


#: The parts of the data a baseline is fingerprinted on, which ``--accept-changed`` names.
DATA_PARTS = ("corpus", "questions")


def data_changes(
    comparison: Mapping[str, Any], baseline: Mapping[str, Any], current: Mapping[str, Any]
) -> dict[str, str]:
    """What changed since the baseline, by part (:data:`DATA_PARTS`), in words: a corpus with
    another digest; questions added, removed or edited (the questions file's digest)."""
    qs = comparison["questions"]
    digests = [r.get("data", {}).get("sha256", {}) for r in (baseline, current)]
    out: dict[str, str] = {}
    if "corpus" in comparison["data_changed"]:
        a, b = (str(d.get("corpus"))[:12] for d in digests)
        out["corpus"] = f"the corpus pages changed (digest {a} -> {b})"
    removed, added = qs["only_baseline"], qs["only_current"]
    if removed or added or "questions" in comparison["data_changed"]:
        parts = []
        if removed:
            parts.append(f"{len(removed)} only in the baseline ({ids_text(removed)})")
        if added:
            parts.append(f"{len(added)} new ({ids_text(added)})")
        if not parts:
            parts.append("the same ids, edited")
        out["questions"] = "the questions changed: " + ", ".join(parts)
    return out


def blocker(
    comparison: Mapping[str, Any],
    baseline: Mapping[str, Any],
    current: Mapping[str, Any],
    accepted: Sequence[str],
) -> str | None:
    """Why the gate cannot give a verdict, or None: no shared question (nothing compared), or
    a change of data the user did not accept with ``--accept-changed``."""
    qs = comparison["questions"]
    if qs["shared"] == 0:
        return (
            f"the baseline shares no question with the current data ({len(qs['only_baseline'])} "
            f"in the baseline, {len(qs['only_current'])} now): there is nothing to compare; "
            "was the baseline made from other questions or another split?"
        )
    changes = data_changes(comparison, baseline, current)
    refused = [k for k in DATA_PARTS if k in changes and k not in accepted]
    if refused:
        return (
            "the baseline was made from different data: "
            + "; ".join(changes[k] for k in refused)
            + ". Rebuild the baseline, or compare on the shared questions anyway with "
            + " ".join(f"--accept-changed {k}" for k in refused)
        )
    return None


def tolerance_problem(value: float, flag: str) -> str | None:
    """What is wrong with a tolerance (a fraction in [0, 1]) given as ``flag``, or None."""
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        return f"{flag} must be a fraction in [0, 1], not {value}"
    return None


def ids_text(ids: Sequence[str]) -> str:
    """Question ids as one phrase ("none" for no id)."""
    return ", ".join(ids) if ids else "none"


def read_baseline(path: str | Path) -> dict[str, Any]:
    """The baseline report at ``path``, checked against the published schema and the invariants
    (:func:`raglab.pipeline.report_check.validate_report`); :class:`BaselineError` naming the file
    and the fields at fault otherwise. At most MAX_REPORT_BYTES are read, and a document nested
    deeper than MAX_REPORT_DEPTH is refused before it is parsed."""
    file = Path(path)
    what = f"the baseline {file} is not a RAG lab report"
    try:
        with file.open("rb") as stream:
            raw = stream.read(MAX_REPORT_BYTES + 1)
    except OSError as exc:
        raise BaselineError(f"cannot read the baseline {file}: {exc.strerror or exc}") from None
    problem = size_problem(len(raw))
    if problem:
        raise BaselineError(f"{what}: {problem}")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise BaselineError(f"{what}: not UTF-8 text") from None
    problem = nesting_problem(text)
    if problem:
        raise BaselineError(f"{what}: {problem}")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(
            f"{what}: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    problems = validate_report(value)
    if problems:
        raise BaselineError(
            f"{what} JSON (made by 'raglab report --format json'; 'raglab report --schema' prints "
            f"its schema): {'; '.join(problems)}"
        )
    assert isinstance(value, dict)
    return value


def baseline_settings(
    record: Mapping[str, Any], given: Mapping[str, Any]
) -> tuple[RunSettings, str, dict[str, Any]]:
    """The baseline's settings (``record``) with the ``given`` ones laid over them (a face's
    flags, by setting name; those left out absent): the run settings, the split and the data
    settings (analyzer, stem, windows).

    Choosing another chunker drops the baseline's size and overlap (they belong to its chunker).
    Giving a setting the baseline chose on train (``--weight``, ``--mmr-lambda``,
    ``--threshold``) fixes it; ``--no-rerank`` without ``--mmr`` turns MMR off too. Raises
    ValueError naming the setting at fault.
    """
    merged = dict(record)
    chosen = list(merged.get("chosen_on_train", []))
    given = dict(given)
    if "chunker" in given and given["chunker"] != merged.get("chunker"):
        merged["size"] = None
        merged["overlap"] = None
    if given.get("rerank") is False and "mmr" not in given:
        given["mmr"] = False
    merged.update(given)
    merged["chosen_on_train"] = [c for c in chosen if c not in given]
    settings = run_settings_from(merged)
    split = merged.get("split")
    if split not in SPLITS:
        raise ValueError(f"setting 'split' must be one of {', '.join(SPLITS)}, not {split!r}")
    return settings, str(split), data_settings_from(merged)
