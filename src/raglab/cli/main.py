"""``raglab``: parse arguments, dispatch to a command, turn input problems into exit status 1."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import import_module

from raglab.cli._common import EXIT_BAD_INPUT, EXIT_USAGE, report_problems
from raglab.errors import InputError

# Each command and the module of raglab.cli that registers it, in the order of ``raglab --help``.
COMMANDS = {
    "serve": "serve",
    "validate": "validate",
    "chunk": "chunk",
    "bm25": "bm25",
    "lsa": "lsa",
    "fuse": "fuse",
    "rerank": "rerank",
    "run": "run",
    "report": "report",
    "check": "check",
    "trec": "trec",
    "import": "importing",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or with ``only`` (a command's name) that command alone.

    Each command's module is imported only to register it, so a run of one command does not
    load the others' dependencies (the report renderers, the importers): ``raglab serve`` starts
    that much sooner.
    """
    parser = argparse.ArgumentParser(
        prog="raglab",
        description="Take retrieval apart and measure every step, on the bundled handbook or your own documents.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, module in COMMANDS.items():
        if only is None or name == only:
            import_module(f"raglab.cli.{module}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    # A known command registers alone; anything else (no command, --help, a typo) gets the
    # whole parser, so the usage and error messages list every command.
    parser = build_parser(words[0] if words and words[0] in COMMANDS else None)
    args = parser.parse_args(words)
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
