"""``raglab serve``: the web lab, served on this machine.

Builds the lab, warms every index (chunk sets, BM25, LSA, the BM25 grid, the fusion weight, the
reranker and a default end-to-end run) so the page answers at once, prints the address and runs
uvicorn; the intact-rate curves of the other overlaps are built in the background once it serves. It binds 127.0.0.1 unless ``--host`` says otherwise.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
import webbrowser
from collections.abc import Sequence
from typing import Any

from raglab.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    add_data_options,
    load_lab,
    report_problems,
)
from raglab.errors import InputError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST})"
    )
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})"
    )
    parser.add_argument("--open", action="store_true", help="open the lab in a web browser")
    parser.add_argument(
        "--stem", action="store_true", help="Snowball-stem retrieval tokens (off by default)"
    )
    parser.add_argument("--quiet", action="store_true", help="print only the address")
    add_data_options(parser)


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "serve",
        help="open the interactive lab in a browser (served from this machine)",
        description="Serve the six exhibits of RAG lab on this machine. Every index is built "
        "before the address is printed, so each interaction answers at once.",
    )
    add_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Load, warm, serve until interrupted."""
    import uvicorn

    from raglab.pipeline.exhibits import warm, warm_later
    from raglab.web.app import create_app

    if not 0 <= args.port <= 65535:
        raise SystemExit("raglab serve: --port must lie in 0..65535")
    quiet = bool(getattr(args, "quiet", False))

    def say(text: str) -> None:
        if not quiet:
            print(text, file=sys.stderr, flush=True)

    start = time.perf_counter()
    lab = load_lab(args)
    say(f"Loaded {len(lab.corpus)} pages and {len(lab.questions)} questions.")

    def step(name: str, ms: float) -> None:
        say(
            f"  {name}: " + ("skipped (the data does not support it)" if ms < 0 else f"{ms:.0f} ms")
        )

    say("Building every index:")
    timings = warm(lab, report=step)
    say(f"Ready in {time.perf_counter() - start:.1f} s.")
    app = create_app(lab, warm_ms=timings, later=warm_later(lab))
    host = "localhost" if args.host in ("127.0.0.1", "::1") else args.host
    address = f"http://{host}:{args.port}/"
    print(f"RAG lab is at {address}  (API index: {address}docs; Ctrl+C stops)", flush=True)
    if args.open:
        threading.Timer(1.0, lambda: webbrowser.open(address)).start()
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m raglab.cli.serve``: the same command without the ``raglab`` front end."""
    parser = argparse.ArgumentParser(prog="raglab serve", description="Serve the RAG lab.")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except InputError as exc:
        report_problems(exc.problems, title="The input has problems")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
