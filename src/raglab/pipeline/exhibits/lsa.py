"""Exhibit III: :func:`lsa_spectrum`, :func:`nearest_words`, :func:`term_cosine`,
:func:`identifier_twins` (two identifiers the embedding cannot tell apart) and :func:`lsa_search`.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np

from raglab import _config as C
from raglab._topk import top_k
from raglab.pipeline.exhibits._shared import _cached, _snippet
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import bm25_ranking, lsa_ranking, ranked_chunks
from raglab.text import identifiers

# How many words exhibit III suggests for the nearest-words box.
SAMPLE_WORDS = 6


def lsa_spectrum(lab: Lab) -> dict[str, Any]:
    """The fitted embedding's singular values and the share of ||A||^2 each keeps."""
    model = lab.lsa
    share = model.variance_share
    # Words to try first: the longest rows of U_k S_k (the words the kept dimensions express
    # most strongly), identifiers left out.
    norms = np.linalg.norm(model.U * model.s[None, :], axis=1)
    terms = model.vocabulary.terms
    longest_first = top_k(norms).tolist()
    samples = [terms[i] for i in longest_first if not identifiers(terms[i])][:SAMPLE_WORDS]
    return {
        "rank": model.rank,
        "windows": len(lab.lsa_windows),
        "window_words": C.LSA_WINDOW_WORDS,
        "oversample": C.LSA_OVERSAMPLE,
        "power_iterations": C.LSA_POWER_ITERATIONS,
        "vocabulary": len(model.vocabulary),
        "singular_values": model.singular_values.tolist(),
        "variance_share": share.tolist(),
        "cumulative_share": np.cumsum(share).tolist(),
        "kept_share": float(share.sum()),
        "sample_words": samples,
    }


def _as_term(lab: Lab, word: str) -> str:
    tokens = lab.query_tokens(word)
    return tokens[0] if tokens else word.strip().lower()


def nearest_words(lab: Lab, word: str, *, k: int = 10) -> dict[str, Any]:
    """The ``k`` words whose LSA vectors (rows of U_k S_k) are nearest to ``word`` by cosine."""
    term = _as_term(lab, word)
    pairs = lab.lsa.neighbours(term, k=k)
    return {
        "word": word,
        "term": term,
        "in_vocabulary": term in lab.lsa.vocabulary,
        "neighbours": [{"word": w, "cosine": c} for w, c in pairs],
    }


def term_cosine(lab: Lab, a: str, b: str) -> float | None:
    """Cosine of two terms' LSA vectors (rows of U_k S_k); None when either has no vector.

    ``LSAModel.neighbours`` ranks by this cosine but has no pairwise form, so the pair is computed
    here from the same rows.
    """
    model = lab.lsa
    ia, ib = model.vocabulary.get(a), model.vocabulary.get(b)
    if ia is None or ib is None:
        return None
    rows = model.U[[ia, ib]] * model.s[None, :]
    norms = np.linalg.norm(rows, axis=1)
    if not np.all(norms > 0):
        return None
    return float(np.clip(rows[0] @ rows[1] / (norms[0] * norms[1]), -1.0, 1.0))


def _twin_candidates(lab: Lab) -> list[tuple[str, str]]:
    """Pairs of identifiers in the embedding's vocabulary that differ only by a digit slip.

    Same length, same letters in the same places, and either the same digits in another order
    (E-4107 and E-4170) or at most two digits changed.
    """
    ids = sorted(t for t in lab.lsa.vocabulary.terms if identifiers(t) == {t})
    pairs = []
    for a, b in combinations(ids, 2):
        if len(a) != len(b):
            continue
        diff = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
        if not diff or not all(x.isdigit() and y.isdigit() for x, y in diff):
            continue
        if sorted(a) == sorted(b) or len(diff) <= 2:
            pairs.append((a, b))
    return pairs


def identifier_twins(lab: Lab, a: str | None = None, b: str | None = None) -> dict[str, Any]:
    """Two identifiers the embedding places together, and how BM25 and LSA rank for each.

    Without ``a`` and ``b`` the pair is chosen from the vocabulary: among identifiers differing
    only by a digit slip (:func:`_twin_candidates`), transposed digits first, then the highest
    cosine. For each identifier the result holds its nearest words, and the top chunks of LSA and
    of BM25 when it is the whole query.
    """
    if (a is None) != (b is None):
        raise ValueError("give both identifiers, or neither to let the lab choose a pair")
    if a is not None and b is not None:
        ta, tb = _as_term(lab, a), _as_term(lab, b)
    else:

        def choose() -> tuple[str, str] | None:
            scored = [
                (sorted(x) == sorted(y), term_cosine(lab, x, y) or -1.0, x, y)
                for x, y in _twin_candidates(lab)
            ]
            if not scored:
                return None
            best = max(scored, key=lambda row: (row[0], row[1]))
            return best[2], best[3]

        pair = _cached(lab, ("twins",), choose)
        if pair is None:
            return {"a": None, "b": None, "cosine": None, "sides": []}
        ta, tb = pair
    sides = []
    for term in (ta, tb):
        sides.append(
            {
                "term": term,
                "in_vocabulary": term in lab.lsa.vocabulary,
                "neighbours": [{"word": w, "cosine": c} for w, c in lab.lsa.neighbours(term, k=5)]
                if term in lab.lsa.vocabulary
                else [],
                "lsa": ranked_chunks(lab, lsa_ranking(lab, term), k=3),
                "bm25": ranked_chunks(lab, bm25_ranking(lab, term), k=3),
            }
        )
    return {"a": ta, "b": tb, "cosine": term_cosine(lab, ta, tb), "sides": sides}


def lsa_search(lab: Lab, query: str, *, top: int = 5) -> dict[str, Any]:
    """Heading chunks ranked by cosine to the folded-in query."""
    cs = lab.chunk_set()
    rows = ranked_chunks(lab, lsa_ranking(lab, query), k=top)
    for row in rows:
        row["snippet"] = _snippet(cs.chunks[int(row["index"])].text)
    tokens = lab.query_tokens(query)
    known = [t for t in tokens if t in lab.lsa.vocabulary]
    return {"query": query, "tokens": tokens, "known_tokens": known, "results": rows}
