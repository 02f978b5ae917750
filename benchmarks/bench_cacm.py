"""CACM's judged queries: nDCG@10, R@10 and MRR of each retriever's exported run, by ir_measures.

Everything goes through the real command line, in subprocesses: ``raglab import glasgow`` turns
the distributed files (``cacm.all``, ``query.text``, ``qrels.text``) into pages and questions with
no option, then ``raglab trec export --level page --split S --retriever R`` writes one run and its
qrels per retriever and split. Each run is checked against the export's contract (ranks 1, 2, ...,
no page twice, scores strictly decreasing within a question, in double and in float32 precision)
and scored by ir_measures (its default provider) against the qrels exported with it.

Query set, accounted for explicitly: the split's judged questions (those with a relevance
judgment; CACM judges 52 of its 64 queries). Every one must be in the qrels and in the run before
a mean is taken, and the mean divides by their count, so a question the run misses would count 0
rather than vanish. R@10 is ir_measures' recall (relevant pages in the first 10 over all relevant
pages), not RAG lab's recall@k, which is a hit rate; MRR is ir_measures' RR, the reciprocal rank
of the first relevant page.

    RAGLAB_CACHE_DIR=/tmp/mine python benchmarks/bench_cacm.py --data DIR_WITH_CACM_FILES
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ir_measures
import numpy as np
from ir_measures import RR, R, nDCG

RETRIEVERS = ("bm25", "lsa", "neural", "neural-rrf", "neural-score")
SPLITS = ("test", "all")
#: Name -> extra ``trec export`` options. "whole pages": a heading cap above any page's length,
#: so each page is one chunk (the unit Lucene and the qrels use).
CHUNKINGS = {"default": [], "whole-pages": ["--chunker", "heading", "--size", "1000000"]}
MEASURES = {"nDCG@10": nDCG @ 10, "R@10": R @ 10, "MRR": RR}
FILES = ("cacm.all", "query.text", "qrels.text")


def raglab(*args: str) -> tuple[dict[str, Any], float]:
    """Run ``raglab ARGS --json`` in a subprocess of this interpreter; its JSON and seconds."""
    cmd = [sys.executable, "-m", "raglab", *args, "--json"]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr}")
    return json.loads(done.stdout), seconds


def judged(questions: Path, split: str) -> set[str]:
    rows = [json.loads(line) for line in questions.read_text().splitlines() if line.strip()]
    return {r["id"] for r in rows if (split == "all" or r["split"] == split) and r.get("pages")}


def read_run(path: Path) -> dict[str, list[tuple[str, int, float]]]:
    run: dict[str, list[tuple[str, int, float]]] = {}
    for line in path.read_text().splitlines():
        qid, _q0, doc, rank, score, _tag = line.split()
        run.setdefault(qid, []).append((doc, int(rank), float(score)))
    return run


def check_contract(run: dict[str, list[tuple[str, int, float]]]) -> list[str]:
    """Where the run breaks the export's contract (empty when it keeps it)."""
    problems = []
    for qid, rows in run.items():
        docs = [d for d, _, _ in rows]
        ranks = [r for _, r, _ in rows]
        scores = np.array([s for _, _, s in rows])
        if ranks != list(range(1, len(rows) + 1)):
            problems.append(f"{qid}: ranks are not 1..{len(rows)}")
        if len(set(docs)) != len(docs):
            problems.append(f"{qid}: a page is listed twice")
        if not np.all(np.diff(scores) < 0):
            problems.append(f"{qid}: scores do not strictly decrease")
        if not np.all(np.diff(scores.astype(np.float32)) < 0):
            problems.append(f"{qid}: scores do not strictly decrease in float32")
    return problems


def score(run_file: Path, qrels_file: Path, questions: set[str]) -> dict[str, float]:
    """ir_measures' means over ``questions``, each required in the qrels and in the run."""
    qrels = list(ir_measures.read_trec_qrels(str(qrels_file)))
    run = list(ir_measures.read_trec_run(str(run_file)))
    in_qrels = {q.query_id for q in qrels}
    in_run = {s.query_id for s in run}
    if in_qrels != questions or not questions <= in_run:
        raise SystemExit(
            f"{run_file}: {len(questions)} judged questions, {len(in_qrels)} in the qrels, "
            f"{len(questions & in_run)} of them in the run"
        )
    values: dict[str, list[float]] = {key: [] for key in MEASURES}
    names = {str(m): key for key, m in MEASURES.items()}
    seen: dict[str, set[str]] = {key: set() for key in MEASURES}
    for row in ir_measures.iter_calc(list(MEASURES.values()), qrels, run):
        key = names[str(row.measure)]
        values[key].append(float(row.value))
        seen[key].add(row.query_id)
    for key, queries in seen.items():
        if queries != questions:
            raise SystemExit(f"{run_file}: {key} scored {len(queries)} of {len(questions)}")
    return {key: math.fsum(v) / len(questions) for key, v in values.items()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder with " + ", ".join(FILES))
    parser.add_argument("--work", type=Path, default=None, help="keep the import and runs here")
    parser.add_argument("--retrievers", default=",".join(RETRIEVERS))
    parser.add_argument("--splits", default=",".join(SPLITS))
    parser.add_argument("--chunkings", default=",".join(CHUNKINGS))
    parser.add_argument("--json", type=Path, default=None, help="also write the rows as JSON")
    args = parser.parse_args(argv)
    if "RAGLAB_CACHE_DIR" not in os.environ:
        print("note: RAGLAB_CACHE_DIR is not set; the neural vectors go to the default cache")
    work = args.work or Path(tempfile.mkdtemp(prefix="raglab-cacm-"))
    work.mkdir(parents=True, exist_ok=True)
    started = dt.datetime.now(dt.UTC)
    load_before = os.getloadavg()
    coll = work / "cacm"
    docs, queries, qrels_in = (str(args.data / name) for name in FILES)
    summary, seconds = raglab(
        "import", "glasgow", "--docs", docs, "--queries", queries, "--qrels", qrels_in,
        "--out", str(coll), "--force", "--quiet",
    )  # fmt: skip
    print(
        f"import: {summary['pages']} pages, questions {summary['questions']}, "
        f"{summary['labels']} labels, {seconds:.1f} s"
    )
    rows = []
    for chunking in args.chunkings.split(","):
        for split in args.splits.split(","):
            questions = judged(coll / "questions.jsonl", split)
            for retriever in args.retrievers.split(","):
                stem = work / f"{retriever}.{split}.{chunking}"
                run_file, qrels_file = stem.with_suffix(".run"), stem.with_suffix(".qrels")
                export, seconds = raglab(
                    "trec", "export", "--level", "page", "--split", split,
                    "--retriever", retriever, *CHUNKINGS[chunking],
                    "--corpus", str(coll / "pages"), "--questions", str(coll / "questions.jsonl"),
                    "--run", str(run_file), "--qrels", str(qrels_file), "--force", "--quiet",
                )  # fmt: skip
                problems = check_contract(read_run(run_file))
                if problems:
                    raise SystemExit(f"{run_file}: " + "; ".join(problems[:5]))
                values = score(run_file, qrels_file, questions)
                row = {
                    "chunking": chunking,
                    "split": split,
                    "retriever": retriever,
                    "queries": len(questions),
                    **values,
                    "weight": export["settings"].get("weight"),
                    "seconds": round(seconds, 1),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
    print()
    print(
        f"{started:%Y-%m-%d %H:%M} UTC, {platform.node()}, load {load_before} -> {os.getloadavg()}"
    )
    print("| Chunks | Split | Retriever | Queries | nDCG@10 | R@10 | MRR | Export (s) |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['chunking']} | {r['split']} | {r['retriever']} | {r['queries']} | "
            f"{r['nDCG@10']:.4f} | {r['R@10']:.4f} | {r['MRR']:.4f} | {r['seconds']} |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
