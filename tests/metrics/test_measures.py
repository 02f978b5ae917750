"""Ranking metrics: hand-worked examples, two reference evaluators, and invariances."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

import numpy as np
import pytest
import pytrec_eval
import ranx

import raglab.metrics.judging as judging_module
import raglab.metrics.measures as measures
from raglab.base.ranking import IntArray, Ranking
from raglab.metrics.judging import RankingLike, Relevance
from raglab.metrics.measures import (
    evaluate,
    first_relevant_rank,
    fractional_recall_at_k,
    fractional_recall_at_k_per_query,
    hit_rate_at_k,
    hit_rate_at_k_per_query,
    mrr,
    ndcg_at_k,
    ndcg_at_k_per_query,
    precision_at_k,
    precision_at_k_per_query,
    reciprocal_rank_per_query,
    top1_accuracy,
    top1_accuracy_per_query,
)
from raglab.settings import NDCG_K, PRECISION_K, RECALL_KS
from tests.prewarm import ranx_doc

N_DOCS = 60


# --- fixtures -------------------------------------------------------------------------------


def random_rankings(seed: int, n_questions: int) -> list[IntArray]:
    """Rankings of 1 to 40 distinct chunks out of N_DOCS, drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    return [
        rng.permutation(N_DOCS)[: rng.integers(1, 41)].astype(np.int64) for _ in range(n_questions)
    ]


def random_binary(seed: int, n_questions: int) -> list[set[int]]:
    """One to five relevant chunks per question; never empty, so the oracles agree on every one."""
    rng = np.random.default_rng(seed + 1000)
    return [
        {int(d) for d in rng.choice(N_DOCS, size=rng.integers(1, 6), replace=False)}
        for _ in range(n_questions)
    ]


def random_graded(seed: int, n_questions: int) -> list[dict[int, int]]:
    """Grades 0 to 3 on two to eight chunks, at least one positive (0 = judged not relevant)."""
    rng = np.random.default_rng(seed + 2000)
    out: list[dict[int, int]] = []
    for _ in range(n_questions):
        docs = rng.choice(N_DOCS, size=rng.integers(2, 9), replace=False)
        grades = rng.integers(0, 4, size=docs.size)
        grades[0] = rng.integers(1, 4)
        out.append({int(d): int(g) for d, g in zip(docs, grades, strict=True)})
    return out


def as_qrels(relevant: list[Relevance]) -> dict[str, dict[str, int]]:
    """Question ids q000, q001, ... sort in question order, so per-query arrays line up."""
    qrels: dict[str, dict[str, int]] = {}
    for q, labels in enumerate(relevant):
        if isinstance(labels, Mapping):
            qrels[f"q{q:03d}"] = {ranx_doc(f"d{d}"): int(g) for d, g in labels.items()}
        else:
            qrels[f"q{q:03d}"] = {ranx_doc(f"d{d}"): 1 for d in labels}
    return qrels


def as_run(rankings: list[IntArray]) -> dict[str, dict[str, float]]:
    """Distinct, decreasing scores, so neither oracle has to break a tie. Ids of one width
    (``ranx_doc``): ranx compiles its functions once per width."""
    return {
        f"q{q:03d}": {
            ranx_doc(f"d{d}"): float(len(ranking) - i) for i, d in enumerate(ranking.tolist())
        }
        for q, ranking in enumerate(rankings)
    }


LABELLINGS: dict[str, Callable[[int, int], Sequence[Relevance]]] = {
    "binary": random_binary,
    "graded": random_graded,
}


# --- hand-worked examples -------------------------------------------------------------------


def test_binary_example_by_hand() -> None:
    """Oracle: hand computation.

    ranking 4, 2, 7, 1, 9 with relevant {7, 9}: the first relevant chunk (7) is at rank 3.
    recall@1 = 0, recall@3 = recall@5 = 1; P@3 = 1/3 (only 7 among 4, 2, 7);
    fractional recall@3 = 1/2, @5 = 2/2; RR = 1/3;
    DCG@10 = 1/log2(3 + 1) + 1/log2(5 + 1) = 0.5 + 0.386853 = 0.886853,
    IDCG@10 = 1/log2(2) + 1/log2(3) = 1 + 0.630930 = 1.630930, nDCG@10 = 0.543771.
    """
    rankings = [np.array([4, 2, 7, 1, 9], dtype=np.int64)]
    relevant: list[Relevance] = [{7, 9}]
    assert first_relevant_rank(rankings[0], relevant[0]) == 3
    assert hit_rate_at_k(rankings, relevant, k=1) == 0.0
    assert hit_rate_at_k(rankings, relevant, k=3) == 1.0
    assert hit_rate_at_k(rankings, relevant, k=5) == 1.0
    assert precision_at_k(rankings, relevant, k=3) == pytest.approx(1 / 3, abs=1e-15)
    assert fractional_recall_at_k(rankings, relevant, k=3) == 0.5
    assert fractional_recall_at_k(rankings, relevant, k=5) == 1.0
    assert mrr(rankings, relevant) == pytest.approx(1 / 3, abs=1e-15)
    assert top1_accuracy(rankings, relevant) == 0.0
    dcg = 1 / math.log2(4) + 1 / math.log2(6)
    idcg = 1 / math.log2(2) + 1 / math.log2(3)
    assert ndcg_at_k(rankings, relevant, k=NDCG_K) == pytest.approx(dcg / idcg, abs=1e-15)
    assert ndcg_at_k(rankings, relevant, k=NDCG_K) == pytest.approx(0.543771, abs=1e-6)


def test_graded_example_by_hand() -> None:
    """Oracle: hand computation with linear gains.

    ranking 3, 5, 8 with gains {5: 3, 8: 1, 6: 2} (6 never retrieved):
    DCG@3 = 0/log2(2) + 3/log2(3) + 1/log2(4) = 1.892789 + 0.5 = 2.392789;
    the ideal order is 3, 2, 1: IDCG@3 = 3/1 + 2/log2(3) + 1/log2(4) = 3 + 1.261860 + 0.5
    = 4.761860; nDCG@3 = 0.502490. Binary measures see the relevant set {5, 6, 8}:
    RR = 1/2, P@3 = 2/3, fractional recall@3 = 2/3, recall@1 = 0, recall@2 = 1.
    """
    rankings = [np.array([3, 5, 8], dtype=np.int64)]
    relevant: list[Relevance] = [{5: 3, 8: 1, 6: 2}]
    dcg = 3 / math.log2(3) + 1 / math.log2(4)
    idcg = 3 + 2 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at_k(rankings, relevant, k=3) == pytest.approx(dcg / idcg, abs=1e-15)
    assert ndcg_at_k(rankings, relevant, k=3) == pytest.approx(0.502490, abs=1e-6)
    assert mrr(rankings, relevant) == 0.5
    assert precision_at_k(rankings, relevant, k=3) == pytest.approx(2 / 3, abs=1e-15)
    assert fractional_recall_at_k(rankings, relevant, k=3) == pytest.approx(2 / 3, abs=1e-15)
    assert hit_rate_at_k(rankings, relevant, k=1) == 0.0
    assert hit_rate_at_k(rankings, relevant, k=2) == 1.0


def test_ndcg_ideal_uses_labels_beyond_the_cutoff_only_up_to_k() -> None:
    """Oracle: hand computation.

    Four relevant chunks, k = 2, ranking holds two of them first: DCG@2 = 1 + 1/log2(3) and
    IDCG@2 = 1 + 1/log2(3) (the ideal order is truncated at k too), so nDCG@2 = 1.
    """
    rankings = [np.array([1, 2, 3, 4], dtype=np.int64)]
    assert ndcg_at_k(rankings, [{1, 2, 30, 40}], k=2) == 1.0


def test_precision_divides_by_k_even_for_a_short_ranking() -> None:
    """Oracle: hand computation. One chunk ranked, and it is relevant: P@3 = 1/3."""
    assert precision_at_k([np.array([7], dtype=np.int64)], [{7}], k=3) == pytest.approx(1 / 3)


def test_empty_relevant_set_scores_zero_everywhere() -> None:
    """Oracle: the definition (answerable, but no chunk holds the answer: 0 on every measure)."""
    ranking = np.array([0, 1, 2], dtype=np.int64)
    scores = evaluate([ranking], [set()], ks=(1, 3, 5, 10), ndcg_k=10, precision_k=3)
    assert scores == {key: 0.0 for key in scores}
    assert first_relevant_rank(ranking, set()) is None
    assert fractional_recall_at_k([ranking], [set()], k=3) == 0.0
    assert ndcg_at_k([ranking], [{}], k=3) == 0.0


def test_zero_gain_counts_as_not_relevant() -> None:
    """Oracle: hand computation. Chunk 0 is judged 0 (TREC style), chunk 2 is relevant: RR = 1/3."""
    ranking = np.array([0, 1, 2], dtype=np.int64)
    assert first_relevant_rank(ranking, {0: 0, 2: 1}) == 3
    assert fractional_recall_at_k([ranking], [{0: 0.0, 2: 1.0}], k=3) == 1.0


def test_evaluate_keys_and_agreement_with_single_measures() -> None:
    """Oracle: the single-measure functions (evaluate computes all of them in one pass)."""
    rankings = random_rankings(5, 40)
    relevant: list[Relevance] = list(random_binary(5, 40))
    scores = evaluate(rankings, relevant, ks=(1, 3, 5, 10), ndcg_k=10, precision_k=3)
    expected_keys = [f"recall@{k}" for k in RECALL_KS]
    expected_keys += ["mrr", f"ndcg@{NDCG_K}", f"p@{PRECISION_K}", "top1"]
    assert list(scores) == expected_keys
    assert expected_keys[:4] + expected_keys[5:] == [
        "recall@1",
        "recall@3",
        "recall@5",
        "recall@10",
        "ndcg@10",
        "p@3",
        "top1",
    ]
    for k in RECALL_KS:
        assert scores[f"recall@{k}"] == hit_rate_at_k(rankings, relevant, k=k)
    assert scores["mrr"] == mrr(rankings, relevant)
    assert scores["ndcg@10"] == ndcg_at_k(rankings, relevant, k=NDCG_K)
    assert scores["p@3"] == precision_at_k(rankings, relevant, k=PRECISION_K)
    assert scores["top1"] == top1_accuracy(rankings, relevant) == scores["recall@1"]


def test_ranking_objects_and_index_arrays_agree() -> None:
    """Oracle: the same computation on bare index arrays."""
    arrays = random_rankings(6, 25)
    relevant: list[Relevance] = list(random_graded(6, 25))
    objects = [Ranking(a, np.arange(a.size, 0, -1, dtype=np.float64)) for a in arrays]
    assert evaluate(objects, relevant, ks=(1, 3, 5, 10), ndcg_k=10, precision_k=3) == evaluate(
        arrays, relevant, ks=(1, 3, 5, 10), ndcg_k=10, precision_k=3
    )


# --- reference evaluators -------------------------------------------------------------------


@pytest.mark.parametrize("labelling", sorted(LABELLINGS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_per_query_measures_equal_ranx(labelling: str, seed: int) -> None:
    """Oracle: ranx (hit_rate@k, recall@k, precision@3, mrr, ndcg@10), per question, to 1e-9."""
    n = 50
    rankings = random_rankings(seed, n)
    relevant: list[Relevance] = list(LABELLINGS[labelling](seed, n))
    qrels = ranx.Qrels(as_qrels(relevant))
    run = ranx.Run(as_run(rankings))
    ours = {
        f"hit_rate@{k}": hit_rate_at_k_per_query(rankings, relevant, k=k) for k in RECALL_KS
    } | {
        f"recall@{k}": fractional_recall_at_k_per_query(rankings, relevant, k=k) for k in RECALL_KS
    }
    ours["precision@3"] = precision_at_k_per_query(rankings, relevant, k=3)
    ours["mrr"] = reciprocal_rank_per_query(rankings, relevant)
    ours["ndcg@10"] = ndcg_at_k_per_query(rankings, relevant, k=10)
    ours["ndcg@3"] = ndcg_at_k_per_query(rankings, relevant, k=3)
    theirs = ranx.evaluate(qrels, run, list(ours), return_mean=False, make_comparable=True)
    for metric, values in ours.items():
        np.testing.assert_allclose(values, theirs[metric], rtol=0, atol=1e-9, err_msg=metric)
    # The sample must exercise both outcomes of every binary measure.
    assert 0 < ours["hit_rate@1"].mean() < ours["hit_rate@10"].mean() < 1


@pytest.mark.parametrize("labelling", sorted(LABELLINGS))
@pytest.mark.parametrize("seed", [3, 4])
def test_per_query_measures_equal_trec_eval(labelling: str, seed: int) -> None:
    """Oracle: pytrec_eval (trec_eval's success_k, recall_k, P_3, recip_rank, ndcg_cut_10)."""
    n = 50
    rankings = random_rankings(seed, n)
    relevant: list[Relevance] = list(LABELLINGS[labelling](seed, n))
    evaluator = pytrec_eval.RelevanceEvaluator(
        as_qrels(relevant),
        {"success.1,3,5,10", "recall.1,3,5,10", "P.3", "recip_rank", "ndcg_cut.10"},
    )
    theirs = evaluator.evaluate(as_run(rankings))
    pairs = {f"success_{k}": hit_rate_at_k_per_query(rankings, relevant, k=k) for k in RECALL_KS}
    pairs |= {
        f"recall_{k}": fractional_recall_at_k_per_query(rankings, relevant, k=k) for k in RECALL_KS
    }
    pairs["P_3"] = precision_at_k_per_query(rankings, relevant, k=3)
    pairs["recip_rank"] = reciprocal_rank_per_query(rankings, relevant)
    pairs["ndcg_cut_10"] = ndcg_at_k_per_query(rankings, relevant, k=10)
    for measure, values in pairs.items():
        reference = [theirs[f"q{q:03d}"][measure] for q in range(n)]
        np.testing.assert_allclose(values, reference, rtol=0, atol=1e-9, err_msg=measure)


def test_evaluate_means_equal_ranx() -> None:
    """Oracle: ranx mean scores for the whole headline table."""
    rankings = random_rankings(9, 80)
    relevant: list[Relevance] = list(random_binary(9, 80))
    ours = evaluate(rankings, relevant, ks=(1, 3, 5, 10), ndcg_k=10, precision_k=3)
    names = {f"recall@{k}": f"hit_rate@{k}" for k in RECALL_KS}
    names |= {"mrr": "mrr", "ndcg@10": "ndcg@10", "p@3": "precision@3", "top1": "hit_rate@1"}
    theirs = ranx.evaluate(
        ranx.Qrels(as_qrels(relevant)), ranx.Run(as_run(rankings)), sorted(set(names.values()))
    )
    for key, name in names.items():
        assert ours[key] == pytest.approx(theirs[name], abs=1e-9), key


# --- invariances ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_question_order_does_not_matter(seed: int) -> None:
    """Oracle: the unpermuted evaluation. Per-query arrays permute along; means are exactly equal."""
    rankings = random_rankings(seed, 30)
    relevant: list[Relevance] = list(random_graded(seed, 30))
    perm = np.random.default_rng(seed).permutation(30)
    rankings_p = [rankings[i] for i in perm]
    relevant_p = [relevant[i] for i in perm]
    assert evaluate(rankings_p, relevant_p, ks=(1, 3, 5, 10), ndcg_k=10, precision_k=3) == evaluate(
        rankings, relevant, ks=(1, 3, 5, 10), ndcg_k=10, precision_k=3
    )
    assert ndcg_at_k(rankings_p, relevant_p, k=NDCG_K) == ndcg_at_k(rankings, relevant, k=NDCG_K)
    np.testing.assert_array_equal(
        ndcg_at_k_per_query(rankings_p, relevant_p, k=NDCG_K),
        ndcg_at_k_per_query(rankings, relevant, k=NDCG_K)[perm],
    )
    np.testing.assert_array_equal(
        reciprocal_rank_per_query(rankings_p, relevant_p),
        reciprocal_rank_per_query(rankings, relevant)[perm],
    )


def test_measures_stay_in_range_and_recall_grows_with_k() -> None:
    """Oracle: the definitions (every measure in [0, 1]; hit rate non-decreasing in k)."""
    rankings = random_rankings(11, 60)
    relevant: list[Relevance] = list(random_graded(11, 60))
    scores = evaluate(rankings, relevant, ks=(1, 3, 5, 10), ndcg_k=10, precision_k=3)
    assert all(0.0 <= v <= 1.0 for v in scores.values())
    recalls = [scores[f"recall@{k}"] for k in RECALL_KS]
    assert recalls == sorted(recalls)
    hit = hit_rate_at_k_per_query(rankings, relevant, k=10)
    frac = fractional_recall_at_k_per_query(rankings, relevant, k=10)
    assert np.all(frac <= hit)
    np.testing.assert_array_equal(
        top1_accuracy_per_query(rankings, relevant),
        hit_rate_at_k_per_query(rankings, relevant, k=1),
    )


# --- the batch kernel -----------------------------------------------------------------------


def mixed_batch(
    seed: int, n_questions: int, *, equal_lengths: bool
) -> tuple[list[RankingLike], list[Relevance]]:
    """Rankings of every accepted form (int64, int32 and uint16 arrays, Ranking objects, empty
    ones) and labels as sets, frozensets, lists and tuples (with repeated chunks) and dicts of
    int or float gains (zeros included), some of them empty."""
    rng = np.random.default_rng(seed)
    rankings: list[RankingLike] = []
    relevant: list[Relevance] = []
    for q in range(n_questions):
        size = 12 if equal_lengths else int(rng.integers(0, 20))
        idx = rng.permutation(N_DOCS)[:size]
        form = q % 4
        if form == 0:
            rankings.append(idx.astype(np.int64))
        elif form == 1:
            rankings.append(idx.astype(np.int32))
        elif form == 2:
            rankings.append(idx.astype(np.uint16))
        else:
            rankings.append(Ranking(idx.astype(np.int64), -np.arange(size, dtype=np.float64)))
        docs = [int(d) for d in rng.integers(0, N_DOCS, size=int(rng.integers(0, 7)))]
        kind = q % 6
        if kind == 0:
            relevant.append(set(docs))
        elif kind == 1:
            relevant.append(frozenset(docs))
        elif kind == 2:
            relevant.append(list(docs))
        elif kind == 3:
            relevant.append(tuple(docs))
        elif kind == 4:
            relevant.append({d: int(rng.integers(0, 4)) for d in docs})
        else:
            relevant.append({d: float(rng.integers(0, 4)) / 2 for d in docs})
    return rankings, relevant


@pytest.mark.parametrize("equal_lengths", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_batch_kernel_equals_the_question_by_question_loop(seed: int, equal_lengths: bool) -> None:
    """Oracle: the per-question loop (each ranking's gains looked up one question at a time),
    which also handles every input the batch kernel declines; every array is equal exactly."""
    rankings, relevant = mixed_batch(seed, 60, equal_lengths=equal_lengths)
    for depth in (1, 3, 10, 25):
        batch = judging_module.judge_all(rankings, relevant, depth)
        assert batch is not None  # plain input takes the batch kernel
        loop = judging_module.judge_each(rankings, relevant, depth)
        for field in ("gains", "ideal", "first", "n_relevant"):
            ours, theirs = getattr(batch, field), getattr(loop, field)
            assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
            np.testing.assert_array_equal(ours, theirs, err_msg=field)
    # The sample must hold questions with and without a ranked relevant chunk.
    assert np.any(loop.first > 0) and np.any(loop.first == 0)


def test_labels_of_other_types_give_the_same_measures() -> None:
    """Oracle: the same labels as plain Python sets and dicts. numpy integers, a mapping proxy
    and a generator take the per-question loop and must give the same numbers."""
    rankings = random_rankings(21, 30)
    binary = random_binary(21, 30)
    graded = random_graded(21, 30)
    others: list[Relevance] = []
    for q in range(30):
        if q % 3 == 0:
            others.append({np.int64(d) for d in binary[q]})
        elif q % 3 == 1:
            others.append(d for d in sorted(binary[q]))
        else:
            others.append(list(binary[q]))
    assert evaluate(rankings, others, ks=(1, 3, 5, 10), ndcg_k=10, precision_k=3) == evaluate(
        rankings, list(binary), ks=(1, 3, 5, 10), ndcg_k=10, precision_k=3
    )
    proxies: list[Relevance] = [MappingProxyType(g) for g in graded]
    np.testing.assert_array_equal(
        ndcg_at_k_per_query(rankings, proxies, k=NDCG_K),
        ndcg_at_k_per_query(rankings, list(graded), k=NDCG_K),
    )


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({2: (np.array([3, 3]), {1}), 4: (np.array([1]), {-1})}, "question 2: chunk 3"),
        ({1: (np.array([1]), {1: float("inf")}), 3: (np.array([2, 2]), {1})}, "question 1: "),
        ({3: (np.array([1, 2]), {True}), 5: (np.array([-1]), {1})}, "question 3: "),
        ({4: (np.array([4, -2]), {1})}, "question 4: chunk indices must be non-negative"),
    ],
)
def test_the_first_bad_question_is_named(
    bad: dict[int, tuple[IntArray, Relevance]], message: str
) -> None:
    """Oracle: the validation contract; questions are checked in order, each ranking before
    its labels, so the error names the first bad question."""
    rankings: list[RankingLike] = [np.array([0, 1, 2]) for _ in range(6)]
    relevant: list[Relevance] = [{1} for _ in range(6)]
    for q, (ranking, labels) in bad.items():
        rankings[q], relevant[q] = ranking, labels
    with pytest.raises(ValueError, match=message):
        evaluate(rankings, relevant, ks=(1, 3, 5, 10), ndcg_k=10, precision_k=3)


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rankings", "relevant", "message"),
    [
        ([np.array([1, 2, 1])], [{1}], "more than once"),
        ([np.array([1, -2])], [{1}], "non-negative"),
        ([np.array([1.0, 2.0])], [{1}], "integer"),
        ([np.array([[1, 2]])], [{1}], "1-d"),
        ([[1, 2]], [{1}], "numpy array"),
        ([np.array([1, 2])], [{1}, {2}], "one per question"),
        ([np.array([1, 2])], [{1: -1.0}], ">= 0"),
        ([np.array([1, 2])], [{1: float("nan")}], "finite"),
        ([np.array([1, 2])], [{-3}], "non-negative"),
        ([np.array([1, 2])], [{"a"}], "integer index"),
        ([np.array([1, 2])], ["12"], "set of chunk indices"),
        ([], [], "no questions"),
    ],
)
def test_bad_input_is_a_clear_value_error(
    rankings: list[IntArray], relevant: list[Relevance], message: str
) -> None:
    """Oracle: the validation contract (ValueError naming the problem)."""
    with pytest.raises(ValueError, match=message):
        evaluate(rankings, relevant, ks=(1, 3, 5, 10), ndcg_k=10, precision_k=3)


@pytest.mark.parametrize("k", [0, -1, 2.5, True])
def test_bad_cutoff_is_a_value_error(k: int) -> None:
    """Oracle: the validation contract (k is a positive integer)."""
    with pytest.raises(ValueError, match="positive integer"):
        hit_rate_at_k([np.array([1])], [{1}], k=k)


# --- hit rate and recall ---------------------------------------------------


def test_hit_rate_by_hand() -> None:
    """Oracle: hand computation, three questions.

    q0: ranking 5, 3, 8 with relevant {8, 1}: first relevant at rank 3 -> hit@1 = 0, hit@2 = 0,
        hit@3 = 1 (fractional recall@3 = 1/2: only 8 of {8, 1} is found).
    q1: ranking 2, 6 with relevant {2}: hit at every k >= 1.
    q2: ranking 4, 7, 9 with relevant {0}: never found -> 0 at every k.
    Means: hit@1 = 1/3, hit@2 = 1/3, hit@3 = 2/3.
    """
    rankings = [np.array([5, 3, 8]), np.array([2, 6]), np.array([4, 7, 9])]
    relevant: list[Relevance] = [{8, 1}, {2}, {0}]
    np.testing.assert_array_equal(hit_rate_at_k_per_query(rankings, relevant, k=1), [0, 1, 0])
    np.testing.assert_array_equal(hit_rate_at_k_per_query(rankings, relevant, k=2), [0, 1, 0])
    np.testing.assert_array_equal(hit_rate_at_k_per_query(rankings, relevant, k=3), [1, 1, 0])
    assert hit_rate_at_k(rankings, relevant, k=1) == pytest.approx(1 / 3, abs=1e-15)
    assert hit_rate_at_k(rankings, relevant, k=2) == pytest.approx(1 / 3, abs=1e-15)
    assert hit_rate_at_k(rankings, relevant, k=3) == pytest.approx(2 / 3, abs=1e-15)
    np.testing.assert_array_equal(
        fractional_recall_at_k_per_query(rankings, relevant, k=3), [0.5, 1.0, 0.0]
    )
    # evaluate keeps the product's key: "recall@k" holds the hit rate.
    assert evaluate(rankings, relevant, ks=(3,), ndcg_k=10, precision_k=3)[
        "recall@3"
    ] == hit_rate_at_k(rankings, relevant, k=3)


def test_the_hit_rate_has_one_name() -> None:
    """The hit rate is not the IR recall, so it is not offered under that name: the module has no
    ``recall_at_k`` (the hit rate) beside ``fractional_recall_at_k`` (the recall)."""
    assert not hasattr(measures, "recall_at_k")
    assert not hasattr(measures, "recall_at_k_per_query")


def test_the_new_names_do_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rankings = random_rankings(6, 10)
        relevant: list[Relevance] = list(random_binary(6, 10))
        hit_rate_at_k(rankings, relevant, k=5)
        hit_rate_at_k_per_query(rankings, relevant, k=5)
        top1_accuracy(rankings, relevant)
        evaluate(rankings, relevant, ks=(1, 3, 5, 10), ndcg_k=10, precision_k=3)


def test_a_question_s_ndcg_does_not_depend_on_the_questions_beside_it() -> None:
    """Oracle: each question measured alone. Graded labels and rankings of every length up to
    30, 203 questions: measured all at once, in slices of 1 to 7 (as Dask workers measure
    them) and alone, every value is the same float, bit for bit, at k = 3, 10 and 25."""
    rng = np.random.default_rng(11)
    rankings, relevant = [], []
    for _ in range(203):
        n = int(rng.integers(0, 31))
        indices = rng.permutation(60)[:n]
        rankings.append(Ranking(indices, np.sort(rng.random(n))[::-1]))
        labelled = rng.permutation(60)[: int(rng.integers(1, 15))]
        relevant.append({int(d): float(rng.integers(1, 4)) for d in labelled})
    for k in (3, 10, 25):
        whole = ndcg_at_k_per_query(rankings, relevant, k=k)
        alone = np.concatenate(
            [ndcg_at_k_per_query([r], [g], k=k) for r, g in zip(rankings, relevant, strict=True)]
        )
        assert whole.tobytes() == alone.tobytes()
        for width in range(1, 8):
            sliced = np.concatenate(
                [
                    ndcg_at_k_per_query(rankings[a : a + width], relevant[a : a + width], k=k)
                    for a in range(0, len(rankings), width)
                ]
            )
            assert sliced.tobytes() == whole.tobytes()
