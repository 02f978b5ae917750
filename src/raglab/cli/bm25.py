"""``raglab bm25``: exhibit II, search with a per-term explanation, and the k1 x b grid."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from raglab import _config as C
from raglab.cli._common import EXIT_OK, add_lab_options, console, fmt, load_lab, print_json
from raglab.pipeline.exhibits import bm25_search
from raglab.pipeline.retrieval import RetrievalSettings, bm25_grid, measure


def register(sub: Any) -> None:
    parser = sub.add_parser("bm25", help="BM25 search with explanations, and the k1 x b grid")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    search = actions.add_parser("search", help="rank chunks for a query and explain each score")
    search.add_argument("query")
    search.add_argument("--k1", type=float, default=C.BM25_K1)
    search.add_argument("--b", type=float, default=C.BM25_B)
    search.add_argument("--top", type=int, default=5)
    add_lab_options(search)
    search.set_defaults(run=run_search)
    grid = actions.add_parser(
        "grid", help="training recall@5 for every k1 and b; test recall at the best"
    )
    add_lab_options(grid)
    grid.set_defaults(run=run_grid)


def run_search(args: argparse.Namespace) -> int:
    lab = load_lab(args)
    if not 0 <= args.b <= 1 or args.k1 < 0 or args.top < 1:
        raise SystemExit("raglab bm25 search: need k1 >= 0, 0 <= b <= 1 and --top >= 1")
    found = bm25_search(lab, args.query, k1=args.k1, b=args.b, top=args.top)
    if args.json:
        print_json(found)
        return EXIT_OK
    out = console()
    tokens = found["tokens"]
    out.print(f"[bold]Query tokens[/] {' '.join(tokens) or '(none)'}   k1={args.k1} b={args.b}")
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


def run_grid(args: argparse.Namespace) -> int:
    lab = load_lab(args)
    grid = bm25_grid(lab)
    test = measure(lab, "test", RetrievalSettings("bm25", k1=grid.best_k1, b=grid.best_b))[
        "recall@5"
    ]
    default = measure(lab, "train", RetrievalSettings("bm25"))["recall@5"]
    if args.json:
        print_json(
            {
                "k1": list(grid.k1s),
                "b": list(grid.bs),
                "train_recall@5": grid.recall.tolist(),
                "best": {"k1": grid.best_k1, "b": grid.best_b, "train_recall@5": grid.best_recall},
                "default_train_recall@5": default,
                "test_recall@5_at_best": test,
            }
        )
        return EXIT_OK
    out = console()
    table = Table("k1 \\ b", *(f"{b:.1f}" for b in grid.bs), title="Training recall@5")
    for i, k1 in enumerate(grid.k1s):
        cells = []
        for j, b in enumerate(grid.bs):
            text = f"{grid.recall[i, j]:.2f}"
            cells.append(
                f"[bold reverse]{text}[/]" if (k1, b) == (grid.best_k1, grid.best_b) else text
            )
        table.add_row(f"{k1:.1f}", *cells)
    out.print(table)
    out.print(f"Default k1={C.BM25_K1}, b={C.BM25_B}: training recall@5 {default:.3f}")
    out.print(
        f"Best on the grid k1={grid.best_k1}, b={grid.best_b}: training recall@5 {grid.best_recall:.3f}"
    )
    out.print(f"Test recall@5 at the best cell (measured once, never tuned on): {test:.3f}")
    return EXIT_OK
