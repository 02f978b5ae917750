"""Display names on every face: retrievers, features, chunkers, analyzers, exhibits.

Display names on every face: retrievers, reranker features, chunkers, analyzers, exhibits,
and the words and span of the chunk-size slider under each chunker.

The command line, the web page (through ``/api/meta``) and the reports all print these, so one
ranker has one name everywhere; :mod:`raglab.settings` gives its choices these labels.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = [
    "ANALYZER_LABELS",
    "CHUNKER_LABELS",
    "EXHIBIT_LABELS",
    "FEATURE_LABELS",
    "RETRIEVER_LABELS",
    "SIZE_SLIDERS",
    "TEST_FIGURE_LABELS",
]

#: Display names of the retrievers, on every face.
RETRIEVER_LABELS: Final[Mapping[str, str]] = {
    "bm25": "BM25",
    "lsa": "LSA",
    "rrf": "RRF",
    "score": "Score fusion",
    "neural": "Neural",
    "neural-rrf": "BM25 + neural RRF",
    "neural-score": "BM25 + neural score fusion",
}

#: Display names of the reranker's six features, on every face.
FEATURE_LABELS: Final[Mapping[str, str]] = {
    "bm25": "BM25 score",
    "cosine": "embedding cosine",
    "identifier_match": "identifier match",
    "title_match": "title match",
    "page_age": "page age",
    "position": "first-stage position",
}


#: Display names of the chunkers and analyzers, on every face.
CHUNKER_LABELS: Final[Mapping[str, str]] = {
    "fixed": "fixed windows",
    "sentence": "sentences",
    "heading": "headings",
}
ANALYZER_LABELS: Final[Mapping[str, str]] = {
    "raglab": "RAG lab",
    "lucene": "Lucene English",
}

#: The web lab's six exhibits, in order, each under the name of the stage it takes apart (the
#: page's navigation and its closing note show these).
EXHIBIT_LABELS: Final[Mapping[str, str]] = {
    "chunking": "Cutting",
    "bm25": "BM25",
    "lsa": "Embedding",
    "fusion": "Fusion",
    "rerank": "Reranker",
    "end-to-end": "End to end",
}


#: The two labels of a test figure (design.md, "Test figures"): measured at the setting chosen on
#: the training split, or at any other setting, which a learner may explore but must not read as
#: the held-out result.
TEST_FIGURE_LABELS: Final[Mapping[bool, str]] = {
    True: "chosen on train",
    False: "test, not chosen on train",
}


#: The chunk-size slider under each chunker: its label and (low, high, step). ``size`` means
#: "words per chunk" to the fixed and sentence chunkers but "longest section" to the heading one.
SIZE_SLIDERS: Final[Mapping[str, tuple[str, tuple[int, int, int]]]] = {
    "fixed": ("Chunk size s (words)", (20, 400, 10)),
    "sentence": ("Most words per chunk", (20, 400, 10)),
    "heading": ("Longest section before it is split (words)", (50, 1000, 25)),
}
