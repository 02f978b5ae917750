"""Tests that every benchmark script still imports, so `make bench` cannot break unseen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
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
    2-worker LocalCluster's, bit for bit: run at 1,000 chunks it prints its table with the
    agreement, so a call that no longer matches the library (a renamed helper, a keyword
    argument the search now requires) fails here, not at the next full run."""
    out = _run("bench_distributed.py", "--sizes", "1000", tmp_path=tmp_path)
    assert "| 1,000 | indexing |" in out
    assert "documents and scores bit for bit" in out
    assert "U, 48 singular values, Vt, idf and ||A||_F^2 bit for bit" in out


def test_the_command_line_benchmark_runs_small_with_the_scheduler_apart(tmp_path: Path) -> None:
    """oracle: the benchmark's own check, ``raglab run --json``'s output on one machine and on
    a cluster compared as bytes: at 300 chunks it prints a row saying so, with a peak for the
    client, for the scheduler's own process (the cluster runs apart from the client, so the
    client's peak is its own) and for each of the two workers."""
    out = _run("bench_distributed.py", "--cli", "300", tmp_path=tmp_path)
    rows = [line for line in out.splitlines() if line.startswith("| 300 |")]
    assert len(rows) == 1, out
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert cells[-1] == "same bytes"
    assert cells[1] == "3"  # pages of 100 sections, one chunk each
    client, scheduler, workers = cells[6], cells[7], cells[8].split(", ")
    assert len(workers) == 2
    # Each a process's peak: at least an interpreter with numpy (tens of MB), none zero.
    assert all(float(x.replace(",", "")) > 30 for x in (client, scheduler, *workers)), rows


def test_the_sweep_runs_small_and_finds_bm25s_ranking_as_we_do(
    sweep_run: tuple[int | None, str],
) -> None:
    """oracle: bm25s (the peer), its rankings checked equal to ours before anything is timed:
    the sweep at 2,000 chunks prints a row for each mix and backend with that agreement. (It
    runs beside the session from its start, its cache in the session's temporary folder:
    ``sweep_run``.)"""
    code, out = sweep_run
    assert code == 0, out[-3000:]
    rows = [line for line in out.splitlines() if line.startswith("| 2,000 |")]
    assert len(rows) >= 4, out
    assert all("same rankings on" in row for row in rows[:4]), rows


def test_the_sweep_draws_cranfields_mixes_from_its_own_collection(tmp_path: Path) -> None:
    """oracle: the Cranfield files read here directly (``.I`` records: 1,400 documents, 225
    queries) and the mixes' definitions: real is the 225 queries, every zipf term is a term of
    the collection and the most frequent one drawn is the collection's most frequent term
    (p(rank 1) ~ 1/H_V, about twice rank 2's), every chunk query is 3 to 8 distinct terms of one
    document. The collection is drawn in a fresh process, as the sweep's workers draw it."""
    fixtures = ROOT / "tests" / "fixtures" / "cranfield"
    out = tmp_path / "cranfield.json"
    code = (
        "import json, sys\n"
        f"sys.path[:0] = [{str(BENCH)!r}, {str(ROOT / 'src')!r}]\n"
        "import bench_sweep\n"
        "docs, queries = bench_sweep._data(bench_sweep.CRANFIELD)\n"
        f"open({str(out)!r}, 'w').write(json.dumps({{'docs': docs, 'queries': queries}}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(out.read_text())
    docs, queries = data["docs"], data["queries"]
    records = [
        sum(line.startswith(".I ") for line in (fixtures / name).read_text().splitlines())
        for name in ("cran.all.1400", "cran.qry")
    ]
    assert [len(docs), len(queries["real"])] == records == [1400, 225]
    assert sorted(queries) == ["chunk", "real", "zipf"]
    counts = Counter(t for doc in docs for t in doc)
    zipf = Counter(t for q in queries["zipf"] for t in q)
    assert len(queries["zipf"]) == 1000 and set(zipf) <= set(counts)
    assert all(3 <= len(q) <= 8 for q in queries["zipf"])
    assert zipf.most_common(1)[0][0] == counts.most_common(1)[0][0]
    doc_sets = [set(doc) for doc in docs]
    assert len(queries["chunk"]) == 1000
    for q in queries["chunk"]:
        assert len(set(q)) == len(q) and any(set(q) <= d for d in doc_sets), q
        assert 3 <= len(q) <= 8 or any(set(q) == d for d in doc_sets), q


def test_the_sweep_refuses_a_size_it_does_not_know(tmp_path: Path) -> None:
    """oracle: the exit-status table (2 = bad usage) and the option's words: ``--sizes`` takes
    chunk counts and ``cranfield``; anything else is a one-line usage error naming the word,
    before any worker starts."""
    done = subprocess.run(
        [sys.executable, str(BENCH / "bench_sweep.py"), "--sizes", "cranfield,lots"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith("--sizes: 'lots' is neither a positive chunk count nor 'cranfield'")
    )
