"""What every command shares: data options, loading with clear errors, output."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from raglab.cli.options import add_setting_options, given_settings
from raglab.corpus.pages import Corpus, corpus_folder, load_corpus
from raglab.corpus.questions import QuestionSet, load_questions
from raglab.errors import InputError, Problem
from raglab.formats.progress import progress
from raglab.labels import RETRIEVER_LABELS
from raglab.pipeline.lab import Lab, no_questions
from raglab.settings import settings_in

if TYPE_CHECKING:
    from rich.console import Console

EXIT_OK = 0
EXIT_BAD_INPUT = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

#: What each exit status means, on every command (``raglab --help`` prints this table).
EXIT_CODES = {
    EXIT_OK: "done (for check: the gate passed)",
    EXIT_BAD_INPUT: "the data or an output path cannot be used (each problem named with its "
    "file, line and field); for validate --strict, a warning; for check, the gate failed",
    EXIT_USAGE: "an option or setting is not allowed, or asks for something the data does not "
    "have (an unknown word or question id), or a Dask cluster cannot start; for check, a "
    "report is not valid against `raglab report --schema`, or a check was skipped without "
    "--allow-skip",
    EXIT_INTERRUPTED: "interrupted (Ctrl+C)",
}


def exit_codes_text(width: int = 79) -> str:
    """:data:`EXIT_CODES` as the lines of a help epilog, wrapped to ``width`` columns."""
    import textwrap

    lines = ["exit status:"]
    for code, text in EXIT_CODES.items():
        lines += textwrap.wrap(
            text, width, initial_indent=f"  {code:<5}", subsequent_indent=" " * 7
        )
    return "\n".join(lines)


def problem_json(problem: Problem) -> dict[str, Any]:
    """One problem as JSON: message, file, line, field and item (None where unknown)."""
    return {
        "message": problem.message,
        "file": problem.file,
        "line": problem.line,
        "field": problem.field,
        "item": problem.item,
    }


def print_error_json(message: str, problems: tuple[Problem, ...] = ()) -> None:
    """The error object a command prints on stdout with ``--json`` in place of its result:
    ``{"error": {"message": ..., "problems": [...]}}``, so a script reads the cause as data."""
    print_json({"error": {"message": message, "problems": [problem_json(p) for p in problems]}})


def add_data_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("data (default: the bundled Ostler Instruments handbook)")
    group.add_argument(
        "--corpus",
        metavar="DIR",
        help="folder of *.md / *.txt pages (and .html, .pdf, .docx with raglab[formats])",
    )
    group.add_argument(
        "--questions",
        metavar="FILE",
        help="labelled questions, JSON Lines (with --corpus: optional; without, the measures "
        "that need labels are refused)",
    )
    group.add_argument(
        "--encoding",
        metavar="CODEC",
        help="read every page in this encoding (cp1252, latin-1, utf-16, ...); by default a page "
        "that is not UTF-8 is read in the encoding detected, with a warning",
    )


@dataclass
class Data:
    corpus: Corpus
    questions: QuestionSet


def console(*, stderr: bool = False) -> Console:
    # rich is imported on first use: ``raglab serve`` prints plain lines and starts sooner
    # without it.
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def report_problems(problems: tuple[Problem, ...], *, title: str) -> None:
    err = console(stderr=True)
    err.print(f"[bold red]{title}[/] ({len(problems)})")
    for problem in problems:
        err.print(f"  {problem}", markup=False)


def print_corpus_warnings(corpus: Corpus) -> None:
    """Each of the corpus's warnings (a page read in a detected encoding, a file skipped, an
    empty page, keys kept as metadata) as one line on stderr, ``raglab: FILE:LINE: MESSAGE``,
    as a :class:`~raglab.errors.RaglabWarning` is shown: every command that reads the corpus
    says what it made of it (``validate`` lists them in its own summary)."""
    for warning in corpus.warnings:
        with contextlib.suppress(OSError):  # stderr closed: a warning is not worth failing over
            sys.stderr.write(f"raglab: {warning}\n")


def load_data(args: argparse.Namespace) -> Data:
    """Load corpus and questions, or raise InputError with every problem found. A corpus given
    without questions is read alone: its question set is empty (:func:`no_questions`)."""
    corpus = load_data_corpus(args)
    if args.corpus and not args.questions:
        return Data(corpus, no_questions())
    return Data(corpus, load_questions(args.questions, corpus=corpus))


def data_corpus_folder(args: argparse.Namespace) -> Path:
    """The corpus folder the data options name (:func:`raglab.corpus.pages.corpus_folder`),
    or InputError: questions without their corpus, a corpus that is not a folder."""
    if args.questions and not args.corpus:
        # Questions without their corpus would be checked against the bundled handbook.
        raise InputError(
            [
                Problem(
                    args.questions, "--questions needs --corpus (the pages its answers come from)"
                )
            ]
        )
    return corpus_folder(args.corpus, getattr(args, "encoding", None))


def load_data_corpus(args: argparse.Namespace) -> Corpus:
    """:func:`load_data`'s corpus (its options checked first), or InputError."""
    data_corpus_folder(args)
    quiet = bool(getattr(args, "quiet", False) or getattr(args, "json", False))
    return load_corpus(
        args.corpus,
        progress=lambda files: progress(files, description="Reading pages", quiet=quiet),
        encoding=getattr(args, "encoding", None),
        # validate --strict refuses front-matter keys RAG lab does not use, as it once always did.
        strict=bool(getattr(args, "strict", False)),
    )


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")


#: The settings fixed when a lab is built (how text becomes tokens, the LSA windows).
DATA_SETTINGS = tuple(s.name for s in settings_in("data"))


def add_lab_options(parser: argparse.ArgumentParser) -> None:
    """Data, tokenisation and output options shared by every command that builds a lab."""
    add_data_options(parser)
    add_setting_options(parser.add_argument_group("tokens and the embedding"), DATA_SETTINGS)
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


#: Makes the lab of :func:`load_lab` from the data and the data settings: :class:`Lab` itself.
#: The test suite, which runs a hundred commands in-process on the same few data sets, puts a
#: maker there that hands each command a new lab reusing the indexes built for an earlier one.
lab_maker: Callable[..., Lab] = Lab


def load_lab(args: argparse.Namespace) -> Lab:
    """The lab for the command's data options, its indexes built behind a progress bar.

    InputError names every problem in the data.
    """
    data = load_data(args)
    print_corpus_warnings(data.corpus)
    lab = lab_maker(data.corpus, data.questions, **given_settings(args, DATA_SETTINGS))
    quiet = bool(getattr(args, "quiet", False) or getattr(args, "json", False))
    steps: list[Callable[[], object]] = [
        lambda: lab.indexes.chunk_set(),
        lambda: lab.indexes.chunk_set().bm25,
        lambda: lab.indexes.lsa,
        lambda: lab.indexes.chunk_set().lsa_unit_projections,
    ]
    for step in progress(steps, description="Chunking and indexing", quiet=quiet):
        step()
    return lab


def retriever_label(name: str) -> str:
    """A retriever's display name (:data:`raglab.settings.RETRIEVER_LABELS`)."""
    return RETRIEVER_LABELS.get(name, name)


def fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
