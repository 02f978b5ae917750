"""Metrics and fusion: raglab.metrics.measures and raglab.fusion.rrf against ranx, over generated queries.

Data (seeded): for each of 10,000 queries, a ranking of 100 distinct documents (of 100,000) and
one to three relevant documents, each placed in the ranking with probability 0.7 (at a random
rank) and otherwise outside it. Binary relevance, as in the product. Fusion: two rankers' first
20 results per query (the product's depth), then their first 100, overlapping in part.

Ours take the rankings as int64 arrays and the labels as sets of document indices; ranx takes its
own Qrels and Run objects, built once beforehand from the same data (document ids as strings,
run scores strictly decreasing along each ranking so that ranx's order is the ranking's). ranx
compiles its kernels with numba on first use: every ranx call is timed warm, after one untimed
call (the one whose answer is checked). ranx runs with ``save_results_in_run=False`` (its
default also writes every per-query score into the Run, in Python) and fuses with
``norm=None`` (RRF reads ranks only, so its default min-max pass would be wasted work); its numba
loops run on every core, ours are single-threaded numpy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from common import (
    Config,
    Disagreement,
    IntArray,
    Row,
    Section,
    check_close,
    spread,
    time_repeats,
)

from raglab.fusion.rrf import rrf_all
from raglab.metrics.measures import (
    evaluate,
    hit_rate_at_k,
    hit_rate_at_k_per_query,
    mrr,
    ndcg_at_k,
    ndcg_at_k_per_query,
    reciprocal_rank_per_query,
)
from raglab.settings import NDCG_K, PRECISION_K, RECALL_KS, RRF_K, default

SEED = 11
N_DOCS = 100_000
DEPTH = 100
HIT_K = 5
#: The fusion depths timed: the product's (FUSION_DEPTH = 20) and a deep one.
FUSION_DEPTHS = (default("fusion_depth"), 100)
EXACT = 1e-12


def _data(n_queries: int) -> tuple[list[IntArray], list[set[int]]]:
    rng = np.random.default_rng(SEED)
    rankings: list[IntArray] = []
    relevant: list[set[int]] = []
    for _ in range(n_queries):
        ranking = rng.choice(N_DOCS, size=DEPTH, replace=False).astype(np.int64)
        labels: set[int] = set()
        for _ in range(int(rng.integers(1, 4))):
            if rng.random() < 0.7:
                labels.add(int(ranking[int(rng.integers(DEPTH))]))
            else:
                labels.add(int(rng.integers(N_DOCS)))
        rankings.append(ranking)
        relevant.append(labels)
    return rankings, relevant


def _fusion_runs(n_queries: int, depth: int) -> tuple[list[IntArray], list[IntArray]]:
    """Two rankers' first ``depth`` per query; the second shares about half of its list with
    the first's first 2 x depth, in another order."""
    rng = np.random.default_rng(SEED + depth)
    run_a: list[IntArray] = []
    run_b: list[IntArray] = []
    for _ in range(n_queries):
        pool = rng.choice(N_DOCS, size=3 * depth, replace=False).astype(np.int64)
        run_a.append(pool[:depth])
        shared = rng.permutation(pool[: 2 * depth])[: depth // 2]
        fresh = pool[2 * depth : 2 * depth + depth - shared.size]
        run_b.append(rng.permutation(np.concatenate([shared, fresh])).astype(np.int64))
    return run_a, run_b


def _qid(q: int) -> str:
    return f"q{q:06d}"  # zero-padded: ranx's sorted query order is ours


def _run_dict(lists: list[IntArray]) -> dict[str, dict[str, float]]:
    return {
        _qid(q): {f"d{d}": float(len(lst) - i) for i, d in enumerate(lst.tolist())}
        for q, lst in enumerate(lists)
    }


def _rrf_row(cfg: Config, section: Section, depth: int, Run: Any, rx_fuse: Any) -> None:
    run_a, run_b = _fusion_runs(cfg.metric_queries, depth)
    n = len(run_a)
    rx_a, rx_b = Run.from_dict(_run_dict(run_a)), Run.from_dict(_run_dict(run_b))

    def ours_rrf() -> object:
        return rrf_all([run_a, run_b], k=RRF_K, depth=depth)

    def rx_rrf() -> Any:
        return rx_fuse([rx_a, rx_b], norm=None, method="rrf", params={"k": RRF_K})

    fused = rrf_all([run_a, run_b], k=RRF_K, depth=depth)
    theirs_fused = rx_rrf().to_dict()
    for q, ranking in enumerate(fused):
        theirs_q = theirs_fused.get(_qid(q), {})
        ours_q = {
            f"d{d}": s
            for d, s in zip(ranking.indices.tolist(), ranking.scores.tolist(), strict=True)
        }
        if ours_q.keys() != theirs_q.keys():
            raise Disagreement(f"RRF at depth {depth}, query {q}: fused documents differ")
        docs = sorted(ours_q)
        check_close(
            f"RRF at depth {depth}, query {q}",
            np.array([ours_q[d] for d in docs]),
            np.array([theirs_q[d] for d in docs]),
            rtol=EXACT,
        )
    t_ours = time_repeats(ours_rrf, repeats=cfg.repeats)
    t_rx = time_repeats(rx_rrf, repeats=cfg.repeats)
    section.rows.append(
        Row(
            f"{n:,} queries",
            f"RRF of 2 rankers x {depth}, k = {RRF_K} (median of {cfg.repeats})",
            "s",
            t_ours.median,
            "ranx",
            t_rx.median,
            f"equal fused scores on {n:,} queries",
            target=True,
            ours_range=spread(t_ours.samples),
            peer_range=spread(t_rx.samples),
        )
    )


def run(cfg: Config) -> Section:
    from ranx import Qrels, Run
    from ranx import evaluate as rx_evaluate
    from ranx import fuse as rx_fuse

    section = Section(
        "metrics",
        "3. Metrics and fusion: raglab.metrics.measures and raglab.fusion.rrf against ranx",
        f"{cfg.metric_queries:,} generated queries, rankings of {DEPTH}, binary labels. Every "
        "value is compared per query before timing (equal to within 1e-12); ranx is timed "
        "warm (after one untimed call, which also compiles its numba kernels).",
    )
    rankings, relevant = _data(cfg.metric_queries)
    n = len(rankings)
    qrels = Qrels.from_dict(
        {_qid(q): {f"d{d}": 1 for d in sorted(labels)} for q, labels in enumerate(relevant)}
    )
    run_dict = _run_dict(rankings)
    rx_run = Run.from_dict(run_dict)

    def rx(metrics: str | list[str], *, mean: bool = True) -> Any:
        return rx_evaluate(qrels, rx_run, metrics, return_mean=mean, save_results_in_run=False)

    cases: list[tuple[str, Callable[[], object], str, Callable[[], object]]] = [
        (
            f"recall@{HIT_K} (hit rate)",
            lambda: hit_rate_at_k(rankings, relevant, k=HIT_K),
            f"hit_rate@{HIT_K}",
            lambda: rx(f"hit_rate@{HIT_K}"),
        ),
        ("MRR", lambda: mrr(rankings, relevant), "mrr", lambda: rx("mrr")),
        (
            f"nDCG@{NDCG_K}",
            lambda: ndcg_at_k(rankings, relevant, k=NDCG_K),
            f"ndcg@{NDCG_K}",
            lambda: rx(f"ndcg@{NDCG_K}"),
        ),
    ]
    # Per-query values first: ours against ranx's, for every measure.
    per_query = {
        f"hit_rate@{HIT_K}": hit_rate_at_k_per_query(rankings, relevant, k=HIT_K),
        "mrr": reciprocal_rank_per_query(rankings, relevant),
        f"ndcg@{NDCG_K}": ndcg_at_k_per_query(rankings, relevant, k=NDCG_K),
    }
    # Several metrics at once: ranx 0.3.21 raises KeyError for one metric with return_mean=False.
    theirs_per_query = rx(list(per_query), mean=False)
    for name, ours_values in per_query.items():
        check_close(f"{name} per query", ours_values, theirs_per_query[name], rtol=EXACT)
    # The all-in-one call: every measure evaluate() reports, against ranx's equivalents.
    all_names = {f"recall@{k}": f"hit_rate@{k}" for k in RECALL_KS}
    all_names |= {
        "mrr": "mrr",
        f"ndcg@{NDCG_K}": f"ndcg@{NDCG_K}",
        f"p@{PRECISION_K}": f"precision@{PRECISION_K}",
        "top1": "hit_rate@1",
    }
    ours_all = evaluate(rankings, relevant, ks=(1, 3, 5, 10), ndcg_k=10, precision_k=3)
    rx_names = list(dict.fromkeys(all_names.values()))
    theirs_all = rx(rx_names)
    for ours_name, rx_name in all_names.items():
        check_close(
            ours_name, np.array([ours_all[ours_name]]), np.array([theirs_all[rx_name]]), rtol=EXACT
        )
    checks = {}
    for label, ours_fn, _, rx_fn in cases:
        a, b = float(ours_fn()), float(rx_fn())  # type: ignore[arg-type]
        check_close(label, np.array([a]), np.array([b]), rtol=EXACT)
        checks[label] = f"equal per query on {n:,} queries (mean {a:.6f})"
    for label, ours_fn, _, rx_fn in cases:
        t_ours = time_repeats(ours_fn, repeats=cfg.repeats)
        t_rx = time_repeats(rx_fn, repeats=cfg.repeats)
        section.rows.append(
            Row(
                f"{n:,} queries",
                f"{label} (median of {cfg.repeats})",
                "s",
                t_ours.median,
                "ranx",
                t_rx.median,
                checks[label],
                target=True,
                ours_range=spread(t_ours.samples),
                peer_range=spread(t_rx.samples),
            )
        )
    t_ours = time_repeats(
        lambda: evaluate(rankings, relevant, ks=(1, 3, 5, 10), ndcg_k=10, precision_k=3),
        repeats=cfg.repeats,
    )
    t_rx = time_repeats(lambda: rx(rx_names), repeats=cfg.repeats)
    section.rows.append(
        Row(
            f"{n:,} queries",
            f"all of evaluate(): {', '.join(ours_all)} (median of {cfg.repeats})",
            "s",
            t_ours.median,
            "ranx",
            t_rx.median,
            f"equal means ({', '.join(rx_names)})",
            target=True,
            ours_range=spread(t_ours.samples),
            peer_range=spread(t_rx.samples),
        )
    )

    # RRF over two rankers' first 20 (the product's depth) and first 100.
    for depth in FUSION_DEPTHS:
        _rrf_row(cfg, section, depth, Run, rx_fuse)
    # What ranx needs before any of that: its Qrels and Run, built from Python dicts.
    qrels_dict = {_qid(q): {f"d{d}": 1 for d in sorted(lab)} for q, lab in enumerate(relevant)}
    t_build = time_repeats(
        lambda: (Qrels.from_dict(qrels_dict), Run.from_dict(run_dict)), repeats=cfg.slow_repeats
    )
    section.rows.append(
        Row(
            f"{n:,} queries",
            "ranx input preparation: Qrels.from_dict + Run.from_dict (not in the times above)",
            "s",
            None,
            "ranx",
            t_build.median,
        )
    )
    section.notes += [
        f"Data: seed {SEED}; {N_DOCS:,} documents; rankings of {DEPTH}; 1 to 3 relevant "
        "documents a query, each in the ranking with probability 0.7.",
        "Memory is not compared here: ranx's working arrays live in numba's allocator, which "
        "tracemalloc cannot see.",
        "Our times include validating the inputs (every ranking and label set is checked); "
        "ranx's include converting its Run and Qrels to numba typed lists, which it does on "
        "every call.",
    ]
    return section
