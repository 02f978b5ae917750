"""Text into tokens: the analyzers (RAG lab's own and Lucene's English), words and sentences."""
