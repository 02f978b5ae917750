"""``raglab``: parse arguments, dispatch to a command, turn input problems into exit status 1."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from raglab.cli import (
    bm25,
    check,
    chunk,
    fuse,
    importing,
    lsa,
    report,
    rerank,
    run,
    serve,
    trec,
    validate,
)
from raglab.cli._common import EXIT_BAD_INPUT, EXIT_USAGE, report_problems
from raglab.errors import InputError

COMMANDS = (serve, validate, chunk, bm25, lsa, fuse, rerank, run, report, check, trec, importing)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="raglab",
        description="Take retrieval apart and measure every step, on the bundled handbook or your own documents.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in COMMANDS:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except InputError as exc:
        report_problems(exc.problems, title="The input has problems")
        return EXIT_BAD_INPUT
    except ValueError as exc:
        # A setting the library refuses (an overlap as large as the size, a budget of 0, ...).
        print(f"raglab {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
