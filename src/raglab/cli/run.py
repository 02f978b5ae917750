"""``raglab run``: exhibit VI, the whole pipeline with a diagnosis for every miss."""

from __future__ import annotations

import argparse
from functools import partial
from typing import Any

from rich.table import Table

from raglab.base.sentinels import NOT_GIVEN
from raglab.cli._cluster import add_cluster_options, cluster_lab
from raglab.cli._common import EXIT_OK, add_lab_options, console, print_json
from raglab.cli.options import add_setting_options, given_settings
from raglab.corpus.questions import SPLITS
from raglab.pipeline.end_to_end import RunResult, check_runnable, run_pipeline
from raglab.pipeline.exhibits.end_to_end import funnel
from raglab.reading.diagnosis import OUTCOMES
from raglab.run_settings import RUN_SETTING_NAMES, RunSettings
from raglab.settings import SCORE_FUSIONS


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """Every pipeline setting (:data:`raglab.settings.SETTINGS`) and the split to run on."""
    g = parser.add_argument_group("pipeline settings")
    add_setting_options(g, RUN_SETTING_NAMES)
    g.add_argument(
        "--split", choices=SPLITS, default=NOT_GIVEN, help="the questions to run on (default: test)"
    )


def settings_from(args: argparse.Namespace) -> RunSettings:
    """The run settings given on the command line, the rest at their defaults."""
    return RunSettings.from_given(given_settings(args, RUN_SETTING_NAMES))


def split_from(args: argparse.Namespace) -> str:
    return "test" if args.split is NOT_GIVEN else str(args.split)


def register(sub: Any) -> None:
    parser = sub.add_parser("run", help="run the whole pipeline and diagnose every lost answer")
    add_run_options(parser)
    add_lab_options(parser)
    add_cluster_options(parser)
    parser.set_defaults(handler=run)


def used_line(result: RunResult) -> str:
    """The values the run used, each chosen on the training split marked so."""
    r = result.resolved
    tuned = set(result.chosen_on_train)

    def mark(name: str, text: str) -> str:
        return f"{text} (chosen on train)" if name in tuned else text

    parts = [mark("threshold", f"reader threshold {result.threshold:.2f}")]
    if result.mmr_lambda is not None:
        parts.append(mark("mmr_lambda", f"MMR lambda {result.mmr_lambda:.2f}"))
    else:
        parts.append("MMR off")
    if r.retriever in SCORE_FUSIONS:
        parts.append(mark("weight", f"fusion weight w {float(r.weight):.2f}"))
    parts.append(f"budget {r.budget} words")
    return ", ".join(parts)


def tuning_lines(result: RunResult) -> list[str]:
    """One sentence per value chosen on too few training questions or on an edge of its grid
    (:func:`raglab.run_settings.tuning_note`)."""
    return [note.sentence for note in result.tuning if note.sentence]


def run(args: argparse.Namespace) -> int:
    settings = settings_from(args)  # a setting the pipeline refuses fails before any loading
    # With --workers or --scheduler, the first stage's BM25 rankings, the reranker's BM25
    # feature, the LSA model and the reading of every question come from the cluster.
    first = settings.retrieval
    split = split_from(args)
    with cluster_lab(
        args,
        first,
        rerank=first if settings.rerank else None,
        run=(settings, split),
        check=partial(check_runnable, split=split),
    ) as lab:
        result = run_pipeline(lab, settings, split=split)
    if args.json:
        print_json(result.to_dict())
        return EXIT_OK
    out = console()
    lo, hi = result.interval
    out.print(
        f"[bold]Accuracy[/] {result.correct}/{result.n} = {result.accuracy:.3f} "
        f"(95% Wilson interval {lo:.3f} to {hi:.3f}); answerable {result.answerable_correct}/{result.answerable}, "
        f"bound {result.bound:.3f}"
    )
    out.print(used_line(result))
    for sentence in tuning_lines(result):
        out.print(f"[yellow]{sentence}[/]")
    table = Table("Id", "Kind", "Question", "Outcome", "Rank", "k_budget")
    for o in result.outcomes:
        style = "green" if o.outcome == "correct" else "red"
        table.add_row(
            o.id,
            o.kind,
            o.question,
            f"[{style}]{o.outcome}[/]",
            "-" if o.rank is None else str(o.rank),
            str(o.k_budget),
        )
    out.print(table)
    out.print(
        "Where answers went: "
        + ", ".join(f"{name} {result.funnel.get(name, 0)}" for name in OUTCOMES)
    )
    out.print("Right by kind: " + "; ".join(kind_line(k) for k in funnel(result)["kinds"]))
    return EXIT_OK


def kind_line(row: dict[str, Any]) -> str:
    """One kind of the funnel's ``kinds``: "paraphrase 1 of 7 (reader 3, past budget 2)"."""
    lost = ", ".join(f"{name} {count}" for name, count in row["lost"].items() if count)
    return f"{row['kind']} {row['correct']} of {row['n']}" + (f" ({lost})" if lost else "")
