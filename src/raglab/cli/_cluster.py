"""The cluster options, ``--workers N``, ``--scheduler ADDRESS`` and ``--scheduler-file FILE``.

``--workers N``, ``--scheduler ADDRESS`` or ``--scheduler-file FILE``: where a command's BM25
work, its LSA fit and, when the command asks for neural rankings, the neural search (the chunks'
vectors encoded into the shared vector cache and kept in shards on the workers) run; ``--shards-per-worker``, ``--connect-timeout`` and
``--no-workers-timeout`` say how (their defaults in :mod:`raglab.settings`).

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
    data_corpus_folder,
    load_lab,
    print_corpus_warnings,
)
from raglab.cli.options import given_settings
from raglab.corpus.pages import Corpus, PageTexts
from raglab.corpus.passages import WholeCorpusFinder, answer_needles, named_pages
from raglab.corpus.questions import bundled_questions_path, load_questions
from raglab.formats.progress import progress
from raglab.pipeline import dense
from raglab.pipeline.lab import Lab, no_questions
from raglab.run_settings import ChunkingKey, RetrievalSettings, RunSettings
from raglab.settings import (
    CLIENT_PAGE_RECORDS,
    CLIENT_PAGE_TEXT_BUDGET,
    CLUSTER_CONNECT_TIMEOUT,
    CLUSTER_NO_WORKERS_TIMEOUT,
    CLUSTER_SHARDS_PER_WORKER,
)

__all__ = ["add_cluster_options", "cluster_lab", "connect_options", "uses_cluster"]


def _positive_int(text: str, what: str = "workers") -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of {what}, got {text!r}"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return value


def add_cluster_options(
    parser: argparse.ArgumentParser, what: str = "index and rank BM25", where: str = "BM25"
) -> None:
    """Add the mutually exclusive ``--workers``, ``--scheduler`` and ``--scheduler-file``, and
    the cluster's ``--shards-per-worker``, ``--connect-timeout`` and ``--no-workers-timeout``,
    to ``parser``; ``what`` says what the cluster does for the command, ``where`` names it in
    the group's title."""
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
    where_group.add_argument(
        "--scheduler-file",
        metavar="FILE",
        help="as --scheduler, the address read from the JSON file 'dask scheduler "
        "--scheduler-file FILE' writes (as Dask's own tools take it)",
    )
    group.add_argument(
        "--shards-per-worker",
        type=partial(_positive_int, what="shards"),
        metavar="N",
        help="pieces each stage's work is cut into per worker: BM25 shards, groups of page "
        f"files, LSA row blocks (default {CLUSTER_SHARDS_PER_WORKER})",
    )
    group.add_argument(
        "--connect-timeout",
        type=_seconds,
        metavar="SECONDS",
        help="how long to try to reach the scheduler, at the start and when the connection "
        f"drops, before stopping with exit 2 (default {CLUSTER_CONNECT_TIMEOUT:g})",
    )
    group.add_argument(
        "--no-workers-timeout",
        type=_seconds,
        metavar="SECONDS",
        help="how long to wait while the scheduler has no worker (none joined, or every one "
        f"was lost) before stopping with exit 2 (default {CLUSTER_NO_WORKERS_TIMEOUT:g})",
    )


def uses_cluster(args: argparse.Namespace) -> bool:
    """Whether ``--workers``, ``--scheduler`` or ``--scheduler-file`` was given."""
    return any(
        getattr(args, name, None) is not None for name in ("workers", "scheduler", "scheduler_file")
    )


def connect_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of :func:`raglab.distributed.cluster.connect` the options give,
    each left out resolved to its default in :mod:`raglab.settings`."""

    def given(name: str, default: Any) -> Any:
        value = getattr(args, name, None)
        return default if value is None else value

    return {
        "workers": getattr(args, "workers", None),
        "scheduler": getattr(args, "scheduler", None),
        "scheduler_file": getattr(args, "scheduler_file", None),
        "shards_per_worker": given("shards_per_worker", CLUSTER_SHARDS_PER_WORKER),
        "connect_timeout": given("connect_timeout", CLUSTER_CONNECT_TIMEOUT),
        "no_workers_timeout": given("no_workers_timeout", CLUSTER_NO_WORKERS_TIMEOUT),
    }


def _question_lines(args: argparse.Namespace) -> list[str] | None:
    """The questions file's lines (None: a corpus read alone, as load_data reads it), read
    before any cluster work, so a missing or unreadable file is said at once."""
    if args.corpus and not args.questions:
        return None
    file = Path(args.questions) if args.questions else bundled_questions_path()
    return read_text(file).splitlines()


def _located_lab(
    args: argparse.Namespace,
    client: Any,
    quiet: bool,
    stage: Any,
    corpus: Corpus,
    lines: list[str] | None,
    files: Sequence[Path],
    read: Callable[[], list[Any]],
    table: Callable[[ChunkingKey], Any],
) -> Lab:
    """``load_lab`` with the answer passages located on the workers, in the page ``files``
    they read once for the command (``read()``), and without the local BM25 index and LSA
    fit: the cluster computes those. ``table``: each chunking's offsets, which the workers
    find (:attr:`~raglab.pipeline.indexes.Indexes.chunk_table`)."""
    from raglab.distributed.locating import locate_on_cluster

    if lines is None:  # a corpus read alone, as load_data reads it
        questions = no_questions()
    else:
        needles = answer_needles(lines)
        # The pages the questions name, looked up in one round trip a bucket, not one a page.
        corpus.prefetch_ids(named_pages(lines))
        with stage(
            f"locate {len(needles)} answer passages in {len(files)} page files on the workers"
        ):
            finder = locate_on_cluster(
                client,
                files,
                needles,
                lambda: WholeCorpusFinder(corpus),
                # No passage to locate, no page read for it.
                read=read() if needles else None,
            )
        questions = load_questions(args.questions, corpus=corpus, finder=finder)
    lab = Lab(corpus, questions, **given_settings(args, DATA_SETTINGS))
    lab.indexes.chunk_table = table
    for step in progress([lab.indexes.chunk_set], description="Chunking", quiet=quiet):
        step()
    return lab


class _ClusterNeural:
    """The lab's neural rankings and chosen chunks' vectors while the cluster is open: each
    chunking's vectors loaded into shards on the workers on first use
    (:class:`~raglab.distributed.neural_shards.ShardedNeural`) from the partitions its BM25
    shards are cut from (``parts``: the chunking's partition futures), the chunks the vector
    cache lacks encoded and written there by the workers in batches planned here from their
    word-piece counts, no text or vector gathered here; one stage line each. The workers'
    neural package (or model folder) is checked first, unless ``checked`` at connection."""

    def __init__(
        self,
        client: Any,
        lab: Lab,
        stage: Any,
        *,
        checked: bool,
        parts: Callable[[ChunkingKey], list[Any]],
    ) -> None:
        self._client = client
        self._lab = lab
        self._stage = stage
        self._checked = checked
        # The partitions the command's BM25 shards are cut from: no page is chunked twice.
        self._parts = parts
        # Absolute: the workers do not share this process's working folder.
        self._model_path = None if lab.model is None else str(Path(lab.model).absolute())
        self._indexes: dict[ChunkingKey, Any] = {}

    def index(self, chunking: ChunkingKey) -> Any:
        """The :class:`~raglab.distributed.neural_shards.ShardedNeural` of ``chunking``."""
        from raglab.distributed.cluster import check_workers
        from raglab.distributed.neural_shards import ShardedNeural

        key = chunking.resolved()
        if key not in self._indexes:
            if not self._checked:
                check_workers(self._client, neural=True, model=self._model_path)
                self._checked = True
            n = len(self._lab.corpus)
            with self._stage(
                f"load the neural vectors of {n} page files into shards on the workers"
            ):
                self._indexes[key] = ShardedNeural.build(
                    self._client,
                    self._lab,
                    key,
                    model_path=self._model_path,
                    stage=self._stage,
                    parts=self._parts(key),
                )
        return self._indexes[key]

    def search(self, chunking: ChunkingKey, q: Any, k: int) -> Any:
        """:attr:`~raglab.pipeline.indexes.Indexes.neural_search`: the shards' ranking."""
        index = self.index(chunking)
        if isinstance(q, str) or index.ranked(k):
            return index.ranking(q, k)
        with self._stage(
            f"rank {len(self._lab.questions)} questions by neural cosine (depth {k}) on the shards"
        ):
            return index.ranking(q, k)

    def rows(self, chunking: ChunkingKey, idx: Any) -> Any:
        """:attr:`~raglab.pipeline.indexes.Indexes.vector_rows`: the shards' rows."""
        return self.index(chunking).rows(idx)

    def fetch_candidates(self, first_stage: RetrievalSettings) -> None:
        """Fetch in one batch the vectors of every labelled question's reranking candidates
        under the neural ``first_stage``, for the reranker's cosine feature."""
        import numpy as np

        from raglab.pipeline.reranking import candidates

        chunks = [candidates(self._lab, q, first_stage).indices for q in self._lab.questions]
        if not chunks:
            return
        with self._stage(
            f"fetch the neural vectors of the reranker's candidates of {len(chunks)} questions "
            "from the shards"
        ):
            self.index(first_stage.chunking).fetch(np.concatenate(chunks))


def _candidate_pages(lab: Lab, first_stage: RetrievalSettings) -> list[str]:
    """The pages of every labelled question's reranking candidates under ``first_stage``, in
    question and rank order."""
    from raglab.pipeline.reranking import candidates

    table = lab.indexes.chunk_set(first_stage.chunking).chunks
    return table.page_ids(
        i for q in lab.questions for i in candidates(lab, q, first_stage).indices.tolist()
    )


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
    check: Callable[[Lab], object] | None = None,
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
    ``check``: what the command refuses of the lab (raising ValueError), called once the
    questions are read, before any other cluster work.

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
    from raglab.distributed.chunk_table import remote_chunk_table
    from raglab.distributed.chunking import page_files, submit_files, text_fetcher
    from raglab.distributed.cluster import connect, require_dask
    from raglab.distributed.evaluation import evaluate_on_cluster
    from raglab.distributed.lsa_held import text_search
    from raglab.distributed.pages import RemotePages, load_corpus_on_cluster
    from raglab.distributed.pipeline import (
        bm25_keys,
        index_lab,
        lsa_keys,
        prime_bm25,
        prime_candidate_bm25,
        prime_candidate_terms,
        prime_grid,
        prime_lsa,
        prime_lsa_rankings,
    )

    require_dask()  # before any data is read: a missing extra is said at once
    quiet = bool(getattr(args, "quiet", False) or getattr(args, "json", False))
    err = console(stderr=True)
    echo: Callable[[str], object] | None = (
        None if quiet else lambda line: err.print(line, markup=False)
    )
    stage = _stages(echo)
    wanted = [settings] if isinstance(settings, RetrievalSettings) else list(settings)
    # The inputs read and checked before any cluster work: the corpus, the questions file.
    # Each page's text and sections are dropped once it is checked: the workers hold the texts,
    # and the stages fetch the few each question batch reads (kept here up to a budget of
    # characters, with the sections found in them).
    texts = PageTexts(CLIENT_PAGE_TEXT_BUDGET)
    folder = data_corpus_folder(args)
    lines = _question_lines(args)
    neural = any(dense.is_neural(one.retriever) for one in wanted) or (
        rerank is not None and dense.is_neural(rerank.retriever)
    )
    model = getattr(args, "model", None)  # a folder, or NOT_GIVEN or None: the package
    model = model if isinstance(model, str) else None
    with connect(
        **connect_options(args),
        echo=echo,
        neural=neural,
        model=None if model is None else str(Path(model).absolute()),
    ) as client:
        # Each page file read once, on the workers, and held there for every stage (locating,
        # the LSA windows, each chunking); checked here as one machine checks it.
        loaded = load_corpus_on_cluster(
            client,
            folder,
            texts=texts,
            encoding=getattr(args, "encoding", None),
            keep=CLIENT_PAGE_RECORDS,
            listed=lambda keys: progress(keys, description="Listing the folder", quiet=quiet),
            progress=lambda parts: progress(
                parts, description="Reading pages on the workers", quiet=quiet
            ),
        )
        corpus = loaded.corpus
        pages = corpus.pages
        assert isinstance(pages, RemotePages)
        print_corpus_warnings(corpus)
        files = page_files(corpus)

        def read() -> list[Any]:
            return loaded.parts

        fetch = text_fetcher(client, files, read, bounds=loaded.bounds)
        texts.fetch = lambda ids: fetch([corpus.row(i) for i in ids], ids)
        cut: dict[ChunkingKey, list[Any]] = {}

        def chunked(chunking: ChunkingKey) -> list[Any]:
            # When the command asks for a neural retriever, each chunking's partitions are
            # cut once on the workers and held there for the command: its BM25 shards and its
            # neural shards count and encode the same chunks. Otherwise nothing is likely to
            # need them after the counting (and the chunk table's offsets), so the workers'
            # memory is not spent holding them once the chunking is indexed (a neural stage
            # met later cuts them again: the same chunks, some work twice).
            key = chunking.resolved()
            if key not in cut:
                cut[key] = submit_files(client, files, key, read=read())
            return cut[key]

        def table(chunking: ChunkingKey) -> Any:
            return remote_chunk_table(
                client, pages, loaded.parts, chunked(chunking), chunking, keep=CLIENT_PAGE_RECORDS
            )

        lab = _located_lab(args, client, quiet, stage, corpus, lines, files, read, table)
        if check is not None:
            # What the command refuses, refused before the cluster fits or ranks.
            check(lab)
        lab.evaluator = partial(evaluate_on_cluster, client)
        shards: _ClusterNeural | None = None
        if dense.unavailable(lab.model) is None:
            # Encoded only when the command asks for the vectors, as on one machine; the
            # rankings and the candidates' vectors come from shards on the workers, so this
            # process never holds every chunk's vector (no command reads the whole index:
            # lab.indexes.encoder stays None, no vector is gathered here).
            shards = _ClusterNeural(client, lab, stage, checked=neural, parts=chunked)
            lab.indexes.neural_search = shards.search
            lab.indexes.vector_rows = shards.rows
        # The workers cut and tokenise the training windows from the page files and keep the
        # model's rows: this process never holds them, and the shards rank by LSA. Fitted
        # when a stage first reads the model (the LSA rankings below, the reranker's LSA
        # cosine, exhibit III): a command that reads none (a BM25 export) fits none.
        lab.indexes.lsa_fit = lambda rank: prime_lsa(client, lab, rank, stage=stage, read=read())
        # A free text (raglab lsa search) is ranked on the shards as the questions are.
        lab.indexes.lsa_search = text_search(
            client,
            lambda: lab.indexes.lsa,
            chunked,
            analyzer=lab.analyzer,
            stem=lab.stem,
            stage=stage,
        )
        for one in dict.fromkeys(wanted):
            if lsa_keys(one):
                lsa = lab.indexes.lsa
                with stage(
                    f"rank {len(lab.questions)} questions by LSA cosine (depth {one.depth}) "
                    "on the shards"
                ):
                    prime_lsa_rankings(client, lab, lsa, chunked(one.chunking), one)
        if run is not None and run[0].reader_scoring == "idf":
            from raglab.distributed.reading import prime_reader_df

            # Before the BM25 index: it lets the partitions go once counted (without a neural
            # retriever), and these are counted where they are, not cut again.
            key = run[0].chunking
            parts = chunked(key)
            with stage(
                f"count the reader's document frequencies of {len(lab.indexes.chunk_set(key))} "
                f"chunks in {len(parts)} shards on the workers"
            ):
                prime_reader_df(client, lab, key, parts)
        indexes: dict[ChunkingKey, Any] = {}
        planned = contextlib.ExitStack()

        def index_of(chunking: ChunkingKey) -> Any:
            # One index per chunker, however the command names it (the default heading chunker
            # may come as ChunkingKey() or resolved).
            key = chunking.resolved()
            if key not in indexes:
                indexes[key] = index_lab(client, lab, key, stage=stage, parts=chunked(key))
                if not neural:
                    cut.pop(key, None)
            return indexes[key]

        # The MMR's TF-IDF rows of a question's candidates weighed from the shards' N and df,
        # so this process never tokenises every chunk (ChunkSet.tfidf_rows).
        lab.indexes.term_statistics = lambda chunking, terms: index_of(chunking).term_columns(terms)
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
        if rerank is not None and shards is not None and dense.is_neural(rerank.retriever):
            shards.fetch_candidates(rerank)
        if rerank is not None:
            # After the rankings: the candidates are ranked from them (and the vectors, which
            # a neural first stage encodes on the workers now), here.
            index = index_of(rerank.chunking)
            what = (
                f"score the reranker's candidates of {len(lab.questions)} questions by BM25 "
                "on the shards"
            )
            with stage(what):
                prime_candidate_bm25(lab, index, rerank)
            # The reranker's features, MMR and the packing read these candidates' pages: each
            # page a stage lacks comes with the candidates' pages after it, in one round trip.
            planned.enter_context(texts.ahead(_candidate_pages(lab, rerank)))
            with stage(
                f"fetch the term statistics and LSA rows of the reranker's candidates of "
                f"{len(lab.questions)} questions"
            ):
                prime_candidate_terms(lab, index, rerank)
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
            with planned:
                yield lab
        finally:
            texts.fetch = None
            lab.indexes.chunk_table = None
            lab.evaluator = None
            lab.indexes.term_statistics = None
            lab.indexes.neural_search = None
            lab.indexes.vector_rows = None
            lab.indexes.lsa_fit = None
            lab.indexes.lsa_search = None
