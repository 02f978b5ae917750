"""A lab's retrieval indexes: everything built from its pages and questions to retrieve with.

One job: build, once and on first use, what retrieval reads: the chunkings (:class:`ChunkSet`,
one per chunker setting, each with its chunks as offsets into the pages,
:class:`~raglab.chunking.table.ChunkTable`, and their tokens, BM25 statistics, LSA
projections, neural vectors, TF-IDF rows and reranker fields, and the relevance of every chunk
to every question),
the retrieval tokens of questions, the LSA model and the neural model with the questions'
vectors. :class:`Indexes` holds them for one lab (:attr:`raglab.pipeline.lab.Lab.indexes`); the
lab itself holds the data they are built from. Nothing here computes a result an exhibit shows.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from raglab.base.ranking import FloatArray, IntArray, Ranking
from raglab.bm25.index import BM25Index
from raglab.chunking.chunk import Chunk
from raglab.chunking.table import ChunkTable
from raglab.corpus.pages import Corpus, prefetch, reading
from raglab.corpus.questions import Question, QuestionSet
from raglab.embedding.lsa import LSASpace, fit_lsa, unit_rows, window_count, window_ranges
from raglab.embedding.vectors import SparseMatrix, Vocabulary, idf_weights, tfidf_matrix
from raglab.pipeline import dense
from raglab.pipeline.cache import BoundedCache
from raglab.rerank.features import DAYS_PER_YEAR, page_age_years
from raglab.run_settings import ChunkingKey
from raglab.settings import CACHE_SIZE, LSA_MAX_WINDOWS, LSA_OVERSAMPLE, LSA_RANK, SEED, default
from raglab.text.tokens import count_words, identifiers, tokenize, word_offsets

if TYPE_CHECKING:  # raglab.embedding.neural loads tokenizers and safetensors: only when used
    from raglab.embedding.neural.encoder import Float32Array
    from raglab.embedding.neural.index import NeuralIndex
    from raglab.embedding.neural.model import NeuralModel

__all__ = [
    "ChunkSet",
    "Indexes",
    "LSASearch",
    "NeuralSearch",
    "Relevance",
    "TermStatistics",
    "window_bounds",
    "window_pieces",
]

#: Relevance of chunks to one question: chunk index -> gain (1 for passages, the grade for pages).
Relevance = Mapping[int, float]

#: ``lookup(chunking, terms)`` for sorted, distinct ``terms`` of a chunking's chunks: (N, V,
#: columns, df), N the number of chunks, V the number of distinct terms over all of them, and
#: each term's column in their sorted vocabulary (V,) and its document frequency, both (len(terms),).
TermStatistics = Callable[[ChunkingKey, Sequence[str]], tuple[int, int, IntArray, IntArray]]

#: ``search(chunking, question, k)``: the question's first k chunks of a chunking by the cosine
#: of their sentence vectors with its own, as ``NeuralIndex.search_vector`` ranks them.
NeuralSearch = Callable[[ChunkingKey, Question | str, int], Ranking]

#: ``search(chunking, tokens, k)``: a free text's first k chunks of a chunking by the cosine of
#: their LSA fold-ins with its tokens', as ``LSAModel.search`` ranks them over every chunk's
#: unit fold-in; None where the model is not held elsewhere (then it is ranked here).
LSASearch = Callable[[ChunkingKey, list[str], int], Ranking | None]


#: Chunks whose tokens a chunk set without its whole token table keeps (:meth:`ChunkSet.token_rows`):
#: every candidate of a few hundred questions, at about 10 KB a chunk of 200 tokens at most.
TOKEN_MEMO_CHUNKS = 2048


class ChunkSet:
    """One chunking of the corpus with everything retrieval needs about its chunks."""

    def __init__(self, indexes: Indexes, key: ChunkingKey) -> None:
        self.key = key
        self.indexes = indexes
        # Offsets and word counts only: a chunk is made from its page when it is read, so the
        # chunks' texts are never held beside the pages' (ChunkTable).
        made = indexes.chunk_table
        self.chunks = (
            ChunkTable(indexes.corpus.pages, method=key.method, size=key.size, overlap=key.overlap)
            if made is None
            else made(key)
        )
        # The rows :meth:`holding` holds their chunks for, by their bytes, and those chunks once
        # made; None outside such a block (no chunk outlives the stage that read it).
        self._held: tuple[bytes, list[Chunk] | None] | None = None
        # Tokens of the chunks read a few at a time (no whole token table: a Dask client), by
        # chunk: a question's candidates are read by its features, its MMR at each lambda and
        # the packing, and tokenising them again was a sixth of a clustered report's time.
        self._token_memo: BoundedCache[int, list[str]] = BoundedCache(TOKEN_MEMO_CHUNKS)
        self._relevance: dict[str, dict[int, float]] = {}
        # A span's chunks are found in its page's rows: a Dask client's table cuts the labelled
        # pages again (HeldChunkTable), their texts fetched in batches, not one a question.
        # Their pages' metadata and chunk rows too, where they are held elsewhere: one round
        # trip each, not one a page.
        named = [span.page_id for q in indexes.questions for span in q.spans]
        named += [page for q in indexes.questions for page in q.pages or ()]
        corpus = indexes.corpus
        corpus.prefetch_ids(named)
        self.chunks.prefetch_pages(corpus.row(i) for i in named if i in corpus)
        labelled = (
            indexes.corpus.page(span.page_id)
            for q in indexes.questions
            for span in q.spans
            if span.page_id in indexes.corpus
        )
        with reading(labelled):
            for q in indexes.questions:
                self._relevance[q.id] = self._relevant(q)

    def _relevant(self, q: Question) -> dict[int, float]:
        if q.spans:
            hits: dict[int, float] = {}
            for span in q.spans:
                for i in self.chunks.containing(span.page_id, span.start, span.end):
                    hits[i] = 1.0
            return hits
        if q.pages:
            # In chunk order, as a pass over every chunk would give them.
            # Each row with the page it was found under: no row's page asked again.
            rows = sorted((i, page) for page in q.pages for i in self.chunks.rows_of(page))
            return {i: float(q.pages[page]) for i, page in rows}
        return {}

    def relevance(self, q: Question) -> Relevance:
        """Chunk index -> gain for the chunks that hold this question's answer."""
        return self._relevance[q.id]

    @cached_property
    def tokens(self) -> list[list[str]]:
        """Each chunk's retrieval tokens, found on first use: a chunking that is only checked
        for intact answers (exhibit I) never needs them."""
        return [self.indexes.tokens(c.text) for c in self.chunks]

    @cached_property
    def bm25(self) -> BM25Index:
        """BM25 over the chunks (its statistics; ``with_params`` gives any k1 and b for free)."""
        return BM25Index(self.tokens, k1=default("k1"), b=default("b"))

    @cached_property
    def lsa_projections(self) -> FloatArray:
        """Every chunk folded into the LSA space, shape (n_chunks, k)."""
        return self.indexes.lsa.project(self.tokens)

    @cached_property
    def lsa_unit_projections(self) -> FloatArray:
        """``lsa_projections`` with every row divided by its norm (zero rows stay zero), computed
        once: pass it to ``LSAModel.search`` with ``normalised=True`` for the same ranking without
        normalising every chunk again for each query."""
        return unit_rows(self.lsa_projections)

    @cached_property
    def neural(self) -> NeuralIndex:
        """The chunks' sentence vectors under the lab's neural model, read from the on-disk cache
        or encoded behind a progress bar (:func:`raglab.pipeline.dense.chunk_index`)."""
        return dense.chunk_index(
            self.indexes.neural_model,
            [c.text for c in self.chunks],
            encoder=self.indexes.encoder,
        )

    def neural_rows(self, idx: IntArray) -> Float32Array:
        """The unit sentence vectors of chunks ``idx``, (len(idx), dim): :attr:`neural`'s rows,
        or, while a Dask cluster holds the vectors (:attr:`Indexes.vector_rows`), those rows
        fetched from its shards, the same bits, without every chunk's vector here."""
        lookup = self.indexes.vector_rows
        if lookup is None or "neural" in self.__dict__:
            rows: Float32Array = self.neural.vectors[idx]
            return rows
        return lookup(self.key, idx)

    @cached_property
    def identifiers(self) -> list[set[str]]:
        return [identifiers(c.text) for c in self.chunks]

    @cached_property
    def title_terms(self) -> list[set[str]]:
        return [self._title_terms(c) for c in self.chunks]

    def _title_terms(self, c: Chunk) -> set[str]:
        return set(self.indexes.tokens(" ".join((c.title, *c.heading_path))))

    @cached_property
    def age_years(self) -> FloatArray:
        """Each chunk's age in years (:func:`~raglab.rerank.features.page_age_years` of the
        chunks' dates), (n_chunks,): the reranker reads its candidates' only (:meth:`ages_of`)."""
        chunks = self.chunks
        if isinstance(chunks, ChunkTable):
            return np.repeat(self._page_ages, np.diff(chunks.first))
        return page_age_years([c.updated for c in chunks])

    @cached_property
    def _page_ages(self) -> FloatArray:
        """The age of each page's chunks, (n_pages,): ``page_age_years`` of the chunks' dates
        bit for bit, a chunk's date being its page's, found over the pages (no chunk made, no
        page text fetched, nothing of one entry a chunk): the median that fills a missing
        date is the chunks' (each page's age weighed by its number of chunks), the one or two
        middle ages passed to ``np.median`` as the whole sorted list would give them."""
        chunks = self.chunks
        assert isinstance(chunks, ChunkTable)
        counts = np.diff(chunks.first)
        pages = chunks.pages
        # date.toordinal() is 1 or more: 0 is a page without a date.
        ordinals = np.array(
            [0 if page.updated is None else page.updated.toordinal() for page in pages],
            dtype=np.int64,
        )
        days = ordinals.astype(np.float64)
        dated = ordinals != 0
        known = dated & (counts > 0)
        if not known.any():
            return np.zeros(len(chunks.pages), dtype=np.float64)
        newest = float(days[known].max())
        ages = (newest - days) / DAYS_PER_YEAR
        order = np.argsort(ages[known], kind="stable")
        sorted_ages = ages[known][order]
        ends = np.cumsum(counts[known][order])
        n = int(ends[-1])
        # The sorted list's entries n // 2 (and n // 2 - 1 when n is even), by their pages.
        middle = [n // 2 - 1, n // 2] if n % 2 == 0 else [n // 2]
        picked = sorted_ages[np.searchsorted(ends, middle, side="right")]
        ages[~dated] = float(np.median(picked))
        return ages

    def ages_of(self, idx: IntArray) -> FloatArray:
        """:attr:`age_years` of chunks ``idx``, read off their pages' ages."""
        chunks = self.chunks
        if "age_years" in self.__dict__ or not isinstance(chunks, ChunkTable):
            rows: FloatArray = self.age_years[idx]
            return rows
        page = chunks.page_rows_of(idx)
        basis: Callable[[], tuple[float, float] | None] | None = getattr(chunks, "age_basis", None)
        if basis is None:
            got: FloatArray = self._page_ages[page]
            return got
        # Pages held elsewhere (a Dask client's): these chunks' pages' dates read alone, aged
        # as _page_ages ages every page, from the newest date and the fill found there.
        found = basis()
        if found is None:
            return np.zeros(len(page), dtype=np.float64)
        newest, fill = found
        prefetch(chunks.pages, page.tolist())
        ordinals = np.array(
            [0 if (d := chunks.pages[p].updated) is None else d.toordinal() for p in page.tolist()],
            dtype=np.int64,
        )
        ages: FloatArray = (newest - ordinals.astype(np.float64)) / DAYS_PER_YEAR
        ages[ordinals == 0] = fill
        return ages

    @cached_property
    def tfidf(self) -> SparseMatrix:
        """TF-IDF rows of the chunks (the reranker's redundancy measure for MMR)."""
        return tfidf_matrix(self.tokens).matrix

    # The reranker and MMR read a few chunks a question (the first stage's top 20): the rows
    # below are those chunks' only, unless the whole table was built already, so a client whose
    # BM25 runs on a Dask cluster never tokenises every chunk. Each row depends on its own chunk
    # alone (and, for TF-IDF, on the collection's N and df), so it equals the table's bit for bit.

    @contextlib.contextmanager
    def holding(self, idx: IntArray) -> Iterator[None]:
        """While the block runs, chunks ``idx`` are made once (``ChunkTable.take``) for every
        read of their rows in that order (:meth:`token_rows`, :meth:`identifiers_of`,
        :meth:`title_terms_of`), and let go when it ends: a question's features read its
        candidates three times, and past a Dask client's page-text budget each take is a round
        trip to the pages' holders."""
        self._held = (np.asarray(idx, dtype=np.int64).tobytes(), None)
        try:
            yield
        finally:
            self._held = None

    def _taken(self, idx: IntArray) -> list[Chunk]:
        """Chunks ``idx``: those :meth:`holding` holds for these rows, else made now."""
        rows = np.asarray(idx, dtype=np.int64)
        held = self._held
        if held is None or held[0] != rows.tobytes():
            return self.chunks.take(rows.tolist())
        chunks = held[1]
        if chunks is None:
            chunks = self.chunks.take(rows.tolist())
            self._held = (held[0], chunks)
        return chunks

    def token_rows(self, idx: IntArray) -> list[list[str]]:
        """The retrieval tokens of chunks ``idx``: :attr:`tokens`' rows."""
        if "tokens" in self.__dict__:
            return [self.tokens[i] for i in idx.tolist()]
        rows = idx.tolist()
        memo = self._token_memo
        kept: list[list[str]] = []
        for i in rows:
            tokens = memo.find(i)
            if tokens is None:
                break
            kept.append(tokens)
        else:
            return kept
        out = [self.indexes.tokens(c.text) for c in self._taken(idx)]
        for i, tokens in zip(rows, out, strict=True):
            memo.setdefault(i, tokens)
        return out

    def lsa_rows(self, idx: IntArray) -> FloatArray:
        """Chunks ``idx`` folded into the LSA space, (len(idx), k): :attr:`lsa_projections`'
        rows (the fold-in weighs each row from its own tokens only)."""
        if "lsa_projections" in self.__dict__:
            rows: FloatArray = self.lsa_projections[idx]
            return rows
        return self.indexes.lsa.project(self.token_rows(idx))

    def identifiers_of(self, idx: IntArray) -> list[set[str]]:
        """:attr:`identifiers` of chunks ``idx``."""
        if "identifiers" in self.__dict__:
            return [self.identifiers[i] for i in idx.tolist()]
        return [identifiers(c.text) for c in self._taken(idx)]

    def title_terms_of(self, idx: IntArray) -> list[set[str]]:
        """:attr:`title_terms` of chunks ``idx``."""
        if "title_terms" in self.__dict__:
            return [self.title_terms[i] for i in idx.tolist()]
        return [self._title_terms(c) for c in self._taken(idx)]

    def tfidf_rows(self, idx: IntArray) -> SparseMatrix:
        """:attr:`tfidf`'s rows for chunks ``idx``, CSR (len(idx), V). Without the table or
        the chunks' tokens at hand but with the collection's term statistics
        (:attr:`Indexes.term_statistics`), the rows are weighed from these chunks' tokens and
        N and df looked up there: ``tf * ln(N / df)`` in each term's column of the sorted
        vocabulary, the table's entries in the table's order."""
        lookup = self.indexes.term_statistics
        if lookup is None or "tokens" in self.__dict__ or "tfidf" in self.__dict__:
            return self.tfidf[idx]
        docs = self.token_rows(idx)
        local = Vocabulary.from_docs(docs)
        n_docs, n_terms, columns, df = lookup(self.key, local.terms)
        rows = tfidf_matrix(docs, vocabulary=local, idf=idf_weights(df, n_docs)).matrix
        # Both vocabularies are sorted, so the map keeps each row's columns in order.
        spread = np.asarray(columns, dtype=np.int64)[rows.indices]
        return type(rows)((rows.data, spread, rows.indptr), shape=(len(docs), n_terms))

    def __len__(self) -> int:
        return len(self.chunks)


class Indexes:
    """The retrieval indexes of one corpus and its questions, each built on first use.

    ``stem`` and ``analyzer`` say how retrieval tokens are made (docs/design.md#retrieval-tokens),
    ``windows`` how many LSA training windows there are (None: the rule of
    :func:`raglab.embedding.lsa.window_count`), ``model`` the neural model's folder (None: the
    installed package).
    """

    def __init__(
        self,
        corpus: Corpus,
        questions: QuestionSet,
        *,
        stem: bool,
        analyzer: str,
        windows: int | None,
        model: str | None,
    ) -> None:
        self.corpus = corpus
        self.questions = questions
        self.stem = stem
        self.analyzer = analyzer
        self.windows = windows
        #: The most LSA windows fitted on (:func:`raglab.embedding.lsa.capped_windows`); set
        #: before the windows are first read.
        self.max_windows: int = LSA_MAX_WINDOWS
        self.model = model
        self._chunk_sets: BoundedCache[ChunkingKey, ChunkSet] = BoundedCache(CACHE_SIZE)
        self._question_tokens: dict[str, list[str]] = {}
        self._query_vectors: dict[str, Float32Array] = {}
        self._lsa_models: BoundedCache[int, LSASpace] = BoundedCache(CACHE_SIZE)
        #: (windows, distinct terms) of the LSA windows, once known: a cached model's rank key
        #: is then computed without cutting the windows again (:meth:`lsa_model`).
        self._lsa_shape: tuple[int, int] | None = None
        #: What encodes the chunk texts the vector cache lacks when a chunking's neural index
        #: is first asked for here: None for the model here, or any function giving the same
        #: pooled vectors. A Dask cluster sets none: its rankings and chosen rows come from its
        #: shards (:attr:`neural_search`, :attr:`vector_rows`), no index is built here. Only
        #: what asks for the vectors encodes, so a command without a neural step encodes none.
        self.encoder: Callable[[list[str]], Float32Array] | None = None
        #: Where a chunking's N and df come from when its chunks' tokens are not at hand (see
        #: :meth:`ChunkSet.tfidf_rows`): None here; a Dask cluster's reduced BM25 statistics
        #: while one is open (:meth:`raglab.distributed.bm25.DistributedBM25.term_columns`).
        self.term_statistics: TermStatistics | None = None
        #: Where a chunking's neural ranking of a question at depth k comes from instead of
        #: :attr:`ChunkSet.neural`: None here; a Dask cluster's shards while one is open
        #: (:meth:`raglab.distributed.neural_shards.ShardedNeural.ranking`, the same list).
        self.neural_search: NeuralSearch | None = None
        #: Where a chunking's LSA ranking of a free text comes from instead of
        #: :attr:`ChunkSet.lsa_unit_projections`: None here; a Dask cluster's shards while one
        #: holds the model (labelled questions' rankings are computed there in one batch).
        self.lsa_search: LSASearch | None = None
        #: Where chosen chunks' unit vectors come from (:meth:`ChunkSet.neural_rows`): None
        #: here; a Dask cluster's shards while one is open.
        self.vector_rows: Callable[[ChunkingKey, IntArray], Float32Array] | None = None
        #: Where a chunking's table of offsets comes from: None to chunk the pages here; a Dask
        #: cluster's workers, which chunk the pages they hold, while one is open (the same
        #: table, so this process reads no page's text to chunk it).
        self.chunk_table: Callable[[ChunkingKey], ChunkTable] | None = None
        #: What fits the LSA model at a rank when :attr:`lsa` is first asked for: None for
        #: :meth:`lsa_model` here; a Dask cluster's workers while one is open (the same model),
        #: so a command that reads no LSA fits none.
        self.lsa_fit: Callable[[int], LSASpace] | None = None

    def tokens(self, text: str) -> list[str]:
        """Retrieval tokens of ``text`` under the lab's analyzer and stemming."""
        return tokenize(text, stem=self.stem, analyzer=self.analyzer)

    def chunk_set(self, key: ChunkingKey | None = None) -> ChunkSet:
        """The chunking for ``key`` (default: the heading chunker of exhibits II to V)."""
        resolved = (key or ChunkingKey()).resolved()
        return self._chunk_sets.get(resolved, lambda: ChunkSet(self, resolved))

    def query_tokens(self, q: Question | str) -> list[str]:
        """Retrieval tokens of a question (or of free text typed into the lab)."""
        if isinstance(q, str):
            return self.tokens(q)
        if q.id not in self._question_tokens:
            self._question_tokens[q.id] = self.tokens(q.question)
        return self._question_tokens[q.id]

    @property
    def neural_model(self) -> NeuralModel:
        """The neural retrievers' model (``model``: its folder; None: the installed package),
        loaded on first use and shared by every lab of the process. InputError says how to install
        the package, or what a given folder lacks."""
        return dense.load(self.model)

    def query_vector(self, q: Question | str) -> Float32Array:
        """A question's unit sentence vector, encoded alone and kept: the same question gives the
        same vector, and so the same ranking, whatever was encoded before it."""
        text = q if isinstance(q, str) else q.question
        if text not in self._query_vectors:
            self._query_vectors[text] = dense.encode_query(self.neural_model, text)
        return self._query_vectors[text]

    @cached_property
    def lsa_windows(self) -> list[list[str]]:
        """The LSA training windows: evenly spaced runs of words over the whole corpus, tokenised;
        at most ``max_windows`` of them (:func:`raglab.embedding.lsa.window_ranges`)."""
        # Pages whose texts are held elsewhere (a cluster's workers) come in batches.
        with reading(self.corpus):
            texts = [page.text for page in self.corpus]
        counts = np.array([count_words(t) for t in texts], dtype=np.int64)
        ranges = self.lsa_ranges(int(counts.sum()))
        windows: list[list[str]] = [[] for _ in ranges]
        for w, tokens in window_pieces(texts, counts, 0, window_bounds(ranges), self.tokens):
            windows[w].extend(tokens)
        return windows

    def lsa_ranges(self, n_words: int) -> list[range]:
        """The word ranges of the LSA windows over a corpus of ``n_words`` words: ``windows``
        of them if set, else :func:`raglab.embedding.lsa.window_count`'s, at most ``max_windows``."""
        count = self.windows if self.windows is not None else window_count(n_words)
        return window_ranges(n_words, count=count, cap=self.max_windows)

    @cached_property
    def lsa(self) -> LSASpace:
        """LSA fitted on the windows with the default rank and seed (by :attr:`lsa_fit` when
        set)."""
        if self.lsa_fit is not None:
            return self.lsa_fit(LSA_RANK)
        return self.lsa_model(LSA_RANK)

    def lsa_model(
        self,
        rank: int,
        *,
        fit: Callable[[int], LSASpace] | None = None,
        shape: tuple[int, int] | Callable[[], tuple[int, int]] | None = None,
    ) -> LSASpace:
        """LSA at ``rank``, capped by the windows and the vocabulary a small corpus has.

        ``fit(k)`` fits it at rank k when it is not cached yet: None for :func:`fit_lsa` on
        :attr:`lsa_windows`, or the same model fitted elsewhere (a Dask cluster's, bit for bit),
        with ``shape`` = (windows, distinct terms) of the windows it fits, which are then never
        built here; ``shape`` may be a function giving it, called only while the shape is not
        known yet (the first fit records it), so a cached model costs no window."""
        if self._lsa_shape is not None:
            n_windows, n_terms = self._lsa_shape
        elif fit is None:
            windows = self.lsa_windows
            n_windows, n_terms = len(windows), len({t for w in windows for t in w})
        elif shape is None:
            raise ValueError("a fit made elsewhere needs the shape of its windows")
        else:
            n_windows, n_terms = shape() if callable(shape) else shape
        self._lsa_shape = (n_windows, n_terms)
        k = max(1, min(rank, n_windows, n_terms))
        if fit is None:
            return self._lsa_models.get(
                k, lambda: fit_lsa(self.lsa_windows, rank=k, seed=SEED, oversample=LSA_OVERSAMPLE)
            )
        return self._lsa_models.get(k, lambda: fit(k))


def window_bounds(ranges: Sequence[range]) -> IntArray:
    """The LSA windows' word ranges as one array, (2, n windows): starts, then stops. Sixteen
    bytes a window where a ``range`` and its two ints weigh about 150: the form they travel in
    to a cluster's workers, and are held in by the scheduler while those tasks need them, for
    up to ``LSA_MAX_WINDOWS`` windows."""
    bounds: IntArray = np.array(
        [[r.start for r in ranges], [r.stop for r in ranges]], dtype=np.int64
    ).reshape(2, len(ranges))
    return bounds


def window_pieces(
    texts: Sequence[str],
    counts: IntArray,
    first_word: int,
    bounds: IntArray,
    tokens: Callable[[str], list[str]],
) -> Iterator[tuple[int, list[str]]]:
    """The pieces of the LSA windows (``bounds``, :func:`window_bounds` of ascending word ranges
    of the corpus) lying in the pages ``texts`` (``counts[p]`` words each, page 0's first word
    the corpus's word ``first_word``), each as (window index, its tokens), page after page and,
    within a page, window after window: a window's tokens are its pieces' joined in that order.

    Tokens never cross whitespace, so a piece's tokens equal those of its words joined by
    spaces, without a list of every word of the corpus."""
    starts, stops = bounds[0], bounds[1]
    lo = int(first_word)
    for text, count in zip(texts, counts.tolist(), strict=True):
        hi = lo + int(count)
        if hi > lo:
            offsets = word_offsets(text)
            # Windows overlapping words [lo, hi): stop > lo and start < hi (both sorted).
            w0 = int(np.searchsorted(stops, lo, side="right"))
            w1 = int(np.searchsorted(starts, hi, side="left"))
            for w in range(w0, w1):
                a, b = max(int(starts[w]), lo) - lo, min(int(stops[w]), hi) - lo
                yield w, tokens(text[offsets[a, 0] : offsets[b - 1, 1]])
        lo = hi
