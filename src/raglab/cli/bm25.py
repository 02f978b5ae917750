"""``raglab bm25``: exhibit II, search with a per-term explanation, and the k1 x b grid."""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

from rich import box
from rich.table import Table

from raglab.cli._common import EXIT_OK, add_lab_options, console, fmt, load_lab, print_json
from raglab.cli.options import add_setting_options, given_settings
from raglab.pipeline.exhibits.bm25 import GridView, bm25_search, grid_view
from raglab.settings import default

#: The widest line ``raglab bm25 grid`` prints: it fits an 80-column terminal.
GRID_WIDTH = 80


def register(sub: Any) -> None:
    parser = sub.add_parser("bm25", help="BM25 search with explanations, and the k1 x b grid")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    search = actions.add_parser("search", help="rank chunks for a query and explain each score")
    search.add_argument("query")
    add_setting_options(search, ("k1", "b"))
    search.add_argument("--top", type=int, default=5, help="results to show (default: 5)")
    add_lab_options(search)
    search.set_defaults(handler=run_search)
    grid = actions.add_parser(
        "grid", help="training recall@5 for every k1 and b; test recall at the best"
    )
    add_lab_options(grid)
    grid.set_defaults(handler=run_grid)


def run_search(args: argparse.Namespace) -> int:
    if args.top < 1:
        raise ValueError(f"--top must be at least 1, not {args.top}")
    given = {"k1": default("k1"), "b": default("b"), **given_settings(args, ("k1", "b"))}
    k1, b = given["k1"], given["b"]
    lab = load_lab(args)
    found = bm25_search(lab, args.query, k1=k1, b=b, top=args.top)
    if args.json:
        print_json(found)
        return EXIT_OK
    out = console()
    tokens = found["tokens"]
    out.print(f"[bold]Query tokens[/] {' '.join(tokens) or '(none)'}   k1={k1} b={b}")
    if not found["results"]:
        out.print("No chunk shares a word with the query.")
    for row in found["results"]:
        out.print(
            f"\n[bold]{row['rank']}. {row['chunk']}[/]  score {row['score']:.4f}  ({row['heading']})"
        )
        table = Table("term", "tf", "df", "IDF", "length factor", "contribution")
        for t in row["terms"]:
            table.add_row(
                t["term"],
                str(t["tf"]),
                str(t["df"]),
                fmt(t["idf"]),
                fmt(t["length_factor"]),
                fmt(t["contribution"], 4),
            )
        out.print(table)
    return EXIT_OK


def grid_json(view: GridView) -> dict[str, Any]:
    """``raglab bm25 grid --json``: the grid view under the command's own keys (each share
    beside the count of questions it is the share of; ``tied``: every cell, as [k1, b], with as
    many hits as the best)."""
    k = view.k
    return {
        "k1": list(view.k1s),
        "b": list(view.bs),
        f"train_recall@{k}": [list(row) for row in view.recall],
        f"train_hits@{k}": [list(row) for row in view.hits],
        "train_questions": view.questions,
        "best": {
            "k1": view.best.k1,
            "b": view.best.b,
            f"train_recall@{k}": view.best.train_recall,
            f"train_hits@{k}": view.best.train_hits,
        },
        "tied": [[view.k1s[i], view.bs[j]] for i, j in view.tied],
        "rule": view.rule,
        f"default_train_recall@{k}": view.default.train_recall,
        f"default_train_hits@{k}": view.default.train_hits,
        f"test_recall@{k}_at_best": view.best.split_recall,
        f"test_hits@{k}_at_best": view.best.split_hits,
        "test_questions": view.split_questions,
    }


def grid_table(view: GridView) -> Table:
    """The grid as a table at most :data:`GRID_WIDTH` columns wide: no vertical rules, two
    spaces between columns (one after the starred cell), the best cell starred (and highlighted
    on a terminal)."""
    best = (view.best.k1, view.best.b)
    table = Table(
        "k1 \\ b",
        *(f"{b:.1f}" for b in view.bs),
        title=f"Training recall@{view.k} (* best cell)",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        padding=(0, 1, 0, 0),
    )
    for k1, row in zip(view.k1s, view.recall, strict=True):
        cells = []
        for b, value in zip(view.bs, row, strict=True):
            text = f"{value:.2f}"
            cells.append(f"[bold reverse]{text}*[/]" if (k1, b) == best else text)
        table.add_row(f"{k1:.1f}", *cells)
    return table


def run_grid(args: argparse.Namespace) -> int:
    lab = load_lab(args)
    view = grid_view(lab, split="test")
    if args.json:
        print_json(grid_json(view))
        return EXIT_OK
    out = console()
    out.print(grid_table(view))
    k, best, default, n = view.k, view.best, view.default, view.questions
    out.print(
        f"Default k1={default.k1}, b={default.b}: training recall@{k} "
        f"{default.train_recall:.3f} ({default.train_hits} of {n})"
    )
    out.print(
        f"Best on the grid k1={best.k1}, b={best.b}: training recall@{k} "
        f"{best.train_recall:.3f} ({best.train_hits} of {n})"
    )
    cells = len(view.k1s) * len(view.bs)
    rule = f"{len(view.tied)} of {cells} cells tie with the best. {view.rule}"
    # Wrapped by hand to the width (never between a name and its value: "b = 0.75").
    for line in textwrap.wrap(rule.replace(" = ", "\u00a0=\u00a0"), GRID_WIDTH):
        out.print(line.replace("\u00a0", " "), markup=False)
    measured = (
        f"{fmt(best.split_recall)} ({best.split_hits} of {view.split_questions})"
        if best.split_recall is not None
        else fmt(best.split_recall)
    )
    out.print(f"Test recall@{k} at the best (measured once, never tuned on): {measured}")
    return EXIT_OK
