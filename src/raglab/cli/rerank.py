"""``raglab rerank``: exhibit V, the learned reranker and MMR."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from raglab.base.sentinels import NOT_GIVEN, TUNED
from raglab.cli._common import (
    EXIT_OK,
    add_lab_options,
    console,
    load_lab,
    print_json,
    retriever_label,
)
from raglab.cli.options import add_setting_options, setting_parser
from raglab.labels import TEST_FIGURE_LABELS
from raglab.pipeline.exhibits.rerank import (
    fitted_reranker,
    lambda_sweep,
    rerank_rows,
    reranker_summary,
)
from raglab.pipeline.metric_table import ORDER_METRICS
from raglab.pipeline.resolve import lab_tuning
from raglab.run_settings import RetrievalSettings
from raglab.settings import default, setting

#: The columns of the table of orders (kept under its old name).
COLUMNS = ORDER_METRICS


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "rerank", help="train the reranker and compare fusion, reranked and MMR orders"
    )
    add_setting_options(parser, ("retriever", "mmr_lambda"))
    # The command's first name for --mmr-lambda, kept so scripts written for it still run.
    parser.add_argument(
        "--lambda",
        dest="mmr_lambda",
        type=setting_parser(setting("mmr_lambda")),
        default=NOT_GIVEN,
        metavar="X",
        help="the same as --mmr-lambda",
    )
    parser.add_argument(
        "--sweep",
        action="store_true",
        help="also measure MMR at every lambda of the grid on train and test (exhibit V's chart)",
    )
    add_lab_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    lab = load_lab(args)
    retriever = default("retriever") if args.retriever is NOT_GIVEN else args.retriever
    reranker, chosen = fitted_reranker(lab, RetrievalSettings(retriever))
    lam = chosen if args.mmr_lambda in (NOT_GIVEN, TUNED, None) else args.mmr_lambda
    model = reranker_summary(reranker, chosen)
    rows = rerank_rows(lab, reranker, lam)
    sweep = lambda_sweep(lab, reranker) if args.sweep else None
    # Every value chosen on train here: a score fusion's weight (this command takes none), and
    # the lambda the table's title names.
    chosen_values = {"mmr_lambda": chosen}
    if reranker.first_stage.weighted:
        chosen_values["weight"] = float(reranker.first_stage.weight)
    tuning = lab_tuning(lab, chosen_values)
    if args.json:
        print_json(
            {
                "weights": model["weights"],
                "bias": model["bias"],
                "training_rows": model["rows"],
                "positives": model["positives"],
                "retriever": retriever,
                "lambda": lam,
                "train_chosen_lambda": chosen,
                "rows": rows,
                "tuning": [note.to_dict() for note in tuning],
                **({"sweep": sweep} if sweep is not None else {}),
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
        title=f"First stage {retriever_label(retriever)}; MMR lambda = {lam:.2f} "
        f"(chosen on train: {chosen:.2f})",
    )
    for row in rows:
        table.add_row(
            str(row["split"]),
            str(row["order"]),
            *(f"{float(row[key]):.3f}" for key, _ in ORDER_METRICS),
        )
    out.print(table)
    for note in tuning:
        if note.sentence:
            out.print(f"[yellow]{note.sentence}[/]")
    if sweep is not None:
        out.print(_sweep_table(sweep))
    return EXIT_OK


def _sweep_table(sweep: dict[str, Any]) -> Table:
    """Exhibit V's lambda sweep as a table: one row per lambda, train then test for each measure.

    Only the chosen lambda's test figures were chosen on train; the row says which it is."""
    chosen = sweep["chosen_lambda"]
    by_split: dict[str, dict[float, dict[str, Any]]] = {"train": {}, "test": {}}
    for point in sweep["points"]:
        by_split[point["split"]][point["lambda"]] = point
    table = Table(
        "lambda",
        *(f"{split} {label}" for _, label in ORDER_METRICS for split in ("train", "test")),
        "test figures",
        title=f"MMR at every lambda; chosen on train: {chosen:.2f} (the smallest lambda whose "
        f"training {sweep['rule_metric']} is no lower than the reranker's without MMR)",
    )
    for lam, train in by_split["train"].items():
        test = by_split["test"][lam]
        table.add_row(
            f"{lam:.2f}",
            *(f"{float(p[key]):.3f}" for key, _ in ORDER_METRICS for p in (train, test)),
            TEST_FIGURE_LABELS[lam == chosen],
        )
    return table
