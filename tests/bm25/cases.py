"""Shared by the BM25 search tests: seeded Zipf corpora with ties, and the exhaustive oracle."""

from __future__ import annotations

import numpy as np

from raglab.bm25.index import BM25Index

# (k1, b) pairs the search tests run at: the default, presence only, full length normalisation,
# no length normalisation.
PARAMS = ((1.2, 0.75), (0.0, 0.5), (2.0, 1.0), (0.9, 0.0))


def zipf_corpus(
    seed: int, *, n_terms: int, n_docs: int, max_len: int, n_queries: int
) -> tuple[list[list[str]], list[list[str]]]:
    """Documents of Zipf-distributed terms ``t0``, ``t1``, ... (document 0 empty, documents 1
    and 2 copies of the last one: exact ties), and queries drawn from documents' tokens (repeats
    allowed), then a few edge cases: a repeated frequent term, an unknown token beside a rare
    term, an empty query, an unknown-only query and a single term."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, n_terms + 1, dtype=np.float64)
    p /= p.sum()
    terms = np.array([f"t{i}" for i in range(n_terms)])
    docs = [
        [str(t) for t in terms[rng.choice(n_terms, size=int(rng.integers(3, max_len)), p=p)]]
        for _ in range(n_docs)
    ]
    docs[0] = []
    docs[1] = list(docs[-1])
    docs[2] = list(docs[-1])
    queries = []
    for _ in range(n_queries):
        doc = docs[int(rng.integers(3, n_docs))]
        queries.append([str(t) for t in rng.choice(doc, size=int(rng.integers(1, 8)))])
    queries += [["t0", "t0", "t1"], [f"t{n_terms - 1}", "unknown"], [], ["unknown"], ["t7"]]
    return docs, queries


def exhaustive(index: BM25Index, query: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    """The oracle: every document scored (``BM25Index.scores``), sorted by (-score, index)."""
    scores = index.scores(query)
    order = np.lexsort((np.arange(scores.size), -scores))[: min(k, scores.size)]
    return order, scores[order]


def assert_same(got: tuple[np.ndarray, np.ndarray], want: tuple[np.ndarray, np.ndarray]) -> None:
    """Same documents, and scores equal bit for bit."""
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1].dtype == np.float64
    np.testing.assert_array_equal(got[1].view(np.int64), want[1].view(np.int64))


def query_mixes(docs: list[list[str]], seed: int, n_queries: int) -> dict[str, list[list[str]]]:
    """The benchmarks' two query mixes over a collection, seeded, 3 to 8 terms a query:
    **zipf**, terms drawn by a Zipf law (s = 1) over the collection's terms ranked by document
    frequency (as a user's words would be), and **chunk**, distinct terms of one random
    document (documents of fewer than 3 distinct terms are passed over)."""
    rng = np.random.default_rng(seed)
    df: dict[str, int] = {}
    for doc in docs:
        for term in set(doc):
            df[term] = df.get(term, 0) + 1
    ranked = sorted(df, key=lambda t: (-df[t], t))
    p = 1.0 / np.arange(1, len(ranked) + 1, dtype=np.float64)
    p /= p.sum()
    zipf = [
        [ranked[i] for i in rng.choice(len(ranked), size=int(rng.integers(3, 9)), p=p)]
        for _ in range(n_queries)
    ]
    long_enough = [sorted(set(d)) for d in docs if len(set(d)) >= 3]
    chunk = []
    for _ in range(n_queries):
        distinct = long_enough[int(rng.integers(len(long_enough)))]
        size = min(int(rng.integers(3, 9)), len(distinct))
        chunk.append([distinct[i] for i in rng.choice(len(distinct), size, replace=False)])
    return {"zipf": zipf, "chunk": chunk}
