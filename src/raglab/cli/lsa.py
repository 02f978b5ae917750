"""``raglab lsa``: exhibit III, the embedding learned in place."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.table import Table

from raglab.cli._cluster import add_cluster_options, cluster_lab
from raglab.cli._common import (
    EXIT_OK,
    EXIT_USAGE,
    add_lab_options,
    console,
    fmt,
    print_error_json,
    print_json,
)
from raglab.pipeline.retrieval import rank, ranked_chunks
from raglab.run_settings import RetrievalSettings


def register(sub: Any) -> None:
    parser = sub.add_parser("lsa", help="the LSA embedding: spectrum, nearest words, search")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    info = actions.add_parser(
        "info", help="singular values and the variance share of each dimension"
    )
    add_lab_options(info)
    add_cluster_options(info, "fit the LSA model", "the LSA fit")
    info.set_defaults(handler=run_info)
    near = actions.add_parser("neighbours", help="the words nearest to a word")
    near.add_argument("word")
    near.add_argument("--top", type=int, default=10)
    add_lab_options(near)
    add_cluster_options(near, "fit the LSA model and score the words", "the LSA fit")
    near.set_defaults(handler=run_neighbours)
    search = actions.add_parser("search", help="rank chunks by cosine in the embedding")
    search.add_argument("query")
    search.add_argument("--top", type=int, default=5)
    add_lab_options(search)
    add_cluster_options(search, "fit the LSA model and rank the chunks", "the LSA fit and search")
    search.set_defaults(handler=run_search)


def run_info(args: argparse.Namespace) -> int:
    # With --workers or --scheduler the model is fitted and held on the workers: the spectrum
    # and the windows' count are read off it, no window is cut here.
    with cluster_lab(args, []) as lab:
        model = lab.indexes.lsa
    windows = model.shape[1]
    s = model.singular_values.tolist()
    share = model.variance_share.tolist()
    if args.json:
        print_json(
            {
                "rank": model.rank,
                "windows": windows,
                "singular_values": s,
                "variance_share": share,
            }
        )
        return EXIT_OK
    out = console()
    out.print(
        f"[bold]LSA[/] rank {model.rank} over {windows} windows; kept {sum(share):.1%} of ||A||^2"
    )
    table = Table("dim", "singular value", "variance share", "cumulative")
    total = 0.0
    for i, (v, p) in enumerate(zip(s, share, strict=True), 1):
        total += p
        table.add_row(str(i), fmt(v, 4), f"{p:.2%}", f"{total:.2%}")
    out.print(table)
    return EXIT_OK


def run_neighbours(args: argparse.Namespace) -> int:
    # On a cluster each term block scores its terms on its worker (HeldLSA.neighbours).
    with cluster_lab(args, []) as lab:
        token = lab.indexes.query_tokens(args.word)
        word = token[0] if token else args.word.lower()
        pairs = lab.indexes.lsa.neighbours(word, k=args.top)
    if not pairs:
        message = f"'{word}' is not in the embedding's vocabulary (or occurs in every window)"
        print(f"raglab lsa neighbours: {message}", file=sys.stderr)
        if args.json:
            print_error_json(message)
        return EXIT_USAGE
    if args.json:
        print_json({"word": word, "neighbours": [{"word": w, "cosine": c} for w, c in pairs]})
        return EXIT_OK
    out = console()
    table = Table("word", "cosine", title=f"Nearest to '{word}'")
    for w, c in pairs:
        table.add_row(w, fmt(c))
    out.print(table)
    return EXIT_OK


def run_search(args: argparse.Namespace) -> int:
    # On a cluster the query's terms' rows come to this process and each shard ranks its own
    # chunks' fold-ins on its worker (Indexes.lsa_search), merged here: the same list.
    with cluster_lab(args, []) as lab:
        rows = ranked_chunks(lab, rank(lab, args.query, RetrievalSettings("lsa")), k=args.top)
    if args.json:
        print_json({"query": args.query, "results": rows})
        return EXIT_OK
    table = Table("rank", "chunk", "heading", "cosine", title=f"LSA search: {args.query}")
    for r in rows:
        table.add_row(str(r["rank"]), str(r["chunk"]), str(r["heading"]), fmt(float(r["score"])))
    console().print(table)
    return EXIT_OK
