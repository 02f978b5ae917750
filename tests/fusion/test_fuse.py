"""Rank fusion: hand-worked examples, ranx as a reference, tie-breaking and invariances."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest
import ranx

from raglab.base.ranking import Ranking
from raglab.fusion.rrf import rrf, rrf_all
from raglab.fusion.score import minmax, score_fusion, score_fusion_all
from raglab.settings import RRF_K, default
from tests.prewarm import ranx_doc

N_DOCS = 50


# --- fixtures -------------------------------------------------------------------------------


def ranking(indices: list[int], scores: list[float] | None = None) -> Ranking:
    if scores is None:
        scores = [float(len(indices) - i) for i in range(len(indices))]
    return Ranking(np.array(indices, dtype=np.int64), np.array(scores, dtype=np.float64))


def random_ranking(rng: np.random.Generator, *, signed: bool = False) -> Ranking:
    """5 to 30 distinct chunks with distinct decreasing scores (BM25-like, or cosine-like)."""
    n = int(rng.integers(5, 31))
    docs = rng.permutation(N_DOCS)[:n].astype(np.int64)
    scores = np.sort(rng.uniform(-1.0 if signed else 0.0, 1.0 if signed else 20.0, n))[::-1]
    return Ranking(docs, scores.copy())


def random_runs(seed: int, n_rankers: int, n_questions: int) -> list[list[Ranking]]:
    rng = np.random.default_rng(seed)
    return [
        [random_ranking(rng, signed=r % 2 == 1) for _ in range(n_questions)]
        for r in range(n_rankers)
    ]


def doc(d: int) -> str:
    """Chunk ``d``'s id as the tests give it to ranx (one width for every test: ranx_doc)."""
    return ranx_doc(f"d{d}")


def to_ranx(run: list[Ranking], depth: int) -> ranx.Run:
    """One ranker's top ``depth`` per question as a ranx Run (ranx fuses whole lists)."""
    return ranx.Run(
        {
            f"q{q:03d}": {
                doc(d): float(s) for d, s in zip(r.indices[:depth], r.scores[:depth], strict=True)
            }
            for q, r in enumerate(run)
        }
    )


def as_dict(fused: Ranking) -> dict[str, float]:
    return {doc(d): float(s) for d, s in zip(fused.indices, fused.scores, strict=True)}


def assert_ordered(fused: Ranking) -> None:
    """Scores non-increasing, and equal scores in ascending chunk order."""
    scores, docs = fused.scores, fused.indices
    assert np.all(scores[1:] <= scores[:-1])
    tied = scores[1:] == scores[:-1]
    assert np.all(docs[1:][tied] > docs[:-1][tied])


# --- reciprocal rank fusion -----------------------------------------------------------------


def test_rrf_second_in_both_beats_first_in_one() -> None:
    """Oracle: hand computation (the seed's "second place in both beats first place in one").

    A = 10, 20 and B = 30, 20 with k = 60:
    RRF(20) = 1/62 + 1/62 = 1/31 = 0.032258; RRF(10) = RRF(30) = 1/61 = 0.016393.
    20 comes first; 10 and 30 tie and go by ascending index.
    """
    fused = rrf([ranking([10, 20]), ranking([30, 20])], k=RRF_K, depth=default("fusion_depth"))
    assert fused.indices.tolist() == [20, 10, 30]
    np.testing.assert_allclose(fused.scores, [2 / 62, 1 / 61, 1 / 61], rtol=0, atol=1e-15)
    assert RRF_K == 60


def test_rrf_three_lists_by_hand() -> None:
    """Oracle: hand computation, k = 60.

    A = 1, 2, 3; B = 2, 4, 1; C = 4 (index array, no scores needed).
    RRF(1) = 1/61 + 1/63 = 0.032266; RRF(2) = 1/62 + 1/61 = 0.032522;
    RRF(3) = 1/63 = 0.015873; RRF(4) = 1/62 + 1/61 = 0.032522, tying with 2 exactly.
    Order: 2, 4 (tie, ascending index), 1, 3.
    """
    fused = rrf(
        [ranking([1, 2, 3]), ranking([2, 4, 1]), np.array([4], dtype=np.int64)],
        k=RRF_K,
        depth=default("fusion_depth"),
    )
    assert fused.indices.tolist() == [2, 4, 1, 3]
    expected = [1 / 62 + 1 / 61, 1 / 61 + 1 / 62, 1 / 61 + 1 / 63, 1 / 63]
    np.testing.assert_allclose(fused.scores, expected, rtol=0, atol=1e-15)
    assert fused.scores[0] == fused.scores[1]


def test_rrf_uses_only_the_first_depth_results() -> None:
    """Oracle: hand computation. With depth 2, chunk 3 (third in A) gets nothing and is absent."""
    fused = rrf([ranking([1, 2, 3]), ranking([2, 1])], depth=2, k=RRF_K)
    assert sorted(fused.indices.tolist()) == [1, 2]
    np.testing.assert_allclose(fused.scores, [1 / 61 + 1 / 62] * 2, rtol=0, atol=1e-15)


@pytest.mark.parametrize("norm", [None, "min-max"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rrf_equals_ranx(seed: int, norm: str | None) -> None:
    """Oracle: ranx fuse(method="rrf", params={"k": 60}) on each ranker's first 20.

    ranx's fuse min-max normalises by default; min-max is monotone, so the ranks RRF reads are
    unchanged and both settings must agree. ranx ranks by score, which is distinct here.
    """
    runs = random_runs(seed, 3, 30)
    fused = rrf_all(runs, k=RRF_K, depth=default("fusion_depth"))
    theirs = ranx.fuse(
        [to_ranx(run, default("fusion_depth")) for run in runs],
        norm=norm,
        method="rrf",
        params={"k": 60},
    )
    reference = theirs.to_dict()
    assert len(fused) == 30
    for q, ours in enumerate(fused):
        expected = reference[f"q{q:03d}"]
        got = as_dict(ours)
        assert got.keys() == expected.keys()
        for doc, value in expected.items():
            assert got[doc] == pytest.approx(value, rel=0, abs=1e-12)
        assert_ordered(ours)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_rrf_does_not_depend_on_ranker_order(seed: int) -> None:
    """Oracle: the unpermuted fusion, bit for bit, for every order of four rankers."""
    runs = random_runs(seed, 4, 5)
    reference = rrf_all(runs, k=RRF_K, depth=default("fusion_depth"))
    for order in itertools.permutations(range(4)):
        again = rrf_all([runs[r] for r in order], k=RRF_K, depth=default("fusion_depth"))
        for a, b in zip(reference, again, strict=True):
            np.testing.assert_array_equal(a.indices, b.indices)
            np.testing.assert_array_equal(a.scores, b.scores)


def test_rrf_batch_equals_one_question_at_a_time() -> None:
    """Oracle: the one-question function applied per question."""
    runs = random_runs(7, 2, 300)
    batch = rrf_all(runs, k=10, depth=7)
    for q in range(0, 300, 17):
        single = rrf([runs[0][q], runs[1][q]], k=10, depth=7)
        np.testing.assert_array_equal(batch[q].indices, single.indices)
        np.testing.assert_array_equal(batch[q].scores, single.scores)


def test_rrf_of_one_ranker_keeps_its_order() -> None:
    """Oracle: the definition. One list's RRF, 1/(k + rank), decreases with rank."""
    only = ranking([9, 3, 7, 1])
    fused = rrf([only], k=RRF_K, depth=default("fusion_depth"))
    assert fused.indices.tolist() == [9, 3, 7, 1]


# --- min-max and score fusion ---------------------------------------------------------------


def test_minmax_by_hand() -> None:
    """Oracle: hand computation. (x - min) / (max - min) on 12, 8, 2: 1, 0.6, 0."""
    np.testing.assert_allclose(minmax(np.array([12.0, 8.0, 2.0])), [1.0, 0.6, 0.0], atol=1e-15)
    np.testing.assert_allclose(minmax(np.array([0.9, 0.5, -0.1])), [1.0, 0.6, 0.0], atol=1e-15)


def test_minmax_constant_and_empty() -> None:
    """Oracle: the documented convention (equal scores carry no scale and map to 0)."""
    np.testing.assert_array_equal(minmax(np.array([3.0, 3.0, 3.0])), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(minmax(np.array([5.0])), [0.0])
    assert minmax(np.zeros(0)).shape == (0,)


def test_score_fusion_by_hand() -> None:
    """Oracle: hand computation.

    BM25 = 5 (12), 2 (8), 9 (2): mm = 1, 0.6, 0. cosine = 2 (0.9), 7 (0.5), 5 (-0.1): mm = 1, 0.6, 0.
    w = 0.4: fused(2) = 0.4*0.6 + 0.6*1 = 0.84; fused(5) = 0.4*1 + 0.6*0 = 0.4;
    fused(7) = 0.4*0 + 0.6*0.6 = 0.36 (missing from BM25); fused(9) = 0.4*0 + 0 = 0.
    """
    bm25 = ranking([5, 2, 9], [12.0, 8.0, 2.0])
    cosine = ranking([2, 7, 5], [0.9, 0.5, -0.1])
    fused = score_fusion(bm25, cosine, weight=0.4, depth=default("fusion_depth"))
    assert fused.indices.tolist() == [2, 5, 7, 9]
    np.testing.assert_allclose(fused.scores, [0.84, 0.4, 0.36, 0.0], rtol=0, atol=1e-15)


@pytest.mark.parametrize("weight", [0.0, 0.3, 0.55, 1.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_score_fusion_equals_ranx_wsum(seed: int, weight: float) -> None:
    """Oracle: ranx fuse(norm="min-max", method="wsum", params={"weights": [w, 1 - w]}).

    Fed each ranker's first 20, ranx has the same semantics: min-max over each list, 0 for a
    chunk absent from a list. It differs only when a list's score range is above 0 but below
    1e-9 (ranx floors the denominator at 1e-9; we scale exactly), which random scores never hit.
    """
    runs = random_runs(seed, 2, 40)
    fused = score_fusion_all(runs[0], runs[1], weight=weight, depth=default("fusion_depth"))
    theirs = ranx.fuse(
        [to_ranx(run, default("fusion_depth")) for run in runs],
        norm="min-max",
        method="wsum",
        params={"weights": [weight, 1 - weight]},
    ).to_dict()
    for q, ours in enumerate(fused):
        expected = theirs[f"q{q:03d}"]
        got = as_dict(ours)
        assert got.keys() == expected.keys()
        for doc, value in expected.items():
            assert got[doc] == pytest.approx(value, rel=0, abs=1e-12)
        assert_ordered(ours)


def test_score_fusion_with_constant_scores_adds_nothing_from_that_ranker() -> None:
    """Oracle: hand computation and ranx wsum (its floored denominator also gives 0 here).

    BM25 scores all 0 (no query term matched): mm = 0, 0, 0, so w = 0.5 leaves half the cosine's
    min-max: cosine = 4 (0.8), 1 (0.2): fused(4) = 0.5, every other chunk 0.
    """
    bm25 = ranking([3, 1, 2], [0.0, 0.0, 0.0])
    cosine = ranking([4, 1], [0.8, 0.2])
    fused = score_fusion(bm25, cosine, weight=0.5, depth=default("fusion_depth"))
    assert fused.indices.tolist() == [4, 1, 2, 3]
    np.testing.assert_array_equal(fused.scores, [0.5, 0.0, 0.0, 0.0])


@pytest.mark.parametrize("seed", range(5))
def test_weight_one_gives_bm25_order_and_zero_the_cosine_order(seed: int) -> None:
    """Oracle: the ranker's own list.

    w = 1: BM25's first 20 lead in BM25's order, except its last result, whose min-max is 0 like
    every chunk only the cosine found; those zero-scored chunks follow by ascending index.
    w = 0 is the mirror image with the cosine.
    """
    runs = random_runs(seed, 2, 1)
    bm25, cosine = runs[0][0], runs[1][0]
    for weight, lead, other in ((1.0, bm25, cosine), (0.0, cosine, bm25)):
        fused = score_fusion(bm25, cosine, weight=weight, depth=default("fusion_depth"))
        head = lead.indices[: default("fusion_depth")].tolist()
        rest = (set(head) | set(other.indices[: default("fusion_depth")].tolist())) - set(head[:-1])
        assert fused.indices.tolist() == head[:-1] + sorted(rest)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_swapping_the_rankers_with_the_weight_gives_the_same_fusion(seed: int) -> None:
    """Oracle: the unswapped fusion; w*a + (1-w)*b is symmetric under (a, b, w) -> (b, a, 1 - w).

    1 - (1 - w) may differ from w in the last bit, so scores agree to 1e-15 and the orders agree
    up to near-ties within that rounding.
    """
    runs = random_runs(seed, 2, 20)
    a = score_fusion_all(runs[0], runs[1], weight=0.3, depth=default("fusion_depth"))
    b = score_fusion_all(runs[1], runs[0], weight=0.7, depth=default("fusion_depth"))
    for x, y in zip(a, b, strict=True):
        assert as_dict(x).keys() == as_dict(y).keys()
        scores_y = as_dict(y)
        # y's scores read in x's order: equal to x's within rounding, so x's order is y's too.
        in_x_order = [scores_y[doc(d)] for d in x.indices.tolist()]
        np.testing.assert_allclose(in_x_order, x.scores, rtol=0, atol=1e-15)


def test_score_fusion_batch_equals_one_question_at_a_time() -> None:
    """Oracle: the one-question function applied per question."""
    runs = random_runs(8, 2, 200)
    batch = score_fusion_all(runs[0], runs[1], weight=0.65, depth=12)
    for q in range(0, 200, 13):
        single = score_fusion(runs[0][q], runs[1][q], weight=0.65, depth=12)
        np.testing.assert_array_equal(batch[q].indices, single.indices)
        np.testing.assert_array_equal(batch[q].scores, single.scores)


def test_many_questions_with_empty_lists() -> None:
    """Oracle: hand computation. An empty list contributes nothing; two empty lists fuse to none."""
    empty = Ranking(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
    fused = score_fusion_all(
        [empty, ranking([2, 1])], [empty, empty], weight=0.5, depth=default("fusion_depth")
    )
    assert len(fused[0]) == 0
    assert fused[1].indices.tolist() == [2, 1]
    np.testing.assert_array_equal(fused[1].scores, [0.5, 0.0])
    assert [
        len(r)
        for r in rrf_all(
            [[empty, empty], [empty, ranking([4])]], k=RRF_K, depth=default("fusion_depth")
        )
    ] == [0, 1]


# --- bad input ------------------------------------------------------------------------------


GOOD = Ranking(np.array([1, 2], dtype=np.int64), np.array([2.0, 1.0]))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: rrf([ranking([1, 1])], k=RRF_K, depth=default("fusion_depth")), "more than once"),
        (lambda: rrf([ranking([1, -1])], k=RRF_K, depth=default("fusion_depth")), "non-negative"),
        (lambda: rrf([], k=RRF_K, depth=default("fusion_depth")), "at least one ranker"),
        (lambda: rrf([GOOD], depth=0, k=RRF_K), "depth"),
        (lambda: rrf([GOOD], k=-1, depth=default("fusion_depth")), "k must be"),
        (lambda: rrf([np.array([1.5])], k=RRF_K, depth=default("fusion_depth")), "integer"),
        (lambda: rrf([[1, 2]], k=RRF_K, depth=default("fusion_depth")), "numpy array"),  # type: ignore[list-item]
        (
            lambda: rrf_all([[GOOD, GOOD], [GOOD]], k=RRF_K, depth=default("fusion_depth")),
            "one ranking per question",
        ),
        (lambda: score_fusion(GOOD, GOOD, weight=1.5, depth=default("fusion_depth")), "weight"),
        (
            lambda: score_fusion(GOOD, GOOD, weight=float("nan"), depth=default("fusion_depth")),
            "weight",
        ),
        (
            lambda: score_fusion(GOOD, np.array([1, 2]), weight=0.5, depth=default("fusion_depth")),  # type: ignore[arg-type]
            "Ranking",
        ),
        (
            lambda: score_fusion(
                GOOD,
                ranking([1, 2], [1.0, float("inf")]),
                weight=0.5,
                depth=default("fusion_depth"),
            ),
            "finite",
        ),
        (lambda: minmax(np.array([1.0, float("nan")])), "finite"),
        (lambda: minmax(np.ones((2, 2))), "1-d"),
    ],
)
def test_bad_fusion_input_is_a_clear_value_error(call: Callable[[], object], message: str) -> None:
    """Oracle: the validation contract (ValueError naming the problem)."""
    with pytest.raises(ValueError, match=message):
        call()


def test_a_repeat_past_the_depth_is_ignored() -> None:
    """Oracle: the definition (only the first ``depth`` results are read)."""
    fused = rrf([ranking([1, 2, 1])], depth=2, k=RRF_K)
    assert fused.indices.tolist() == [1, 2]


def test_large_batch_fuses_every_question() -> None:
    """Oracle: the union of each question's two lists (10,000 questions in one call)."""
    rng = np.random.default_rng(0)
    docs_a = [rng.permutation(500)[:20].astype(np.int64) for _ in range(10_000)]
    docs_b = [rng.permutation(500)[:20].astype(np.int64) for _ in range(10_000)]
    fused = rrf_all([docs_a, docs_b], k=RRF_K, depth=default("fusion_depth"))
    assert len(fused) == 10_000
    for q in (0, 4_321, 9_999):
        assert set(fused[q].indices.tolist()) == set(docs_a[q].tolist()) | set(docs_b[q].tolist())
        assert_ordered(fused[q])


def test_huge_chunk_indices_fuse_as_their_order_preserving_relabelling() -> None:
    """Oracle: the same lists with the chunk indices replaced by their ranks among the indices
    used (an order-preserving relabelling), fused on the fast one-key path. Indices near 2**62
    make the one-key sort overflow, so the column sort runs; both must agree exactly."""
    rng = np.random.default_rng(3)
    small = [[rng.choice(40, size=15, replace=False) for _ in range(6)] for _ in range(3)]
    used = np.unique(np.concatenate([x for run in small for x in run]))
    huge_of = {int(d): 2**62 + 7 * int(d) for d in used}
    huge = [[np.array([huge_of[int(d)] for d in x], dtype=np.int64) for x in run] for run in small]
    for a, b in zip(
        rrf_all(small, depth=10, k=RRF_K), rrf_all(huge, depth=10, k=RRF_K), strict=True
    ):
        assert [huge_of[int(d)] for d in a.indices] == b.indices.tolist()
        assert a.scores.tolist() == b.scores.tolist()
    with pytest.raises(ValueError, match="more than once"):
        rrf_all([[np.array([2**62, 5, 2**62])]], k=RRF_K, depth=default("fusion_depth"))
