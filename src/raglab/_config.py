"""Every default in one place.

The web lab, the command line and the library all read their defaults from here, so a number
shown in one face is the number computed by the others.
"""

from __future__ import annotations

# Randomness: every seeded computation (LSA, reranker initialisation, seeded splits) starts here.
SEED = 0

# Chunking (sizes in whitespace words, see docs/design.md#words).
FIXED_SIZE = 200
FIXED_OVERLAP = 0
SENTENCE_SIZE = 120
HEADING_MAX_WORDS = 300

# BM25 (Robertson and Zaragoza 2009, Lucene's IDF).
BM25_K1 = 1.2
BM25_B = 0.75
GRID_K1 = tuple(round(0.2 * i, 1) for i in range(16))  # 0.0, 0.2, ..., 3.0
GRID_B = tuple(round(0.1 * i, 1) for i in range(11))  # 0.0, 0.1, ..., 1.0
GRID_RECALL_K = 5

# LSA (Deerwester et al. 1990), randomised SVD (Halko, Martinsson and Tropp 2011).
LSA_WINDOWS = 100
LSA_WINDOW_WORDS = 256
LSA_RANK = 48
LSA_OVERSAMPLE = 26  # l = k + p = 74 at k = 48
LSA_POWER_ITERATIONS = 3

# Fusion (Cormack, Clarke and Buettcher 2009).
RRF_K = 60
FUSION_DEPTH = 20
FUSION_WEIGHTS = tuple(round(0.05 * i, 2) for i in range(21))  # grid for w on the training split

# Metrics.
RECALL_KS = (1, 3, 5, 10)
NDCG_K = 10

# Reranker: logistic regression by full-batch gradient descent.
RERANK_DEPTH = 20
# The reranker's six features, in the order of its weights (raglab.rerank.features.candidate_features).
RERANK_FEATURES = ("bm25", "cosine", "identifier_match", "title_match", "page_age", "position")
RERANK_L2 = 0.01
RERANK_LEARNING_RATE = 0.5
RERANK_ITERATIONS = 5000
MMR_LAMBDAS = tuple(round(0.05 * i, 2) for i in range(21))
MMR_DEPTH = 3  # MMR picks the first three; the rest follow in relevance order

# End to end.
BUDGET_WORDS = 400
READER_THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(21))
WILSON_Z = 1.959963984540054  # the 97.5% quantile of the standard normal

# Ranking depth kept per question and ranker: ranks past it count as "not found" (MRR@100).
RANK_DEPTH = 100
# Exhibits II to V cut the handbook by heading, so every answer stays whole.
RETRIEVAL_CHUNKER = "heading"
# The neural retrievers come last: without the model installed, everything before them works.
RETRIEVERS = ("bm25", "lsa", "rrf", "score", "neural", "neural-rrf", "neural-score")
#: Retrievers that need the neural model (raglab.embedding.neural).
NEURAL_RETRIEVERS = ("neural", "neural-rrf", "neural-score")
#: Score fusions: each has a fusion weight of BM25, chosen on the training split unless given.
SCORE_FUSIONS = ("score", "neural-score")
DEFAULT_RETRIEVER = "rrf"
# Bounded caches of the lab: chunkings and reranker models kept at once.
CACHE_SIZE = 32
