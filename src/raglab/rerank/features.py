"""The reranker's six features of each of the first stage's top candidates.

The first stage (BM25, the LSA embedding or their fusion) hands over its top
:data:`~raglab.settings.RERANK_DEPTH` chunks per question. The reranker describes every candidate by
six features the first stage could not combine (:data:`FEATURES`), standardises them on the
training rows and scores them by an L2-penalised logistic regression fitted by full-batch gradient
descent. Maximal marginal relevance (Carbonell and Goldstein 1998) then reorders the scored
candidates so that near-duplicates (an old and a new version of one policy) do not crowd the top.

This module holds :func:`candidate_features` and :func:`page_age_years`; the regression lives in
:mod:`raglab.rerank.logistic` and MMR in :mod:`raglab.rerank.mmr` (one algorithm a file).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import numpy as np

from raglab.base.checks import as_float_vector
from raglab.base.ranking import FloatArray, IntArray
from raglab.settings import RERANK_FEATURES

__all__ = [
    "DAYS_PER_YEAR",
    "FEATURES",
    "candidate_features",
    "page_age_years",
]

FEATURES = RERANK_FEATURES

# Days per year for page ages (the mean Gregorian year, so leap years do not bias ages).
DAYS_PER_YEAR = 365.25


# --------------------------------------------------------------------------------------------
# Features
# --------------------------------------------------------------------------------------------


def _identifier_match(question: set[str], chunks: Sequence[set[str]]) -> FloatArray:
    out = np.zeros(len(chunks), dtype=np.float64)
    if not question:
        return out
    for i, ids in enumerate(chunks):
        if question <= ids:
            out[i] = 1.0
        elif ids and not (question & ids):
            # The chunk is about some other code (E-4170 for a question on E-4107): a near miss
            # that both BM25 (shared words) and the embedding (shared context) tend to reward.
            out[i] = -1.0
    return out


def _term_share(question: set[str], fields: Sequence[set[str]]) -> FloatArray:
    if not question:
        return np.zeros(len(fields), dtype=np.float64)
    n = len(question)
    return np.array([len(question & f) / n for f in fields], dtype=np.float64)


def candidate_features(
    *,
    bm25: FloatArray,
    cosine: FloatArray,
    question_identifiers: set[str],
    chunk_identifiers: Sequence[set[str]],
    question_terms: set[str],
    title_terms: Sequence[set[str]],
    age_years: FloatArray,
    rank: IntArray,
) -> FloatArray:
    """The feature matrix of one question's ``m`` candidates, shape (m, 6), columns :data:`FEATURES`.

    - ``bm25``: the candidate's BM25 score for the question (shape (m,)).
    - ``cosine``: the embedding cosine between the question and chunk (shape (m,)): LSA's
      (folded in), or the neural model's when the first stage is neural.
    - ``identifier_match``: with Q the identifiers the question names (``E-4107``, ``v3.2.1``,
      as retrieval tokens) and C those in the chunk,

      ``+1`` when Q is non-empty and Q ⊆ C (the chunk names every identifier asked about);
      ``-1`` when Q is non-empty, Q ∩ C = ∅ and C is non-empty (the chunk is about another code:
      E-4170 against a question on E-4107);
      ``0`` otherwise (no identifier asked, a chunk naming no identifier, or a partial match).
    - ``title_match``: |T ∩ H| / |T|, the share of the question's content terms T found in the
      chunk's page title and heading path H (``title_terms[i]``, combined by the caller); 0 when T
      is empty.
    - ``page_age``: the page's age in years relative to the newest page of the corpus (the caller
      computes it, for instance with :func:`page_age_years`, which gives undated pages the corpus
      median).
    - ``position``: the candidate's 1-based rank in the first-stage list.

    All inputs are per candidate in the same order; a length mismatch, a non-finite value, a
    negative age or a rank below 1 raises ``ValueError``.
    """
    bm = as_float_vector("bm25", bm25)
    m = bm.shape[0]
    cos = as_float_vector("cosine", cosine, m)
    age = as_float_vector("age_years", age_years, m)
    if np.any(age < 0):
        raise ValueError("age_years must be non-negative (years before the newest page)")
    pos = np.asarray(rank)
    if pos.ndim != 1 or pos.shape[0] != m:
        raise ValueError(f"rank must be a 1-d array of {m} entries, got shape {pos.shape}")
    if pos.size and not np.issubdtype(pos.dtype, np.integer):
        raise ValueError("rank must hold integers (1-based first-stage ranks)")
    if np.any(pos < 1):
        raise ValueError("rank is 1-based: every entry must be at least 1")
    if len(chunk_identifiers) != m:
        raise ValueError(f"chunk_identifiers has {len(chunk_identifiers)} entries, expected {m}")
    if len(title_terms) != m:
        raise ValueError(f"title_terms has {len(title_terms)} entries, expected {m}")
    q_ids = set(question_identifiers)
    q_terms = set(question_terms)
    return np.column_stack(
        [
            bm,
            cos,
            _identifier_match(q_ids, [set(c) for c in chunk_identifiers]),
            _term_share(q_terms, [set(t) for t in title_terms]),
            age,
            pos.astype(np.float64),
        ]
    ).reshape(m, len(FEATURES))


def page_age_years(updated: Sequence[date | None]) -> FloatArray:
    """Each page's age in years before the newest dated page, shape (n_pages,).

    age_i = (max_j d_j − d_i) / 365.25 days. A page with no date gets the median age of the dated
    pages (a neutral value: the reranker should neither favour nor punish a missing date); when no
    page is dated every age is 0.
    """
    days = [d.toordinal() if d is not None else None for d in updated]
    known = np.array([d for d in days if d is not None], dtype=np.float64)
    if known.size == 0:
        return np.zeros(len(days), dtype=np.float64)
    ages_known = (known.max() - known) / DAYS_PER_YEAR
    fill = float(np.median(ages_known))
    newest = float(known.max())
    return np.array(
        [fill if d is None else (newest - d) / DAYS_PER_YEAR for d in days], dtype=np.float64
    )
