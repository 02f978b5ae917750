"""Connecting to a Dask cluster: a LocalCluster of N worker processes, or a scheduler's address.

Dask is optional (``pip install 'raglab[dask]'``): it is imported only inside :func:`connect`,
so importing this module costs nothing, and a missing Dask is one clear line
(:class:`DaskMissing`), not a traceback. Partitions, scheduling, data movement and retrying a
task whose worker died are Dask's; RAG lab only says what each task computes, and turns a
failure Dask gives up on into one line (:class:`ClusterFailed`).
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Callable, Iterator
from typing import Any

__all__ = [
    "INSTALL_HINT",
    "ClusterFailed",
    "DaskMissing",
    "connect",
    "dashboard_line",
    "require_dask",
    "share",
]

INSTALL_HINT = "pip install 'raglab[dask]'"


class DaskMissing(ValueError):
    """Raised when a cluster is asked for and Dask is not installed. A ValueError, so the
    command line prints its one line and exits 2, as for any option it cannot honour."""


class ClusterFailed(ValueError):
    """Raised when the cluster cannot start (a worker process that dies or fails while the
    LocalCluster starts) or cannot finish the work after Dask's own retries: a task whose
    workers kept dying (Dask gives up after ``distributed.scheduler.allowed-failures``), a
    scheduler that cannot be reached or is lost. A ValueError, so the command line prints one
    line and exits 2; the commands write their files only once the work is done, so nothing is
    written."""


def _failures() -> tuple[type[BaseException], ...]:
    """What Dask raises on the client when the cluster, not a task's own code, failed."""
    from distributed.client import FutureCancelledError
    from distributed.comm.core import CommClosedError

    from distributed import KilledWorker

    return (KilledWorker, FutureCancelledError, CommClosedError, TimeoutError)


def _causes(exc: BaseException) -> str:
    """An exception and the chain of its causes, each as "Type: message", joined by ": "
    (Dask's "Nanny failed to start." says little without the cause under it)."""
    parts = []
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        text = str(cause).strip().rstrip(".")
        parts.append(f"{type(cause).__name__}: {text}" if text else type(cause).__name__)
        cause = cause.__cause__
    return "; because ".join(parts)


def require_dask() -> None:
    """Import dask.distributed, or raise :class:`DaskMissing` naming the extra to install."""
    try:
        import dask  # noqa: F401

        import distributed  # noqa: F401
    except ImportError as exc:
        raise DaskMissing(
            f"--workers and --scheduler need Dask, which is not installed ({exc.name} is "
            f"missing): {INSTALL_HINT}"
        ) from None


@contextlib.contextmanager
def connect(
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    echo: Callable[[str], object] | None = None,
) -> Iterator[Any]:
    """A ``distributed.Client`` for the duration of the ``with`` block, closed after it.

    ``workers=N``: a LocalCluster of N single-threaded worker processes on this machine (one
    thread each, so N is the parallelism and numpy's own threads do not oversubscribe it).
    ``scheduler="tcp://host:8786"``: an existing cluster (any Dask deployment); its workers must
    see the corpus files at the same paths as this machine. Exactly one of the two. ``echo``
    receives one line naming the dashboard (:func:`dashboard_line`).
    """
    if (workers is None) == (scheduler is None):
        raise ValueError("give exactly one of workers and scheduler")
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        raise ValueError(f"--workers must be a positive integer, got {workers!r}")
    require_dask()
    import distributed

    # Typed as Any: parts of distributed are untyped, and mypy runs with or without it.
    local_cluster: Any = distributed.LocalCluster
    client_of: Any = distributed.Client

    failures = _failures()
    start_failures: tuple[type[BaseException], ...] = (RuntimeError, OSError, *failures)
    with contextlib.ExitStack() as stack:
        if workers is not None:
            try:
                cluster = stack.enter_context(
                    local_cluster(
                        n_workers=workers,
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=":0",
                        # Dask's own INFO lines would bury the command's output.
                        silence_logs=logging.ERROR,
                    )
                )
                client = stack.enter_context(client_of(cluster))
            except start_failures as exc:
                # A worker process that dies or cannot start (out of memory, killed, a broken
                # preload) makes Dask raise "Nanny failed to start": one line, not its traceback.
                raise ClusterFailed(
                    f"the Dask cluster of {workers} worker{'s' if workers != 1 else ''} could not "
                    f"start ({_causes(exc)}); nothing was computed or written"
                ) from exc
        else:
            try:
                client = stack.enter_context(client_of(scheduler))
            except OSError as exc:  # refused, timed out, no such host
                raise ClusterFailed(
                    f"cannot reach the Dask scheduler at {scheduler}: {exc}"
                ) from None
        if echo is not None:
            line = dashboard_line(client)
            if line:
                echo(line)
        try:
            yield client
        except failures as exc:
            # A task's own error (a ValueError of RAG lab's, say) comes back as itself; these
            # are the cluster's: say so in one line instead of Dask's traceback.
            raise ClusterFailed(
                f"the Dask cluster could not finish the work ({type(exc).__name__}: {exc}); "
                "nothing was written"
            ) from exc


def _held(value: Any) -> Any:
    """Task: the value it was given."""
    return value


def share(client: Any, value: Any) -> Any:
    """A future of ``value`` that tasks take as an argument, and that survives lost workers.

    ``client.scatter`` puts data on workers with no task to compute it again: a worker lost
    with the only copy (a worker that joined after a broadcast has none) loses it for good, and
    every task needing it fails ("lost scattered data"). Here ``value`` travels inside a task
    (client, scheduler, a worker), the scheduler keeps it with the task while the future lives,
    and a worker lost with the result computes it again from there. The cost: the scheduler
    holds a copy while it is needed, and Dask's warning about a large graph (past 10 MB) is not
    printed for it, since this is the graph's purpose."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sending large graph")
        return client.submit(_held, value, pure=False)


def _serves_dashboard() -> bool:
    """Run on the scheduler: whether it can draw its dashboard (Dask's pages need bokeh)."""
    import importlib.util

    return importlib.util.find_spec("bokeh") is not None


def dashboard_line(client: Any) -> str | None:
    """``Dask dashboard: URL`` when the cluster's scheduler serves one; a line saying there is
    none when it runs the HTTP service without bokeh (its pages would only say bokeh is
    missing); None when the scheduler has no dashboard service at all."""
    link = getattr(client, "dashboard_link", None)
    if not link:
        return None
    try:
        served = bool(client.run_on_scheduler(_serves_dashboard))
    except Exception:  # a scheduler that refuses run_on_scheduler: trust its link
        served = True
    if served:
        return f"Dask dashboard: {link}"
    return "Dask dashboard: none (the scheduler lacks bokeh: pip install bokeh for one)"
