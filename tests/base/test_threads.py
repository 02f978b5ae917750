"""Tests for raglab.base.threads: the thread count "auto" chooses, and the pool that runs parts.

Oracle: hand-worked cases of the rule (cores less the running load, rounded, at most the
environment's share, at least 1); for the pool, the parts each run counted and a barrier that
only two threads at once can pass. No timings.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from typing import Any

import pytest

from raglab import settings as S
from raglab.base.threads import (
    check_threads,
    choose_threads,
    even_parts,
    process_share,
    resolve_threads,
    run_parts,
    running_load,
    usable_cores,
)


@pytest.mark.parametrize(
    ("cores", "load", "share", "want"),
    [
        (2, 0.0, None, 2),  # idle: every core
        (8, 0.0, None, 8),
        (2, 1.0, None, 1),  # one competing job on two cores: the other core
        (8, 3.0, None, 5),
        (8, 2.4, None, 6),  # 5.6 rounds to 6
        (8, 2.6, None, 5),  # 5.4 rounds to 5
        (2, 2.0, None, 1),  # load reaches the cores: one thread, never none
        (2, 9.5, None, 1),
        (1, 0.0, None, 1),  # an affinity of one core
        (1, 3.0, None, 1),
        (16, 0.0, 1, 1),  # a Dask worker among several: its share
        (16, 0.0, 4, 4),
        (16, 14.0, 4, 2),  # the share caps, the load still counts
        (4, 0.0, 64, 4),  # a share beyond the cores gives the cores
    ],
)
def test_choose_threads_hand_worked(cores: int, load: float, share: int | None, want: int) -> None:
    assert choose_threads(cores, load, share) == want


def test_the_setting_is_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    assert S.THREADS == "auto" and S.fixed("threads") is S.THREADS
    assert check_threads(S.THREADS) == check_threads("auto") == "auto"
    assert check_threads(3) == resolve_threads(3) == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert resolve_threads(S.THREADS) == resolve_threads("auto") == 1


def test_auto_reads_the_machine_within_its_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    cores = usable_cores()
    assert cores == len(os.sched_getaffinity(0))
    assert running_load() >= 0.0
    assert process_share() is None
    assert 1 <= resolve_threads("auto") <= cores


@pytest.mark.parametrize(
    ("text", "want"), [("1", 1), ("6", 6), ("", None), ("0", None), ("x", None)]
)
def test_the_share_is_omp_num_threads_when_positive(
    monkeypatch: pytest.MonkeyPatch, text: str, want: int | None
) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", text)
    assert process_share() == want


@pytest.mark.parametrize("bad", [0, -1, 2.0, True, "two", "Auto"])
def test_bad_thread_counts_are_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="threads must be 'auto' or a positive whole number"):
        check_threads(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("n", "at_most", "smallest", "want"),
    [
        (10, 4, 1, [0, 2, 5, 7, 10]),
        (10, 4, 4, [0, 5, 10]),  # runs of at least 4: two
        (3, 4, 8, [0, 3]),  # too few for two runs: one
        (0, 4, 8, [0, 0]),
        (8, 8, 1, list(range(9))),
    ],
)
def test_even_parts_hand_worked(n: int, at_most: int, smallest: int, want: list[int]) -> None:
    assert even_parts(n, at_most, smallest) == want


@pytest.mark.parametrize("threads", [1, 2, 5])
def test_run_parts_runs_every_part_once(threads: int) -> None:
    done: list[int] = []
    lock = threading.Lock()

    def work(i: int) -> None:
        with lock:
            done.append(i)

    run_parts(23, threads, work)
    assert sorted(done) == list(range(23))


def test_run_parts_runs_on_that_many_threads_at_once() -> None:
    """Each of the first two parts waits at a barrier for the other: on one thread the barrier
    would break (its timeout is a guard against hanging, not a measurement)."""
    barrier = threading.Barrier(2, timeout=60)
    seen: set[int] = set()

    def work(i: int) -> None:
        if i < 2:
            barrier.wait()
        seen.add(threading.get_ident())

    run_parts(6, 2, work)
    assert len(seen) == 2 and threading.get_ident() in seen


def test_run_parts_raises_a_parts_error() -> None:
    def work(i: int) -> None:
        if i == 3:
            raise ValueError("part 3 failed")

    with pytest.raises(ValueError, match="part 3 failed"):
        run_parts(8, 3, work)


_BLAS_PROBE = """
from threadpoolctl import threadpool_info
from raglab.base.threads import blas_threads

def counts():
    return sorted({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})

before = counts()
with blas_threads(2):
    inside = counts()
print(before, inside, counts())
"""


def test_blas_threads_sets_blas_inside_the_block_only() -> None:
    """oracle: threadpoolctl's own report of the BLAS libraries' thread counts, read in a fresh
    interpreter started on one BLAS thread (so what earlier tests did to this process's BLAS
    cannot decide it): 1 before, 2 inside, 1 again after."""
    import subprocess
    import sys

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, "-c", _BLAS_PROBE], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split("] ") == ["[1", "[2", "[1]\n"]


def _parts_in_a_fork(out: Any) -> None:
    seen: set[int] = set()
    lock = threading.Lock()

    def work(i: int) -> None:
        with lock:
            seen.add(i)

    run_parts(6, 2, work)
    out.put(sorted(seen))


def test_a_forked_child_runs_parts_on_a_pool_of_its_own() -> None:
    """The parent's pool exists when the child is forked; the child's parts must still run (the
    inherited pool's threads are not in the child). The join's timeout only guards against a
    hang; the assertion is on the child's answer and exit status."""
    run_parts(6, 2, lambda i: None)
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    child = ctx.Process(target=_parts_in_a_fork, args=(out,))
    child.start()
    child.join(60)
    if child.is_alive():
        child.kill()
        child.join()
    assert child.exitcode == 0
    assert out.get(timeout=5) == list(range(6))
