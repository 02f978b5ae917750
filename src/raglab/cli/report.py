"""``raglab report``: every exhibit's tables for one run, written as Markdown, HTML or JSON.

The JSON report is what ``raglab check --baseline`` reads back. The file is written atomically
(a half-written report never replaces a good one) and an existing file is left untouched unless
``--force`` is given. ``--quiet`` prints nothing when all goes well; ``--json`` prints where the
report went and its headline numbers as JSON. Exit status: 0 written; 1 the file exists (without ``--force``), cannot be
written, or the input has problems; 2 a setting the pipeline refuses.

``--schema`` prints the published JSON Schema (draft 2020-12) of the JSON report instead, and
writes nothing: the layout ``raglab check`` reads a baseline against
(:mod:`raglab.pipeline.report_check`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from raglab.base.files import atomic_write_text
from raglab.cli._cluster import add_cluster_options, cluster_lab
from raglab.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    EXIT_USAGE,
    add_lab_options,
    console,
    print_error_json,
    print_json,
    report_problems,
)
from raglab.cli.run import add_run_options, settings_from, split_from
from raglab.errors import InputError
from raglab.pipeline.gate import RECALL_K
from raglab.pipeline.report import build_report, headline
from raglab.pipeline.report_check import schema_text
from raglab.pipeline.report_sections import lab_key
from raglab.report.html import render_html
from raglab.report.markdown import render_markdown
from raglab.report.model import RANKER_NAMES
from raglab.run_settings import RetrievalSettings

FORMATS = ("md", "html", "json")
# File suffixes that name a format when --format is not given.
SUFFIXES = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".json": "json"}


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "report",
        help="write every exhibit's tables for one run as Markdown, HTML or JSON",
        description="Build every exhibit's tables for the data and pipeline settings given and "
        "write them to one file: Markdown, a self-contained HTML page with charts, or JSON (the "
        "baseline that 'raglab check' compares against). An existing file is never replaced "
        "without --force.",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        help="md, html or json (default: from the --out file's suffix)",
    )
    parser.add_argument("--out", metavar="FILE", help="where to write the report (required)")
    parser.add_argument(
        "--schema",
        action="store_true",
        help="print the JSON Schema of the JSON report (what 'raglab check' reads a baseline "
        "against) and exit; nothing is built or written",
    )
    parser.add_argument("--force", action="store_true", help="replace FILE if it exists")
    add_run_options(parser)
    add_lab_options(parser)
    add_cluster_options(parser)
    parser.set_defaults(handler=run)


def _fail(args: argparse.Namespace, message: str, status: int = EXIT_BAD_INPUT) -> int:
    """Say ``message`` on stderr (and, with ``--json``, as the error object on stdout)."""
    print(f"raglab report: {message}", file=sys.stderr)
    if getattr(args, "json", False):
        print_error_json(message)
    return status


def render(report: dict[str, Any], fmt: str) -> str:
    """The report in one of :data:`FORMATS`."""
    if fmt == "md":
        return render_markdown(report)
    if fmt == "html":
        return render_html(report)
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def run(args: argparse.Namespace) -> int:
    if args.schema:
        sys.stdout.write(schema_text())
        return EXIT_OK
    if args.out is None:
        return _fail(args, "the following arguments are required: --out (or --schema)", EXIT_USAGE)
    out = Path(args.out)
    if out.is_dir():
        return _fail(args, f"{out} is a folder; give a file name with --out")
    fmt = args.format or SUFFIXES.get(out.suffix.lower())
    if fmt is None:
        return _fail(
            args,
            f"cannot tell the format from {str(out)!r}: give --format md, html or json",
            EXIT_USAGE,
        )
    # Checked before any work, and again by the write itself (which never replaces a file
    # without --force, even one created meanwhile).
    if not out.parent.is_dir():
        return _fail(args, f"cannot write {out}: the folder {out.parent} does not exist")
    if out.exists() and not args.force:
        return _fail(
            args, f"{out} already exists and was left untouched; add --force to replace it"
        )
    try:
        settings = settings_from(args)
        # With --workers or --scheduler, the BM25 rankings of the run and of the rankers'
        # table, and exhibit II's grid, come from the cluster.
        table = RetrievalSettings(chunking=settings.chunking)
        first = settings.retrieval
        with cluster_lab(
            args,
            [first, table],
            rerank=first if settings.rerank else None,
            grid=lab_key(settings.chunking),
            run=(settings, split_from(args)),
        ) as lab:
            report = build_report(lab, settings, split=split_from(args))
    except InputError as exc:
        report_problems(exc.problems, title="The input has problems")
        if args.json:
            print_error_json("the input has problems", exc.problems)
        return EXIT_BAD_INPUT
    except ValueError as exc:
        return _fail(args, str(exc), EXIT_USAGE)
    text = render(report, fmt)
    try:
        atomic_write_text(out, text, overwrite=args.force)
    except FileExistsError:
        return _fail(
            args, f"{out} already exists and was left untouched; add --force to replace it"
        )
    top = headline(report)
    if args.json:
        print_json({"out": str(out), "format": fmt, "bytes": len(text.encode()), **top})
        return EXIT_OK
    if args.quiet:
        return EXIT_OK
    con = console()
    con.print(f"Wrote {out} ({fmt}, {len(text.encode()):,} bytes)", markup=False)
    if top["accuracy"] is not None:
        lo, hi = top["interval"]
        con.print(
            f"Accuracy {top['correct']}/{top['n']} = {top['accuracy']:.3f} "
            f"(95% Wilson interval {lo:.3f} to {hi:.3f}), bound {top['bound']:.3f} "
            f"on the {top['split']} split",
            markup=False,
        )
    else:
        con.print(f"No end-to-end run: {report['end_to_end']['reason']}", markup=False)
    con.print(
        f"Recall@{RECALL_K}: "
        + ", ".join(f"{RANKER_NAMES.get(k, k)} {v:.3f}" for k, v in top["recall"].items()),
        markup=False,
    )
    con.print(f"Fingerprint {top['fingerprint']}", markup=False)
    return EXIT_OK
