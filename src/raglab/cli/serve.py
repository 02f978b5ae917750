"""``raglab serve``: the web lab, served on this machine.

Builds the lab (chunks, BM25, LSA), builds what the first page shows (each exhibit's default
view: the fixed chunker's report and intact-rate curve, BM25's recall and grid, the identifier
twins, the fusion weight, table and grid, the reranker and its table) so the page answers at once,
prints the address and runs uvicorn. The rest (the other chunkers, the reranker's table at every
lambda, a default end-to-end run, the intact-rate curves of the other overlaps) is built in the
background whenever no request is in flight; a request that needs a piece sooner builds it itself,
or waits for the one task in progress. The neural vectors are never needed to start: they are
encoded in a thread of their own from the server's start (:mod:`raglab.web.encoding`), and until
they are ready the neural numbers say "encoding, n of N". It binds 127.0.0.1 unless ``--host``
says otherwise.
"""

from __future__ import annotations

import argparse
import errno
import gc
import socket
import sys
import threading
import time
import webbrowser
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

from raglab.cli._common import (
    DATA_SETTINGS,
    EXIT_BAD_INPUT,
    EXIT_OK,
    add_data_options,
    load_lab,
    report_problems,
)
from raglab.cli.options import add_setting_options, given_settings
from raglab.errors import InputError
from raglab.web.guard import READ_LIMIT_BYTES, host_name

if TYPE_CHECKING:
    from fastapi import FastAPI

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST})"
    )
    parser.add_argument(
        "--port",
        type=port_number,
        default=DEFAULT_PORT,
        help=f"port, 0 to 65535; 0 picks a free one (default {DEFAULT_PORT})",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another host name to answer under (repeatable); by default only the loopback "
        "names and --host are answered, which stops other sites' pages reading the lab",
    )
    parser.add_argument("--open", action="store_true", help="open the lab in a web browser")
    parser.add_argument("--quiet", action="store_true", help="print only the address")
    add_data_options(parser)
    add_setting_options(parser.add_argument_group("tokens and the embedding"), DATA_SETTINGS)


def port_number(text: str) -> int:
    """``--port``'s value: an integer in 0..65535 (0: any free port). Anything else is a usage
    error, exit status 2, with argparse's one-line message."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port: give one in 0..65535")
    return port


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "serve",
        help="open the interactive lab in a browser (served from this machine)",
        description="Serve the six exhibits of RAG lab on this machine. What the first page "
        "shows is built before the address is printed, so it answers at once; the rest is built "
        "in the background while the server is idle.",
    )
    add_arguments(parser)
    parser.set_defaults(handler=run)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the startup; on success freeze what it built.

    What startup allocates lives as long as the server: the web stack's modules, the lab with
    its indexes, the first page's results. While those objects pile up, the collector would walk
    them again and again and free next to nothing (over 0.1 s of a 1.5 s start). Once they are
    built, ``gc.freeze`` moves them out of its sight for good, so the collections the requests'
    short-lived objects trigger stay small too. Reference counting frees memory as usual
    throughout.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        gc.freeze()
    finally:
        if enabled:
            gc.enable()


def run(args: argparse.Namespace) -> int:
    """Bind, load, warm, serve until interrupted."""
    # Bound before the lab is built: a busy port is reported at once, not after the warm start,
    # and the address printed is the one really listened on (the real port for --port 0).
    sock = bind(args.host, args.port)
    # The neural rows need the model: read and hashed on another core while the web stack is
    # imported and the lab is built (raglab.pipeline.dense.preload).
    from raglab.pipeline import dense

    dense.preload(given_settings(args, ("model",)).get("model"))
    try:
        with _collector_paused():
            # Imported here, so its modules are among what the collector's freeze puts aside.
            import uvicorn  # noqa: F401

            app = _build_app(args, sock)
        serve_forever(app, sock)
    finally:
        sock.close()
    return EXIT_OK


def serve_forever(app: FastAPI, sock: socket.socket) -> None:
    """Run uvicorn on the bound ``sock`` until interrupted (``raglab serve`` and ``raglab label``).

    h11 reads a request's head up to READ_LIMIT_BYTES (not its default 16 KiB), so an oversized
    path or header is read whole and answered 414 or 431 by the request guard, not cut off with
    the connection reset under the client."""
    import uvicorn

    config = uvicorn.Config(
        app,
        log_level="warning",
        timeout_keep_alive=5,
        http="h11",
        h11_max_incomplete_event_size=READ_LIMIT_BYTES,
    )
    uvicorn.Server(config).run(sockets=[sock])


def bind(host: str, port: int, *, command: str = "raglab serve") -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (IPv6 when the host is an IPv6 address);
    SystemExit with one line saying what to change when the address cannot be bound."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror:
        raise SystemExit(f"{command}: cannot bind {host!r}: no such host name") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6 and host_name(host) == "::":
        # "::" serves IPv4 too where the system allows it, as most servers do.
        with suppress(OSError):
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise SystemExit(
                f"{command}: port {port} on {host} is already in use (perhaps by another "
                f"server); choose another with --port, or --port 0 for any free one"
            ) from None
        raise SystemExit(f"{command}: cannot bind {host} port {port}: {exc.strerror}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def address_of(sock: socket.socket) -> str:
    """The lab's URL for a bound socket: its real port, an IPv6 address in brackets, and
    ``localhost`` for a wildcard address (which names no host of its own)."""
    host, port = sock.getsockname()[:2]
    if host in ("0.0.0.0", "::"):
        host = "localhost"
    elif ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}/"


def _build_app(args: argparse.Namespace, sock: socket.socket) -> FastAPI:
    """Load the lab, build what the first page shows, print the address: the app to serve."""
    from raglab.web.app import create_app
    from raglab.web.guard import allowed_hosts, is_loopback
    from raglab.web.warm import warm, warm_later, warm_neural

    quiet = bool(getattr(args, "quiet", False))

    def say(text: str) -> None:
        if not quiet:
            print(text, file=sys.stderr, flush=True)

    if not is_loopback(args.host):
        # Printed even with --quiet: this changes who can read the documents.
        print(
            f"raglab serve: warning: --host {args.host} is not a loopback address, so other "
            "machines on the network can reach this server and read the corpus; the default, "
            "127.0.0.1, serves this machine only.",
            file=sys.stderr,
            flush=True,
        )
    start = time.perf_counter()
    lab = load_lab(args)
    say(f"Loaded {len(lab.corpus)} pages and {len(lab.questions)} questions.")

    def step(name: str, ms: float) -> None:
        say(
            f"  {name}: " + ("skipped (the data does not support it)" if ms < 0 else f"{ms:.0f} ms")
        )

    say("Building what the first page shows:")
    timings = warm(lab, report=step)
    say(f"Ready in {time.perf_counter() - start:.1f} s.")
    app = create_app(
        lab,
        warm_ms=timings,
        later=warm_later(lab),
        when_ready=warm_neural(lab),
        hosts=allowed_hosts(args.host, getattr(args, "allow_host", ())),
    )
    address = address_of(sock)
    print(f"RAG lab is at {address}  (API index: {address}docs; Ctrl+C stops)", flush=True)
    if args.open:
        threading.Timer(1.0, lambda: webbrowser.open(address)).start()
    return app


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
