"""The server's guard (raglab.web.guard) and the serve command's binding.

Oracles: the documented behaviour: RFC 7230's Host header (name, optional port, IPv6 in
brackets), the status codes 400, 408 and 413, and the address the socket is really bound to.
"""

from __future__ import annotations

import asyncio
import http.client
import os
import re
import socket
import subprocess
import sys
from typing import Any

import pytest

from raglab.cli.serve import address_of, bind
from raglab.web.guard import (
    RequestGuard,
    allowed_hosts,
    host_name,
    is_loopback,
    same_origin,
    shorten,
)


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("localhost:8000", "localhost"),
        ("LOCALHOST", "localhost"),
        ("127.0.0.1:1", "127.0.0.1"),
        ("[::1]:8000", "::1"),
        ("[::1]", "::1"),
        ("::1", "::1"),
        ("attacker.example", "attacker.example"),
        ("", ""),
    ],
)
def test_host_name(header: str, name: str) -> None:
    assert host_name(header) == name


def test_loopback_and_the_allowed_names() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("127.8.0.1") and is_loopback("[::1]")
    assert is_loopback("localhost") and not is_loopback("0.0.0.0") and not is_loopback("10.0.0.1")
    assert allowed_hosts() == {"127.0.0.1", "localhost", "::1"}
    assert allowed_hosts("192.168.1.9", ["lab.internal"]) == {
        "127.0.0.1",
        "localhost",
        "::1",
        "192.168.1.9",
        "lab.internal",
    }
    assert socket.gethostname().lower() in allowed_hosts("0.0.0.0")


def test_a_foreign_host_is_refused_and_a_local_one_answered(api: Any) -> None:
    for host in ("attacker.example", "127.0.0.1.attacker.example", "localhost.:80x"):
        response = api.get("/api/meta", headers={"host": host})
        assert response.status_code == 400, host
        assert "answers only for 127.0.0.1, ::1, localhost" in response.json()["detail"]
    for host in ("localhost:8000", "127.0.0.1", "[::1]:8000"):
        response = api.get("/api/meta", headers={"host": host})
        assert response.status_code == 200, host
        assert "root" not in response.json()["corpus"]


def test_an_oversized_body_is_refused_before_it_is_read(api: Any) -> None:
    response = api.post("/api/run", {"threshold": 0.3, "padding": "x" * 70_000})
    assert response.status_code == 413
    assert "over 65536 bytes" in response.json()["detail"]


async def _call(guard: RequestGuard, scope: dict[str, Any], messages: list[Any]) -> list[Any]:
    sent: list[Any] = []

    async def receive() -> Any:
        if messages:
            item = messages.pop(0)
            if item == "stall":
                await asyncio.sleep(10)
            return item
        await asyncio.sleep(10)
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    await guard(scope, receive, send)
    return sent


def _scope(method: str = "POST", headers: list[tuple[bytes, bytes]] | None = None) -> Any:
    return {
        "type": "http",
        "method": method,
        "path": "/",
        "headers": headers if headers is not None else [(b"host", b"localhost")],
    }


def test_a_stalled_body_is_answered_408_and_a_chunked_big_one_413() -> None:
    reached: list[bytes] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        message = await receive()
        reached.append(message["body"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    guard = RequestGuard(app, hosts=allowed_hosts(), max_body=10, timeout=0.05)
    stalled = asyncio.run(
        _call(
            guard, _scope(), [{"type": "http.request", "body": b"ab", "more_body": True}, "stall"]
        )
    )
    assert stalled[0]["status"] == 408 and not reached
    big = [{"type": "http.request", "body": b"123456", "more_body": True}] * 2
    assert asyncio.run(_call(guard, _scope(), list(big)))[0]["status"] == 413 and not reached
    parts = [
        {"type": "http.request", "body": b"12345", "more_body": True},
        {"type": "http.request", "body": b"678", "more_body": False},
    ]
    ok = asyncio.run(_call(guard, _scope(), parts))
    assert ok[0]["status"] == 200 and reached == [b"12345678"]
    nohost = asyncio.run(_call(guard, _scope("GET", []), []))
    assert nohost[0]["status"] == 400


def test_bind_reports_the_real_port_and_brackets_ipv6() -> None:
    sock = bind("127.0.0.1", 0)
    try:
        port = sock.getsockname()[1]
        assert port > 0 and address_of(sock) == f"http://127.0.0.1:{port}/"
        with pytest.raises(SystemExit, match=rf"port {port} on 127\.0\.0\.1 is already in use"):
            bind("127.0.0.1", port)
    finally:
        sock.close()
    if socket.has_ipv6:
        try:
            six = bind("::1", 0)
        except SystemExit:
            return  # no IPv6 loopback on this machine
        try:
            assert re.fullmatch(r"http://\[::1\]:\d+/", address_of(six))
        finally:
            six.close()


def test_serve_prints_the_bound_address_and_refuses_a_busy_port() -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "raglab.cli.serve", "--port", "0", "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        match = re.match(r"RAG lab is at http://127\.0\.0\.1:(\d+)/ ", line)
        assert match, line
        port = int(match.group(1))
        assert port != 0
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/api/meta", headers={"Host": "attacker.example"})
        assert conn.getresponse().status == 400
        conn.close()
        busy = subprocess.run(
            [sys.executable, "-m", "raglab.cli.serve", "--port", str(port), "--quiet"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert busy.returncode != 0 and busy.stdout == ""
        assert busy.stderr.strip().count("\n") == 0, busy.stderr
        assert f"port {port} on 127.0.0.1 is already in use" in busy.stderr
        assert "--port" in busy.stderr and "Traceback" not in busy.stderr
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_network_address_warns_that_the_corpus_becomes_readable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from raglab.cli import serve

    status = serve.main(
        ["--host", "0.0.0.0", "--port", "0", "--questions", "q.jsonl"]
    )  # fails after the warning
    err = capsys.readouterr().err
    assert status == 1
    assert "--host 0.0.0.0 is not a loopback address" in err and "read the corpus" in err


@pytest.mark.parametrize("path", ["/api/rerank/train", "/api/run"])
def test_a_state_changing_request_from_another_origin_is_refused(api: Any, path: str) -> None:
    """A page of another site (or another server on this machine) can make the browser send a
    POST: it must not run. The app's own origin, and no Origin at all (curl), are answered."""
    for origin in ("http://attacker.example", "http://127.0.0.1:9999", "https://127.0.0.1:8000"):
        response = api.post(path, {}, headers={"origin": origin})
        assert response.status_code == 403, origin
        assert "only from its own pages" in response.json()["detail"]
    response = api.post(path, {}, headers={"origin": "null"})  # a sandboxed page, a file
    assert response.status_code == 403
    for headers in ({"origin": "http://127.0.0.1:8000"}, None):
        assert api.post(path, {}, headers=headers).status_code == 200, headers


def test_same_origin_compares_scheme_host_and_port() -> None:
    assert same_origin("http://localhost:8000", "localhost:8000", "http")
    assert same_origin("http://LOCALHOST", "localhost:80", "http")
    assert same_origin("http://[::1]:8000", "[::1]:8000", "http")
    assert not same_origin("http://localhost:8001", "localhost:8000", "http")
    assert not same_origin("https://localhost:8000", "localhost:8000", "http")
    assert not same_origin("null", "localhost:8000", "http")
    assert not same_origin("http://localhost:8000/x", "localhost:8000", "http")


def _raw(base: str, request: bytes) -> bytes:
    """Send ``request`` whole on a new connection to ``base``; the answer's first bytes."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(request)
        answer = b""
        while b"\r\n\r\n" not in answer:
            part = sock.recv(65536)
            if not part:
                break
            answer += part
        return answer


@pytest.mark.parametrize(
    ("target", "headers", "status"),
    [
        ("/api/meta?" + "q=" + "x" * 1_000_000, b"", b"414"),
        ("/api/meta?" + "a=1&" * 100_000, b"", b"414"),
        ("/" + "x" * 1_000_000, b"", b"414"),
        ("/api/meta", b"X-Big: " + b"y" * 100_000 + b"\r\n", b"431"),
    ],
    ids=["query of 1 MB", "100,000 parameters", "path of 1 MB", "header of 100 kB"],
)
def test_an_oversized_request_is_answered_not_reset(
    server: str, target: str, headers: bytes, status: bytes
) -> None:
    """Read whole and answered (414, 431) with a JSON reason, by the real server (uvicorn's
    HTTP parser must let the request through to the guard)."""
    host = server.removeprefix("http://").encode()
    request = f"GET {target} HTTP/1.1\r\n".encode() + b"Host: " + host + b"\r\n" + headers
    answer = _raw(server, request + b"Connection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 " + status), answer[:200]


def test_a_long_unknown_id_is_not_echoed_whole(api: Any) -> None:
    long_id = "q" * 5000
    response = api.get(f"/api/chunking/answer/{long_id}")
    assert response.status_code == 404
    detail = response.json()["detail"]
    assert len(detail) < 200 and "q" * 80 in detail and "4920 more characters" in detail
    assert shorten("short") == "short"
