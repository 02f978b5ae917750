"""Stage V, reranking: the six features, logistic regression, and maximal marginal relevance."""
