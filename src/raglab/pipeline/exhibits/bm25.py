"""Exhibit II: :func:`bm25_search` (a ranking with each term's share of every score),
:func:`example_queries` and :func:`bm25_recall`.
"""

from __future__ import annotations

from typing import Any

from raglab import _config as C
from raglab.pipeline.exhibits._shared import _snippet
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import RetrievalSettings, bm25_ranking, measure, ranked_chunks
from raglab.questions import Question

# How many example queries exhibit II offers.
EXAMPLE_QUERIES = 5


def bm25_search(
    lab: Lab, query: str, *, k1: float = C.BM25_K1, b: float = C.BM25_B, top: int = 5
) -> dict[str, Any]:
    """BM25 over the heading chunks with each query term's share of every score.

    Chunks sharing no term with the query are not retrieved (as in
    :func:`~raglab.pipeline.retrieval.bm25_ranking`).
    """
    cs = lab.chunk_set()
    index = cs.bm25.with_params(k1=k1, b=b)
    tokens = lab.query_tokens(query)
    rows = ranked_chunks(lab, bm25_ranking(lab, query, k1=k1, b=b), k=top)
    for row in rows:
        chunk = cs.chunks[int(row["index"])]
        row["snippet"] = _snippet(chunk.text)
        row["words"] = chunk.n_words
        row["terms"] = [
            {
                "term": t.term,
                "tf": t.tf,
                "df": t.df,
                "idf": t.idf,
                "length_factor": t.length_factor,
                "contribution": t.contribution,
            }
            for t in index.explain(tokens, int(row["index"]))
        ]
    return {
        "query": query,
        "tokens": tokens,
        "k1": k1,
        "b": b,
        "chunks": len(cs),
        "avgdl": index.avgdl,
        "results": rows,
    }


def example_queries(lab: Lab) -> list[dict[str, str]]:
    """One training question of each kind (answerable ones), up to :data:`EXAMPLE_QUERIES`.

    Taken from the training split so that the test questions stay unseen while the reader tunes.
    """
    seen: dict[str, Question] = {}
    for q in lab.split("train", answerable=True):
        if q.kind not in seen:
            seen[q.kind] = q
    return [
        {"id": q.id, "kind": q.kind, "query": q.question}
        for q in list(seen.values())[:EXAMPLE_QUERIES]
    ]


def bm25_recall(lab: Lab, *, k1: float, b: float) -> dict[str, float]:
    """recall@5 of BM25 at (k1, b) on the training and test splits (heading chunks)."""
    settings = RetrievalSettings("bm25", k1=k1, b=b)
    key = f"recall@{C.GRID_RECALL_K}"
    return {
        "train": measure(lab, "train", settings)[key],
        "test": measure(lab, "test", settings)[key],
    }
