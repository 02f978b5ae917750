"""A command on the cluster fits LSA only when it reads the model, and ``raglab lsa`` reads the
model held on the workers. (Exhibit III of a report read off the workers, no term's row or window
brought to the client: tests/distributed/test_cluster_run_report.py.)

Oracle: the same command on one machine (the same bytes); Dask's task stream for the work the
cluster did (the tasks' function names); for the client's holding, the number of questions and
the rank.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from distributed import get_task_stream
from raglab.cli.main import main
from tests.distributed.cluster_fixtures import recorded_labs

#: The tasks of an LSA fit: the windows cut from the pages, A's term blocks, the small problem.
FIT_TASKS = ("cut_window_pieces", "term_block", "_small_problem")


def _address(client: Any) -> list[str]:
    return ["--scheduler", str(client.scheduler.address)]


def _fit_tasks(stream: Any) -> dict[str, int]:
    """How many tasks of each of :data:`FIT_TASKS` the cluster ran while ``stream`` recorded."""
    keys = [str(task["key"]) for task in stream.data]
    return {name: sum(key.startswith(f"{name}-") for key in keys) for name in FIT_TASKS}


#: Commands that read no LSA model.
NO_LSA = (
    ["trec", "export", "--retriever", "bm25", "--run", "RUN"],
    ["run", "--retriever", "bm25", "--no-rerank", "--json"],
)


def test_a_command_that_reads_no_lsa_fits_none(
    capsys: pytest.CaptureFixture[str], client: Any, tmp_path: Path
) -> None:
    """Oracle: the command on one machine (its run file, or its JSON). ``trec export --retriever
    bm25`` and ``run --retriever bm25 --no-rerank`` read no LSA: on the cluster they print and
    write the same bytes and run no task of an LSA fit (before, every cluster command cut the
    windows and fitted the model first); ``run --retriever bm25`` with its reranker, whose
    features read the LSA cosine, still fits it, once."""
    for argv in NO_LSA:
        outputs = []
        for extra in ([], _address(client)):
            run = tmp_path / f"{argv[0]}{len(extra)}.run"
            with get_task_stream(client) as stream:
                assert main([str(run) if a == "RUN" else a for a in argv] + extra) == 0
            printed = capsys.readouterr().out.replace(str(run), "RUN")
            outputs.append((printed, run.read_bytes() if run.exists() else b""))
        assert outputs[1] == outputs[0] and len(outputs[0][0] + outputs[0][1].decode()) > 1000
        assert _fit_tasks(stream) == dict.fromkeys(FIT_TASKS, 0), argv
    with get_task_stream(client) as stream:
        assert main(["run", "--retriever", "bm25", "--json", *_address(client)]) == 0
    capsys.readouterr()
    counts = _fit_tasks(stream)
    assert counts["_small_problem"] == 1 and counts["cut_window_pieces"] > 0, counts


@pytest.mark.parametrize(
    "argv",
    [
        ["lsa", "info", "--json"],
        ["lsa", "info"],
        ["lsa", "neighbours", "tripod", "--top", "12", "--json"],
        ["lsa", "neighbours", "E-4107"],
    ],
)
def test_raglab_lsa_reads_the_model_on_the_workers(
    capsys: pytest.CaptureFixture[str],
    client: Any,
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
) -> None:
    """Oracle: the command on one machine. ``raglab lsa info`` and ``raglab lsa neighbours``
    with ``--scheduler`` print the same bytes while the model stays on the workers: never
    gathered, no window cut on the client (before, the command had no cluster option)."""
    assert main(argv) == 0
    single = capsys.readouterr().out
    labs = recorded_labs(monkeypatch)
    assert main([*argv, *_address(client)]) == 0
    assert capsys.readouterr().out == single
    (lab,) = labs
    assert not lab.indexes.lsa.gathered
    assert "lsa_windows" not in vars(lab.indexes)
