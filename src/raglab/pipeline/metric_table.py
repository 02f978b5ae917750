"""The metric columns every face shows, as (key, label) pairs, in table order.

One job: name the measures of :func:`raglab.metrics.measures.evaluate` that a ranker table shows and
how their column headers read, once, for the command line, the web lab and the report.

- :data:`METRICS`: a ranker table (``raglab fuse``, ``raglab trec eval``, the report's rankers
  section);
- :data:`ORDER_METRICS`: the reranker's table of orders (``raglab rerank``, exhibit V, the
  report's reranker section).
"""

from __future__ import annotations

#: A ranker table's columns: (key in :func:`raglab.metrics.measures.evaluate`'s result, header).
METRICS: tuple[tuple[str, str], ...] = (
    ("recall@1", "R@1"),
    ("recall@3", "R@3"),
    ("recall@5", "R@5"),
    ("recall@10", "R@10"),
    ("mrr", "MRR"),
    ("ndcg@10", "nDCG@10"),
)

#: The reranker's table of orders (fusion, reranked, reranked + MMR): its columns.
ORDER_METRICS: tuple[tuple[str, str], ...] = (
    ("top1", "Top-1"),
    ("p@3", "P@3"),
    ("recall@5", "R@5"),
    ("mrr", "MRR"),
)

__all__ = ["METRICS", "ORDER_METRICS"]
