"""Stage I, chunking: the three chunkers, chunks and their spans, the closed forms."""
