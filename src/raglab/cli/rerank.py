"""``raglab rerank``: exhibit V, the learned reranker and MMR."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from raglab.cli._common import EXIT_OK, add_lab_options, console, load_lab, print_json
from raglab.pipeline.exhibits import fitted_reranker, rerank_rows, reranker_summary
from raglab.pipeline.metric_table import ORDER_METRICS

#: The columns of the table of orders (kept under its old name).
COLUMNS = ORDER_METRICS


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "rerank", help="train the reranker and compare fusion, reranked and MMR orders"
    )
    parser.add_argument(
        "--lambda", dest="lam", type=float, help="MMR lambda (default: chosen on train)"
    )
    add_lab_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    lab = load_lab(args)
    reranker, chosen = fitted_reranker(lab)
    lam = chosen if args.lam is None else args.lam
    if not 0 <= lam <= 1:
        raise SystemExit("raglab rerank: --lambda must lie in [0, 1]")
    model = reranker_summary(reranker, chosen)
    rows = rerank_rows(lab, reranker, lam)
    if args.json:
        print_json(
            {
                "weights": model["weights"],
                "bias": model["bias"],
                "training_rows": model["rows"],
                "positives": model["positives"],
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
        title=f"Logistic regression on {model['rows']} rows ({model['positives']} positive)",
    )
    for name, w in model["weights"].items():
        weights.add_row(name, f"{w:+.3f}")
    out.print(weights)
    table = Table(
        "Split",
        "Order",
        *(label for _, label in ORDER_METRICS),
        title=f"MMR lambda = {lam:.2f} (chosen on train: {chosen:.2f})",
    )
    for row in rows:
        table.add_row(
            str(row["split"]),
            str(row["order"]),
            *(f"{float(row[key]):.3f}" for key, _ in ORDER_METRICS),
        )
    out.print(table)
    return EXIT_OK
