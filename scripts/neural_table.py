"""Print the neural retrievers beside BM25 and LSA: the handbook's test split overall and per kind
(R@1, R@5, MRR, nDCG@10), and nDCG@10 on any other collection given as a folder and questions file.

    python scripts/neural_table.py                                  # the handbook
    python scripts/neural_table.py --corpus DIR --questions FILE    # a collection from raglab import

Every number is the library's ``measure`` on the answerable questions of the split; the fusion
weights are chosen on the training split.
"""

from __future__ import annotations

import argparse

from raglab.metrics.measures import evaluate
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import rank_split, relevance_of
from raglab.run_settings import RetrievalSettings

RANKERS = ("bm25", "lsa", "neural", "neural-rrf", "rrf", "neural-score")
COLUMNS = ("recall@1", "recall@5", "mrr", "ndcg@10")


def table(lab: Lab, split: str, *, by_kind: bool) -> None:
    qs = lab.split(split, answerable=True)
    rels = relevance_of(lab, split)
    groups: dict[str, list[int]] = {"all": list(range(len(qs)))}
    if by_kind:
        for i, q in enumerate(qs):
            groups.setdefault(q.kind, []).append(i)
    rankings = {name: rank_split(lab, split, RetrievalSettings(name)) for name in RANKERS}
    print(f"{'kind':16s} {'n':>3s} {'ranker':13s} " + " ".join(f"{c:>9s}" for c in COLUMNS))
    for kind, idx in groups.items():
        for name in RANKERS:
            m = evaluate(
                [rankings[name][i] for i in idx],
                [rels[i] for i in idx],
                ks=(1, 3, 5, 10),
                ndcg_k=10,
                precision_k=3,
            )
            cells = " ".join(f"{m[c]:9.3f}" for c in COLUMNS)
            print(f"{kind:16s} {len(idx):3d} {name:13s} {cells}")
        print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus")
    parser.add_argument("--questions")
    parser.add_argument("--split", default="test")
    args = parser.parse_args()
    lab = Lab.load(args.corpus, args.questions)
    table(lab, args.split, by_kind=args.corpus is None)


if __name__ == "__main__":
    main()
