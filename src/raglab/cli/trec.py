"""``raglab trec``: rankings out as TREC files, and an external retriever's run in."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.table import Table

from raglab.base.files import atomic_write_texts
from raglab.cli._cluster import add_cluster_options, cluster_lab
from raglab.cli._common import (
    EXIT_OK,
    add_lab_options,
    console,
    load_lab,
    print_json,
    retriever_label,
)
from raglab.cli.options import add_setting_options, given_settings
from raglab.errors import InputError, Problem
from raglab.pipeline.end_to_end import plain_settings
from raglab.pipeline.external import chunk_run, page_run, qrels, qrels_text, run_text
from raglab.pipeline.external_eval import evaluate_run
from raglab.pipeline.metric_table import METRICS
from raglab.pipeline.retrieval import rank, resolve, retrieval_values
from raglab.run_settings import ChunkingKey, RetrievalSettings
from raglab.settings import default, setting, settings_in


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "trec", help="write rankings and qrels as TREC files; evaluate an external run"
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    export = actions.add_parser(
        "export",
        help="write a ranker's run (and the qrels) as TREC files",
        description="Write one retriever's rankings as a TREC run, with the same settings as the "
        "matching row of 'raglab fuse' (the fusion weight chosen on train unless --weight is "
        "given) and scores strictly decreasing within each question, so any evaluator's tie-break "
        "keeps RAG lab's order. With no option the run is the one the lab's table and 'raglab "
        "fuse' measure; 'raglab fuse --depth N' measures the very lists 'trec export --depth N' "
        "writes; a deeper fusion is asked for by --fusion-depth.",
    )
    export.add_argument(
        "--level", choices=("chunk", "page"), default="chunk", help="rank chunks or pages"
    )
    export.add_argument("--split", choices=("all", "train", "test"), default="all")
    add_setting_options(
        export.add_argument_group("retrieval settings"),
        EXPORT_SETTINGS,
        default_texts=EXPORT_DEFAULT_TEXTS,
    )
    export.add_argument(
        "--run", dest="run_file", required=True, metavar="FILE", help="where to write the run"
    )
    export.add_argument("--qrels", metavar="FILE", help="where to write the qrels")
    export.add_argument(
        "--force", action="store_true", help="replace existing files (the run and qrels together)"
    )
    add_lab_options(export)
    add_cluster_options(export)
    export.set_defaults(handler=run_export)
    ev = actions.add_parser(
        "eval", help="measure an external retriever's TREC run beside RAG lab's rankers"
    )
    ev.add_argument(
        "runfile",
        metavar="RUN",
        help="TREC run: qid Q0 docid rank score tag (docid: chunk or page id)",
    )
    ev.add_argument("--name", default="external", help="what to call the run in the tables")
    ev.add_argument("--split", choices=("train", "test"), default="test")
    add_setting_options(ev, ("budget",))
    add_lab_options(ev)
    ev.set_defaults(handler=run_eval)


def _write(files: list[tuple[str, str]], force: bool) -> None:
    """Write the (path, text) pairs as one: every file or none is replaced."""
    try:
        atomic_write_texts(files, overwrite=force)
    except FileExistsError as exc:
        raise InputError(
            [Problem(str(exc.filename), "already exists; pass --force to replace it")]
        ) from None


#: The settings of an export: every retrieval setting.
EXPORT_SETTINGS = tuple(s.name for s in settings_in("retrieval"))

#: ``--depth`` and ``--fusion-depth``'s defaults in words, the numbers read from the settings.
EXPORT_DEFAULT_TEXTS = {
    "depth": f"{setting('depth').describe_default()}; 'all' for the whole collection; given "
    "without --fusion-depth, it sets the fusion depth too",
    "fusion_depth": f"{setting('fusion_depth').describe_default()}, as in the lab's table and "
    "'raglab fuse'; --depth N alone sets it to N",
}


def export_settings(args: argparse.Namespace) -> RetrievalSettings:
    """The export's retrieval settings: those given, the rest at their defaults (the table's
    fusion depth, so that a run exported with no option scores as the lab's table says); a
    ``--depth`` given without ``--fusion-depth`` sets the fusion depth too, as in ``raglab fuse``."""
    given = given_settings(args, EXPORT_SETTINGS)
    if "depth" in given and "fusion_depth" not in given:
        given["fusion_depth"] = given["depth"]
    chunking = ChunkingKey(
        given.pop("chunker", default("chunker")),
        given.pop("size", None),
        given.pop("overlap", None),
    )
    return RetrievalSettings(chunking=chunking, **given)


def run_export(args: argparse.Namespace) -> int:
    settings = export_settings(args)
    with cluster_lab(args, settings) as lab:
        lab.require_labels("exporting a TREC run")
        chunking = settings.chunking
        # A score fusion's weight is chosen on the training split first, once.
        resolved = resolve(lab, settings)
        questions = [q for q in lab.questions if args.split == "all" or q.split == args.split]
        rankings = {q.id: rank(lab, q, resolved) for q in questions}
        if args.level == "chunk":
            entries = chunk_run(lab, rankings, chunking=chunking)
        else:
            entries = page_run(lab, rankings, chunking=chunking)
        judged = {
            qid: j
            for qid, j in qrels(lab, level=args.level, chunking=chunking).items()
            if qid in rankings
        }
    # Written once every number is computed (and a cluster closed), both files as one: a
    # failure to write either leaves both as they were, so the pair is always from one export.
    for path in (args.run_file, args.qrels):
        if path and Path(path).exists() and not args.force:
            raise InputError([Problem(path, "already exists; pass --force to replace it")])
    files = [(args.run_file, run_text(entries, tag=f"raglab-{settings.retriever}"))]
    if args.qrels:
        files.append((args.qrels, qrels_text(judged)))
    _write(files, args.force)
    summary = {
        "run": args.run_file,
        "qrels": args.qrels,
        "questions": len(entries),
        "level": args.level,
        "settings": plain_settings(retrieval_values(resolved)),
    }
    if args.json:
        print_json(summary)
    else:
        console().print(
            f"Wrote {len(entries)} rankings ({args.level} level, "
            f"{retriever_label(settings.retriever)}) to {args.run_file}"
            + (f" and their qrels to {args.qrels}" if args.qrels else "")
        )
    return EXIT_OK


def run_eval(args: argparse.Namespace) -> int:
    # Checked before the data is loaded: a mistyped path should not cost a lab's build.
    run_path = Path(args.runfile)
    if not run_path.is_file():
        why = "is a folder, not a run file" if run_path.is_dir() else "does not exist"
        raise InputError(
            [Problem(str(run_path), f"{why} (a TREC run: qid Q0 docid rank score tag)")]
        )
    lab = load_lab(args)
    lab.require_labels("measuring a TREC run")
    found = evaluate_run(
        lab,
        args.runfile,
        name=args.name,
        split=args.split,
        budget=given_settings(args, ("budget",)).get("budget", default("budget")),
    )
    if args.json:
        print_json(found.to_dict())
        return EXIT_OK
    out = console()
    table = Table("Ranker", *(label for _, label in METRICS), title=f"{found.split} split")
    for label, metrics in found.rankers.items():
        table.add_row(label, *(f"{metrics[key]:.3f}" for key, _ in METRICS))
    out.print(table)
    end_to_end = found.end_to_end
    if end_to_end is None:
        out.print("End to end: not supported, the questions are labelled by pages, not passages.")
    else:
        lo, hi = end_to_end["interval"]
        out.print(
            f"End to end with {found.name} (no reranker): accuracy {end_to_end['accuracy']:.3f} "
            f"(95% interval {lo:.3f} to {hi:.3f}), bound {end_to_end['bound']:.3f}"
        )
        out.print(
            "Where answers went: " + ", ".join(f"{k} {v}" for k, v in end_to_end["funnel"].items())
        )
    return EXIT_OK
