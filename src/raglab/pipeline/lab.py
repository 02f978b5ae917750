"""The lab: one corpus and its questions, with every derived structure built once and cached.

A :class:`Lab` is what the web server, the command line and the library share. It owns the
chunkings (:class:`ChunkSet`, one per chunker setting), their token lists, the relevance of every
chunk to every question, the BM25 counts and the LSA model. Nothing here computes a result that
an exhibit shows; the sibling modules do that from these pieces.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from raglab.base.ranking import FloatArray, IntArray, Ranking
from raglab.bm25.index import BM25Index
from raglab.chunking.chunk import ChunkIndex
from raglab.chunking.chunkers import chunk_pages
from raglab.corpus.pages import Corpus, load_corpus
from raglab.corpus.questions import Question, QuestionSet, load_questions
from raglab.embedding.lsa import LSAModel, even_windows, fit_lsa, unit_rows, window_count
from raglab.embedding.vectors import SparseMatrix, tfidf_matrix
from raglab.errors import InputError, Problem
from raglab.pipeline import dense
from raglab.pipeline.cache import BoundedCache
from raglab.rerank.features import page_age_years
from raglab.settings import CACHE_SIZE, CHUNK_SIZES, FIXED_OVERLAP, LSA_RANK, SEED, default, setting
from raglab.text.tokens import (
    count_words,
    identifiers,
    sentence_spans,
    tokenize,
    whitespace_blocks,
    word_offsets,
)

if (
    TYPE_CHECKING
):  # raglab.embedding.neural loads tokenizers and safetensors: only when a model is used
    from raglab.embedding.neural.encoder import Float32Array
    from raglab.embedding.neural.index import NeuralIndex
    from raglab.embedding.neural.model import NeuralModel

#: Relevance of chunks to one question: chunk index -> gain (1 for passages, the grade for pages).
Relevance = Mapping[int, float]


def _stemmed_terms(text: str, start: int, end: int) -> frozenset[str]:
    """``frozenset(tokenize(text[start:end], stem=True))``, tokenised piece by piece: tokens
    never cross whitespace, so the set is the same, and a sentence of millions of words (a page
    with no sentence ends) is neither copied out of its page nor made one list of tokens."""
    terms: set[str] = set()
    for piece in whitespace_blocks(text, start=start, stop=end):
        terms.update(tokenize(piece, stem=True))
    return frozenset(terms)


@dataclass(frozen=True, slots=True)
class ChunkingKey:
    """A chunker setting: ``method`` with its size (or size cap) and overlap."""

    method: str = default("chunker")
    size: int | None = None
    overlap: int | None = None

    def resolved(self) -> ChunkingKey:
        """The same setting with defaults filled in, so equal settings share one cache entry.

        An overlap belongs to the fixed chunker: giving one (other than 0) to another chunker is
        a ValueError, never silently dropped.
        """
        if self.method != "fixed" and self.overlap:
            raise ValueError(f"overlap applies only to the fixed chunker, not to {self.method!r}")
        if self.method == "fixed":
            size = CHUNK_SIZES["fixed"] if self.size is None else self.size
            return ChunkingKey(
                "fixed", size, FIXED_OVERLAP if self.overlap is None else self.overlap
            )
        if self.method == "sentence":
            return ChunkingKey(
                "sentence", CHUNK_SIZES["sentence"] if self.size is None else self.size, None
            )
        if self.method == "heading":
            return ChunkingKey(
                "heading", CHUNK_SIZES["heading"] if self.size is None else self.size, None
            )
        raise ValueError(f"chunker must be one of fixed, sentence, heading; not {self.method!r}")


class ChunkSet:
    """One chunking of the corpus with everything retrieval needs about its chunks."""

    def __init__(self, lab: Lab, key: ChunkingKey) -> None:
        self.key = key
        self.lab = lab
        self.chunks = ChunkIndex(
            chunk_pages(lab.corpus, method=key.method, size=key.size, overlap=key.overlap)
        )
        self.n_words = np.fromiter((c.n_words for c in self.chunks), np.int64, len(self.chunks))
        self._relevance: dict[str, dict[int, float]] = {}
        for q in lab.questions:
            self._relevance[q.id] = self._relevant(q)

    def _relevant(self, q: Question) -> dict[int, float]:
        if q.spans:
            hits: dict[int, float] = {}
            for span in q.spans:
                for i in self.chunks.containing(span.page_id, span.start, span.end):
                    hits[i] = 1.0
            return hits
        if q.pages:
            return {c.index: float(q.pages[c.page_id]) for c in self.chunks if c.page_id in q.pages}
        return {}

    def relevance(self, q: Question) -> Relevance:
        """Chunk index -> gain for the chunks that hold this question's answer."""
        return self._relevance[q.id]

    @cached_property
    def tokens(self) -> list[list[str]]:
        """Each chunk's retrieval tokens, found on first use: a chunking that is only checked
        for intact answers (exhibit I) never needs them."""
        return [self.lab.tokens(c.text) for c in self.chunks]

    @cached_property
    def bm25(self) -> BM25Index:
        """BM25 over the chunks at the default k1 and b; ``with_params`` gives others for free."""
        return BM25Index(self.tokens, k1=default("k1"), b=default("b"))

    @cached_property
    def lsa_projections(self) -> FloatArray:
        """Every chunk folded into the LSA space, shape (n_chunks, k)."""
        return self.lab.lsa.project(self.tokens)

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
        return dense.chunk_index(self.lab.neural_model, [c.text for c in self.chunks])

    @cached_property
    def identifiers(self) -> list[set[str]]:
        return [identifiers(c.text) for c in self.chunks]

    @cached_property
    def title_terms(self) -> list[set[str]]:
        return [set(self.lab.tokens(" ".join((c.title, *c.heading_path)))) for c in self.chunks]

    @cached_property
    def age_years(self) -> FloatArray:
        return page_age_years([c.updated for c in self.chunks])

    @cached_property
    def tfidf(self) -> SparseMatrix:
        """TF-IDF rows of the chunks (the reranker's redundancy measure for MMR)."""
        return tfidf_matrix(self.tokens).matrix

    def __len__(self) -> int:
        return len(self.chunks)


class Lab:
    """A corpus with its labelled questions; the shared state of every face of RAG lab.

    ``Lab.load()`` opens the bundled Ostler Instruments handbook. ``stem`` turns on Snowball
    stemming of retrieval tokens (off by default, docs/design.md#retrieval-tokens); ``analyzer`` picks the tokeniser
    (:data:`raglab.text.tokens.ANALYZERS`: RAG lab's own, or Lucene's English analyzer). ``windows`` is
    the number of LSA training windows (None: the rule of :func:`raglab.embedding.lsa.window_count`).
    """

    def __init__(
        self,
        corpus: Corpus,
        questions: QuestionSet,
        *,
        stem: bool = default("stem"),
        analyzer: str = default("analyzer"),
        windows: int | None = default("windows"),
        model: str | None = default("model"),
    ) -> None:
        for name, value in (
            ("stem", stem),
            ("analyzer", analyzer),
            ("windows", windows),
            ("model", model),
        ):
            setting(name).check(value)
        self.corpus = corpus
        self.questions = questions
        self.stem = stem
        self.analyzer = analyzer
        self.windows = windows
        self.model = model
        self._query_vectors: dict[str, Float32Array] = {}
        self._chunk_sets: BoundedCache[ChunkingKey, ChunkSet] = BoundedCache()
        self._question_tokens: dict[str, list[str]] = {}
        self._sentences: dict[str, list[tuple[int, int, frozenset[str]]]] = {}
        # External retrievers' runs by name: question id -> [(doc id, score)] best first.
        self.runs: dict[str, dict[str, list[tuple[str, float]]]] = {}
        self.cache: BoundedCache[Hashable, object] = BoundedCache(CACHE_SIZE * 8)
        # One entry per (setting, question): rankings and reranked lists, reused across measures.
        self.per_question: BoundedCache[Hashable, object] = BoundedCache(CACHE_SIZE * 512)
        # This lab's data under the other stemming (with_stem), built on first use.
        self._siblings: dict[bool, Lab] = {}
        #: What measures a split's rankings (raglab.pipeline.retrieval.measure): None for
        #: raglab.metrics.measures.evaluate here; a Dask cluster's workers while one is open
        #: (raglab.distributed.evaluation.evaluate_on_cluster, the same values bit for bit).
        self.evaluator: (
            Callable[[Sequence[Ranking], Sequence[Relevance]], dict[str, float]] | None
        ) = None

    @classmethod
    def load(
        cls,
        corpus: str | Path | None = None,
        questions: str | Path | None = None,
        *,
        stem: bool = False,
        analyzer: str = "raglab",
        windows: int | None = None,
        model: str | None = None,
    ) -> Lab:
        """Load a corpus folder and questions file (both None: the bundled handbook)."""
        loaded = load_corpus(corpus)
        return cls(
            loaded,
            load_questions(questions, corpus=loaded),
            stem=stem,
            analyzer=analyzer,
            windows=windows,
            model=model,
        )

    def with_stem(self, stem: bool) -> Lab:
        """This lab's corpus and questions with retrieval tokens stemmed or not (``stem``): the
        lab itself when it stems that way already, else its sibling, built once and kept (each
        with its own chunk sets and caches; the analyzer and LSA windows are this lab's)."""
        setting("stem").check(stem)
        if stem == self.stem:
            return self
        sibling = self._siblings.get(stem)
        if sibling is None:
            sibling = Lab(
                self.corpus,
                self.questions,
                stem=stem,
                analyzer=self.analyzer,
                windows=self.windows,
                model=self.model,
            )
            sibling.runs = self.runs
            sibling._siblings[self.stem] = self
            self._siblings[stem] = sibling
        return sibling

    def tokens(self, text: str) -> list[str]:
        """Retrieval tokens of ``text`` under this lab's analyzer and stemming."""
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

    def sentences(self, page_id: str) -> list[tuple[int, int, frozenset[str]]]:
        """The quotable sentences of a page: (start, end, stemmed terms), headings left out.

        The reader quotes whole sentences of the page that lie inside a packed chunk, never the
        fragment a fixed window leaves at its edge. It always matches stemmed terms, so a
        question's "charging" meets a sentence's "charge" whatever retrieval does.
        """
        if page_id not in self._sentences:
            text = self.corpus.page(page_id).text
            found = []
            for a, b in sentence_spans(text):
                line_start = text.rfind("\n", 0, a) + 1
                if text[line_start:a].lstrip().startswith("#"):
                    continue
                found.append((a, b, _stemmed_terms(text, a, b)))
            self._sentences[page_id] = found
        return self._sentences[page_id]

    def split(self, name: str, *, answerable: bool | None = None) -> tuple[Question, ...]:
        """Questions of a split; ``answerable`` filters to those with (or without) an answer."""
        qs = self.questions.split(name)
        if answerable is None:
            return qs
        return tuple(q for q in qs if q.answerable == answerable)

    def require(
        self, name: str, needed_for: str, *, answerable: bool = True
    ) -> tuple[Question, ...]:
        """The questions of split ``name`` (only answerable ones unless ``answerable=False``);
        :class:`InputError` naming the questions file and what needs them when there are none."""
        qs = self.split(name, answerable=True if answerable else None)
        if not qs:
            where = "training" if name == "train" else "test"
            which = "answerable questions" if answerable else "questions"
            having = " with an answer in the corpus" if answerable else ""
            raise InputError(
                [
                    Problem(
                        self.questions.source,
                        f"no {where} question{having}, and {needed_for} needs them: mark some "
                        f'{which} "split": "{name}"',
                        None,
                        "split",
                    )
                ]
            )
        return qs

    @cached_property
    def word_offsets(self) -> dict[str, IntArray]:
        """Each page's word offsets (:func:`~raglab.chunking.chunkers.word_offsets`) by page id: what a
        sweep of the fixed chunker over many sizes needs, found once."""
        return {page.id: word_offsets(page.text) for page in self.corpus}

    @cached_property
    def lsa_windows(self) -> list[list[str]]:
        """The LSA training windows: evenly spaced runs of words over the whole corpus, tokenised."""
        # The corpus's words are numbered across pages; each window is a range of those numbers,
        # tokenised page piece by page piece. Tokens never cross whitespace, so a window's tokens
        # equal those of its words joined by spaces, without a list of every word of the corpus.
        texts = [page.text for page in self.corpus]
        counts = np.array([count_words(t) for t in texts], dtype=np.int64)
        first_word = np.concatenate([[0], np.cumsum(counts)])
        n = int(first_word[-1])
        count = self.windows if self.windows is not None else window_count(n)
        ranges = [cast(range, r) for r in even_windows(range(n), count=count)]
        starts = np.array([r.start for r in ranges], dtype=np.int64)
        stops = np.array([r.stop for r in ranges], dtype=np.int64)
        windows: list[list[str]] = [[] for _ in ranges]
        for p, text in enumerate(texts):
            lo, hi = int(first_word[p]), int(first_word[p + 1])
            if lo == hi:
                continue
            offsets = word_offsets(text)
            # Windows overlapping words [lo, hi): stop > lo and start < hi (both sorted).
            w0 = int(np.searchsorted(stops, lo, side="right"))
            w1 = int(np.searchsorted(starts, hi, side="left"))
            for w in range(w0, w1):
                a, b = max(int(starts[w]), lo) - lo, min(int(stops[w]), hi) - lo
                windows[w].extend(self.tokens(text[offsets[a, 0] : offsets[b - 1, 1]]))
        return windows

    @cached_property
    def lsa(self) -> LSAModel:
        """LSA fitted on the windows with the default rank and seed."""
        return self.lsa_model(LSA_RANK)

    def lsa_model(self, rank: int, *, fit: Callable[..., LSAModel] | None = None) -> LSAModel:
        """LSA at ``rank``, capped by the windows and the vocabulary a small corpus has.

        ``fit(windows, rank=k, seed=seed)`` fits it when it is not cached yet: None for
        :func:`fit_lsa`, or the same model fitted elsewhere (a Dask cluster's, bit for bit)."""
        fitter = fit_lsa if fit is None else fit
        n_terms = len({t for w in self.lsa_windows for t in w})
        k = max(1, min(rank, len(self.lsa_windows), n_terms))
        key = ("lsa", k)
        model = self.cache.get(key, lambda: fitter(self.lsa_windows, rank=k, seed=SEED))
        assert isinstance(model, LSAModel)
        return model
