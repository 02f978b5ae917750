"""``raglab run``: exhibit VI, the whole pipeline with a diagnosis for every miss."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from raglab import _config as C
from raglab.chunking import METHODS
from raglab.cli._common import EXIT_OK, add_lab_options, console, load_lab, print_json
from raglab.pipeline.end_to_end import OUTCOMES, RunSettings
from raglab.pipeline.end_to_end import run as run_pipeline


def add_run_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("pipeline settings")
    g.add_argument("--chunker", choices=METHODS, default=C.RETRIEVAL_CHUNKER)
    g.add_argument("--size", type=int, help="chunk size or size cap in words")
    g.add_argument("--overlap", type=int, help="overlap in words (fixed chunker)")
    g.add_argument("--retriever", choices=C.RETRIEVERS, default=C.DEFAULT_RETRIEVER)
    g.add_argument("--k1", type=float, default=C.BM25_K1)
    g.add_argument("--b", type=float, default=C.BM25_B)
    g.add_argument("--weight", type=float, default=0.5, help="score-fusion weight of BM25")
    g.add_argument("--no-rerank", action="store_true", help="skip the learned reranker (and MMR)")
    g.add_argument("--no-mmr", action="store_true", help="skip maximal marginal relevance")
    g.add_argument("--mmr-lambda", type=float, help="MMR lambda (default: chosen on train)")
    g.add_argument("--budget", type=int, default=C.BUDGET_WORDS, help="context budget in words")
    g.add_argument(
        "--threshold", type=float, help="reader coverage threshold (default: chosen on train)"
    )
    g.add_argument("--split", choices=("test", "train"), default="test")


def settings_from(args: argparse.Namespace) -> RunSettings:
    return RunSettings(
        chunker=args.chunker,
        size=args.size,
        overlap=args.overlap,
        retriever=args.retriever,
        k1=args.k1,
        b=args.b,
        weight=args.weight,
        rerank=not args.no_rerank,
        mmr=not (args.no_rerank or args.no_mmr),
        mmr_lambda=args.mmr_lambda,
        budget=args.budget,
        threshold=args.threshold,
    )


def register(sub: Any) -> None:
    parser = sub.add_parser("run", help="run the whole pipeline and diagnose every lost answer")
    add_run_options(parser)
    add_lab_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    lab = load_lab(args)
    try:
        settings = settings_from(args)
    except ValueError as exc:
        raise SystemExit(f"raglab run: {exc}") from None
    result = run_pipeline(lab, settings, split=args.split)
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
    lam = "off" if result.mmr_lambda is None else f"{result.mmr_lambda:.2f}"
    out.print(
        f"reader threshold {result.threshold:.2f}, MMR lambda {lam}, budget {settings.budget} words"
    )
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
    return EXIT_OK
