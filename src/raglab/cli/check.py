"""``raglab check``: the regression gate. Rebuild a report and compare it with a baseline.

The baseline is a JSON report (``raglab report --format json``). The current report is built with
the baseline's settings (settings it chose on the training split are chosen again), except those
given on the command line. The two are compared question by question on the question ids both
share (:func:`raglab.pipeline.gate.compare_reports`; the gate's rules live there, this face
only translates the flags and words the result): recall@5 of every ranker and of the run's
final list, and end-to-end correctness.

The baseline is read against the published schema of a report (``raglab report --schema``) and
the rules a schema cannot say (:mod:`raglab.pipeline.report_check`: counts that add up, ranks that
are positive integers or absent, outcomes from the known set); a baseline that breaks one is
refused, naming the field.

Exit status: 0 when no rate fell by more than its tolerance; 1 when recall or accuracy did (the
questions that got worse are named, and those that got better); 2 when the check cannot run (the
baseline is missing, is not JSON or is not a valid RAG lab report, a setting is refused, or the
data has problems), and when the gate skipped a check it could not make (a measure only the
current report has, a measure with no shared question, accuracy without an end-to-end run in
either report) unless ``--allow-skip`` is given. A skipped check is named on stdout and under
``skipped`` in ``--json``. No traceback is ever shown for these; with ``--json`` every outcome,
errors included, is one JSON object on stdout.

A pipeline is deterministic, so any question that changed did change; whether the change says the
new settings or data are worse *in general* is another matter, which is what the exact McNemar
p-value beside each verdict answers: the chance that two equally good runs split the changed
questions at least this unevenly.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from raglab.cli._common import (
    DATA_SETTINGS,
    add_lab_options,
    load_lab,
    print_json,
    problem_json,
    report_problems,
)
from raglab.cli.options import given_settings
from raglab.cli.run import add_run_options
from raglab.errors import InputError, Problem
from raglab.pipeline.gate import (
    DATA_PARTS,
    BaselineError,
    baseline_settings,
    blocker,
    compare_reports,
    ids_text,
    read_baseline,
    tolerance_problem,
)
from raglab.pipeline.report import build_report
from raglab.run_settings import RUN_SETTING_NAMES, RunSettings

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_CANNOT_CHECK = 2
#: Below this p-value the wording calls a change unlikely to be chance alone (wording only: the
#: exit status depends on the tolerances, never on the p-value).
SIGNIFICANCE = 0.05
#: Settings a flag may override (every pipeline and data setting, and the split); a flag left
#: out (NOT_GIVEN) keeps the baseline's value.
OVERRIDABLE = (*RUN_SETTING_NAMES, *DATA_SETTINGS, "split")


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "check",
        help="compare a fresh report with a baseline report; exit 1 when recall or accuracy fell",
        description="Rebuild the report with the baseline's settings (flags override them) and "
        "compare it with the baseline question by question: recall@5 of every ranker and of the "
        "run's final list, and end-to-end correctness. Exit 0 when nothing fell by more than the "
        "tolerance, 1 when something did, 2 when the check cannot run.",
    )
    parser.add_argument(
        "--baseline", required=True, metavar="REPORT.json", help="a JSON report to compare with"
    )
    parser.add_argument(
        "--tolerance-recall",
        type=float,
        default=0.0,
        metavar="FRACTION",
        help="how far any recall@5 may fall, as a fraction (default 0.0)",
    )
    parser.add_argument(
        "--tolerance-accuracy",
        type=float,
        default=0.0,
        metavar="FRACTION",
        help="how far the end-to-end accuracy may fall, as a fraction (default 0.0)",
    )
    parser.add_argument(
        "--accept-changed",
        action="append",
        default=[],
        choices=DATA_PARTS,
        metavar="{corpus,questions}",
        help="compare on the shared questions although the corpus pages (corpus) or the question "
        "set (questions) changed since the baseline; without it a change stops the gate (exit 2), "
        "saying what changed (repeatable)",
    )
    parser.add_argument(
        "--allow-skip",
        action="store_true",
        help="pass although the gate skipped a check it could not make (a measure only the "
        "current report has, one with no shared question, accuracy when neither report has an "
        "end-to-end run); without it a skipped check is exit 2. Skipped checks are named either "
        "way",
    )
    add_run_options(parser)
    add_lab_options(parser)
    parser.set_defaults(handler=run)


def _say(message: str) -> None:
    print(f"raglab check: {message}", file=sys.stderr)


def _cannot(
    args: argparse.Namespace,
    message: str,
    problems: tuple[Problem, ...] = (),
    comparison: Mapping[str, Any] | None = None,
) -> int:
    """Say on stderr why the check cannot run (and, with ``--json``, as one JSON object on
    stdout: the verdict "cannot check", exit 2 and the error); return exit status 2."""
    if problems:
        report_problems(problems, title=message)
    else:
        _say(message)
    if args.json:
        print_json(
            {
                "baseline": str(args.baseline),
                "exit": EXIT_CANNOT_CHECK,
                **(comparison or {}),
                "verdict": "cannot check",
                "error": {"message": message, "problems": [problem_json(p) for p in problems]},
            }
        )
    return EXIT_CANNOT_CHECK


def current_settings(
    record: Mapping[str, Any], args: argparse.Namespace
) -> tuple[RunSettings, str, dict[str, Any]]:
    """The baseline's settings with the flags given on the command line laid over them
    (:func:`raglab.pipeline.gate.baseline_settings`)."""
    return baseline_settings(record, given_settings(args, OVERRIDABLE))


# --- wording -----------------------------------------------------------------------------------


def _p(p: float) -> str:
    return f"{p:.3g}" if p >= 0.001 else f"{p:.1e}"


def chance(m: Mapping[str, Any]) -> str:
    """What the exact McNemar p-value of one measure says, in words."""
    t = m["mcnemar"]
    changed = t["only_baseline"] + t["only_current"]
    if changed == 0:
        return "no question changed, so there is nothing to test (McNemar p = 1)"
    split = f"{t['only_baseline']} worse against {t['only_current']} better"
    p = t["p_value"]
    share = f"{p:.0%}" if p >= 0.01 else "under 1%"
    if p < SIGNIFICANCE:
        return (
            f"exact McNemar p = {_p(p)} ({split}): two equally good runs would split the "
            f"{changed} changed questions at least this unevenly {share} of the time, so the "
            "change is unlikely to be chance alone"
        )
    return (
        f"exact McNemar p = {_p(p)} ({split}): two equally good runs would split the {changed} "
        f"changed questions at least this unevenly {share} of the time, so on these questions "
        "alone the change could be chance; it is a change to look at, not proof that one run "
        "is worse"
    )


def describe(comparison: Mapping[str, Any], baseline_file: str) -> list[str]:
    """The comparison in sentences: warnings first, then every measure, then the verdict."""
    lines = []
    fps = comparison["fingerprints"]
    lines.append(
        f"Baseline {baseline_file} (raglab {comparison['versions']['baseline']}, fingerprint "
        f"{str(fps['baseline'])[:12]}); current fingerprint {str(fps['current'])[:12]}."
    )
    qs = comparison["questions"]
    if not comparison["same_data"]:
        what = " and ".join(
            {"corpus": "the corpus pages", "questions": "the questions file"}[k]
            for k in comparison["data_changed"]
        )
        lines.append(
            f"warning: the baseline was made from different data ({what} changed; accepted with "
            f"--accept-changed), so it is not a like-for-like baseline; the comparison runs on "
            f"the {qs['shared']} question ids both reports share."
        )
    if qs["only_baseline"]:
        lines.append(
            f"warning: only in the baseline (not compared): {ids_text(qs['only_baseline'])}."
        )
    if qs["only_current"]:
        lines.append(
            f"note: new since the baseline (not compared): {ids_text(qs['only_current'])}."
        )
    changed = {
        k: v for k, v in comparison["settings_changed"].items() if k not in ("chosen_on_train",)
    }
    if changed:
        lines.append(
            "note: settings differ from the baseline's: "
            + "; ".join(f"{k} {v['baseline']} -> {v['current']}" for k, v in changed.items())
            + "."
        )
    versions = comparison["versions"]
    if versions["baseline"] != versions["current"]:
        lines.append(
            f"note: the baseline was made by raglab {versions['baseline']}, this is "
            f"{versions['current']}."
        )
    allowed = " (allowed by --allow-skip)" if comparison["allow_skip"] else ""
    for s in comparison["skipped"]:
        lines.append(f"skipped{allowed}: {s['measure']} not compared: {s['reason']}.")
    for s in comparison["lost"]:
        lines.append(f"{s['measure']}: measured in the baseline, not any more: {s['reason']}.")
    steady = []
    for m in comparison["measures"]:
        if m["n"] == 0:
            continue  # listed with the skipped checks
        if not m["worse"] and not m["better"]:
            steady.append(f"{m['measure']} {m['current']:.3f}")
            continue
        lines.append(
            f"{m['measure']}: {m['baseline']:.3f} -> {m['current']:.3f} ({m['change']:+.3f}) on "
            f"{m['n']} shared questions; worse: {ids_text(m['worse'])}; better: {ids_text(m['better'])}; "
            f"{chance(m)}."
        )
    if steady:
        lines.append("unchanged, question for question: " + ", ".join(steady) + ".")
    tol = comparison["tolerance"]
    if comparison["lost"]:
        lines.append(
            "FAIL: "
            + ", ".join(s["measure"] for s in comparison["lost"])
            + " could not be measured on the current run, as it was on the baseline."
        )
    if comparison["fell"]:
        tests = ", ".join(
            f"{m['measure']} p = {_p(m['mcnemar']['p_value'])}"
            for m in comparison["measures"]
            if m["fell"]
        )
        lines.append(
            f"FAIL: {', '.join(comparison['fell'])} fell by more than the tolerance "
            f"(recall {tol['recall']:g}, accuracy {tol['accuracy']:g}); exact McNemar on the "
            f"changed questions: {tests}. A p-value of {SIGNIFICANCE:g} or more means a change "
            "of that size is not rare between equally good runs."
        )
    skipped = ", ".join(s["measure"] for s in comparison["skipped"])
    if comparison["verdict"] == "incomplete":
        lines.append(
            f"INCOMPLETE: no rate fell, but the gate skipped {skipped}, which it could not "
            "check; it does not pass what it did not check (add --allow-skip to pass without "
            "them)."
        )
    if comparison["verdict"] == "pass":
        also = f"; skipped, as --allow-skip allows: {skipped}" if skipped else ""
        lines.append(
            f"PASS: no rate fell by more than the tolerance (recall {tol['recall']:g}, "
            f"accuracy {tol['accuracy']:g}){also}."
        )
    return lines


# --- the command -------------------------------------------------------------------------------


#: The exit status of each verdict of :func:`raglab.pipeline.gate.compare_reports`.
EXIT_OF = {"pass": EXIT_PASS, "fail": EXIT_FAIL, "incomplete": EXIT_CANNOT_CHECK}


def run(args: argparse.Namespace) -> int:
    for value, flag in (
        (args.tolerance_recall, "--tolerance-recall"),
        (args.tolerance_accuracy, "--tolerance-accuracy"),
    ):
        problem = tolerance_problem(value, flag)
        if problem:
            return _cannot(args, problem)
    try:
        baseline = read_baseline(args.baseline)
    except BaselineError as exc:
        return _cannot(args, str(exc))
    try:
        settings, split, data = current_settings(baseline["settings"], args)
    except ValueError as exc:
        return _cannot(
            args,
            f"the settings of the baseline {args.baseline} and the flags cannot be used: {exc}",
        )
    try:
        lab = load_lab(argparse.Namespace(**{**vars(args), **data}))
        current = build_report(lab, settings, split=split)
    except InputError as exc:
        return _cannot(args, "The input has problems", exc.problems)
    except ValueError as exc:
        return _cannot(args, str(exc))
    comparison = compare_reports(
        baseline,
        current,
        tolerance_recall=args.tolerance_recall,
        tolerance_accuracy=args.tolerance_accuracy,
        allow_skip=args.allow_skip,
    )
    cause = blocker(comparison, baseline, current, args.accept_changed)
    if cause is not None:
        return _cannot(args, f"cannot check against {args.baseline}: {cause}", (), comparison)
    status = EXIT_OF[comparison["verdict"]]
    lines = describe(comparison, str(args.baseline))
    if args.json:
        print_json({"baseline": str(args.baseline), "exit": status, **comparison, "lines": lines})
        return status
    for line in lines:
        print(line)
    return status
