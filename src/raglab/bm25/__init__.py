"""BM25 (Robertson and Zaragoza 2009), Lucene's variant: the formula, the index and its exact top-k kernels."""
