"""Thread counts for the lab's parallel work: a count given, or "auto", the cores free right now.

``threads`` is a whole number of threads, or ``"auto"`` (:data:`raglab.settings.THREADS`, the
default): the cores this process may run on (``os.sched_getaffinity``) less the other work
running on the machine now, at least 1, and no more than the share the environment gives each
process where several run (``OMP_NUM_THREADS``, which Dask's nannies set to 1 in every worker
process, as the benchmarks do for a one-thread run). :func:`choose_threads` is that rule on
plain numbers; :func:`resolve_threads` reads the machine and applies it.

The load is the count of runnable threads at this instant (``/proc/loadavg``'s fourth field, this
thread excluded), not the one-minute average: the average lags a competing job that has just
started by a minute, and counts this process's own past work as load, so a busy benchmark loop
would halve its own threads on an idle machine. Where ``/proc`` is missing the one-minute average
(``os.getloadavg``) stands in.

:func:`run_parts` spreads parts of a job over that many threads of one shared pool (the caller's
thread takes parts too), for work that releases the GIL (numba's ``nogil`` kernels, numpy's loops
over large arrays); :func:`blas_threads` caps BLAS (numpy's OpenBLAS or MKL) for a ``with`` block,
through threadpoolctl where it is installed.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

__all__ = [
    "blas_controller",
    "blas_thread_count",
    "blas_threads",
    "check_threads",
    "choose_threads",
    "even_parts",
    "process_share",
    "resolve_threads",
    "run_parts",
    "running_load",
    "usable_cores",
]

AUTO = "auto"
# The environment variable through which a process is told its share of the cores where several
# run (Dask's nanny sets it to 1 in each worker; OpenMP and OpenBLAS read it too).
_SHARE_VARIABLE = "OMP_NUM_THREADS"
_LOADAVG = Path("/proc/loadavg")


def choose_threads(cores: int, load: float, share: int | None = None) -> int:
    """The threads "auto" takes: ``cores - load`` rounded to the nearest whole number, at most
    ``share`` (the environment's threads per process, None: no share), at least 1 and at most
    ``cores``.

    ``cores`` is the count this process may run on, ``load`` the other threads running (or
    waiting to run) on the machine now. So an idle machine gives every core, a machine whose
    load reaches its cores gives 1 (a second thread would only queue behind the others), and a
    process told to take one thread (a Dask worker among several) takes one.
    """
    free = math.floor(cores - load + 0.5)
    if share is not None:
        free = min(free, share)
    return max(1, min(free, cores))


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity; the machine's count without one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def running_load() -> float:
    """The threads running or waiting to run now, this one excluded (``/proc/loadavg``'s
    fourth field, "running/total", less 1); the one-minute load average where that is missing."""
    try:
        running = int(_LOADAVG.read_text(encoding="ascii").split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        try:
            return os.getloadavg()[0]
        except OSError:
            return 0.0
    return float(max(0, running - 1))


def process_share() -> int | None:
    """The threads per process the environment asks for (``OMP_NUM_THREADS``, a positive whole
    number), or None where it asks for none."""
    text = os.environ.get(_SHARE_VARIABLE, "").strip()
    if not text.isdigit() or int(text) < 1:
        return None
    return int(text)


def check_threads(threads: int | str) -> int | str:
    """``threads`` if it is ``"auto"`` or a positive whole number; ValueError otherwise (a caller
    that was given none passes :data:`raglab.settings.THREADS`). Reads nothing of the machine."""
    if threads == AUTO:
        return AUTO
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be 'auto' or a positive whole number, not {threads!r}")
    return threads


def resolve_threads(threads: int | str) -> int:
    """``threads`` as a count (:func:`check_threads`): a positive whole number as it is,
    ``"auto"`` by :func:`choose_threads` from :func:`usable_cores`, :func:`running_load` and
    :func:`process_share`."""
    checked = check_threads(threads)
    if isinstance(checked, int):
        return checked
    return choose_threads(usable_cores(), running_load(), process_share())


def even_parts(n_items: int, at_most: int, smallest: int) -> list[int]:
    """Bounds of at most ``at_most`` runs of consecutive items covering ``range(n_items)``, as
    even as whole items allow, none of fewer than ``smallest`` items (one run when there are
    fewer): ``[0, ..., n_items]``, run i being ``bounds[i]:bounds[i + 1]``."""
    count = max(1, min(at_most, n_items // max(1, smallest)))
    return [n_items * i // count for i in range(count + 1)]


_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def _workers(count: int) -> ThreadPoolExecutor:
    """The shared pool, with at least ``count`` threads (a larger one replaces a smaller)."""
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < count:
            old, _pool, _pool_size = _pool, ThreadPoolExecutor(count, "raglab"), count
            if old is not None:
                old.shutdown(wait=False)
        return _pool


def _forget_pool() -> None:
    """In a forked child: no pool and a fresh lock. The pool the child inherits believes its
    threads are there, but a fork copies only the thread that forked (and the lock may have been
    held by another), so work handed to it would never run."""
    global _pool, _pool_size, _pool_lock
    _pool, _pool_size, _pool_lock = None, 0, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def run_parts(n_parts: int, threads: int, work: Callable[[int], object]) -> None:
    """Call ``work(i)`` once for every part i in ``range(n_parts)``, on ``min(threads, n_parts)``
    threads: the caller's and the others from a shared pool, each taking the next part not yet
    taken until none is left (so a slow part does not hold the others back). With one thread
    the parts run in order on the caller's. The first exception a part raises is raised here,
    after every thread has stopped taking parts."""
    count = max(1, min(threads, n_parts))
    if count == 1:
        for i in range(n_parts):
            work(i)
        return
    taken = itertools.count()
    lock = threading.Lock()
    failed: list[BaseException] = []

    def take() -> None:
        while not failed:
            with lock:
                i = next(taken)
            if i >= n_parts:
                return
            try:
                work(i)
            except BaseException as exc:
                failed.append(exc)
                return

    pool = _workers(count - 1)
    helpers: list[Future[None]] = [pool.submit(take) for _ in range(count - 1)]
    take()
    for helper in helpers:
        helper.result()
    if failed:
        raise failed[0]


@contextlib.contextmanager
def blas_threads(threads: int) -> Iterator[None]:
    """BLAS (numpy's OpenBLAS or MKL) capped at ``threads`` threads inside the ``with`` block,
    through threadpoolctl where it is installed (without it BLAS keeps its own count). The cap
    is the process's, not the thread's: it holds for every thread while the block runs."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=threads, user_api="blas"):
        yield


@functools.cache
def blas_controller() -> Any:
    """threadpoolctl's handle on numpy's BLAS, found once (None without threadpoolctl)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController().select(user_api="blas")


def blas_thread_count() -> int:
    """The threads BLAS runs now (threadpoolctl; 1 without it, or with no BLAS found): the
    count a step that must round as BLAS does here follows (the neural pass's own steps, the
    cluster's LSA tasks), so that whoever caps BLAS (``threads`` setting, :func:`blas_threads`,
    a Dask worker's ``OMP_NUM_THREADS``) caps both."""
    controller = blas_controller()
    if controller is None:
        return 1
    counts = [int(info["num_threads"]) for info in controller.info()]
    return max(counts, default=1)
