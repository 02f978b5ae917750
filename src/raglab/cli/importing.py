"""``raglab import``: bring a BEIR or Glasgow collection into RAG lab's pages-and-questions format."""

from __future__ import annotations

import argparse
import shlex
import time
from typing import Any

from rich.markup import escape

from raglab.cli._cluster import add_cluster_options, connect_options, uses_cluster
from raglab.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    console,
    print_json,
    report_problems,
)
from raglab.corpus.questions import SPLITS
from raglab.errors import InputError, OutputError
from raglab.formats.beir import import_beir
from raglab.formats.collection import TEST_FRACTION, ImportSummary
from raglab.formats.glasgow import (
    CRANFIELD_GRADE_MAP,
    DEFAULT_PAGE_FIELDS,
    PAGE_FIELDS,
    check_page_fields,
    import_glasgow,
)
from raglab.settings import SEED


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must lie in [0, 1], not {text}")
    return value


def parse_grade_map(text: str) -> dict[int, int]:
    """``"1=4,2=3,-1=0"`` -> ``{1: 4, 2: 3, -1: 0}``."""
    grade_map: dict[int, int] = {}
    for part in text.split(","):
        raw, sep, relevance = part.partition("=")
        try:
            if not sep:
                raise ValueError
            grade_map[int(raw)] = int(relevance)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected RAW=RELEVANCE pairs separated by commas, e.g. 1=4,2=3; got {part!r}"
            ) from None
    return grade_map


def parse_fields(text: str) -> tuple[str, ...]:
    """``"T,W,.A"`` -> ``("T", "W", "A")``: field letters, a leading dot optional."""
    fields = tuple(part.strip().removeprefix(".").upper() for part in text.split(","))
    try:
        check_page_fields(fields)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected some of {','.join(PAGE_FIELDS)}, each once, separated by commas; "
            f"got {text!r}"
        ) from None
    return fields


def _default_grade_map() -> str:
    return ",".join(f"{raw}={rel}" for raw, rel in CRANFIELD_GRADE_MAP.items())


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="output folder (pages/ and questions.jsonl)"
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help=f"seed of the random train/test split (default {SEED})",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="write into a non-empty output folder, replacing its pages/ and questions.jsonl",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "import",
        help="bring a BEIR or Glasgow (Cranfield) collection into RAG lab's format",
        description="Convert a standard test collection into a folder of pages and a questions "
        "file labelled with relevant pages. Nothing is written when the input has a problem; every "
        "problem is listed with its file, line and field.",
    )
    formats = parser.add_subparsers(dest="format", metavar="FORMAT")
    formats.required = True

    beir = formats.add_parser(
        "beir",
        help="a BEIR folder: corpus.jsonl, queries.jsonl, qrels/*.tsv",
        description="Import a BEIR folder. The split comes from the qrels file names (train.tsv, "
        "dev.tsv -> train; test.tsv -> test); with a single qrels file, a seeded random split.",
    )
    beir.add_argument("folder", metavar="FOLDER", help="the BEIR folder")
    _add_common(beir)
    split = beir.add_mutually_exclusive_group()
    split.add_argument("--split", choices=SPLITS, help="put every question in this split")
    split.add_argument(
        "--test-fraction",
        type=_fraction,
        default=None,
        metavar="F",
        help=f"share of questions in a random test split (default {TEST_FRACTION})",
    )
    beir.add_argument(
        "--qrels", metavar="FILE", help="read only this qrels file (a path or a name in qrels/)"
    )
    add_cluster_options(beir, "read and check corpus.jsonl", "reading corpus.jsonl")
    beir.set_defaults(handler=run)

    glasgow = formats.add_parser(
        "glasgow",
        help="a Glasgow collection (.I/.T/.A/.B/.W/.K records), such as Cranfield or CACM",
        description="Import a Glasgow-format collection: documents, queries and qrels files. "
        "Records with no field (CACM's final '.I 0') are skipped with a note; control "
        "characters are replaced by a space with a warning naming document, line and column.",
    )
    glasgow.add_argument("--docs", required=True, metavar="FILE", help="the documents file")
    glasgow.add_argument("--queries", required=True, metavar="FILE", help="the queries file")
    glasgow.add_argument(
        "--qrels", required=True, metavar="FILE", help="query document grade, or query document 0 0"
    )
    _add_common(glasgow)
    glasgow.add_argument(
        "--test-fraction",
        type=_fraction,
        default=None,
        metavar="F",
        help=f"share of questions in the random test split (default {TEST_FRACTION})",
    )
    glasgow.add_argument(
        "--queries-by-position",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the qrels number queries by their position in the queries file, as Cranfield's "
        "do (default); --no-queries-by-position reads them as .I numbers",
    )
    glasgow.add_argument(
        "--grade-map",
        type=parse_grade_map,
        default=None,
        metavar="MAP",
        help="raw grade to relevance, RAW=REL pairs; relevance 0 or less drops the row "
        "(default: binary relevance when every row is 'query document 0 0', as in CACM and "
        f"CISI; otherwise Cranfield's: {_default_grade_map()})",
    )
    glasgow.add_argument(
        "--fields",
        type=parse_fields,
        default=None,
        metavar="LIST",
        help=f"which of {','.join(PAGE_FIELDS)} make the page text: T the heading, then W "
        "the text, A authors, K keywords, B the source note, in the order given "
        f"(default {','.join(DEFAULT_PAGE_FIELDS)}: title, text and subject keywords; "
        "add A to answer queries that name authors: a query's own .A is then added to it)",
    )
    glasgow.set_defaults(handler=run)


def _options(args: argparse.Namespace) -> dict[str, Any]:
    # The seed left out is the table's, resolved here at the face's edge: the importers take one.
    options: dict[str, Any] = {
        "overwrite": args.force,
        "quiet": args.quiet or args.json,
        "seed": SEED if args.seed is None else args.seed,
    }
    if args.test_fraction is not None:
        options["test_fraction"] = args.test_fraction
    return options


def _print_summary(summary: ImportSummary) -> None:
    out = console()
    empty = f" ({summary.empty_pages} empty)" if summary.empty_pages else ""
    renamed = (
        f", {summary.renamed_pages} with a file name other than their id"
        if summary.renamed_pages
        else ""
    )
    out.print(f"[bold]Pages[/] {summary.pages}{empty}{renamed} in {escape(str(summary.pages_dir))}")
    splits = ", ".join(f"{n} {s}" for s, n in summary.questions.items())
    skipped = (
        f"; {summary.skipped_questions} skipped (no relevant page)"
        if summary.skipped_questions
        else ""
    )
    out.print(
        f"[bold]Questions[/] {sum(summary.questions.values())}: {splits}{skipped} "
        f"in {escape(str(summary.questions_file))}"
    )
    dropped = (
        f"; {summary.dropped_labels} judgements dropped as not relevant"
        if summary.dropped_labels
        else ""
    )
    out.print(f"[bold]Labels[/] {summary.labels} relevant (question, page) pairs{dropped}")
    for note in summary.notes:
        out.print(f"Note: {note}", markup=False)
    out.print(
        "Next: raglab validate --corpus "
        f"{shlex.quote(str(summary.pages_dir))} --questions "
        f"{shlex.quote(str(summary.questions_file))}",
        markup=False,
    )


def _beir_on_cluster(args: argparse.Namespace) -> ImportSummary:
    """``import beir`` with corpus.jsonl read and checked on the cluster's workers
    (:mod:`raglab.distributed.importing`): the same files, summary and problems."""
    # Imported here: without the options, no Dask module loads.
    from raglab.distributed.cluster import connect, require_dask
    from raglab.distributed.importing import import_beir_on_cluster

    require_dask()
    quiet = bool(args.quiet or args.json)
    err = console(stderr=True)
    echo = None if quiet else lambda line: err.print(line, markup=False)
    with connect(**connect_options(args), echo=echo) as client:
        start = time.perf_counter()
        summary = import_beir_on_cluster(
            client, args.folder, args.out, split=args.split, qrels_file=args.qrels, **_options(args)
        )
        if echo is not None:
            echo(
                f"cluster: read and check corpus.jsonl on the workers, write {summary.pages} "
                f"pages here ({time.perf_counter() - start:.2f} s)"
            )
    return summary


def run(args: argparse.Namespace) -> int:
    try:
        if args.format == "beir" and uses_cluster(args):
            summary = _beir_on_cluster(args)
        elif args.format == "beir":
            summary = import_beir(
                args.folder, args.out, split=args.split, qrels_file=args.qrels, **_options(args)
            )
        else:
            summary = import_glasgow(
                args.docs,
                args.queries,
                args.qrels,
                args.out,
                grade_map=args.grade_map,
                queries_by_position=args.queries_by_position,
                **({} if args.fields is None else {"fields": args.fields}),
                **_options(args),
            )
    except OutputError:
        raise  # one line naming the output folder (raglab.cli.main)
    except InputError as exc:
        report_problems(exc.problems, title="Nothing was imported: the input has problems")
        return EXIT_BAD_INPUT
    if args.json:
        print_json(summary.as_dict())
    else:
        _print_summary(summary)
    if summary.warnings:
        report_problems(summary.warnings, title="Warnings")
    return EXIT_OK
