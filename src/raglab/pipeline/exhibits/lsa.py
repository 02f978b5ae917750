"""Exhibit III's views: the spectrum, nearest words, identifier pairs, search.

Exhibit III: :func:`lsa_spectrum`, :func:`nearest_words`, :func:`term_cosine`,
:func:`identifier_twins` (two identifiers the embedding cannot tell apart), :func:`identifier_pairs`
(the example pair and the clearest pair, each with why) and :func:`lsa_search`.

**One passage.** A word's vector is its row of U_k S_k, built from the windows that hold it. When
every window holding a word overlaps every other (max start < min end over those windows), all
the embedding saw of the word is one stretch of text: its row is that stretch's, and every other
word seen only there gets the same direction, so they tie at a cosine near 1.00 that says
nothing about meaning. :func:`window_evidence` finds such words, and the nearest-word lists flag
them (``one_passage``) rather than hide them.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, cast

import numpy as np

from raglab.embedding.lsa import even_windows
from raglab.pipeline.cache import CacheKind
from raglab.pipeline.exhibits._shared import _snippet
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import rank, ranked_chunks
from raglab.run_settings import RetrievalSettings
from raglab.settings import LSA_OVERSAMPLE, LSA_POWER_ITERATIONS, LSA_WINDOW_WORDS
from raglab.text.tokens import count_words, identifiers

# How many words exhibit III suggests for the nearest-words box.
SAMPLE_WORDS = 6
#: The pair the exhibit's lesson is told with: two error codes with two digits swapped.
EXAMPLE_PAIR = ("E-4107", "E-4170")

#: Each term of the embedding: (windows holding it, whether they are one passage).
WINDOW_EVIDENCE: CacheKind[tuple[()], dict[str, tuple[int, bool]]] = CacheKind("window evidence", 1)
#: Each LSA window as a set of terms.
WINDOW_SETS: CacheKind[tuple[()], list[frozenset[str]]] = CacheKind("window sets", 1)
#: The two identifiers the embedding blurs most clearly (None: no such pair).
CLEAREST_PAIR: CacheKind[tuple[()], tuple[str, str] | None] = CacheKind("clearest pair", 1)


def window_evidence(lab: Lab) -> dict[str, tuple[int, bool]]:
    """For every term of the embedding: (how many windows hold it, whether they are one passage).

    The windows are the LSA windows (``Indexes.lsa_windows``), word ranges [start, end) of the corpus
    laid out by :func:`raglab.embedding.lsa.even_windows`. A term is seen in one passage when the windows
    holding it all share some stretch: max(start) < min(end) over them.
    """

    def build() -> dict[str, tuple[int, bool]]:
        n = sum(count_words(page.text) for page in lab.corpus)
        # The same windows Indexes.lsa_windows tokenises: ranges of the corpus's word numbers.
        ranges = [
            cast(range, r)
            for r in even_windows(
                range(n), count=len(lab.indexes.lsa_windows), size=LSA_WINDOW_WORDS
            )
        ]
        starts = [r.start for r in ranges]
        stops = [r.stop for r in ranges]
        held: dict[str, list[int]] = {}
        for w, tokens in enumerate(lab.indexes.lsa_windows):
            for t in set(tokens):
                held.setdefault(t, []).append(w)
        return {
            t: (len(ws), max(starts[w] for w in ws) < min(stops[w] for w in ws))
            for t, ws in held.items()
        }

    return lab.caches.of(WINDOW_EVIDENCE).get((), build)


def _shared_windows(lab: Lab, a: str, b: str) -> int:
    return sum(a in held and b in held for held in _window_sets(lab))


def _window_sets(lab: Lab) -> list[frozenset[str]]:
    return lab.caches.of(WINDOW_SETS).get(
        (), lambda: [frozenset(w) for w in lab.indexes.lsa_windows]
    )


def _neighbour_rows(lab: Lab, term: str, k: int) -> list[dict[str, Any]]:
    """``term``'s k nearest words, each with the windows holding it, the windows it shares with
    ``term`` and whether all it was seen in is one passage."""
    evidence = window_evidence(lab)
    rows = []
    for w, c in lab.indexes.lsa.neighbours(term, k=k):
        windows, one = evidence.get(w, (0, False))
        rows.append(
            {
                "word": w,
                "cosine": c,
                "windows": windows,
                "shared_windows": _shared_windows(lab, term, w),
                "one_passage": one,
            }
        )
    return rows


def plain_word(term: str) -> bool:
    """Whether ``term`` holds no identifier (a word the spectrum may suggest)."""
    return not identifiers(term)


def lsa_spectrum(lab: Lab) -> dict[str, Any]:
    """The fitted embedding's singular values and the share of ||A||^2 each keeps.

    Read off the model alone (its s, ||A||_F^2, shape and longest rows), never the windows: a
    model held on a cluster's workers gives it without a term's row or a window coming here."""
    model = lab.indexes.lsa
    share = model.variance_share
    n_terms, n_windows = model.shape
    return {
        "rank": model.rank,
        "windows": n_windows,
        "window_words": LSA_WINDOW_WORDS,
        "oversample": LSA_OVERSAMPLE,
        "power_iterations": LSA_POWER_ITERATIONS,
        "vocabulary": n_terms,
        "singular_values": model.singular_values.tolist(),
        "variance_share": share.tolist(),
        "cumulative_share": np.cumsum(share).tolist(),
        "kept_share": float(share.sum()),
        # Words to try first: the longest rows of U_k S_k (the words the kept dimensions
        # express most strongly), identifiers left out.
        "sample_words": model.strongest_terms(SAMPLE_WORDS, plain_word),
    }


def _as_term(lab: Lab, word: str) -> str:
    tokens = lab.indexes.query_tokens(word)
    return tokens[0] if tokens else word.strip().lower()


def nearest_words(lab: Lab, word: str, *, k: int = 10) -> dict[str, Any]:
    """The ``k`` words whose LSA vectors (rows of U_k S_k) are nearest to ``word`` by cosine.

    Each neighbour carries ``windows`` (how many LSA windows hold it), ``shared_windows`` (how
    many hold it and the word) and ``one_passage`` (all it was seen in is one stretch of text,
    see the module's docstring: its cosine means nothing). ``one_passage`` says the same of the
    word itself.
    """
    term = _as_term(lab, word)
    windows, one = window_evidence(lab).get(term, (0, False))
    return {
        "word": word,
        "term": term,
        "in_vocabulary": term in lab.indexes.lsa.vocabulary,
        "windows": windows,
        "one_passage": one,
        "neighbours": _neighbour_rows(lab, term, k) if term in lab.indexes.lsa.vocabulary else [],
    }


def term_cosine(lab: Lab, a: str, b: str) -> float | None:
    """Cosine of two terms' LSA vectors (rows of U_k S_k); None when either has no vector.

    ``LSAModel.neighbours`` ranks by this cosine but has no pairwise form, so the pair is computed
    here from the same rows.
    """
    model = lab.indexes.lsa
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
    ids = sorted(t for t in lab.indexes.lsa.vocabulary.terms if identifiers(t) == {t})
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

    Without ``a`` and ``b`` the pair is :func:`clearest_pair`. For each identifier the result
    holds its nearest words (flagged as in :func:`nearest_words`), and the top chunks of LSA and
    of BM25 when it is the whole query.
    """
    if (a is None) != (b is None):
        raise ValueError("give both identifiers, or neither to let the lab choose a pair")
    if a is not None and b is not None:
        ta, tb = _as_term(lab, a), _as_term(lab, b)
    else:
        pair = clearest_pair(lab)
        if pair is None:
            return {"a": None, "b": None, "cosine": None, "sides": []}
        ta, tb = pair
    sides = []
    for term in (ta, tb):
        sides.append(
            {
                "term": term,
                "in_vocabulary": term in lab.indexes.lsa.vocabulary,
                "neighbours": _neighbour_rows(lab, term, 5)
                if term in lab.indexes.lsa.vocabulary
                else [],
                "lsa": ranked_chunks(lab, rank(lab, term, RetrievalSettings("lsa")), k=3),
                "bm25": ranked_chunks(lab, rank(lab, term, RetrievalSettings("bm25")), k=3),
            }
        )
    return {"a": ta, "b": tb, "cosine": term_cosine(lab, ta, tb), "sides": sides}


def clearest_pair(lab: Lab) -> tuple[str, str] | None:
    """The pair of identifiers that shows the blur most clearly on this corpus, or None.

    Among identifiers a digit slip apart (:func:`_twin_candidates`), only pairs whose two
    identifiers were each seen in more than one passage count (a word seen in one passage ties
    with its neighbours whatever it means); of those, transposed digits first (as in E-4107 and
    E-4170), then the highest cosine.
    """

    def choose() -> tuple[str, str] | None:
        evidence = window_evidence(lab)
        scored = [
            (sorted(x) == sorted(y), term_cosine(lab, x, y) or -1.0, x, y)
            for x, y in _twin_candidates(lab)
            if not evidence[x][1] and not evidence[y][1]
        ]
        if not scored:
            return None
        best = max(scored, key=lambda row: (row[0], row[1]))
        return best[2], best[3]

    return lab.caches.of(CLEAREST_PAIR).get((), choose)


def _pair_row(lab: Lab, a: str, b: str, role: str) -> dict[str, Any]:
    """One pair with its cosine, its window evidence and a sentence saying what it shows."""
    evidence = window_evidence(lab)
    (na, one_a), (nb, one_b) = evidence.get(a, (0, False)), evidence.get(b, (0, False))
    shared = _shared_windows(lab, a, b)
    cosine = term_cosine(lab, a, b)
    held = f"{a} is in {na} of the {len(lab.indexes.lsa_windows)} windows, {b} in {nb}; they share {shared}"
    if cosine is None:
        why = f"{held}, and one of them has no vector in the embedding."
    elif cosine >= 0.8:
        why = (
            f"{held}. Written about in the same windows, they get nearly the same vector "
            f"(cosine {cosine:.3f}): to the embedding they are one word."
        )
    else:
        near_a = lab.indexes.lsa.neighbours(a, k=1)
        near_b = lab.indexes.lsa.neighbours(b, k=1)
        beside = (
            f" ({a} beside {near_a[0][0]}, {b} beside {near_b[0][0]})" if near_a and near_b else ""
        )
        why = (
            f"{held}. Each is written about in its own context{beside}, so the embedding keeps "
            f"them apart (cosine {cosine:.3f}): codes blur when they share their windows, not "
            "because they are spelled alike."
        )
    if role == "clearest":
        kind = (
            f"the pair with swapped digits (like {EXAMPLE_PAIR[0]} and {EXAMPLE_PAIR[1]})"
            if sorted(a) == sorted(b)
            else "the pair"
        )
        why = (
            "Among the identifier pairs a digit or two apart whose codes each appear in more "
            f"than one passage, {kind} the embedding places closest. {why}"
        )
    return {
        "role": role,
        "a": a,
        "b": b,
        "cosine": cosine,
        "windows": [na, nb],
        "one_passage": [one_a, one_b],
        "shared_windows": shared,
        "why": why,
    }


def identifier_pairs(lab: Lab) -> dict[str, Any]:
    """The pairs exhibit III tells its lesson with: :data:`EXAMPLE_PAIR` (role ``example``, when
    both are in the embedding's vocabulary) and :func:`clearest_pair` (role ``clearest``), each
    with its cosine (rows of U_k S_k), windows, shared windows and why it shows what it shows."""
    rows = []
    a, b = (_as_term(lab, x) for x in EXAMPLE_PAIR)
    if a in lab.indexes.lsa.vocabulary and b in lab.indexes.lsa.vocabulary:
        rows.append(_pair_row(lab, a, b, "example"))
    best = clearest_pair(lab)
    if best is not None and set(best) != {a, b}:
        rows.append(_pair_row(lab, *best, "clearest"))
    return {"windows": len(lab.indexes.lsa_windows), "pairs": rows}


def lsa_search(lab: Lab, query: str, *, top: int = 5) -> dict[str, Any]:
    """Heading chunks ranked by cosine to the folded-in query."""
    cs = lab.indexes.chunk_set()
    rows = ranked_chunks(lab, rank(lab, query, RetrievalSettings("lsa")), k=top)
    for row in rows:
        row["snippet"] = _snippet(cs.chunks[int(row["index"])].text)
    tokens = lab.indexes.query_tokens(query)
    known = [t for t in tokens if t in lab.indexes.lsa.vocabulary]
    return {"query": query, "tokens": tokens, "known_tokens": known, "results": rows}
