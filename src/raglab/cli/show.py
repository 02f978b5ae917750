"""``raglab show PAGE``: a page's text exactly as the chunkers and retrieval see it."""

from __future__ import annotations

import argparse
import difflib
import sys
from typing import Any

from raglab.cli._common import (
    EXIT_OK,
    EXIT_USAGE,
    add_data_options,
    load_data,
    print_error_json,
    print_json,
)
from raglab.pipeline.page_view import answers_on, find_page, page_view, relative_path

#: How many close page ids an unknown PAGE is answered with.
CLOSE_MATCHES = 5


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "show",
        help="print a page's text as retrieval sees it",
        description="Print a page's id, title, file and its text exactly as the chunkers see "
        "it (after the front matter), so an answer passage copied from it always matches. "
        "With questions, the answer passages located on the page are listed too.",
    )
    parser.add_argument("page", metavar="PAGE", help="a page id, or the page's file path")
    add_data_options(parser)
    parser.add_argument("--json", action="store_true", help="print the page as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    data = load_data(args)
    page = find_page(data.corpus, args.page)
    if page is None:
        close = difflib.get_close_matches(args.page, [p.id for p in data.corpus], CLOSE_MATCHES)
        hint = f"; close: {', '.join(close)}" if close else ""
        message = f"no page {args.page!r} in {data.corpus.root}{hint}"
        print(f"raglab show: {message}", file=sys.stderr)
        if args.json:
            print_error_json(message)
        return EXIT_USAGE
    answers = answers_on(data.questions, page)
    if args.json:
        print_json(page_view(data.corpus, data.questions, page))
        return EXIT_OK
    lines = [
        f"id: {page.id}",
        f"title: {page.title}",
        f"path: {relative_path(data.corpus, page)}",
        f"words: {page.n_words:,}, characters: {len(page.text):,}",
    ]
    lines += [f"answer of {a['question']}: characters {a['start']} to {a['end']}" for a in answers]
    # The text follows the rule unchanged (no wrapping, no markup), so what is copied from it
    # is what the chunkers cut and what an answer passage is looked for in.
    sys.stdout.write("\n".join(lines) + "\n" + "-" * 40 + "\n" + page.text)
    if not page.text.endswith("\n"):
        sys.stdout.write("\n")
    return EXIT_OK
