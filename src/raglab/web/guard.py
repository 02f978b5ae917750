"""What the server refuses before any route sees a request: foreign hosts and origins, oversize.

What the server refuses before any route sees a request: foreign host names, state-changing
requests from other sites' pages, oversized paths and headers, oversized or half-sent bodies.

Host names: a page on another site can point its own host name at 127.0.0.1 (DNS rebinding)
and then read the lab's answers, the user's documents among them, as if it were the lab. The
browser still sends that site's name in ``Host``, so answering only the names the server was
bound under (:func:`allowed_hosts`) closes the hole; anything else gets 400.

Origins: a page on another site (or another server on this machine) can still make the browser
send a form or a ``fetch`` to the lab: its answer stays unreadable, but the request runs. A
request that changes state or sets off a computation (POST, PUT, PATCH, DELETE) whose ``Origin``
header is not the server's own (its scheme, and the host and port of ``Host``) is refused with
403. Without ``Origin`` (curl, scripts, the command line) it is answered: browsers send one with
every such request from a page.

Sizes: a path and query over :data:`MAX_TARGET_BYTES` are answered 414 and headers over
:data:`MAX_HEADER_BYTES` 431 (the HTTP server is configured to read that much, so the client
gets an answer, not a reset connection); an id echoed in an error message is cut short
(:func:`shorten`).

Bodies: the largest request the page sends is a few hundred bytes of settings, so a body over
:data:`MAX_BODY_BYTES` is refused with 413 before it is read, and a body that stops arriving for
:data:`BODY_TIMEOUT_S` seconds is answered 408 instead of holding a worker forever.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import socket
from collections.abc import Iterable
from contextlib import suppress

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "BODY_TIMEOUT_S",
    "LOOPBACK_NAMES",
    "MAX_BODY_BYTES",
    "MAX_HEADER_BYTES",
    "MAX_TARGET_BYTES",
    "READ_LIMIT_BYTES",
    "RequestGuard",
    "allowed_hosts",
    "host_name",
    "is_loopback",
    "same_origin",
    "shorten",
]

#: The names a server bound to the loopback answers under.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
#: The largest request body accepted (64 KiB: a hundred times the largest the page sends).
MAX_BODY_BYTES = 64 * 1024
#: Seconds a request body may pause between two of its parts.
BODY_TIMEOUT_S = 10.0
#: The longest path and query string answered (8 KiB, as most servers): longer is 414.
MAX_TARGET_BYTES = 8 * 1024
#: The most bytes of headers answered (16 KiB, the path and query excluded): more is 431.
MAX_HEADER_BYTES = 16 * 1024
#: What the HTTP server reads of a request's head before it gives up on the connection: far
#: more than the limits above, so an oversized request is read whole and answered 414 or 431.
READ_LIMIT_BYTES = 4 * 1024 * 1024
#: The longest value (an id) an error message repeats: the rest is cut, "…" in its place.
ECHO_CHARS = 80
#: The methods that change state or set off a computation: refused from another site's page.
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_DEFAULT_PORTS = {"http": "80", "https": "443"}


def shorten(value: str, limit: int = ECHO_CHARS) -> str:
    """``value`` as an error message repeats it: whole up to ``limit`` characters, else its
    first ``limit`` characters, "…" and how many more there were."""
    if len(value) <= limit:
        return value
    return f"{value[:limit]}… ({len(value) - limit} more characters)"


def _netloc(scheme: str, host_port: str) -> str:
    value = host_port.strip().lower()
    default = _DEFAULT_PORTS.get(scheme)
    if default and value.endswith(f":{default}") and not value.endswith("]"):
        value = value[: -len(default) - 1]
    return value


def same_origin(origin: str, host: str, scheme: str) -> bool:
    """Whether an ``Origin`` header names this server: the request's ``scheme`` and the host
    and port of its ``Host`` header (default ports 80 and 443 may be left out of either)."""
    origin_scheme, sep, rest = origin.strip().partition("://")
    if not sep or "/" in rest or origin_scheme.lower() != scheme:
        return False  # "null" (a sandboxed page, a file), or no scheme://host at all
    return _netloc(scheme, rest) == _netloc(scheme, host)


def host_name(header: str) -> str:
    """The name in a ``Host`` header, without its port and IPv6 brackets, lower-cased:
    ``[::1]:8000`` gives ``::1``, ``Localhost:80`` gives ``localhost``."""
    value = header.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[1:end] if end > 0 else value
    if value.count(":") == 1:  # name:port (a bare IPv6 address has several colons)
        return value.split(":", 1)[0]
    return value


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) stays on this machine."""
    name = host_name(host)
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _this_machine() -> set[str]:
    """This machine's own names and addresses, as far as it knows them (best effort)."""
    names = {socket.gethostname().lower(), socket.getfqdn().lower()}
    for name in list(names):
        with suppress(OSError):
            names.update(str(info[4][0]).lower() for info in socket.getaddrinfo(name, None))
    return {n for n in names if n}


def allowed_hosts(bound: str | None = None, extra: Iterable[str] = ()) -> frozenset[str]:
    """The host names to answer: the loopback names, plus the address the server is bound to
    (``--host``). A wildcard (0.0.0.0, ::) names no host a browser would ask for, so it stands
    for this machine's own names and addresses; ``extra`` adds names (``--allow-host``)."""
    names = set(LOOPBACK_NAMES)
    if bound:
        name = host_name(bound)
        names.update(_this_machine() if name in ("0.0.0.0", "::") else {name})
    names.update(host_name(x) for x in extra)
    return frozenset(names)


async def _plain(
    send: Send, status: int, detail: str, headers: Iterable[tuple[str, str]] = ()
) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
                *((k.encode(), v.encode()) for k, v in headers),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class RequestGuard:
    """ASGI middleware: 400 for a ``Host`` not in ``hosts``, 403 for a state-changing request
    from another origin, 414 for a path and query over :data:`MAX_TARGET_BYTES`, 431 for headers
    over :data:`MAX_HEADER_BYTES`, 413 for a body over ``max_body`` bytes, 408 for a body that
    pauses longer than ``timeout`` seconds."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        hosts: frozenset[str],
        max_body: int = MAX_BODY_BYTES,
        timeout: float = BODY_TIMEOUT_S,
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.max_body = max_body
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        target = len(scope.get("raw_path") or scope["path"].encode()) + len(
            scope.get("query_string", b"")
        )
        if target > MAX_TARGET_BYTES:
            await _plain(send, 414, f"the path and query are over {MAX_TARGET_BYTES} bytes")
            return
        if sum(len(k) + len(v) + 4 for k, v in scope["headers"]) > MAX_HEADER_BYTES:
            await _plain(send, 431, f"the request's headers are over {MAX_HEADER_BYTES} bytes")
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = host_name(headers.get("host", ""))
        if host not in self.hosts:
            await _plain(
                send,
                400,
                f"this server answers only for {', '.join(sorted(self.hosts))}, not for "
                f"{shorten(host) if host else 'a request without a Host header'!r}",
            )
            return
        origin = headers.get("origin")
        if (
            scope.get("method") in STATE_CHANGING
            and origin is not None
            and not same_origin(origin, headers.get("host", ""), scope.get("scheme", "http"))
        ):
            await _plain(
                send,
                403,
                f"this server takes requests that change or compute something only from its "
                f"own pages, not from {shorten(origin)!r}",
            )
            return
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_body:
            await _plain(send, 413, f"the request body is over {self.max_body} bytes")
            return
        if scope.get("method") not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        # Read the (small) body here, whole, within the limits; the app then reads it back.
        parts: list[bytes] = []
        size = 0
        while True:
            try:
                message = await asyncio.wait_for(receive(), self.timeout)
            except TimeoutError:
                await _plain(send, 408, "the request body stopped arriving")
                return
            if message["type"] != "http.request":  # the client went away
                return
            parts.append(message.get("body", b""))
            size += len(parts[-1])
            if size > self.max_body:
                await _plain(send, 413, f"the request body is over {self.max_body} bytes")
                return
            if not message.get("more_body", False):
                break
        whole: Message | None = {
            "type": "http.request",
            "body": b"".join(parts),
            "more_body": False,
        }

        async def replay() -> Message:
            nonlocal whole
            if whole is not None:
                message, whole = whole, None
                return message
            return await receive()

        await self.app(scope, replay, send)
