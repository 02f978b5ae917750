"""A failure Dask gives up on is one line and leaves no output.

Oracles: the exit status and stderr of the command line (one line naming the failure, no
traceback), the files on disk (none written), and Dask's own exception kinds under a cluster
that allows no retry (``distributed.scheduler.allowed-failures`` 0, so the first death of a
task's worker is final).
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import dask
import pytest

import distributed  # noqa: F401  (loads its defaults into dask.config before they are set)
import raglab.distributed.evaluation as evaluation_module
from raglab.cli.main import main
from raglab.distributed.cluster import ClusterFailed, connect


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _die() -> None:
    os._exit(1)


def test_an_unreachable_scheduler_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    address = f"tcp://127.0.0.1:{_free_port()}"  # nothing listens there
    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        with (
            pytest.raises(ClusterFailed, match="cannot reach the Dask scheduler at"),
            connect(scheduler=address, connect_timeout=2),
        ):
            pass
        assert main(["fuse", "--json", "--scheduler", address, "--connect-timeout", "2"]) == 2
    captured = capsys.readouterr()
    assert "cannot reach the Dask scheduler" in captured.err
    assert "Traceback" not in captured.err
    assert "cannot reach the Dask scheduler" in json.loads(captured.out)["error"]["message"]


def test_a_worker_that_keeps_dying_is_one_line() -> None:
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        pytest.raises(ClusterFailed, match=r"KilledWorker.*nothing was written"),
        connect(workers=1) as client,
    ):
        client.submit(_die, pure=False).result()


def test_a_failed_export_writes_no_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers die while the export measures its fusion weight on train: the command says
    so in one line and neither the run nor the qrels file exists afterwards."""

    def dying(client: Any, *args: object, **kwargs: object) -> None:
        client.submit(_die, pure=False).result()

    monkeypatch.setattr(evaluation_module, "evaluate_on_cluster", dying)
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    argv = ["trec", "export", "--retriever", "score", "--run", str(run), "--qrels", str(qrels)]
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        assert main([*argv, "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert "the Dask cluster could not finish the work (KilledWorker" in err
    assert "Traceback" not in err
    assert not run.exists() and not qrels.exists()


def test_a_worker_killed_while_the_cluster_starts_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A worker process killed as it starts (a preload, Dask's own start-up hook, that sends
    SIGKILL to its process): Dask raises "Nanny failed to start"; ``run`` and ``report`` say so
    in one line, exit 2, and with --json print the error as JSON on stdout; no report is
    written."""
    preload = tmp_path / "killed_on_start.py"
    preload.write_text(
        "import os\nimport signal\n\n\ndef dask_setup(worker):\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n",
        encoding="utf-8",
    )
    with dask.config.set({"distributed.worker.preload": [str(preload)]}):
        with (
            pytest.raises(ClusterFailed, match=r"could not start \(RuntimeError: Nanny failed"),
            connect(workers=1),
        ):
            pass
        out = tmp_path / "report.json"
        for command in (["run"], ["report", "--out", str(out)]):
            assert main([*command, "--json", "--workers", "1"]) == 2
            captured = capsys.readouterr()
            said = f"raglab {command[0]}: "
            lines = [line for line in captured.err.splitlines() if line.startswith(said)]
            assert len(lines) == 1 and "could not start" in lines[0]
            assert "Traceback" not in captured.err
            error = json.loads(captured.out)["error"]
            assert error["message"] == lines[0].removeprefix(said)
            assert "Nanny failed to start" in error["message"]
    assert not out.exists()
