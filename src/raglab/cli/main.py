"""``raglab``: parse arguments, dispatch to a command, turn input problems into exit status 1."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from importlib import import_module
from typing import Any, NoReturn, TextIO

from raglab.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    exit_codes_text,
    print_error_json,
    report_problems,
)
from raglab.errors import InputError, OutputError, RaglabWarning

# Each command and the module of raglab.cli that registers it, in the order of ``raglab --help``.
COMMANDS = {
    "serve": "serve",
    "site": "site",
    "label": "label",
    "validate": "validate",
    "show": "show",
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


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors are also a JSON error object on stdout when the
    command line asks for ``--json``."""

    json_errors = False

    def error(self, message: str) -> NoReturn:
        if _Parser.json_errors:
            self.print_usage(sys.stderr)
            print(f"{self.prog}: error: {message}", file=sys.stderr)
            print_error_json(message)
            raise SystemExit(EXIT_USAGE)
        super().error(message)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or with ``only`` (a command's name) that command alone.

    Each command's module is imported only to register it, so a run of one command does not
    load the others' dependencies (the report renderers, the importers): ``raglab serve`` starts
    that much sooner.
    """
    parser = _Parser(
        prog="raglab",
        description="Take retrieval apart and measure every step, on the bundled handbook or your own documents.",
        epilog=exit_codes_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"raglab {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, module in COMMANDS.items():
        if only is None or name == only:
            import_module(f"raglab.cli.{module}").register(sub)
    return parser


def version() -> str:
    """The installed package's version (or the source tree's, when it is not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("raglab")
    except PackageNotFoundError:
        return "0.1.0 (not installed)"


@contextmanager
def plain_warnings() -> Iterator[None]:
    """Show each :class:`~raglab.errors.RaglabWarning` as one line on stderr, ``raglab:
    MESSAGE``, while the block runs (a user reads what happened, not Python's file, line and
    source line); other warnings are shown as Python shows them."""
    with warnings.catch_warnings():  # puts back showwarning (and the filters) afterwards
        shown = warnings.showwarning

        def show(
            message: Warning | str,
            category: type[Warning],
            filename: str,
            lineno: int,
            file: TextIO | None = None,
            line: str | None = None,
        ) -> None:
            if not issubclass(category, RaglabWarning):
                shown(message, category, filename, lineno, file, line)
                return
            out: Any = sys.stderr if file is None else file
            with suppress(OSError):  # stderr closed: a warning is not worth failing over
                out.write(f"raglab: {message}\n")

        warnings.showwarning = show
        yield


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    # A known command registers alone; anything else (no command, --help, a typo) gets the
    # whole parser, so the usage and error messages list every command.
    parser = build_parser(words[0] if words and words[0] in COMMANDS else None)
    _Parser.json_errors = "--json" in words
    try:
        args = parser.parse_args(words)
    finally:
        _Parser.json_errors = False
    as_json = bool(getattr(args, "json", False))
    try:
        with plain_warnings():
            return int(args.handler(args))
    except OutputError as exc:
        for problem in exc.problems:  # one line each, naming the user's path
            print(f"raglab {args.command}: {problem}", file=sys.stderr)
        if as_json:
            print_error_json("cannot write the output", exc.problems)
        return EXIT_BAD_INPUT
    except InputError as exc:
        report_problems(exc.problems, title="The input has problems")
        if as_json:
            print_error_json("the input has problems", exc.problems)
        return EXIT_BAD_INPUT
    except ValueError as exc:
        # A setting the library refuses (an overlap as large as the size, a budget of 0, ...).
        print(f"raglab {args.command}: {exc}", file=sys.stderr)
        if as_json:
            print_error_json(str(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
