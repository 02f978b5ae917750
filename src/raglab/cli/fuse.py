"""``raglab fuse``: exhibit IV, every ranker measured side by side."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from raglab.cli._common import (
    EXIT_OK,
    METRIC_COLUMNS,
    add_lab_options,
    console,
    load_lab,
    print_json,
)
from raglab.pipeline.retrieval import choose_weight, ranker_table

NAMES = {"bm25": "BM25", "lsa": "LSA", "rrf": "RRF", "score": "Score fusion"}


def register(sub: Any) -> None:
    parser = sub.add_parser("fuse", help="BM25, LSA, RRF and score fusion measured on one split")
    parser.add_argument("--split", choices=("test", "train"), default="test")
    parser.add_argument(
        "--weight", type=float, help="score-fusion weight of BM25 (default: chosen on train)"
    )
    add_lab_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    lab = load_lab(args)
    chosen = choose_weight(lab)
    weight = chosen if args.weight is None else args.weight
    if not 0 <= weight <= 1:
        raise SystemExit("raglab fuse: --weight must lie in [0, 1]")
    table_data = ranker_table(lab, split=args.split, weight=weight)
    if args.json:
        print_json(
            {
                "split": args.split,
                "weight": weight,
                "train_chosen_weight": chosen,
                "rankers": table_data,
            }
        )
        return EXIT_OK
    n = len(lab.split(args.split, answerable=True))
    table = Table(
        "Ranker",
        *(label for _, label in METRIC_COLUMNS),
        title=f"{args.split} split, {n} answerable questions",
    )
    for name, metrics in table_data.items():
        table.add_row(NAMES[name], *(f"{metrics[key]:.3f}" for key, _ in METRIC_COLUMNS))
    out = console()
    out.print(table)
    out.print(f"Score fusion weight w = {weight:.2f} (chosen on train: {chosen:.2f})")
    return EXIT_OK
