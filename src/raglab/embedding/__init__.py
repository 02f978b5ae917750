"""Stage III, the embedding: term-document vectors, LSA by randomised SVD, and the neural encoder."""
