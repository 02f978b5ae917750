"""Tests that every benchmark script still imports, so `make bench` cannot break unseen."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"


def test_every_benchmark_module_imports() -> None:
    """oracle: Python's own import. Every ``benchmarks/*.py`` is imported in one fresh process
    (benchmarks/ and src/ first on the path, as the scripts put them), so a helper renamed in
    one benchmark and still imported by another fails here rather than at the next
    ``make bench``. Nothing is run: each script's work sits behind ``if __name__ == "__main__"``."""
    names = sorted(p.stem for p in BENCH.glob("*.py"))
    assert {"run", "common", "bench_sweep", "bench_distributed", "bench_neural"} <= set(names)
    code = (
        "import importlib, sys\n"
        f"sys.path[:0] = [{str(BENCH)!r}, {str(ROOT / 'src')!r}]\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        "    print('imported', name)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [w for n in names for w in ("imported", n)]


def _run(script: str, *args: str, tmp_path: Path) -> str:
    """One benchmark script run small, in a fresh process, its cache in ``tmp_path``."""
    env = {**os.environ, "RAGLAB_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_cluster_benchmark_runs_small_and_finds_the_sides_equal(tmp_path: Path) -> None:
    """oracle: the benchmark's own check, one machine's BM25 top 10 and LSA model against a
    2-worker LocalCluster's, bit for bit: run at 3,000 chunks it prints its table with the
    agreement, so a call that no longer matches the library (a renamed helper, a keyword
    argument the search now requires) fails here, not at the next full run."""
    out = _run("bench_distributed.py", "--sizes", "3000", tmp_path=tmp_path)
    assert "| 3,000 | indexing |" in out
    assert "documents and scores bit for bit" in out
    assert "U, 48 singular values, Vt, idf and ||A||_F^2 bit for bit" in out


def test_the_sweep_runs_small_and_finds_bm25s_ranking_as_we_do(tmp_path: Path) -> None:
    """oracle: bm25s (the peer), its rankings checked equal to ours before anything is timed:
    the sweep at 2,000 chunks prints a row for each mix and backend with that agreement."""
    out = _run("bench_sweep.py", "--sizes", "2000", tmp_path=tmp_path)
    rows = [line for line in out.splitlines() if line.startswith("| 2,000 |")]
    assert len(rows) >= 4, out
    assert all("same rankings on" in row for row in rows[:4]), rows
