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
WHOLE_PAGES = ["--chunker", "heading", "--size", "1000000"]
#: Name -> extra ``trec export`` options. "whole-pages": a heading cap above any page's length,
#: so each page is one chunk (the unit Lucene and the qrels use); "lucene-whole-pages" adds
#: Lucene's English analyzer (stop words, Porter stemming) for the lexical side.
VARIANTS = {
    "default": [],
    "whole-pages": WHOLE_PAGES,
    "lucene-whole-pages": ["--analyzer", "lucene", *WHOLE_PAGES],
}
#: Sign flips of the paired randomisation test against BM25, and their seed.
FLIPS = 10_000
SEED = 0
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


def score(
    run_file: Path, qrels_file: Path, questions: set[str]
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """ir_measures' means over ``questions``, each required in the qrels and in the run, and the
    values per measure and question."""
    qrels = list(ir_measures.read_trec_qrels(str(qrels_file)))
    run = list(ir_measures.read_trec_run(str(run_file)))
    in_qrels = {q.query_id for q in qrels}
    in_run = {s.query_id for s in run}
    if in_qrels != questions or not questions <= in_run:
        raise SystemExit(
            f"{run_file}: {len(questions)} judged questions, {len(in_qrels)} in the qrels, "
            f"{len(questions & in_run)} of them in the run"
        )
    values: dict[str, dict[str, float]] = {key: {} for key in MEASURES}
    names = {str(m): key for key, m in MEASURES.items()}
    for row in ir_measures.iter_calc(list(MEASURES.values()), qrels, run):
        key = names[str(row.measure)]
        values[key][row.query_id] = float(row.value)
    for key, per_query in values.items():
        if set(per_query) != questions:
            raise SystemExit(f"{run_file}: {key} scored {len(per_query)} of {len(questions)}")
    means = {key: math.fsum(v.values()) / len(questions) for key, v in values.items()}
    return means, values


def against(
    per_query: dict[str, dict[str, float]], base: dict[str, dict[str, float]], key: str
) -> str:
    """Questions where ``per_query`` is above, equal to and below ``base`` on ``key``."""
    diffs = [per_query[key][q] - base[key][q] for q in base[key]]
    up = sum(d > 1e-12 for d in diffs)
    down = sum(d < -1e-12 for d in diffs)
    return f"{up}/{len(diffs) - up - down}/{down}"


def paired_p(
    per_query: dict[str, dict[str, float]], base: dict[str, dict[str, float]], key: str
) -> float:
    """Two-sided p of the paired randomisation (sign-flip) test of the mean difference on
    ``key``: the share of FLIPS random sign patterns whose |mean| reaches the observed one,
    counting the observed pattern (Smucker, Allan and Carterette, CIKM 2007)."""
    d = np.array([per_query[key][q] - base[key][q] for q in sorted(base[key])])
    signs = np.random.default_rng(SEED).choice([-1.0, 1.0], size=(FLIPS, d.size))
    reached = np.abs((signs * d).mean(axis=1)) >= abs(d.mean()) - 1e-12
    return float((reached.sum() + 1) / (FLIPS + 1))


def p_text(p: float | None) -> str:
    return "" if p is None else f"{p:.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder with " + ", ".join(FILES))
    parser.add_argument("--work", type=Path, default=None, help="keep the import and runs here")
    parser.add_argument("--retrievers", default=",".join(RETRIEVERS))
    parser.add_argument("--splits", default=",".join(SPLITS))
    parser.add_argument("--variants", default=",".join(VARIANTS))
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
    for variant in args.variants.split(","):
        for split in args.splits.split(","):
            questions = judged(coll / "questions.jsonl", split)
            bm25: dict[str, dict[str, float]] = {}
            for retriever in args.retrievers.split(","):
                stem = work / f"{retriever}.{split}.{variant}"
                run_file, qrels_file = Path(f"{stem}.run"), Path(f"{stem}.qrels")
                export, seconds = raglab(
                    "trec", "export", "--level", "page", "--split", split,
                    "--retriever", retriever, *VARIANTS[variant],
                    "--corpus", str(coll / "pages"), "--questions", str(coll / "questions.jsonl"),
                    "--run", str(run_file), "--qrels", str(qrels_file), "--force", "--quiet",
                )  # fmt: skip
                problems = check_contract(read_run(run_file))
                if problems:
                    raise SystemExit(f"{run_file}: " + "; ".join(problems[:5]))
                values, per_query = score(run_file, qrels_file, questions)
                if retriever == "bm25":
                    bm25 = per_query
                compare = retriever != "bm25" and bool(bm25)  # BM25 exported first
                row = {
                    "settings": variant,
                    "split": split,
                    "retriever": retriever,
                    "queries": len(questions),
                    **values,
                    "vs_bm25_ndcg": against(per_query, bm25, "nDCG@10") if compare else "",
                    "vs_bm25_rr": against(per_query, bm25, "MRR") if compare else "",
                    "p_ndcg": paired_p(per_query, bm25, "nDCG@10") if compare else None,
                    "weight": export["settings"].get("weight"),
                    "seconds": round(seconds, 1),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
    print()
    print(
        f"{started:%Y-%m-%d %H:%M} UTC, {platform.node()}, load {load_before} -> {os.getloadavg()}"
    )
    print(
        "| Settings | Split | Retriever | Queries | nDCG@10 | R@10 | MRR "
        "| vs BM25 nDCG@10 (+/=/-) | p, nDCG@10 vs BM25 | vs BM25 RR (+/=/-) | Export (s) |"
    )
    print("|---|---|---|---:|---:|---:|---:|---|---:|---|---:|")
    for r in rows:
        print(
            f"| {r['settings']} | {r['split']} | {r['retriever']} | {r['queries']} | "
            f"{r['nDCG@10']:.4f} | {r['R@10']:.4f} | {r['MRR']:.4f} | "
            f"{r['vs_bm25_ndcg']} | {p_text(r['p_ndcg'])} | {r['vs_bm25_rr']} | {r['seconds']} |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
