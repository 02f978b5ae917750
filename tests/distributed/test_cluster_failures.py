"""A cluster that fails under the command: a scheduler and workers started as processes of
their own, as a Dask user starts them, then killed, left empty, or lacking RAG lab.

Each failure ends the command with exit 2 and one line on stderr naming what happened, within
the time its option states, and no traceback of Dask's. Oracle: the exit status and the line
the command line documents (docs/distributed.md), and the clock.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from distributed import Client
from raglab.base.version import __version__
from raglab.cli.main import main
from tests.distributed.cluster_fixtures import (
    SOURCE,
    WITHOUT_RAGLAB,
    KillOnce,
    killed,
    python_path,
    scheduler_process,
    worker_process,
)

#: A command with every stage of the BM25 work on the cluster, over the handbook.
EXPORT = ["trec", "export", "--retriever", "bm25", "--run"]


def _command(argv: list[str], tmp_path: Path) -> subprocess.Popen[str]:
    """``raglab ARGV`` as a process of its own, its stderr a pipe read line by line."""
    return subprocess.Popen(
        [sys.executable, "-m", "raglab", *argv],
        env={**os.environ, "PYTHONPATH": python_path()},
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _arm(address: str, functions: tuple[str, ...], marks: Path, pid: int | None = None) -> None:
    marks.mkdir(exist_ok=True)
    with Client(address, timeout=30) as c:
        c.register_plugin(KillOnce(functions, marks, pid), name="kill-once")


def test_a_scheduler_without_workers_stops_the_command_in_the_time_given(
    tmp_path: Path,
) -> None:
    """Oracle: exit 2 and one line naming --no-workers-timeout, within that time (2 s) and the
    start of a process; at first (no worker ever joined; the scheduler given by the file
    ``dask scheduler --scheduler-file`` writes) and when the only worker is killed as it
    starts counting terms (so none is left)."""
    with scheduler_process(tmp_path) as (_, address, file):
        start = time.monotonic()
        empty = _command(
            [*EXPORT, "a.run", "--scheduler-file", str(file), "--no-workers-timeout", "2"],
            tmp_path,
        )
        _, err = empty.communicate(timeout=120)
        assert empty.returncode == 2, err
        assert time.monotonic() - start < 40
        assert err.splitlines() == [
            f"raglab trec: the Dask scheduler at {address} has no worker, and none joined "
            "within 2 s (--no-workers-timeout); nothing was computed"
        ]
        with worker_process(address) as worker:
            _arm(address, ("count_chunks",), tmp_path / "killed")
            lost = _command(
                [*EXPORT, "b.run", "--quiet", "--scheduler", address, "--no-workers-timeout", "2"],
                tmp_path,
            )
            _, err = lost.communicate(timeout=120)
            assert worker.wait(timeout=30) == -9  # the worker really died
    assert killed(tmp_path / "killed") == {"count_chunks"}
    assert lost.returncode == 2, err
    assert err.splitlines() == [
        "raglab trec: every Dask worker was lost and none joined within 2 s "
        "(--no-workers-timeout); nothing was written"
    ]
    assert not (tmp_path / "b.run").exists()


def test_a_lost_scheduler_ends_the_command_in_one_line(tmp_path: Path) -> None:
    """Oracle: exit 2 and the one line of a lost scheduler, and no line of Dask's (its client
    logs a traceback for each connection it loses) on stderr. The scheduler is killed when
    the worker starts reading the pages."""
    with scheduler_process(tmp_path) as (scheduler, address, _), worker_process(address):
        _arm(address, ("read_range",), tmp_path / "killed", scheduler.pid)
        # A short reconnection window: the line is the same, the wait for a scheduler that
        # will not come back (the default 30 s) is not what is tested.
        command = _command(
            [*EXPORT, "a.run", "--scheduler", address, "--connect-timeout", "3"], tmp_path
        )
        _, err = command.communicate(timeout=120)
        assert scheduler.wait(timeout=30) == -9
    assert command.returncode == 2, err
    assert "Traceback" not in err and "distributed." not in err, err
    failures = [line for line in err.splitlines() if not line.startswith(("cluster: ", "Dask "))]
    assert failures == [
        f"raglab trec: lost the connection to the Dask scheduler at {address} "
        "(FutureCancelledError); nothing was written"
    ], err


def test_workers_whose_environment_differs_are_named_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: exit 2 and one line naming each worker and what it lacks: one whose Python
    cannot import raglab, one with another raglab version (a copy of this checkout's package
    saying 0.0.0, first on its PYTHONPATH); no task ran, so no file was written."""
    other = tmp_path / "other"
    shutil.copytree(
        SOURCE / "raglab", other / "raglab", ignore=shutil.ignore_patterns("__pycache__")
    )
    (other / "raglab" / "base" / "version.py").write_text('__version__ = "0.0.0"\n')
    with (
        scheduler_process(tmp_path) as (_, address, _),
        worker_process(address, code=WITHOUT_RAGLAB),
        worker_process(address, env={"PYTHONPATH": python_path(other)}),
    ):
        run = tmp_path / "a.run"
        status = main([*EXPORT, str(run), "--quiet", "--scheduler", address])
    err = capsys.readouterr().err
    assert status == 2
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("raglab trec: the Dask workers' environment differs")
    assert "raglab cannot be imported (ModuleNotFoundError: No module named 'raglab')" in err
    assert f"raglab 0.0.0, here {__version__}" in err
    assert err.count("tcp://127.0.0.1:") == 2
    assert not run.exists()


def test_a_worker_joining_during_the_work_without_raglab_is_named(tmp_path: Path) -> None:
    """Oracle: exit 2 and one line naming the newcomer and what it lacks. The command connects
    to a scheduler with one worker (checked then, and found right); that worker is killed as
    it starts counting terms, so the command waits for another; the one that joins cannot
    import raglab. It is checked as it registers, before it runs a task, and named."""
    marks = tmp_path / "killed"
    with scheduler_process(tmp_path) as (_, address, _):
        with worker_process(address) as first:
            _arm(address, ("count_chunks",), marks)
            command = _command(
                [
                    *EXPORT,
                    "a.run",
                    "--quiet",
                    "--scheduler",
                    address,
                    "--no-workers-timeout",
                    "120",
                ],
                tmp_path,
            )
            assert first.wait(timeout=120) == -9  # killed itself as it started counting
        assert killed(marks) == {"count_chunks"}
        with Client(address, timeout=30) as c:
            # KillOnce is pickled by reference to these tests, which import raglab: the
            # newcomer could not even load it.
            c.unregister_worker_plugin("kill-once")
        # Not waited for: a worker lacking raglab dies on the first task it is given.
        with worker_process(address, code=WITHOUT_RAGLAB, wait=False):
            _, err = command.communicate(timeout=120)
    assert command.returncode == 2, err
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(
        "raglab trec: a Dask worker that joined during the work has an environment that "
        "differs from this machine's: tcp://127.0.0.1:"
    ), err
    assert lines[0].endswith(
        ": raglab cannot be imported (ModuleNotFoundError: No module named 'raglab'); "
        "nothing was written"
    ), err
    assert not (tmp_path / "a.run").exists()


#: A worker preload (``dask worker --preload``): the first start of the worker leaves a mark,
#: and every start after it (the nanny's restart of a killed worker) takes 8 s, as a
#: restart does on a loaded machine (a new process importing numpy, scipy, numba and raglab).
SLOW_RESTART = """
import os, time

def dask_setup(worker):
    mark = os.environ["RAGLAB_TEST_STARTED"]
    if os.path.exists(mark):
        time.sleep(8)
    else:
        open(mark, "w").close()
"""


def test_a_worker_restarting_slower_than_the_timeout_is_waited_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: the run file ``trec export`` writes on one machine, and exit 0. The only worker
    (under a nanny) is killed as it starts counting terms; its nanny restarts it, which takes
    8 s, longer than --no-workers-timeout (3 s): the command waits while the lost worker's
    nanny answers, and its output is the single machine's. A real total loss (no nanny
    answers) still stops in the time given (the test above)."""
    preload = tmp_path / "slow_restart.py"
    preload.write_text(SLOW_RESTART)
    single = tmp_path / "single.run"
    assert main([*EXPORT, str(single), "--quiet"]) == 0
    marks = tmp_path / "killed"
    env = {"RAGLAB_TEST_STARTED": str(tmp_path / "started")}
    with (
        scheduler_process(tmp_path) as (_, address, _),
        worker_process(address, env=env, options=("--preload", str(preload))),
    ):
        _arm(address, ("count_chunks",), marks)
        clustered = tmp_path / "cluster.run"
        argv = [*EXPORT, str(clustered), "--quiet", "--scheduler", address]
        status = main([*argv, "--no-workers-timeout", "3"])
    err = capsys.readouterr().err
    assert killed(marks) == {"count_chunks"}
    assert status == 0, err
    assert clustered.read_bytes() == single.read_bytes()
