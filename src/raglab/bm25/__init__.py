"""Stage II, BM25 (Robertson and Zaragoza 2009), Lucene's variant: formula, index, top k."""
