"""The lab: one corpus and its labelled questions, what every face of RAG lab shares.

A corpus read alone (no questions file) makes a lab with no questions: its pages, chunks and
indexes serve search as ever, and what needs labels raises :class:`~raglab.errors.DataLimit`
saying so (:meth:`Lab.require`).

One job: hold a lab's data (the pages, the questions and their splits, the quotable sentences
of each page) apart from what is built from it: its retrieval indexes
(:class:`~raglab.pipeline.indexes.Indexes`, :attr:`Lab.indexes`) and the values computed on it
(:class:`~raglab.pipeline.cache.Caches`, :attr:`Lab.caches`, one typed cache per kind). Nothing
here computes a result that an exhibit shows; the sibling modules do that from these pieces.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from raglab.base.ranking import IntArray, Ranking
from raglab.base.sentinels import NOT_GIVEN, Sentinel
from raglab.corpus.pages import Corpus, HeldPage, load_corpus
from raglab.corpus.questions import Question, QuestionSet, load_questions
from raglab.errors import DataLimit, InputError, Problem
from raglab.pipeline.cache import Caches
from raglab.pipeline.indexes import Indexes, Relevance
from raglab.settings import READER_ANALYZER, or_default, setting
from raglab.text.tokens import (
    sentence_spans,
    tokenize,
    whitespace_blocks,
    word_offsets,
)

if (
    TYPE_CHECKING
):  # raglab.embedding.neural loads tokenizers and safetensors: only when a model is used
    pass


def _quotable_bounds(text: str) -> tuple[IntArray, IntArray]:
    """The (starts, ends) of ``text``'s sentences that lie on no heading line, (n,) int64 each:
    the sentences a reader can quote."""
    found = []
    for a, b in sentence_spans(text):
        line_start = text.rfind("\n", 0, a) + 1
        if not text[line_start:a].lstrip().startswith("#"):
            found.append((a, b))
    table = np.asarray(found, dtype=np.int64).reshape(-1, 2)
    return table[:, 0].copy(), table[:, 1].copy()


def _stemmed_terms(text: str, start: int, end: int) -> frozenset[str]:
    """``frozenset(tokenize(text[start:end], stem=True))``, tokenised piece by piece: tokens
    never cross whitespace, so the set is the same, and a sentence of millions of words (a page
    with no sentence ends) is neither copied out of its page nor made one list of tokens."""
    terms: set[str] = set()
    for piece in whitespace_blocks(text, start=start, stop=end):
        terms.update(tokenize(piece, stem=True, analyzer=READER_ANALYZER))
    return frozenset(terms)


#: The source named by the empty question set of a corpus read without a questions file.
NO_QUESTIONS = "<no questions>"


def no_questions() -> QuestionSet:
    """The question set of a corpus read alone: no questions, source :data:`NO_QUESTIONS`."""
    return QuestionSet((), NO_QUESTIONS)


class Lab:
    """A corpus with its labelled questions; the shared state of every face of RAG lab.

    ``Lab.load()`` opens the bundled Ostler Instruments handbook. ``stem`` turns on Snowball
    stemming of retrieval tokens (off by default, docs/design.md#retrieval-tokens); ``analyzer`` picks the tokeniser
    (:data:`raglab.settings.ANALYZERS`: RAG lab's own, or Lucene's English analyzer). ``windows`` is
    the number of LSA training windows (None: the rule of :func:`raglab.embedding.lsa.window_count`).
    """

    def __init__(
        self,
        corpus: Corpus,
        questions: QuestionSet,
        *,
        stem: bool | Sentinel = NOT_GIVEN,
        analyzer: str | Sentinel = NOT_GIVEN,
        windows: int | Sentinel | None = NOT_GIVEN,
        model: str | Sentinel | None = NOT_GIVEN,
    ) -> None:
        # The library's front door: an option left out takes the settings table's default here.
        given: dict[str, Any] = {
            "stem": stem,
            "analyzer": analyzer,
            "windows": windows,
            "model": model,
        }
        for name, value in given.items():
            given[name] = setting(name).check(or_default(name, value))
        self.corpus = corpus
        self.questions = questions
        self.stem: bool = given["stem"]
        self.analyzer: str = given["analyzer"]
        self.windows: int | None = given["windows"]
        self.model: str | None = given["model"]
        #: The retrieval indexes built from this lab's pages and questions.
        self.indexes = Indexes(
            corpus,
            questions,
            stem=self.stem,
            analyzer=self.analyzer,
            windows=self.windows,
            model=self.model,
        )
        # Each page's quotable sentences' bounds (starts, ends), and the stemmed terms of the
        # sentences a reading asked for: only those, since a context reads a few of a page's.
        self._sentence_bounds: dict[str, tuple[IntArray, IntArray]] = {}
        self._sentence_terms: dict[tuple[str, int, int], frozenset[str]] = {}
        # External retrievers' runs by name: question id -> [(doc id, score)] best first.
        self.runs: dict[str, dict[str, list[tuple[str, float]]]] = {}
        #: What this lab computed, one typed cache per kind of value (rankings, rerankers,
        #: readings...): ``caches.of(KIND)``, each kind declared by the module computing it.
        self.caches = Caches()
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
        stem: bool | Sentinel = NOT_GIVEN,
        analyzer: str | Sentinel = NOT_GIVEN,
        windows: int | Sentinel | None = NOT_GIVEN,
        model: str | Sentinel | None = NOT_GIVEN,
    ) -> Lab:
        """Load a corpus folder and questions file (both None: the bundled handbook; a corpus
        without questions: a lab with none, :func:`no_questions`)."""
        loaded = load_corpus(corpus)
        labelled = (
            no_questions()
            if corpus is not None and questions is None
            else load_questions(questions, corpus=loaded)
        )
        return cls(
            loaded,
            labelled,
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
            sibling.indexes.chunk_table = self.indexes.chunk_table
            sibling._siblings[self.stem] = self
            self._siblings[stem] = sibling
        return sibling

    def sentences(self, page_id: str) -> list[tuple[int, int, frozenset[str]]]:
        """The quotable sentences of a page: (start, end, stemmed terms), headings left out.

        The reader quotes whole sentences of the page that lie inside a packed chunk, never the
        fragment a fixed window leaves at its edge. It always matches stemmed terms, so a
        question's "charging" meets a sentence's "charge" whatever retrieval does.
        """
        return self.sentences_within(page_id, [(0, len(self.corpus.page(page_id).text))])

    def sentences_within(
        self, page_id: str, bounds: Sequence[tuple[int, int]]
    ) -> list[tuple[int, int, frozenset[str]]]:
        """:meth:`sentences` lying whole inside one of ``bounds`` ((start, end) offsets in the
        page), in page order: what a context packed from chunks with these bounds can quote.
        The stemmed terms are found for these sentences only (and kept)."""
        page = self.corpus.page(page_id)
        if isinstance(page, HeldPage):
            # Kept with the page's text, not for every page read: a Dask client's pages are
            # held on the workers, and it keeps what it read of them within a budget.
            starts, ends = page.found_in("sentence bounds", _quotable_bounds)
        else:
            if page_id not in self._sentence_bounds:
                self._sentence_bounds[page_id] = _quotable_bounds(page.text)
            starts, ends = self._sentence_bounds[page_id]
        inside = np.zeros(starts.shape, dtype=bool)
        for start, end in bounds:
            inside |= (starts >= start) & (ends <= end)
        out = []
        for a, b in zip(starts[inside].tolist(), ends[inside].tolist(), strict=True):
            key = (page_id, a, b)
            if key not in self._sentence_terms:
                text = self.corpus.page(page_id).text
                self._sentence_terms[key] = _stemmed_terms(text, a, b)
            out.append((a, b, self._sentence_terms[key]))
        return out

    def split(self, name: str, *, answerable: bool | None = None) -> tuple[Question, ...]:
        """Questions of a split; ``answerable`` filters to those with (or without) an answer."""
        qs = self.questions.split(name)
        if answerable is None:
            return qs
        return tuple(q for q in qs if q.answerable == answerable)

    @property
    def labelled(self) -> bool:
        """Whether the lab has questions (a corpus read alone has none)."""
        return len(self.questions) > 0

    def require_labels(self, needed_for: str) -> None:
        """:class:`DataLimit` saying that ``needed_for`` needs labelled questions when the lab
        has none (the command line exits 2, the web answers 409 with this message)."""
        if not self.labelled:
            # A hint such as "(or give one: --weight)" is dropped: without labels, nothing it
            # offers would measure anything either.
            what = needed_for.split(" (", 1)[0]
            raise DataLimit(f"{what} needs labelled questions: give --questions FILE")

    def require(
        self, name: str, needed_for: str, *, answerable: bool = True
    ) -> tuple[Question, ...]:
        """The questions of split ``name`` (only answerable ones unless ``answerable=False``);
        :class:`InputError` naming the questions file and what needs them when there are none
        (:class:`DataLimit`, :meth:`require_labels`, when the lab has no questions at all)."""
        self.require_labels(needed_for)
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
