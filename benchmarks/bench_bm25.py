"""BM25: raglab.bm25.index.BM25Index against bm25s and rank_bm25 on Cranfield and a generated corpus.

Every side gets the same token lists (``raglab.text.tokens.tokenize`` for Cranfield; generated terms for
the large corpus) and the same k1 = 1.2, b = 0.75 (raglab._config).

- bm25s 0.3 with ``method="lucene"``: the same formula and IDF, its scores times (k1 + 1) equal
  ours (bm25s drops the constant numerator factor). Its defaults otherwise: float32 scores, the
  numpy backend; the numba backend is timed too (single thread, its default ``n_threads=0``),
  after one untimed call that compiles it.
- rank_bm25 0.2's ``BM25Okapi`` uses another IDF, ln((N - n + 0.5) / (n + 0.5)) floored at
  0.25 x the mean IDF, so its stock rankings differ from Lucene's by definition. A subclass
  replaces ``_calc_idf`` with Lucene's IDF and nothing else; its indexing and scoring code is
  BM25Okapi's, so the times are BM25Okapi's and the rankings can be checked exactly. It scores
  every document in Python for each query term, so on the generated corpus it runs only a
  subset of the queries.

Ours answers a batch with ``BM25Index.search_many`` (backend ``"numpy"``, and ``"numba"``, its
compiled kernel, against bm25s's numba backend); one ``search`` call per query is timed too.

Measured: indexing time (token lists in, ready index out), top-10 queries per second, tracemalloc
peak while indexing (and what the index retains) and while answering a batch of queries.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from common import (
    SHARED,
    Config,
    Disagreement,
    FloatArray,
    IntArray,
    Row,
    Section,
    TokenCollection,
    check_rankings,
    cranfield,
    generated,
    mb,
    spread,
    time_repeats,
    timed,
    traced_peak,
)

from raglab.bm25.index import BM25Index
from raglab.settings import default

TOP_K = 10
MEMORY_QUERIES = 50  # queries answered under tracemalloc for the query-time peak
NUMBA_ROUNDS = 3  # passes over the generated batches for the compiled pair (each takes ~0.1 s)
BM25S_RTOL = 2e-6  # bm25s stores float32 scores: about 7 significant digits
EXACT_RTOL = 1e-9

Result = tuple[IntArray, FloatArray]


def _lucene_okapi() -> type:
    from rank_bm25 import BM25Okapi

    class LuceneOkapi(BM25Okapi):  # type: ignore[misc]
        """BM25Okapi with Lucene's IDF, ln(1 + (N - n + 0.5) / (n + 0.5)); nothing else changed."""

        def _calc_idf(self, nd: dict[str, int]) -> None:
            n = self.corpus_size
            for word, freq in nd.items():
                self.idf[word] = math.log1p((n - freq + 0.5) / (freq + 0.5))

    return LuceneOkapi


def _ours_search(index: BM25Index, queries: Sequence[list[str]]) -> list[Result]:
    out = []
    for q in queries:
        r = index.search(q, k=TOP_K)
        out.append((r.indices, r.scores))
    return out


def _ours_many(index: BM25Index, queries: Sequence[list[str]], backend: str) -> list[Result]:
    found, scores = index.search_many(queries, k=TOP_K, backend=backend)
    return list(zip(found, scores, strict=True))


def _check_same(what: str, got: list[Result], want: list[Result]) -> str:
    """Our batch answers must be our single-query answers, bit for bit."""
    for q, ((g_idx, g_s), (w_idx, w_s)) in enumerate(zip(got, want, strict=True)):
        if not (np.array_equal(g_idx, w_idx) and np.array_equal(g_s, w_s)):
            raise Disagreement(f"{what}, query {q}: differs from BM25Index.search")
    return f"equal to `search` on {len(want)}/{len(want)} queries, bit for bit"


def _bm25s_search(retriever: Any, queries: Sequence[list[str]]) -> list[Result]:
    res = retriever.retrieve(list(queries), k=TOP_K, show_progress=False)
    return [
        (np.asarray(d, dtype=np.int64), np.asarray(s, dtype=np.float64))
        for d, s in zip(res.documents, res.scores, strict=True)
    ]


def _rank_bm25_search(model: Any, queries: Sequence[list[str]]) -> list[Result]:
    out = []
    for q in queries:
        scores = np.asarray(model.get_scores(q), dtype=np.float64)
        # What BM25Okapi.get_top_n does (a full sort), made stable so ties go to lower indices.
        top = np.argsort(-scores, kind="stable")[:TOP_K].astype(np.int64)
        out.append((top, scores[top]))
    return out


def _qps(
    search: Callable[[Sequence[list[str]]], object], batches: list[list[list[str]]]
) -> list[float]:
    """Queries in the batch / seconds to answer it, for each batch."""
    rates = []
    for batch in batches:
        t = time_repeats(lambda b=batch: search(b), repeats=1)  # type: ignore[misc]
        rates.append(len(batch) / t.median)
    return rates


def _paired_qps(
    ours: Callable[[Sequence[list[str]]], object],
    peer: Callable[[Sequence[list[str]]], object],
    batches: list[list[list[str]]],
    *,
    rounds: int = 1,
) -> tuple[list[float], list[float]]:
    """Queries per second of each side on each batch, the two sides timed one after the other
    on every batch (so a machine that speeds up or slows down during the run affects both)."""
    ours_rates: list[float] = []
    peer_rates: list[float] = []
    for _ in range(rounds):
        for batch in batches:
            ours_rates += _qps(ours, [batch])
            peer_rates += _qps(peer, [batch])
    return ours_rates, peer_rates


def _median(samples: Sequence[float]) -> float:
    return float(np.median(samples))


def _batches(queries: list[list[str]], n: int) -> list[list[list[str]]]:
    size = max(1, math.ceil(len(queries) / n))
    return [queries[i : i + size] for i in range(0, len(queries), size)]


def _collection(coll: TokenCollection, cfg: Config, section: Section, *, large: bool) -> None:
    import bm25s

    lucene_okapi = _lucene_okapi()
    docs, queries = coll.docs, coll.queries
    k1, b = default("k1"), default("b")
    case = coll.name
    rb_queries = queries[: cfg.rank_bm25_queries] if large else queries
    index_repeats = cfg.slow_repeats if large else cfg.repeats

    def build_ours() -> BM25Index:
        return BM25Index(docs, k1=k1, b=b)

    def build_bm25s() -> Any:
        retriever = bm25s.BM25(method="lucene", k1=k1, b=b)
        retriever.index(docs, show_progress=False)
        return retriever

    def build_rank_bm25() -> Any:
        return lucene_okapi(docs, k1=k1, b=b)

    # Build once, answer every query once on every side, and compare, before any timing.
    ours, t_ours = timed(build_ours)
    theirs, t_bm25s = timed(build_bm25s)
    rb, t_rb = timed(build_rank_bm25)
    ours_res = _ours_search(ours, queries)
    rescored: dict[int, FloatArray] = {}

    def rescore(q: int) -> FloatArray:
        if q not in rescored:
            rescored[q] = ours.scores(queries[q])
        return rescored[q]

    bm25s_check = check_rankings(
        f"bm25s on {case}",
        ours_res,
        _bm25s_search(theirs, queries),
        scale=k1 + 1.0,
        rtol=BM25S_RTOL,
        rescore=rescore,
    )
    theirs.backend = "numba"  # the same index, retrieved by the numba backend (compiles here)
    numba_check = check_rankings(
        f"bm25s (numba) on {case}",
        ours_res,
        _bm25s_search(theirs, queries),
        scale=k1 + 1.0,
        rtol=BM25S_RTOL,
        rescore=rescore,
    )
    theirs.backend = "numpy"
    # Our batch call, both backends (numba compiles here), against our single-query answers.
    many_numpy_check = _check_same(
        f"search_many (numpy) on {case}", _ours_many(ours, queries, "numpy"), ours_res
    )
    many_numba_check = _check_same(
        f"search_many (numba) on {case}", _ours_many(ours, queries, "numba"), ours_res
    )
    rb_check = check_rankings(
        f"rank_bm25 on {case}",
        ours_res[: len(rb_queries)],
        _rank_bm25_search(rb, rb_queries),
        scale=1.0,
        rtol=EXACT_RTOL,
        rescore=rescore,
    )

    # Indexing: the check build above is the first sample; more repeats after it.
    t_ours_index = (*time_repeats(build_ours, repeats=index_repeats - 1).samples, t_ours)
    t_bm25s_index = (*time_repeats(build_bm25s, repeats=index_repeats - 1).samples, t_bm25s)
    rb_repeats = 1 if large else index_repeats
    t_rb_index = (*time_repeats(build_rank_bm25, repeats=rb_repeats - 1).samples, t_rb)
    section.rows += [
        Row(
            case,
            f"indexing time (median of {index_repeats})",
            "s",
            _median(t_ours_index),
            "bm25s",
            _median(t_bm25s_index),
            "index of the checked rankings",
            target=True,
            ours_range=spread(t_ours_index),
            peer_range=spread(t_bm25s_index),
        ),
        Row(
            case,
            f"indexing time (median of {index_repeats}; rank_bm25 {rb_repeats})",
            "s",
            _median(t_ours_index),
            "rank_bm25",
            _median(t_rb_index),
        ),
    ]

    # Queries per second, top 10.
    if large:
        batches = _batches(queries, cfg.query_batches)
        rb_batches = _batches(rb_queries, cfg.query_batches)
        how = f"median of {len(batches)} batches of {len(batches[0])}"
        numba_how = (
            f"median of {NUMBA_ROUNDS} passes over {len(batches)} batches of {len(batches[0])}"
        )
        rb_how = f"median of {len(rb_batches)} batches of {len(rb_batches[0])}"
    else:
        batches = [queries] * cfg.repeats
        rb_batches = [queries] * cfg.repeats
        how = rb_how = numba_how = f"all {len(queries)} queries, median of {cfg.repeats}"
    # Each side's batch call on the same batches, the two sides of a pair timed alternately.
    many_numpy_qps, bm25s_qps = _paired_qps(
        lambda qs: _ours_many(ours, qs, "numpy"), lambda qs: _bm25s_search(theirs, qs), batches
    )
    theirs.backend = "numba"
    many_numba_qps, numba_qps = _paired_qps(
        lambda qs: _ours_many(ours, qs, "numba"),
        lambda qs: _bm25s_search(theirs, qs),
        batches,
        rounds=NUMBA_ROUNDS if large else 1,
    )
    theirs.backend = "numpy"
    ours_qps = _qps(lambda qs: _ours_search(ours, qs), batches)
    rb_ours_qps = _qps(lambda qs: _ours_search(ours, qs), rb_batches) if large else ours_qps
    rb_qps = _qps(lambda qs: _rank_bm25_search(rb, qs), rb_batches)
    section.rows += [
        Row(
            case,
            f"top-10 queries/s, `search_many` numpy ({how})",
            "q/s",
            _median(many_numpy_qps),
            "bm25s (numpy backend)",
            _median(bm25s_qps),
            f"{bm25s_check}; ours {many_numpy_check}",
            better="higher",
            target=True,
            ours_range=spread(many_numpy_qps),
            peer_range=spread(bm25s_qps),
        ),
        Row(
            case,
            f"top-10 queries/s, `search_many` numba ({numba_how})",
            "q/s",
            _median(many_numba_qps),
            "bm25s (numba backend, 1 thread)",
            _median(numba_qps),
            f"{numba_check}; ours {many_numba_check}",
            better="higher",
            target=True,
            ours_range=spread(many_numba_qps),
            peer_range=spread(numba_qps),
        ),
        Row(
            case,
            f"top-10 queries/s, `search` one query a call ({how})",
            "q/s",
            _median(ours_qps),
            "bm25s (numpy backend)",
            _median(bm25s_qps),
            better="higher",
            ours_range=spread(ours_qps),
        ),
        Row(
            case,
            f"top-10 queries/s, `search` one query a call ({rb_how})",
            "q/s",
            _median(rb_ours_qps),
            "rank_bm25 (Lucene IDF)",
            _median(rb_qps),
            rb_check,
            better="higher",
        ),
    ]

    # Memory, untimed runs under tracemalloc (which counts only what each call allocates).
    ours_index, ours_peak, ours_kept = traced_peak(build_ours)
    bm25s_index, bm25s_peak, bm25s_kept = traced_peak(build_bm25s)
    _, rb_peak, rb_kept = traced_peak(build_rank_bm25)
    section.rows += [
        Row(case, "indexing peak memory", "MB", mb(ours_peak), "bm25s", mb(bm25s_peak)),
        Row(case, "indexing peak memory", "MB", mb(ours_peak), "rank_bm25", mb(rb_peak)),
        Row(case, "index size (retained)", "MB", mb(ours_kept), "bm25s", mb(bm25s_kept)),
        Row(case, "index size (retained)", "MB", mb(ours_kept), "rank_bm25", mb(rb_kept)),
    ]
    mem_queries = queries[:MEMORY_QUERIES]
    _, ours_qpeak, _ = traced_peak(lambda: _ours_many(ours_index, mem_queries, "numpy"))
    _, bm25s_qpeak, _ = traced_peak(lambda: _bm25s_search(bm25s_index, mem_queries))
    section.rows.append(
        Row(
            case,
            f"query peak memory ({len(mem_queries)} queries, `search_many` numpy)",
            "MB",
            mb(ours_qpeak),
            "bm25s (numpy backend)",
            mb(bm25s_qpeak),
        )
    )
    if large:
        SHARED["generated_bm25"] = (coll, ours_index)


def run(cfg: Config) -> Section:
    section = Section(
        "bm25",
        "1. BM25: raglab.bm25.index against bm25s and rank_bm25",
        "Top-10 retrieval with k1 = 1.2, b = 0.75. Rankings are compared on every query before "
        "timing: bm25s's scores times (k1 + 1) must equal ours, and where the document lists "
        "differ, each document bm25s lists must have (by our scoring) the score we have at that "
        "rank, so the lists differ only in the order of equal scores (bm25s breaks ties by "
        "argpartition, we by ascending document index). rank_bm25 is checked through a subclass "
        "with Lucene's IDF (its stock BM25Okapi's IDF differs by definition).",
    )
    big = generated(cfg.gen_chunks, cfg.gen_queries)
    small = cranfield()
    for coll, large in ((small, False), (big, True)):
        _collection(coll, cfg, section, large=large)
    section.notes += [
        f"Cranfield: {small.description}; tokens from `raglab.text.tokens.tokenize`.",
        f"Generated: {big.description}; rank_bm25 answered the first {cfg.rank_bm25_queries} "
        "queries only, and was indexed once (it takes seconds per query on 200,000 chunks).",
        f"bm25s tolerance: scores agree to a relative {BM25S_RTOL:g} (bm25s keeps float32 "
        f"scores); rank_bm25 (float64) to {EXACT_RTOL:g}. Ties in float32 are ties here.",
        "bm25s's numba backend and ours were compiled by the untimed checking calls; bm25s's "
        "numba rows reuse its numpy backend's index (the backend only changes retrieval). Both "
        "sides' batch calls take the whole batch of token lists: `BM25Index.search_many` "
        "against `BM25.retrieve`; bm25s's indexing includes its float32 score matrix, ours keeps "
        "each posting's document (int32) and frequency (uint8) and computes saturations from "
        "them in float64 when it searches. In each pair of batch rows the two sides are timed "
        "one after the other on every batch.",
        f"Query memory: tracemalloc peak while answering the first {MEMORY_QUERIES} queries.",
    ]
    return section
