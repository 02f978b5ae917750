"""RAG lab: take retrieval apart and measure every step, with no language model."""
