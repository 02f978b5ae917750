"""Each worker's peak RSS by task function in a whole ``raglab run --retriever bm25`` on 2 workers.

    python benchmarks/bench_worker_stages.py 120000

The command line's generated folder (``bench_distributed.make_cli_corpus``: 100 one-chunk
sections a page, 200 questions) is run by ``raglab run --retriever bm25 --json --scheduler``
against a LocalCluster of 2 single-threaded workers. A worker plugin resets the process's
high-water mark (``/proc/self/clear_refs``) as each task starts and reads VmHWM as it ends, so
each row is the worker's peak while that function ran, beside its RSS when it started (memory
freed earlier but kept by the allocator included) and the peak above the idle worker, per chunk
of the worker's half. The timeline after it merges consecutive tasks of one function. The
output's path is printed, to compare the bytes with another run.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(1, str(Path(__file__).resolve().parent))

from bench_distributed import make_cli_corpus
from dask.utils import key_split
from distributed.diagnostics.plugin import WorkerPlugin


def _kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


class StagePeaks(WorkerPlugin):
    """Per task: its function, RSS at the start, the peak while it ran, RSS at the end (KB)."""

    def setup(self, worker: Any) -> None:
        self.idle = _kb("VmRSS")
        self.before = self.idle
        self.seq: list[tuple[str, int, int, int]] = []
        worker.stage_peaks = self

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        if finish == "executing":
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            self.before = _kb("VmRSS")
        elif start == "executing":
            self.seq.append((key_split(key), self.before, _kb("VmHWM"), _kb("VmRSS")))


def _report(dask_worker: Any) -> dict[str, Any]:
    p = dask_worker.stage_peaks
    return {"idle": p.idle, "seq": p.seq}


def main(n_chunks: int) -> None:
    from raglab.cli.main import main as raglab
    from raglab.distributed.cluster import connect

    root = Path(tempfile.mkdtemp(prefix="bench-worker-stages-"))
    questions = make_cli_corpus(root / "data", n_chunks)
    os.environ["RAGLAB_CACHE_DIR"] = str(root / "cache")
    with connect(workers=2) as client:
        client.register_plugin(StagePeaks(), name="stage-peaks")
        started = time.perf_counter()
        argv = ["run", "--corpus", str(root / "data" / "pages"), "--questions", str(questions),
                "--retriever", "bm25", "--json", "--scheduler", client.scheduler.address]  # fmt: skip
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = raglab(argv)
        print(f"exit {code} in {time.perf_counter() - started:.0f} s")
        (root / "out.json").write_text(out.getvalue(), encoding="utf-8")
        got = client.run(_report)
    half = n_chunks / 2
    for address, r in sorted(got.items()):
        idle = r["idle"]
        print(f"worker {address}: idle {idle / 1024:.0f} MB")
        peaks: dict[str, tuple[int, int, int]] = {}
        for name, before, hwm, _ in r["seq"]:
            old = peaks.get(name, (0, 0, 0))
            peaks[name] = (max(old[0], hwm), old[1] + 1, max(old[2], before))
        for name, (hwm, count, before) in sorted(peaks.items(), key=lambda kv: -kv[1][0]):
            print(
                f"  {name:28s} x{count:5d} peak {hwm / 1024:7.0f} MB, at its start "
                f"{before / 1024:7.0f} MB, {(hwm - idle) / half:5.2f} KB a chunk above idle"
            )
    for address, r in sorted(got.items()):
        print(f"timeline {address}")
        runs: list[list[Any]] = []
        for name, before, hwm, after in r["seq"]:
            if runs and runs[-1][0] == name:
                runs[-1][1] += 1
                runs[-1][3] = max(runs[-1][3], hwm)
                runs[-1][4] = after
            else:
                runs.append([name, 1, before, hwm, after])
        for name, count, before, hwm, after in runs:
            print(
                f"  {name:28s} x{count:4d} start {before / 1024:6.0f} "
                f"peak {hwm / 1024:6.0f} end {after / 1024:6.0f} MB"
            )
    print("output", root / "out.json")


if __name__ == "__main__":
    main(int(sys.argv[1]))
