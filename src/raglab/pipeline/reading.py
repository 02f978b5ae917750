"""The reading stage of a run: each question's final list packed into the context and read.

One job: take the questions of a split forward through a resolved run's stages, each over them
all and entered once: the chunk set taken once, the first stage's rankings
(:func:`raglab.pipeline.retrieval.ranked_questions`), the trained reranker and MMR over them
(:func:`raglab.pipeline.reranking.reranked_questions`; the reranker is fitted on the training split
when the run is resolved, :func:`raglab.pipeline.resolve.resolve_run`), then each context packed
(:func:`raglab.reading.reader.pack`) and read: the page sentences lying whole inside the packed
chunks, the reader's best one (:func:`raglab.reading.readings.read_prepared`), by plain coverage,
by IDF-weighted coverage with the IDF over the run's chunks (:func:`reader_df`), or by the cosine
of the question's and each candidate sentence's neural vectors, every one encoded alone by the
lab's model and kept on disk (:func:`reader_vectors`; docs/design.md#reader). The threshold is laid over the readings afterwards, so one reading serves
every threshold.

A question is read in two steps: :func:`prepare_reading` packs it from its final list and gathers
what reading needs into a :class:`~raglab.reading.readings.ReadingInput`, and
:func:`~raglab.reading.readings.read_prepared`, a pure function of that input, reads it. A Dask
cluster runs the second step on its workers for slices of the questions
(:mod:`raglab.distributed.end_to_end`); one machine runs both, :func:`read_split`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from raglab.base.ranking import Ranking
from raglab.corpus.questions import Question
from raglab.metrics.measures import first_relevant_rank
from raglab.pipeline.cache import CacheKind
from raglab.pipeline.dense import unavailable
from raglab.pipeline.indexes import ChunkSet
from raglab.pipeline.lab import Lab
from raglab.pipeline.reranking import Reranker, reranked_questions
from raglab.pipeline.retrieval import ranked_questions
from raglab.reading.reader import Vectors, document_frequencies, idf_weights, pack
from raglab.reading.readings import Reading, ReadingInput, SentenceSpan, candidates, read_prepared
from raglab.run_settings import ChunkingKey, ReadSettings
from raglab.settings import CACHE_SIZE, NEURAL_READER_SCORINGS, READER_ANALYZER
from raglab.text.tokens import tokenize

__all__ = [
    "READINGS",
    "check_reader",
    "packed_count",
    "prepare_reading",
    "prepared_questions",
    "prepared_split",
    "read_question",
    "read_split",
    "reader_df",
    "reader_tokens",
    "reader_vectors",
]

#: The readings of a split's questions, in file order, by (split, read settings).
READINGS: CacheKind[tuple[str, ReadSettings], list[Reading]] = CacheKind("readings", CACHE_SIZE * 8)
#: (N, df) of the reader's stemmed terms over a chunking's chunks (a Dask client's: of the
#: questions' terms only, :func:`raglab.distributed.reading.prime_reader_df`).
READER_DF: CacheKind[ChunkingKey, tuple[int, Mapping[str, int]]] = CacheKind(
    "reader document frequencies", CACHE_SIZE
)


#: The first ranks whose word counts :func:`packed_count` reads at once (doubled while they all
#: fit): a context of the default budget holds a few chunks.
PACK_PREFIX = 8


def packed_count(cs: ChunkSet, ranking: Ranking, read: ReadSettings) -> int:
    """k_budget: how many of ``ranking``'s first chunks fit the context's ``read.budget`` words
    (:func:`~raglab.reading.reader.pack`). The word counts are read for a prefix of the ranking
    that doubles until a chunk in it does not fit: a Dask client's table reads them off the
    chunks' pages (:class:`~raglab.chunking.held_table.HeldChunkTable`), so only the first
    few chunks' pages are read, not the whole ranking's. ``pack`` of that prefix equals
    ``pack`` of the whole ranking: packing stops at the first chunk that does not fit."""
    idx = ranking.indices
    n = min(len(idx), PACK_PREFIX)
    while True:
        k = pack(cs.chunks.words_of(idx[:n]), budget=read.budget)
        if k < n or n == len(idx):
            return k
        n = min(len(idx), 2 * n)


def prepare_reading(
    lab: Lab, cs: ChunkSet, q: Question, ranking: Ranking, read: ReadSettings
) -> ReadingInput:
    """Pack one question's context from its final ``ranking`` (``cs``: the run's chunks) and
    gather what reading it needs."""
    weights = None
    if read.reader_scoring == "idf":
        n_chunks, df = reader_df(lab, cs)
        weights = idf_weights(set(reader_tokens(q.question)), df, n_chunks)
    k_budget = packed_count(cs, ranking, read)
    depth = read.final_depth(len(cs))
    rel = cs.relevance(q)
    first = first_relevant_rank(ranking, rel) if rel else None
    packed = tuple(
        (c.id, c.page_id, c.start, c.end)
        for c in cs.chunks.take(ranking.indices[:k_budget].tolist())
    )
    pages = dict.fromkeys(page for _, page, _, _ in packed)
    # Only what the reader can quote: the sentences lying whole inside a packed chunk, and their
    # texts, so an input grows with the budget, not with its pages (it travels to a worker).
    sentences = {
        page: tuple(lab.sentences_within(page, [(a, b) for _, p, a, b in packed if p == page]))
        for page in pages
    }
    spans = list(dict.fromkeys(span for _, span, _ in candidates(packed, sentences)))
    texts = {span: lab.corpus.page(span[0]).text[span[1] : span[2]] for span in spans}
    question_vector, sentence_vectors = None, None
    if read.reader_scoring == "cosine":
        question_vector, sentence_vectors = reader_vectors(lab, q, spans, texts)
    return ReadingInput(
        q=q,
        rank=first,
        k_budget=k_budget,
        depth=depth,
        relevant=bool(rel),
        packed=packed,
        sentences=sentences,
        texts=texts,
        weights=weights,
        question_vector=question_vector,
        sentence_vectors=sentence_vectors,
    )


def reader_vectors(
    lab: Lab, q: Question, spans: Sequence[SentenceSpan], texts: dict[SentenceSpan, str]
) -> tuple[Vectors, dict[SentenceSpan, Vectors]]:
    """The cosine reader's vectors: the question's unit vector, shape (dim,), and each sentence
    span's (page, start, end; its text ``texts[span]``), under the lab's neural model.

    Every text is encoded alone, as a question is (:meth:`raglab.pipeline.indexes.Indexes.
    query_vector`): a sentence's vector is then the same whichever sentences were encoded before
    it, it is kept on disk beside the questions' (:func:`raglab.pipeline.dense.encode_query`), and
    a sentence met again, in another question's context or another run, costs nothing.
    """
    indexes = lab.indexes
    vectors = {span: indexes.query_vector(texts[span]) for span in spans}
    return indexes.query_vector(q), vectors


def check_reader(lab: Lab, scoring: str) -> None:
    """ValueError saying how to install the neural model when the reader's ``scoring`` needs it
    and it is missing (:func:`raglab.pipeline.dense.unavailable`); nothing otherwise."""
    if scoring in NEURAL_READER_SCORINGS:
        why = unavailable(lab.model)
        if why is not None:
            raise ValueError(f"the reader's {scoring} scoring {why}")


def prepared_questions(
    lab: Lab, read: ReadSettings, qs: Sequence[Question], reranker: Reranker | None
) -> list[ReadingInput]:
    """The questions ``qs`` taken forward stage by stage, each over them all: the chunk set taken
    once, the first stage ranks them (:func:`raglab.pipeline.retrieval.ranked_questions`), the
    run's trained ``reranker`` (None: no reranker) and MMR reorder their lists
    (:func:`raglab.pipeline.reranking.reranked_questions`), and each context is packed
    (:func:`prepare_reading`)."""
    if read.rerank != (reranker is not None):
        raise ValueError(
            "a reading with the reranker needs the run's trained reranker, and only it"
        )
    check_reader(lab, read.reader_scoring)
    cs = lab.indexes.chunk_set(read.chunking)
    rankings = ranked_questions(lab, cs, qs, read.first_stage)
    if reranker is not None:
        rankings = reranked_questions(lab, cs, qs, rankings, reranker, read.mmr_lambda)
    return [prepare_reading(lab, cs, q, r, read) for q, r in zip(qs, rankings, strict=True)]


def prepared_split(
    lab: Lab, read: ReadSettings, split: str, reranker: Reranker | None
) -> list[ReadingInput]:
    """:func:`prepared_questions` of every question of ``split``, in file order."""
    return prepared_questions(lab, read, lab.split(split), reranker)


def read_split(
    lab: Lab, read: ReadSettings, split: str, reranker: Reranker | None
) -> list[Reading]:
    """Every question of ``split`` ranked, packed and read under ``read`` with the run's trained
    ``reranker`` (cached)."""
    return lab.caches.of(READINGS).get(
        (split, read),
        lambda: [read_prepared(i) for i in prepared_split(lab, read, split, reranker)],
    )


def read_question(lab: Lab, q: Question, read: ReadSettings, reranker: Reranker | None) -> Reading:
    """One question ranked, packed and read under ``read`` with the run's trained ``reranker``."""
    return read_prepared(prepared_questions(lab, read, (q,), reranker)[0])


def reader_tokens(text: str) -> list[str]:
    """The reader's terms of a text (a question, a chunk): stemmed, by READER_ANALYZER, as it
    reads sentences."""
    return tokenize(text, stem=True, analyzer=READER_ANALYZER)


def reader_df(lab: Lab, cs: ChunkSet) -> tuple[int, Mapping[str, int]]:
    """(N, df) of the reader's terms (:func:`reader_tokens`) over one chunking's chunks: what
    IDF-weighted coverage weighs the question's terms with. Counted here from every chunk unless
    the lab holds them already (a Dask cluster counts them on its workers,
    :func:`raglab.distributed.reading.prime_reader_df`)."""

    def build() -> tuple[int, Mapping[str, int]]:
        return document_frequencies(reader_tokens(c.text) for c in cs.chunks)

    return lab.caches.of(READER_DF).get(cs.key, build)
