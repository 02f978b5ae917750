"""What the server refuses before any route sees a request.

What the server refuses before any route sees a request: foreign host names, oversized or
half-sent bodies.

Host names: a page on another site can point its own host name at 127.0.0.1 (DNS rebinding)
and then read the lab's answers, the user's documents among them, as if it were the lab. The
browser still sends that site's name in ``Host``, so answering only the names the server was
bound under (:func:`allowed_hosts`) closes the hole; anything else gets 400.

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
    "RequestGuard",
    "allowed_hosts",
    "host_name",
    "is_loopback",
]

#: The names a server bound to the loopback answers under.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
#: The largest request body accepted (64 KiB: a hundred times the largest the page sends).
MAX_BODY_BYTES = 64 * 1024
#: Seconds a request body may pause between two of its parts.
BODY_TIMEOUT_S = 10.0


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
    """ASGI middleware: 400 for a ``Host`` not in ``hosts``, 413 for a body over ``max_body``
    bytes, 408 for a body that pauses longer than ``timeout`` seconds."""

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
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = host_name(headers.get("host", ""))
        if host not in self.hosts:
            await _plain(
                send,
                400,
                f"this server answers only for {', '.join(sorted(self.hosts))}, not for "
                f"{host or 'a request without a Host header'!r}",
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
