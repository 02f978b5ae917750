"""``raglab validate``: check a corpus and its questions (if any) and summarise them."""

from __future__ import annotations

import argparse
import statistics
from collections import Counter
from typing import Any

from rich.table import Table

from raglab.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    Data,
    add_data_options,
    console,
    load_data,
    print_json,
    report_problems,
)
from raglab.corpus.pages import Corpus
from raglab.corpus.questions import SPLITS, QuestionSet, split_warnings
from raglab.errors import InputError, Problem

# Pages whose front-matter metadata the summary prints (the JSON has every one).
_SHOWN = 5


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "validate",
        help="check pages and questions, and summarise them",
        description="Check a corpus and its labelled questions. Lists every problem with its file, "
        "line and field, and exits 1 when there is one.",
    )
    add_data_options(parser)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="treat warnings (answers found several times, pages not in UTF-8) as errors, and "
        "refuse front-matter keys RAG lab does not use",
    )
    parser.add_argument(
        "--run",
        dest="run_files",
        action="append",
        default=[],
        metavar="FILE",
        help="also check a TREC run against the questions and the pages (repeatable)",
    )
    parser.set_defaults(handler=run)


def check_runs(data: Data, paths: list[str]) -> list[dict[str, Any]]:
    """Read each run as ``trec eval`` would (question ids, chunk or page ids, ranks of 1 or
    more); :class:`InputError` listing every bad line of every run."""
    from raglab.pipeline.external import load_run
    from raglab.pipeline.lab import Lab

    lab = Lab(data.corpus, data.questions)
    lab.require_labels("checking a TREC run")  # its question ids name labelled questions
    problems: list[Problem] = []
    out = []
    for i, path in enumerate(paths):
        try:
            name = load_run(lab, path, name=f"run{i}").removeprefix("run:")
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        run = lab.runs[name]
        out.append({"file": path, "questions": len(run), "entries": sum(map(len, run.values()))})
    if problems:
        raise InputError(problems)
    return out


def summarise(corpus: Corpus, questions: QuestionSet) -> dict[str, Any]:
    kinds = sorted({q.kind for q in questions})
    by_split = {s: Counter(q.kind for q in questions.split(s)) for s in SPLITS}
    lengths = [q.answer_words for q in questions if q.answer]
    return {
        "corpus": corpus.root,
        "pages": len(corpus),
        "words": corpus.n_words,
        "sections": sum(len(p.sections) for p in corpus),
        "superseded_pages": sum(p.status == "superseded" for p in corpus),
        "questions": len(questions),
        "splits": {s: len(questions.split(s)) for s in SPLITS},
        "answerable": {s: sum(q.answerable for q in questions.split(s)) for s in SPLITS},
        "kinds": {k: {s: by_split[s][k] for s in SPLITS} for k in kinds},
        "answer_words": {
            "min": min(lengths) if lengths else 0,
            "median": statistics.median(lengths) if lengths else 0,
            "max": max(lengths) if lengths else 0,
        },
        "metadata": {p.id: dict(p.meta) for p in corpus if p.meta},
        "warnings": [str(w) for w in _warnings(corpus, questions)],
    }


def _warnings(corpus: Corpus, questions: QuestionSet) -> list[Problem]:
    return [*corpus.warnings, *question_warnings(questions)]


def question_warnings(questions: QuestionSet) -> list[Problem]:
    """The questions' warnings, and what each split lacks; none for a corpus read alone (no
    questions file), whose summary says instead what needs labels."""
    if not questions:
        return []
    return [*questions.warnings, *split_warnings(questions)]


#: What ``validate`` says of a corpus read without a questions file.
NO_QUESTIONS_NOTE = (
    "the corpus is read alone; search (bm25 search, lsa) works, and what measures retrieval "
    "(bm25 grid, fuse, rerank, run, report) needs labelled questions: give --questions FILE"
)


def print_questions(summary: dict[str, Any]) -> None:
    """The questions' part of the summary: counts by split and kind, answer lengths."""
    out = console()
    splits = summary["splits"]
    out.print(
        f"[bold]Questions[/] {summary['questions']}: "
        + ", ".join(f"{n} {s} ({summary['answerable'][s]} answerable)" for s, n in splits.items())
    )
    table = Table("Kind", *SPLITS, "all", title="Questions by split and kind")
    for kind, counts in summary["kinds"].items():
        table.add_row(kind, *(str(counts[s]) for s in SPLITS), str(sum(counts.values())))
    out.print(table)
    aw = summary["answer_words"]
    out.print(f"Answer passages: {aw['min']} to {aw['max']} words, median {aw['median']}")


def run(args: argparse.Namespace) -> int:
    data = load_data(args)
    summary = summarise(data.corpus, data.questions)
    if args.run_files:
        summary["runs"] = check_runs(data, args.run_files)
    if args.json:
        print_json(summary)
    else:
        out = console()
        out.print(f"[bold]Corpus[/] {summary['corpus']}")
        out.print(
            f"  {summary['pages']} pages ({summary['superseded_pages']} superseded), "
            f"{summary['words']:,} words, {summary['sections']} sections"
        )
        kept = list(summary["metadata"].items())
        for page_id, meta in kept[:_SHOWN]:
            listing = ", ".join(f"{key}: {value}" for key, value in meta.items())
            out.print(f"  page {page_id} keeps {listing}", markup=False)
        if len(kept) > _SHOWN:
            out.print(f"  and {len(kept) - _SHOWN} more pages with metadata (--json lists all)")
        if data.questions:
            print_questions(summary)
        else:
            out.print(f"[bold]Questions[/] none: {NO_QUESTIONS_NOTE}")
        for r in summary.get("runs", []):
            out.print(
                f"[bold]Run[/] {r['file']}: {r['entries']:,} entries for {r['questions']} "
                "questions, every id known"
            )
    warnings = _warnings(data.corpus, data.questions)
    if warnings:
        report_problems(tuple(warnings), title="Warnings")
        if args.strict:
            return EXIT_BAD_INPUT
    return EXIT_OK
