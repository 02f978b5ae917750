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
