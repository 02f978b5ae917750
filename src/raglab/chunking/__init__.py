"""Stage I, chunking: the three chunkers, the chunk and its spans, and the fixed chunker's closed forms."""
