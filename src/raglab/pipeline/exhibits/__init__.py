"""Compositions the web lab's exhibits show, built from the pipeline's own functions.

Nothing here re-implements a stage: chunking, ranking, metrics, the reranker, the end-to-end run
and the statistics all come from their modules. This package only arranges their results the way
an exhibit presents them, one module per exhibit:

- Exhibit I (:mod:`.chunking`): :func:`intact_curve` (measured answer-intact rate of the fixed
  chunker against its size, beside the closed form's prediction) and :func:`answer_view` (an
  answer passage with the chunk boundaries that fall near it).
- Exhibit II (:mod:`.bm25`): :func:`bm25_search` (a ranking with each term's share of every
  score), :func:`example_queries`, :func:`bm25_recall`, :func:`stemming_effect` (the training
  questions stemming fixes and breaks) and :func:`grid_view` (the k1 x b tuning grid, its best
  cell, the cells tied with it and the defaults' cell, as every face shows them).
- Exhibit III (:mod:`.lsa`): :func:`lsa_spectrum`, :func:`nearest_words`, :func:`term_cosine` and
  :func:`identifier_twins` (two identifiers the embedding cannot tell apart).
- Exhibit IV (:mod:`.fusion`): :func:`question_grid` (each question's first answer rank under
  BM25, LSA and a fusion) and :func:`three_lists`.
- Exhibit V (:mod:`.rerank`): :func:`fitted_reranker` (the reranker and the lambda chosen on
  train), :func:`reranker_summary` (its features and weights), :func:`rerank_rows` (every order
  measured) and :func:`version_demo` (a question whose superseded copy MMR pushes out of the
  top 3).
- Exhibit VI (:mod:`.end_to_end`): :func:`funnel` and :func:`compare_runs` (the paired exact
  McNemar test).

The web lab's warm-up (``warm``, ``warm_later``) lives in :mod:`raglab.web.warm`.

Results that cost more than a few milliseconds are kept in the lab's bounded cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raglab.pipeline.exhibits._shared import SNIPPET_CHARS, question
from raglab.pipeline.exhibits.bm25 import (
    EXAMPLE_QUERIES,
    GridCell,
    GridView,
    bm25_recall,
    bm25_search,
    example_queries,
    grid_view,
    stemming_effect,
)
from raglab.pipeline.exhibits.chunking import (
    ANSWER_CONTEXT_CHARS,
    CURVE_MAX_SIZE,
    CURVE_OVERLAPS,
    CURVE_SIZES,
    AnswerView,
    Boundary,
    IntactCurve,
    answer_view,
    intact_curve,
)
from raglab.pipeline.exhibits.end_to_end import compare_runs, funnel, settings_summary
from raglab.pipeline.exhibits.fusion import fusion_settings, question_grid, three_lists
from raglab.pipeline.exhibits.lsa import (
    SAMPLE_WORDS,
    identifier_twins,
    lsa_search,
    lsa_spectrum,
    nearest_words,
    term_cosine,
)
from raglab.pipeline.exhibits.rerank import (
    fitted_reranker,
    rerank_rows,
    reranker_summary,
    version_candidates,
    version_demo,
)

if TYPE_CHECKING:
    from raglab.web.warm import warm as warm
    from raglab.web.warm import warm_later as warm_later
else:

    def __getattr__(name: str) -> object:
        """``warm`` and ``warm_later`` moved to :mod:`raglab.web.warm`; the old path still works."""
        if name in ("warm", "warm_later"):
            from raglab.web import warm as _warm

            return getattr(_warm, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ANSWER_CONTEXT_CHARS",
    "CURVE_MAX_SIZE",
    "CURVE_OVERLAPS",
    "CURVE_SIZES",
    "EXAMPLE_QUERIES",
    "SAMPLE_WORDS",
    "SNIPPET_CHARS",
    "AnswerView",
    "Boundary",
    "GridCell",
    "GridView",
    "IntactCurve",
    "answer_view",
    "bm25_recall",
    "bm25_search",
    "compare_runs",
    "example_queries",
    "fitted_reranker",
    "funnel",
    "fusion_settings",
    "grid_view",
    "identifier_twins",
    "intact_curve",
    "lsa_search",
    "lsa_spectrum",
    "nearest_words",
    "question",
    "question_grid",
    "rerank_rows",
    "reranker_summary",
    "settings_summary",
    "stemming_effect",
    "term_cosine",
    "three_lists",
    "version_candidates",
    "version_demo",
]
