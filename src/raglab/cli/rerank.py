"""``raglab rerank``: exhibit V, the learned reranker and MMR."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from raglab.cli._common import EXIT_OK, add_lab_options, console, load_lab, print_json
from raglab.pipeline.reranking import ORDERS, choose_lambda, measure_order, train_reranker

COLUMNS = (("top1", "Top-1"), ("p@3", "P@3"), ("recall@5", "R@5"), ("mrr", "MRR"))


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "rerank", help="train the reranker and compare fusion, reranked and MMR orders"
    )
    parser.add_argument(
        "--lambda", dest="lam", type=float, help="MMR lambda (default: chosen on train)"
    )
    add_lab_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    lab = load_lab(args)
    reranker = train_reranker(lab)
    chosen = choose_lambda(lab, reranker)
    lam = chosen if args.lam is None else args.lam
    if not 0 <= lam <= 1:
        raise SystemExit("raglab rerank: --lambda must lie in [0, 1]")
    rows = [
        {"split": split, "order": order, **measure_order(lab, split, reranker, order, lam)}
        for split in ("train", "test")
        for order in ORDERS
    ]
    if args.json:
        print_json(
            {
                "weights": reranker.weights,
                "bias": reranker.model.bias,
                "training_rows": reranker.rows,
                "positives": reranker.positives,
                "lambda": lam,
                "train_chosen_lambda": chosen,
                "rows": rows,
            }
        )
        return EXIT_OK
    out = console()
    weights = Table(
        "feature",
        "weight (standardised)",
        title=f"Logistic regression on {reranker.rows} rows ({reranker.positives} positive)",
    )
    for name, w in reranker.weights.items():
        weights.add_row(name, f"{w:+.3f}")
    out.print(weights)
    table = Table(
        "Split",
        "Order",
        *(label for _, label in COLUMNS),
        title=f"MMR lambda = {lam:.2f} (chosen on train: {chosen:.2f})",
    )
    for row in rows:
        table.add_row(
            str(row["split"]), str(row["order"]), *(f"{float(row[key]):.3f}" for key, _ in COLUMNS)
        )
    out.print(table)
    return EXIT_OK
