"""The cluster options, ``--workers N`` and ``--scheduler ADDRESS``.

``--workers N`` and ``--scheduler ADDRESS``: where a command's BM25 work, its LSA fit (and the
encoding of chunks the neural vector cache lacks) run.

Execution options, not pipeline settings: they change where the numbers are computed, never
the numbers, so they are not in :data:`raglab.settings.SETTINGS` and no report or baseline
records them. With neither option nothing changes and Dask is never imported; with one, the
lab's BM25 rankings and LSA model are computed on a Dask cluster (:mod:`raglab.distributed`) and the
command's output is byte for byte what it prints without it.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from raglab.base.files import read_text
from raglab.cli._common import (
    DATA_SETTINGS,
    console,
    load_data_corpus,
    load_lab,
    print_corpus_warnings,
)
from raglab.cli.options import given_settings
from raglab.corpus.passages import WholeCorpusFinder, answer_needles
from raglab.corpus.questions import bundled_questions_path, load_questions
from raglab.formats.progress import progress
from raglab.pipeline import dense
from raglab.pipeline.lab import Lab, no_questions
from raglab.run_settings import ChunkingKey, RetrievalSettings, RunSettings

__all__ = ["add_cluster_options", "cluster_lab", "uses_cluster"]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of workers, got {text!r}"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1 worker, got {value}")
    return value


def add_cluster_options(
    parser: argparse.ArgumentParser, what: str = "index and rank BM25", where: str = "BM25"
) -> None:
    """Add the mutually exclusive ``--workers`` and ``--scheduler`` to ``parser``; ``what`` says
    what the cluster does for the command, ``where`` names it in the group's title."""
    group = parser.add_argument_group(
        f"execution (where {where} runs; not a pipeline setting: the output is the same either way)"
    )
    where_group = group.add_mutually_exclusive_group()
    where_group.add_argument(
        "--workers",
        type=_positive_int,
        metavar="N",
        help=f"{what} on a Dask LocalCluster of N worker processes on this machine "
        "(needs pip install 'raglab[dask]')",
    )
    where_group.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help=f"{what} on an existing Dask cluster, by its scheduler's address "
        "(tcp://host:8786); every worker must see the input files at the same paths "
        "(needs pip install 'raglab[dask]')",
    )


def uses_cluster(args: argparse.Namespace) -> bool:
    """Whether ``--workers`` or ``--scheduler`` was given."""
    return (
        getattr(args, "workers", None) is not None or getattr(args, "scheduler", None) is not None
    )


def _located_lab(args: argparse.Namespace, client: Any, quiet: bool, stage: Any) -> Lab:
    """``load_lab`` with the answer passages located on the workers, and without the local
    BM25 index and LSA fit: the cluster computes those."""
    from raglab.distributed.locating import locate_on_cluster

    corpus = load_data_corpus(args)
    print_corpus_warnings(corpus)
    if args.corpus and not args.questions:  # a corpus read alone, as load_data reads it
        questions = no_questions()
    else:
        file = Path(args.questions) if args.questions else bundled_questions_path()
        needles = answer_needles(read_text(file).splitlines())
        files = [Path(page.source) for page in corpus]
        with stage(
            f"locate {len(needles)} answer passages in {len(files)} page files on the workers"
        ):
            finder = locate_on_cluster(
                client,
                files,
                needles,
                lambda: WholeCorpusFinder(corpus),
                encoding=getattr(args, "encoding", None),
            )
        questions = load_questions(args.questions, corpus=corpus, finder=finder)
    lab = Lab(corpus, questions, **given_settings(args, DATA_SETTINGS))
    for step in progress([lab.indexes.chunk_set], description="Chunking", quiet=quiet):
        step()
    return lab


def _stages(echo: Callable[[str], object] | None) -> Callable[[str], Any]:
    """A stage factory that prints ``cluster: WHAT (x.xx s)`` on stderr as each stage ends."""

    @contextlib.contextmanager
    def stage(what: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        if echo is not None:
            echo(f"cluster: {what} ({time.perf_counter() - start:.2f} s)")

    return stage


@contextlib.contextmanager
def cluster_lab(
    args: argparse.Namespace,
    settings: RetrievalSettings | Sequence[RetrievalSettings],
    *,
    rerank: RetrievalSettings | None = None,
    grid: ChunkingKey | None = None,
    run: tuple[RunSettings, str] | None = None,
) -> Iterator[Lab]:
    """The command's lab. With ``--workers`` or ``--scheduler``, its BM25 rankings under each of
    ``settings`` (for every labelled question) are computed on the cluster and stored in the
    lab before the cluster is closed; without either, :func:`raglab.cli._common.load_lab`.
    ``rerank``, the reranker's first stage when the command reranks: its candidates' BM25
    scores (the reranker's BM25 feature) are computed on the cluster too. ``grid``, a chunking
    whose exhibit II k1 x b grid the command shows (``report``): the grid's cells, and the
    rankings at its best cell and at the defaults, are computed on the cluster too. ``run``,
    the end-to-end run's settings and split when the command runs it: its questions (and the
    training questions its threshold is chosen on) are read and diagnosed on the workers.

    A context manager: the cluster stays open while the command works with the lab, and
    every measure of the rankings (:func:`raglab.pipeline.retrieval.measure`) is taken on the
    workers meanwhile, the questions cut into slices
    (:func:`raglab.distributed.evaluation.evaluate_on_cluster`).

    Each stage on the cluster prints one line on stderr when it ends, with its time, and the
    dashboard's address comes first; ``--quiet`` and ``--json`` print none of them."""
    if not uses_cluster(args):
        yield load_lab(args)
        return
    # Imported here: without the options, no Dask module and none of raglab.distributed loads.
    from raglab.distributed.cluster import connect, require_dask
    from raglab.distributed.evaluation import evaluate_on_cluster
    from raglab.distributed.pipeline import (
        bm25_keys,
        index_lab,
        prime_bm25,
        prime_candidate_bm25,
        prime_grid,
        prime_lsa,
    )
    from raglab.settings import LSA_RANK

    require_dask()  # before any data is read: a missing extra is said at once
    quiet = bool(getattr(args, "quiet", False) or getattr(args, "json", False))
    err = console(stderr=True)
    echo: Callable[[str], object] | None = (
        None if quiet else lambda line: err.print(line, markup=False)
    )
    stage = _stages(echo)
    wanted = [settings] if isinstance(settings, RetrievalSettings) else list(settings)
    with connect(workers=args.workers, scheduler=args.scheduler, echo=echo) as client:
        lab = _located_lab(args, client, quiet, stage)
        lab.evaluator = partial(evaluate_on_cluster, client)
        n_windows = len(lab.indexes.lsa_windows)
        with stage(f"fit LSA on {n_windows} windows, the term x window matrix in row blocks"):
            prime_lsa(client, lab, LSA_RANK)
        indexes: dict[ChunkingKey, Any] = {}

        def index_of(chunking: ChunkingKey) -> Any:
            # One index per chunker, however the command names it (the default heading chunker
            # may come as ChunkingKey() or resolved).
            key = chunking.resolved()
            if key not in indexes:
                indexes[key] = index_lab(
                    client, lab, chunking, stage=stage, encoding=getattr(args, "encoding", None)
                )
            return indexes[key]

        for one in dict.fromkeys(wanted):
            if not bm25_keys(one):
                continue
            index = index_of(one.chunking)
            what = (
                f"rank {len(lab.questions)} questions by BM25 (k1 {one.k1:g}, b {one.b:g}, "
                f"depth {one.depth}) on the shards"
            )
            with stage(what):
                prime_bm25(lab, index, one)
        if dense.unavailable(lab.model) is None:
            # The neural rows read the chunks' vectors from the on-disk cache: the workers fill
            # it with the batches this machine would run, so the vectors are its own.
            from raglab.distributed.neural import prime_neural_cache

            for chunking in dict.fromkeys(one.chunking for one in wanted):
                with stage("encode the chunks the vector cache lacks (neural) on the workers"):
                    prime_neural_cache(client, lab, chunking)
        if rerank is not None:
            # After the rankings and the vectors: the candidates are ranked from them, here.
            index = index_of(rerank.chunking)
            what = (
                f"score the reranker's candidates of {len(lab.questions)} questions by BM25 "
                "on the shards"
            )
            with stage(what):
                prime_candidate_bm25(lab, index, rerank)
        if run is not None:
            from raglab.distributed.end_to_end import prime_readings

            with stage("read and diagnose the end-to-end run's questions on the workers"):
                prime_readings(client, lab, *run)
        if grid is not None:
            index = index_of(grid)
            with stage(
                "search the k1 x b grid (exhibit II) for the training questions on the shards"
            ):
                prime_grid(lab, index, grid)
        try:
            yield lab
        finally:
            lab.evaluator = None
