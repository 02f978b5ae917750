"""``raglab site --out DIR``: write the lab as a static site whose tab computes every number."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from raglab.cli._common import (
    DATA_SETTINGS,
    EXIT_OK,
    add_data_options,
    lab_maker,
    load_data,
    print_corpus_warnings,
)
from raglab.cli.options import add_setting_options, given_settings


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "site",
        help="write the lab as a static site (no server: the tab computes the numbers)",
        description="Write a folder any static host serves (python -m http.server, GitHub "
        "Pages): the lab's page, its scripts, the in-tab engine and the data it computes from. "
        "A collection too big for a tab is refused, naming the limit (exit 2).",
    )
    parser.add_argument("--out", metavar="DIR", required=True, help="folder to write the site to")
    parser.add_argument("--quiet", action="store_true", help="print nothing on success")
    parser.add_argument(
        "--no-neural",
        action="store_true",
        help="leave out the neural embedding's vectors and weights (about 47 MB): the site "
        "then says it lacks the neural numbers",
    )
    add_data_options(parser)
    add_setting_options(parser.add_argument_group("tokens and the embedding"), DATA_SETTINGS)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from raglab.web.site import write_site

    data = load_data(args)
    print_corpus_warnings(data.corpus)
    lab = lab_maker(data.corpus, data.questions, **given_settings(args, DATA_SETTINGS))
    out = Path(args.out)
    write_site(lab, out, neural=not args.no_neural)
    if not args.quiet:
        print(f"Wrote the site to {out}: serve it with  python -m http.server -d {out}")
    return EXIT_OK
