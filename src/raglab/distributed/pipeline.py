"""A :class:`~raglab.pipeline.lab.Lab`'s BM25 rankings computed on a Dask cluster.

:func:`index_lab` has the workers read and chunk the lab's page files and count their tokens
(:mod:`raglab.distributed.chunking`), then builds the sharded index with global statistics
(:class:`~raglab.distributed.bm25.DistributedBM25`). :func:`prime_bm25` ranks every labelled
question on it and stores each ranking where :func:`raglab.pipeline.retrieval.rank` looks for
it (``lab.caches.of(RANKINGS)`` under ``(settings, question id)``), so every later measure,
fusion and export of the lab reads the cluster's rankings, which equal the single machine's bit
for bit, and the lab never builds its own BM25 index for them.

With the reranker on, :func:`prime_candidate_bm25` also scores every labelled question's
reranking candidates by BM25 on the shards and stores the scores where the reranker's BM25
feature looks for them (:func:`raglab.pipeline.reranking.candidate_bm25`), so that the client
builds no BM25 index for the features either.

:func:`prime_grid` computes exhibit II's k1 x b grid on the shards (every cell's top k of every
training question, one task per shard for all cells) and primes the rankings the exhibit then
measures at the best cell and the defaults.

:func:`prime_lsa` fits the lab's LSA model with the term x window matrix in row blocks on the
workers, which cut and tokenise the training windows from the page files themselves
(:func:`raglab.distributed.lsa.cut_windows`, :func:`raglab.distributed.lsa.fit_held_lsa`:
the single machine's model bit for bit), leaves it there
(:class:`raglab.distributed.lsa_held.HeldLSA`) and stores it where
:meth:`~raglab.pipeline.indexes.Indexes.lsa_model` looks for it; a command calls it through
:attr:`~raglab.pipeline.indexes.Indexes.lsa_fit` when a stage first reads the model, so one
that reads none fits none. :func:`prime_lsa_rankings`
ranks every labelled question by LSA on the shards and stores the rankings as
:func:`prime_bm25` does, so an LSA or fusion first stage folds no chunk in on the client.

The reranker's other features and MMR's TF-IDF cosines read only each question's candidates'
rows on the client (:meth:`~raglab.pipeline.indexes.ChunkSet.lsa_rows`, folded in with only
their terms' rows of U fetched from the workers,
:meth:`~raglab.pipeline.indexes.ChunkSet.tfidf_rows`, with N and n_t looked up in the shards'
reduced table, :meth:`~raglab.distributed.bm25.DistributedBM25.term_columns`), so a BM25 run
builds no table of every chunk there.

What stays on the client, O(chunks): the lab itself (the pages' metadata, each page's text,
and the sections and the reader's sentence bounds found in it, fetched from the workers when
a stage reads it and kept with it, questions, and
its chunk list for ids, relevance, packing and the reader's inputs, held as offsets and word
counts, 24 bytes a chunk, :class:`~raglab.chunking.table.ChunkTable`: a chunk and its text are
made from its page only while a stage reads it, and a candidate's age is read off its page's,
:meth:`~raglab.pipeline.indexes.ChunkSet.ages_of`). Of the LSA model the client holds s and
each term block's first term (docs/distributed.md, "What the client holds"); exhibit III's
spectrum and neighbours are each term block's best few, merged there. Fusion and the threshold
run there too. A
neural first stage is searched per shard on the workers and merged
(:mod:`raglab.distributed.neural_shards`): the client holds its questions' vectors, rankings
and candidates' rows, not the chunks' vectors.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from raglab.base.ranking import Ranking
from raglab.distributed.bm25 import DistributedBM25
from raglab.distributed.chunking import (
    ChunkedPartition,
    count_chunks,
    page_digest,
    page_files,
    same_pages,
    submit_files,
)
from raglab.distributed.lsa import WindowColumns, cut_windows, fit_held_lsa
from raglab.distributed.lsa_held import HeldLSA, rank_on_shards
from raglab.embedding.lsa import LSASpace
from raglab.pipeline.dense import is_neural
from raglab.pipeline.grid import Grid, bm25_grid
from raglab.pipeline.lab import Lab
from raglab.pipeline.reranking import CANDIDATE_BM25, candidate_bm25_key, candidates
from raglab.pipeline.retrieval import RANKINGS
from raglab.run_settings import ChunkingKey, RetrievalSettings
from raglab.settings import GRID_RECALL_K, LSA_OVERSAMPLE, SEED, default

__all__ = [
    "Stage",
    "bm25_keys",
    "index_lab",
    "lsa_keys",
    "no_stage",
    "prime_bm25",
    "prime_candidate_bm25",
    "prime_candidate_terms",
    "prime_grid",
    "prime_lsa",
    "prime_lsa_rankings",
]

#: A stage of the work: ``with stage("what runs"):`` around it (the command line times and
#: prints each one; :func:`no_stage` says nothing).
Stage = Callable[[str], contextlib.AbstractContextManager[object]]


@contextlib.contextmanager
def no_stage(what: str) -> Iterator[None]:
    """The silent :data:`Stage`."""
    yield


def _page_ids(part: ChunkedPartition) -> tuple[tuple[int, bytes], int]:
    """Task: the partition's pages as :func:`~raglab.distributed.chunking.same_pages` compares
    them (their number, their ids' digest) and its number of chunks."""
    return (len(part.pages), page_digest(p[0] for p in part.pages)), len(part.chunks)


def index_lab(
    client: Any,
    lab: Lab,
    chunking: ChunkingKey | None = None,
    *,
    partitions: int | None = None,
    stage: Stage = no_stage,
    encoding: str | None = None,
    read: Sequence[Any] | None = None,
    parts: Sequence[Any] | None = None,
) -> DistributedBM25:
    """The lab's chunks under ``chunking`` indexed on the workers, which read the page files
    themselves. Raises ValueError when the workers' pages or chunks differ from the lab's (a
    remote cluster that sees other files at these paths). ``stage`` wraps each of the two
    stages: reading and chunking, then counting and the statistics' reduction. ``encoding``:
    the one the lab's corpus was read in (``load_corpus``'s), None for each page's own.
    ``read``: the lab's page files already read on the workers
    (:func:`raglab.distributed.chunking.read_partitions`), chunked where they are. ``parts``:
    the partitions already chunked under ``chunking`` (:func:`raglab.distributed.chunking.submit_files`'
    futures, shared with the neural shards), used as they are."""
    key = (chunking or ChunkingKey()).resolved()
    files = page_files(lab.corpus)
    with stage(f"read and chunk {len(files)} page files on the workers"):
        if parts is None:
            parts = submit_files(
                client, files, key, partitions=partitions, encoding=encoding, read=read
            )
        seen = client.gather([client.submit(_page_ids, p, pure=False) for p in parts])
    n_chunks = sum(n for _, n in seen)
    same = same_pages(lab.corpus.ids, [pages for pages, _ in seen])
    if not same or n_chunks != len(lab.indexes.chunk_set(key)):
        raise ValueError(
            "the Dask workers read other pages than this machine did: the corpus folder must be "
            "at the same path, with the same files, on every worker"
        )
    with stage(
        f"count the terms of {n_chunks} chunks in {len(parts)} shards; reduce N, avgdl, n_t"
    ):
        counts = [client.submit(count_chunks, p, lab.analyzer, lab.stem, pure=False) for p in parts]
        return DistributedBM25.from_counts(client, counts)


def bm25_keys(settings: RetrievalSettings) -> list[RetrievalSettings]:
    """The BM25 settings under which :func:`raglab.pipeline.retrieval.rank` caches the BM25
    lists that ranking under ``settings`` reads: the fusions' component (default fusion depth)
    and, for BM25 itself, ``settings`` as given. LSA alone reads none."""
    component = RetrievalSettings(
        "bm25", settings.k1, settings.b, chunking=settings.chunking, depth=settings.depth
    )
    if settings.retriever == "bm25":
        return [component] if component == settings else [settings, component]
    return [] if settings.retriever == "lsa" else [component]


def prime_bm25(lab: Lab, index: DistributedBM25, settings: RetrievalSettings) -> int:
    """Rank every labelled question of ``lab`` by BM25 on ``index`` (one batch to every shard)
    and store the rankings for ``settings``; returns how many were stored.

    Each ranking is what :func:`raglab.pipeline.retrieval.bm25_ranking` gives: the first
    ``depth`` chunks (all of them for depth 0) in (-score, index) order, chunks scoring 0
    left out.
    """
    keys = bm25_keys(settings)
    if not keys:
        return 0
    cs = lab.indexes.chunk_set(settings.chunking)
    if index.n_docs != len(cs):
        raise ValueError(f"the index holds {index.n_docs} chunks, the lab's chunking {len(cs)}")
    depth = len(cs) if settings.depth == 0 else min(settings.depth, len(cs))
    questions = list(lab.questions)
    docs, scores = index.search_many(
        [lab.indexes.query_tokens(q) for q in questions], k=depth, k1=settings.k1, b=settings.b
    )
    for row, q in enumerate(questions):
        keep = scores[row] > 0
        ranking = Ranking(docs[row][keep], scores[row][keep])
        for key in keys:
            lab.caches.of(RANKINGS).setdefault((key, q.id), ranking)
    return len(questions)


def prime_candidate_bm25(lab: Lab, index: DistributedBM25, first_stage: RetrievalSettings) -> int:
    """Score every labelled question's reranking candidates (the first stage's top 20,
    :func:`raglab.pipeline.reranking.candidates`) by BM25 at the first stage's k1 and b on
    ``index``, and store them for the reranker's BM25 feature; returns how many questions.

    The candidates are ranked here on the client, from the rankings :func:`prime_bm25` stored
    (and the embedding), so call it after them. Each score equals the single index's bit for bit.
    """
    cs = lab.indexes.chunk_set(first_stage.chunking)
    if index.n_docs != len(cs):
        raise ValueError(f"the index holds {index.n_docs} chunks, the lab's chunking {len(cs)}")
    questions = list(lab.questions)
    chunk_lists = [candidates(lab, q, first_stage).indices for q in questions]
    scores = index.scores_of(
        [lab.indexes.query_tokens(q) for q in questions],
        chunk_lists,
        k1=first_stage.k1,
        b=first_stage.b,
    )
    for q, chunks, values in zip(questions, chunk_lists, scores, strict=True):
        table = lab.caches.of(CANDIDATE_BM25).setdefault(candidate_bm25_key(first_stage, q.id), {})
        table.update(zip(chunks.tolist(), values.tolist(), strict=True))
    return len(questions)


def prime_candidate_terms(lab: Lab, index: DistributedBM25, first_stage: RetrievalSettings) -> int:
    """Fetch ahead, in one round trip each, what the reranker and MMR read of every labelled
    question's candidates under ``first_stage`` (call it after :func:`prime_candidate_bm25`):
    the terms' columns and document frequencies (their TF-IDF rows,
    :meth:`DistributedBM25.ahead`) and, unless the first stage is neural, the LSA rows of those
    terms and the questions' (the cosine feature, :meth:`HeldLSA.ahead`). Without it each
    question asked the workers twice or three times, ~25 ms a round trip. Returns how many
    distinct terms the candidates hold."""
    cs = lab.indexes.chunk_set(first_stage.chunking)
    chunks = [candidates(lab, q, first_stage).indices for q in lab.questions]
    if not chunks:
        return 0
    held = np.unique(np.concatenate(chunks))
    terms = {t for tokens in cs.token_rows(held) for t in tokens}
    index.ahead(terms)
    lsa = None if is_neural(first_stage.retriever) else lab.indexes.lsa
    if isinstance(lsa, HeldLSA):
        asked = {t for q in lab.questions for t in lab.indexes.query_tokens(q)}
        lsa.ahead(terms | asked)
    return len(terms)


def prime_lsa(
    client: Any,
    lab: Lab,
    rank: int,
    *,
    encoding: str | None = None,
    partitions: int | None = None,
    stage: Stage = no_stage,
    read: Sequence[Any] | None = None,
) -> LSASpace:
    """The lab's LSA model at ``rank`` (:meth:`~raglab.pipeline.indexes.Indexes.lsa_model`), fitted on
    the workers with A in row blocks (two per worker) unless the lab has it already, and kept
    in the lab, so every later use (the LSA rankings, the fusions, the reranker's cosine, the
    exhibit) reads it. It equals the lab's own fit bit for bit.

    The workers read the lab's page files (``encoding`` as the lab's corpus was read, in
    ``partitions`` parts, default two per worker; ``read``: the files already read there,
    :func:`raglab.distributed.chunking.read_partitions`) and cut and tokenise the training
    windows themselves (:func:`raglab.distributed.lsa.cut_windows`): this process never builds
    ``Indexes.lsa_windows``. The windows are cut only for a fit: with the model in the lab's
    cache (and the windows' shape, which its rank key needs, recorded by the first fit),
    nothing runs on the cluster. ``stage`` wraps the fit. Raises ValueError when the workers
    read other pages than the lab's."""
    indexes = lab.indexes
    cut: list[WindowColumns] = []

    def windows() -> WindowColumns:
        if not cut:
            cut.append(
                cut_windows(
                    client,
                    page_files(lab.corpus),
                    lab.corpus.ids,
                    indexes.lsa_ranges,
                    analyzer=indexes.analyzer,
                    stem=indexes.stem,
                    encoding=encoding,
                    partitions=partitions,
                    read=read,
                )
            )
        return cut[0]

    def fit(k: int) -> LSASpace:
        columns = windows()
        with stage(f"fit LSA on {columns.n} windows, the term x window matrix in row blocks"):
            return fit_held_lsa(client, columns, rank=k, seed=SEED, oversample=LSA_OVERSAMPLE)

    return indexes.lsa_model(rank, fit=fit, shape=lambda: (windows().n, windows().n_terms))


def lsa_keys(settings: RetrievalSettings) -> list[RetrievalSettings]:
    """The LSA settings under which :func:`raglab.pipeline.retrieval.rank` caches the LSA lists
    that ranking under ``settings`` reads: the LSA fusions' component and, for LSA itself,
    ``settings`` as given. The other retrievers read none."""
    component = RetrievalSettings("lsa", chunking=settings.chunking, depth=settings.depth)
    if settings.retriever == "lsa":
        return [component] if component == settings else [settings, component]
    return [component] if settings.retriever in ("rrf", "score") else []


def prime_lsa_rankings(
    client: Any, lab: Lab, model: LSASpace, parts: Sequence[Any], settings: RetrievalSettings
) -> int:
    """Rank every labelled question of ``lab`` by LSA cosine on the shards of the chunking's
    partitions ``parts`` (:func:`raglab.distributed.lsa_held.rank_on_shards`: each shard folds
    its chunks in on its worker with the model's rows held there) and store the rankings for
    ``settings``; returns how many were stored. Each ranking is
    :func:`raglab.pipeline.retrieval.lsa_ranking`'s, bit for bit; the client never folds a
    chunk in."""
    keys = lsa_keys(settings)
    if not keys or not isinstance(model, HeldLSA):
        return 0
    n_chunks = len(lab.indexes.chunk_set(settings.chunking))
    depth = n_chunks if settings.depth == 0 else min(settings.depth, n_chunks)
    questions = list(lab.questions)
    rankings = rank_on_shards(
        client,
        model,
        parts,
        [lab.indexes.query_tokens(q) for q in questions],
        k=depth,
        analyzer=lab.analyzer,
        stem=lab.stem,
    )
    for q, ranking in zip(questions, rankings, strict=True):
        for key in keys:
            lab.caches.of(RANKINGS).setdefault((key, q.id), ranking)
    return len(questions)


def _grid_cells(index: DistributedBM25) -> Any:
    def cells(queries: list[list[str]], k1s: Any, bs: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        docs, scores = index.search_grid(queries, k=k, k1s=k1s, bs=bs)
        return docs, scores > 0

    return cells


def prime_grid(lab: Lab, index: DistributedBM25, chunking: ChunkingKey) -> Grid | None:
    """Exhibit II's grid (:func:`raglab.pipeline.grid.bm25_grid`, training recall over k1 x b)
    for ``chunking`` with every cell searched on the shards, kept in the lab; then the BM25
    rankings the exhibit measures at its best cell and at the defaults, primed like
    :func:`prime_bm25`. Each cell's top k equals the lab's own index's bit for bit, so the grid
    is the one the lab would compute. None (and nothing primed) without answerable training
    questions: the exhibit then says so itself."""
    if not lab.split("train", answerable=True):
        return None
    grid = bm25_grid(lab, k=GRID_RECALL_K, chunking=chunking, cells=_grid_cells(index))
    for k1, b in dict.fromkeys(((grid.best_k1, grid.best_b), (default("k1"), default("b")))):
        prime_bm25(lab, index, RetrievalSettings("bm25", k1=k1, b=b, chunking=chunking))
    return grid
