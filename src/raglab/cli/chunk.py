"""``raglab chunk``: exhibit I, where the cuts land."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import Any

from rich.table import Table

from raglab.base.sentinels import NOT_GIVEN
from raglab.chunking.chunkers import METHODS
from raglab.cli._common import EXIT_OK, add_lab_options, console, fmt, load_lab, print_json
from raglab.cli.options import add_setting_options, given_settings
from raglab.pipeline.chunking_report import chunking_report
from raglab.run_settings import ChunkingKey


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "chunk",
        help="cut the corpus into chunks and check which answers survive whole",
        description="Cut every page into chunks and check, for each labelled answer, whether one "
        "chunk holds it whole. For fixed windows the closed forms are printed beside the counts.",
    )
    # Exhibit I starts from fixed windows, unlike the pipeline's default chunker.
    add_setting_options(parser, ("chunker", "size", "overlap"), default_texts={"chunker": "fixed"})
    parser.add_argument(
        "--method", dest="chunker", choices=METHODS, default=NOT_GIVEN, help="the same as --chunker"
    )
    parser.add_argument("--split", choices=("test", "train", "all"), default="test")
    add_lab_options(parser)
    parser.set_defaults(handler=run)


def chunk_key(args: argparse.Namespace) -> ChunkingKey:
    """The chunker the command was given (fixed unless --chunker says otherwise)."""
    given = given_settings(args, ("chunker", "size", "overlap"))
    return ChunkingKey(given.get("chunker", "fixed"), given.get("size"), given.get("overlap"))


def run(args: argparse.Namespace) -> int:
    lab = load_lab(args)
    report = chunking_report(lab, chunk_key(args), split=args.split)
    if args.json:
        data = asdict(report)
        # A corpus read alone has no answer passages to keep whole: no rate, not 0/0 = 1.
        data["intact_rate"] = report.intact_rate if lab.labelled else None
        print_json(data)
        return EXIT_OK
    out = console()
    k = report.key
    setting = f"{k.method}, size {k.size}" + (
        f", overlap {k.overlap}" if k.method == "fixed" else ""
    )
    out.print(f"[bold]Chunker[/] {setting}")
    expected = (
        f" (closed form: {report.expected_chunks})" if report.expected_chunks is not None else ""
    )
    out.print(f"  {report.n_chunks} chunks{expected}, {report.mean_words:.1f} words on average")
    if not lab.labelled:
        out.print(
            "  answers intact: no questions, so no answer passage to check (give --questions FILE)"
        )
        return EXIT_OK
    predicted = (
        f"; the formula predicts {fmt(report.predicted_intact)}"
        if report.predicted_intact is not None
        else ""
    )
    out.print(
        f"  answers intact on {report.split}: {report.intact}/{report.total} = {fmt(report.intact_rate)}{predicted}"
    )
    table = Table("Id", "Split", "Kind", "Words", "Intact", "P(cut)", title="Answer passages")
    for a in report.answers:
        if args.split != "all" and a.split != args.split:
            continue
        table.add_row(
            a.id,
            a.split,
            a.kind,
            str(a.words),
            "yes" if a.intact else "[red]cut[/]",
            fmt(a.predicted_cut),
        )
    out.print(table)
    return EXIT_OK
