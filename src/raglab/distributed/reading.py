"""The reader's document frequencies counted on Dask workers, for IDF-weighted coverage.

One job: put (N, df) of the reader's terms over a chunking's chunks where
:func:`raglab.pipeline.reading.reader_df` looks for it, counted on the workers that hold the
chunks, so that a Dask client never tokenises every chunk (it had to read every page's text for
that). The formula is :func:`raglab.reading.reader.idf_weights`' (docs/design.md#reader):

    idf(t) = ln(1 + (N − n_t + 0.5) / (n_t + 0.5))

N the number of chunks, n_t how many of them hold the stemmed term t.

What runs where:

1. **Workers, one task per chunked partition** (the partitions the distributed pipeline made,
   :func:`raglab.distributed.chunking.submit_files`): the partition's chunks tokenised as the
   reader reads (:func:`~raglab.pipeline.reading.reader_tokens`) and counted by
   :func:`~raglab.reading.reader.document_frequencies`, the single machine's own count.
2. **Workers, the reduction**: N and n_t summed in a tree of
   :func:`~raglab.distributed.shard.add_statistics` tasks (:func:`~raglab.distributed.bm25.
   reduce_tree`, as BM25's n_t are): integer sums, the same whatever the partitions.
3. **The worker holding the reduced table**: the table cut to the terms of the lab's
   questions; only N and that cut come to the client.

Only the questions' terms travel: :func:`~raglab.reading.reader.idf_weights` reads n_t of a
question's own terms and no other, so the client holds O(the questions' terms), where the whole
table is O(the vocabulary), which grows with the chunks (Heaps' law) and is what the BM25 tree
too keeps off the client. The cut is a :class:`QuestionTermFrequencies`, which refuses a term
outside the questions' rather than taking it for a term no chunk holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from raglab.distributed.bm25 import TREE_ARITY, reduce_tree
from raglab.distributed.chunking import ChunkedPartition
from raglab.distributed.cluster import holders, submit_beside
from raglab.distributed.shard import GlobalStatistics
from raglab.pipeline.lab import Lab
from raglab.pipeline.reading import READER_DF, reader_tokens
from raglab.reading.reader import document_frequencies
from raglab.run_settings import ChunkingKey

__all__ = [
    "QuestionTermFrequencies",
    "count_reader_terms",
    "prime_reader_df",
    "reader_frequencies",
]


class QuestionTermFrequencies(Mapping[str, int]):
    """n_t of a set of terms (``terms``, the lab's questions'), as counted over the chunks
    (``df``: the terms some chunk holds, a term held by none absent, n_t = 0). Reading a term
    outside ``terms`` raises ValueError: its n_t was not counted, and taking it for 0 would give
    it the largest IDF."""

    __slots__ = ("_df", "_terms")

    def __init__(self, df: Mapping[str, int], terms: Iterable[str]) -> None:
        self._terms = frozenset(terms)
        if not self._terms.issuperset(df):
            raise ValueError("the document frequencies hold terms outside the counted ones")
        self._df = dict(df)

    def __getitem__(self, term: str) -> int:
        if term not in self._terms:
            raise ValueError(f"the document frequency of {term!r} was not counted")
        return self._df[term]

    def __iter__(self) -> Iterator[str]:
        return iter(self._df)

    def __len__(self) -> int:
        return len(self._df)


def count_reader_terms(part: ChunkedPartition) -> GlobalStatistics:
    """Task: (N, df) of the reader's terms over one partition's chunks,
    :func:`~raglab.reading.reader.document_frequencies` of their
    :func:`~raglab.pipeline.reading.reader_tokens`, as the statistics the tree adds (L, which
    the reader does not use, 0)."""
    n_docs, df = document_frequencies(reader_tokens(c.text) for c in part.chunks)
    return GlobalStatistics(n_docs, 0, df)


def reader_frequencies(client: Any, parts: Sequence[Any], *, arity: int = TREE_ARITY) -> Any:
    """A future of the whole chunking's reader (N, df) as
    :class:`~raglab.distributed.shard.GlobalStatistics`: each of ``parts`` (futures of
    :class:`~raglab.distributed.chunking.ChunkedPartition`) counted on a worker holding it
    (:func:`~raglab.distributed.cluster.submit_beside`: never copied), the counts
    added in a tree of ``arity`` tables a task on the workers."""
    on = holders(client, parts)  # one round trip for every partition, not one each
    counts = [
        submit_beside(client, count_reader_terms, part, on=where)
        for part, where in zip(parts, on, strict=True)
    ]
    return reduce_tree(client, counts, arity)


def _cut(table: GlobalStatistics, terms: frozenset[str]) -> tuple[int, dict[str, int]]:
    # Runs where the reduced table is: only N and the questions' terms leave that worker.
    return table.n_docs, {t: table.df[t] for t in terms if t in table.df}


def prime_reader_df(client: Any, lab: Lab, chunking: ChunkingKey, parts: Sequence[Any]) -> int:
    """Count the reader's (N, df) over ``chunking``'s chunks on the workers holding them
    (``parts``: that chunking's partitions, in the lab's chunk order) and store N with n_t of
    the terms of every labelled question of ``lab`` where
    :func:`raglab.pipeline.reading.reader_df` looks for it; returns N. Each IDF weight is then
    the single machine's (integer counts). Nothing runs when the lab holds them already.
    Raises ValueError when the partitions hold another number of chunks than the lab's
    chunking."""
    cs = lab.indexes.chunk_set(chunking)
    cache = lab.caches.of(READER_DF)
    found = cache.find(cs.key)
    if found is not None:
        return found[0]
    terms = frozenset(t for q in lab.questions for t in reader_tokens(q.question))
    table = reader_frequencies(client, parts)
    n_docs, df = client.gather(client.submit(_cut, table, terms, pure=False))
    if n_docs != len(cs):
        raise ValueError(f"the partitions hold {n_docs} chunks, the lab's chunking {len(cs)}")
    cache.setdefault(cs.key, (n_docs, QuestionTermFrequencies(df, terms)))
    return int(n_docs)
