"""Background work that gives way to requests: it runs only while the server is idle.

The web lab builds part of its results after it starts serving (``warm_later``). Those tasks and
the requests share one lock around the lab, and a lock is not fair: a background thread that
releases it and at once asks again usually gets it back, so a request could wait behind many
tasks in a row. :class:`IdleGate` counts the requests in flight (:class:`IdleMiddleware` tells
it when one starts and ends); before each task the background thread waits until none is in
flight and none has started for ``quiet`` seconds. A request then waits at most for the one task
already running, and the page's first burst of requests never competes with background work.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

# Seconds without a request before background work resumes: longer than the gaps between the
# requests a page sends as it loads, short enough that the work is done soon after.
QUIET_S = 0.25


class IdleGate:
    """The number of requests in flight and when the last one started or ended."""

    def __init__(self, quiet: float = QUIET_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.quiet = quiet
        self._clock = clock
        self._changed = threading.Condition()
        self._active = 0
        # Counting from creation: a server that has just started gets a quiet period too, so
        # the first request is not kept waiting by a task that began a moment before it.
        self._last = clock()

    @property
    def active(self) -> int:
        """Requests in flight now."""
        return self._active

    def enter(self) -> None:
        """A request has started."""
        with self._changed:
            self._active += 1
            self._last = self._clock()

    def leave(self) -> None:
        """A request has ended."""
        with self._changed:
            self._active -= 1
            self._last = self._clock()
            self._changed.notify_all()

    def idle(self) -> bool:
        """Whether background work may run now: nothing in flight and a quiet period passed."""
        with self._changed:
            return self._wait_time() == 0.0

    def wait(self) -> None:
        """Block until :meth:`idle` would say True."""
        with self._changed:
            while (left := self._wait_time()) != 0.0:
                self._changed.wait(left)

    def _wait_time(self) -> float | None:
        # None: wait for a request to end; a positive number: the rest of the quiet period.
        if self._active:
            return None
        left = self._last + self.quiet - self._clock()
        return left if left > 0 else 0.0


class IdleMiddleware:
    """Tells an :class:`IdleGate` when each HTTP request starts and ends."""

    def __init__(self, app: ASGIApp, gate: IdleGate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.gate.enter()
        try:
            await self.app(scope, receive, send)
        finally:
            self.gate.leave()
