"""What a cap on LSA's training windows costs: LSA's nDCG@10 on Cranfield's training split by cap.

    python benchmarks/bench_lsa_cap.py CRANFIELD_FOLDER            # caps 904 (none), 450, 225, 100
    python benchmarks/bench_lsa_cap.py CRANFIELD_FOLDER --caps 600,300

CRANFIELD_FOLDER is ``raglab import glasgow``'s output (pages/ and questions.jsonl). For each
cap a fresh lab (Snowball stemming, one chunk per abstract) keeps that many of the rule's
windows, evenly spaced by index (``raglab.embedding.lsa.capped_windows``), fits LSA at rank
min(48, windows) and ranks the answerable training questions by LSA alone; the row gives the
windows kept, their share of the rule's, the fit's seconds and the measures of
``raglab.pipeline.retrieval.measure``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "src"))

from raglab.embedding.lsa import window_count
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import measure
from raglab.run_settings import ChunkingKey, RetrievalSettings

#: One chunk per Cranfield abstract (no abstract reaches this size), as the tests use.
WHOLE_PAGES = ChunkingKey("heading", 100_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--caps", default="100000,450,225,100")
    args = parser.parse_args()
    print("| Cap | Windows | Share of the rule's | Fit (s) | nDCG@10 | R@10 | MRR |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for cap in (int(c) for c in args.caps.split(",")):
        lab = Lab.load(args.folder / "pages", args.folder / "questions.jsonl", stem=True)
        lab.indexes.max_windows = cap
        started = time.perf_counter()
        model = lab.indexes.lsa
        fit = time.perf_counter() - started
        n = len(lab.indexes.lsa_windows)
        rule = window_count(lab.corpus.n_words)
        settings = RetrievalSettings("lsa", chunking=WHOLE_PAGES)
        got = measure(lab, "train", settings)
        share = f"{n / rule:.1%}"
        print(
            f"| {cap:,} | {n:,} (rank {model.rank}) | {share} | {fit:.1f} | "
            f"{got['ndcg@10']:.4f} | {got['recall@10']:.4f} | {got['mrr']:.4f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
