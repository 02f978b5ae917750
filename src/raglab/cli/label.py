"""``raglab label``: a page in the browser for labelling questions against a corpus, on this machine.

Reads the corpus and the questions file (which need not exist yet; an existing one must pass
``raglab validate``'s checks), binds 127.0.0.1 (``--port``, 0 for any free port), prints the
address and serves :mod:`raglab.web.label` until interrupted. Every save is checked and written
atomically, so the file is always one ``raglab run`` reads.
"""

from __future__ import annotations

import argparse
import sys
import threading
import webbrowser
from pathlib import Path
from typing import Any

from raglab.cli._common import EXIT_OK, EXIT_USAGE
from raglab.cli.serve import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    address_of,
    bind,
    port_number,
    serve_forever,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--corpus", metavar="DIR", required=True, help="folder of the pages to label against"
    )
    parser.add_argument(
        "--questions",
        metavar="FILE",
        required=True,
        help="the JSON Lines file of labelled questions to edit (created on the first save)",
    )
    parser.add_argument(
        "--port",
        type=port_number,
        default=DEFAULT_PORT,
        help=f"port, 0 to 65535; 0 picks a free one (default {DEFAULT_PORT})",
    )
    parser.add_argument("--open", action="store_true", help="open the page in a web browser")


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "label",
        help="label questions in a browser: search the pages, select answers, save JSON Lines",
        description="Serve a labelling page on this machine: search the pages, select an answer "
        "passage, type the question, or mark it not answerable from these documents. Every save "
        "is checked as raglab validate checks and written atomically.",
    )
    add_arguments(parser)
    parser.set_defaults(handler=run)


def _usage_problem(questions: Path) -> str | None:
    if questions.is_dir():
        return f"--questions {questions}: is a folder; give a file path"
    if not questions.parent.is_dir():
        return f"--questions {questions}: the folder {questions.parent} does not exist"
    return None


def run(args: argparse.Namespace) -> int:
    """Check the arguments, load, bind, serve until interrupted."""
    questions = Path(args.questions)
    problem = _usage_problem(questions)
    if problem is not None:
        print(f"raglab label: {problem}", file=sys.stderr)
        return EXIT_USAGE
    from raglab.corpus.pages import load_corpus
    from raglab.web.label import create_label_app

    corpus = load_corpus(args.corpus)
    app = create_label_app(corpus, questions)
    sock = bind(DEFAULT_HOST, args.port, command="raglab label")
    try:
        address = address_of(sock)
        count = len(app.state.label.records)
        print(
            f"Labelling {count} questions of {questions} against {len(corpus)} pages at "
            f"{address}  (Ctrl+C stops)",
            flush=True,
        )
        if args.open:
            threading.Timer(1.0, lambda: webbrowser.open(address)).start()
        serve_forever(app, sock)
    finally:
        sock.close()
    return EXIT_OK
