"""``raglab fuse``: exhibit IV, every ranker measured side by side."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from raglab.base.sentinels import TUNED
from raglab.cli._cluster import add_cluster_options, cluster_lab
from raglab.cli._common import (
    EXIT_OK,
    add_lab_options,
    console,
    print_json,
    retriever_label,
)
from raglab.cli.options import add_setting_options, given_settings
from raglab.corpus.questions import SPLITS
from raglab.pipeline.end_to_end import plain_settings
from raglab.pipeline.metric_table import METRICS
from raglab.pipeline.resolve import lab_tuning
from raglab.pipeline.retrieval import (
    choose_weight,
    neural_unavailable,
    ranker_table,
    resolve,
    retrieval_values,
)
from raglab.run_settings import ChunkingKey, RetrievalSettings
from raglab.settings import default, settings_in

#: The settings ``raglab fuse`` takes: every retrieval setting but the retriever (it shows them all).
FUSE_SETTINGS = tuple(s.name for s in settings_in("retrieval") if s.name != "retriever")


def register(sub: Any) -> None:
    parser = sub.add_parser("fuse", help="BM25, LSA, RRF and score fusion measured on one split")
    parser.add_argument("--split", choices=SPLITS, default="test", help="default: test")
    add_setting_options(parser.add_argument_group("retrieval settings"), FUSE_SETTINGS)
    add_lab_options(parser)
    add_cluster_options(parser)
    parser.set_defaults(handler=run)


def fuse_settings(args: argparse.Namespace) -> RetrievalSettings:
    """The retrieval settings given on the command line (``--depth`` alone sets the fusion depth
    too), the rest at their defaults."""
    given = given_settings(args, FUSE_SETTINGS)
    if "depth" in given and "fusion_depth" not in given:
        given["fusion_depth"] = given["depth"]
    chunking = ChunkingKey(
        given.pop("chunker", default("chunker")),
        given.pop("size", None),
        given.pop("overlap", None),
    )
    # Built as score fusion so that a given --weight is kept (other retrievers normalise it away);
    # the table then measures every retriever under these settings.
    return RetrievalSettings(retriever="score", chunking=chunking, **given)


def run(args: argparse.Namespace) -> int:
    base = fuse_settings(args)
    with cluster_lab(args, base) as lab:
        chosen = choose_weight(lab, base)
        table_data = ranker_table(lab, split=args.split, settings=base)
        missing = neural_unavailable(lab)
        neural_weight = (
            None if missing else choose_weight(lab, base.replace(retriever="neural-score"))
        )
        resolved = resolve(lab, base)
        n = len(lab.split(args.split, answerable=True))
        # How far to trust each weight chosen on train (a given --weight was not chosen).
        tuning = lab_tuning(lab, {"weight": chosen}) if base.weight is TUNED else ()
        neural_tuning = () if neural_weight is None else lab_tuning(lab, {"weight": neural_weight})
    weight = chosen if base.weight is TUNED else float(base.weight)
    if args.json:
        print_json(
            {
                "split": args.split,
                "weight": weight,
                "train_chosen_weight": chosen,
                "settings": {
                    k: v
                    for k, v in plain_settings(retrieval_values(resolved)).items()
                    if k != "retriever"
                },
                "rankers": table_data,
                "neural_weight": neural_weight,
                "unavailable": missing,
                "tuning": [note.to_dict() for note in tuning],
                "neural_tuning": [note.to_dict() for note in neural_tuning],
            }
        )
        return EXIT_OK
    table = Table(
        "Ranker",
        *(label for _, label in METRICS),
        title=f"{args.split} split, {n} answerable questions",
    )
    for name, metrics in table_data.items():
        table.add_row(retriever_label(name), *(f"{metrics[key]:.3f}" for key, _ in METRICS))
    for name, why in missing.items():
        table.add_row(retriever_label(name), why, *([""] * (len(METRICS) - 1)))
    out = console()
    out.print(table)
    out.print(f"Score fusion weight w = {weight:.2f} (chosen on train: {chosen:.2f})")
    for note in tuning:
        if note.sentence:
            out.print(f"[yellow]{note.sentence}[/]")
    if neural_weight is not None:
        out.print(f"BM25 + neural score fusion weight w = {neural_weight:.2f} (chosen on train)")
    for note in neural_tuning:
        if note.sentence:
            out.print(f"[yellow]BM25 + neural score fusion: {note.sentence}[/]")
    return EXIT_OK
