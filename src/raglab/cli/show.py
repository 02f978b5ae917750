"""``raglab show PAGE``: a page's text exactly as the chunkers and retrieval see it."""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path
from typing import Any

from raglab.cli._common import (
    EXIT_OK,
    EXIT_USAGE,
    add_data_options,
    load_data,
    print_error_json,
    print_json,
)
from raglab.corpus.pages import Corpus, Page
from raglab.corpus.questions import QuestionSet

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


def relative_path(corpus: Corpus, page: Page) -> str:
    """The page's file relative to the corpus folder (its source as given when it is not under
    the folder, or was not read from a file)."""
    try:
        return Path(page.source).relative_to(corpus.root).as_posix()
    except ValueError:
        return page.source


def find_page(corpus: Corpus, wanted: str) -> Page | None:
    """The page whose id is ``wanted``, else the page read from that file (a path relative to
    the corpus folder, or the path it was read from); None when there is none."""
    if wanted in corpus:
        return corpus.page(wanted)
    as_path = Path(wanted).as_posix()
    for page in corpus:
        if as_path in (relative_path(corpus, page), Path(page.source).as_posix()):
            return page
    return None


def answers_on(questions: QuestionSet, page: Page) -> list[dict[str, Any]]:
    """The answer passages located on ``page``: question id, start and end offsets in its text."""
    return [
        {"question": q.id, "start": s.start, "end": s.end}
        for q in questions
        for s in q.spans
        if s.page_id == page.id
    ]


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
        print_json(
            {
                "id": page.id,
                "title": page.title,
                "path": relative_path(data.corpus, page),
                "text": page.text,
                "headings": [
                    {"heading": s.heading, "level": s.level, "start": s.start, "end": s.end}
                    for s in page.sections
                ],
                "answers": answers,
            }
        )
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
