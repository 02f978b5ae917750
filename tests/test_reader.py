"""Tests for raglab.reader: context packing, the extractive reader and answer correctness."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from raglab._config import BUDGET_WORDS, READER_THRESHOLDS
from raglab.reader import ReaderAnswer, is_correct, pack, read

# --------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------

# Question content terms Q, |Q| = 4.
QUESTION = {"pump", "pressure", "limit", "bar"}
# Sentences of a packed context in order; coverage |Q ∩ S| / 4 in the comments.
SENTENCES = [
    {"pump", "maintenance", "weekly"},  # {pump}: 1/4 = 0.25
    {"pressure", "limit", "pump", "exceed"},  # {pressure, limit, pump}: 3/4 = 0.75
    {"pressure", "gauge"},  # {pressure}: 1/4 = 0.25
    {"office", "hours"},  # {}: 0
]


# --------------------------------------------------------------------------------------------
# pack
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("words", "budget", "expected"),
    [
        ([100, 150, 200], 400, 2),  # 100 + 150 = 250 fits; + 200 = 450 > 400
        ([200, 200, 1], 400, 2),  # 200 + 200 = 400 fits exactly; + 1 = 401 does not
        ([500, 10], 400, 0),  # the first chunk alone is over the budget
        ([300, 200, 50], 400, 1),  # stops at 200 (500 > 400) although 50 would still fit
        ([], 400, 0),  # nothing to pack
        ([0, 0, 5], 0, 2),  # empty chunks always fit
        ([10, 20, 30], 60, 3),  # everything fits
    ],
)
def test_pack_by_hand(words: list[int], budget: int, expected: int) -> None:
    """oracle: hand-summed running totals against the budget (in the comments)."""
    assert pack(words, budget=budget) == expected


def test_pack_default_budget() -> None:
    """oracle: the default is BUDGET_WORDS: chunks of BUDGET_WORDS // 2 words fit exactly two."""
    half = BUDGET_WORDS // 2
    assert pack([half, half, half]) == 2


@given(
    words=st.lists(st.integers(min_value=0, max_value=500), max_size=30),
    budget=st.integers(min_value=0, max_value=2000),
)
def test_pack_is_the_longest_fitting_prefix(words: list[int], budget: int) -> None:
    """oracle: the definition checked directly: the first k chunks fit (Σ ≤ W) and either every
    chunk was taken or adding the next one breaks the budget."""
    k = pack(words, budget=budget)
    assert 0 <= k <= len(words)
    assert sum(words[:k]) <= budget
    assert k == len(words) or sum(words[: k + 1]) > budget


@pytest.mark.parametrize(
    ("words", "budget"),
    [([10, -1], 400), ([10, 20], -1), ([[10, 20]], 400), ([1.5, 2.0], 400)],
)
def test_pack_rejects_bad_input(words: list[object], budget: int) -> None:
    """oracle: the validation contract (ValueError)."""
    with pytest.raises(ValueError):
        pack(words, budget=budget)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# read
# --------------------------------------------------------------------------------------------


def test_read_quotes_best_covering_sentence() -> None:
    """oracle: hand-computed coverages (0.25, 0.75, 0.25, 0) from the fixture comments; the best
    is sentence 1 at 3/4."""
    ans = read(QUESTION, SENTENCES, threshold=0.5)
    assert ans == ReaderAnswer(True, 1, 0.75, ans.coverages)
    np.testing.assert_array_equal(ans.coverages, [0.25, 0.75, 0.25, 0.0])


def test_read_threshold_edges() -> None:
    """oracle: the documented rule (coverage ≥ threshold is found). Best coverage 3/4 = 0.75:
    a threshold of 0.75 quotes it, 0.8 does not (but the coverage is still reported)."""
    at = read(QUESTION, SENTENCES, threshold=0.75)
    assert at.found and at.sentence == 1
    above = read(QUESTION, SENTENCES, threshold=0.8)
    assert not above.found and above.sentence is None
    assert above.coverage == 0.75
    assert read(QUESTION, SENTENCES, threshold=1.0).found is False


def test_read_threshold_from_the_grid_meets_equal_fraction() -> None:
    """oracle: hand computation. A question of 20 terms and a sentence holding 7 of them has
    coverage 7/20 = 0.35, which must count as equal to the grid threshold 0.35 (READER_THRESHOLDS
    index 7) despite floating point."""
    q = {f"t{i}" for i in range(20)}
    s = [{f"t{i}" for i in range(7)} | {"other"}]
    threshold = READER_THRESHOLDS[7]
    assert threshold == pytest.approx(0.35)
    ans = read(q, s, threshold=threshold)
    assert ans.found and ans.coverage == pytest.approx(0.35)
    assert not read(q, s, threshold=READER_THRESHOLDS[8]).found  # 0.40 > 0.35


def test_read_ties_go_to_earliest_sentence() -> None:
    """oracle: hand computation. Sentences 0 and 1 both cover 2/4 = 0.5 ({pump, bar} and
    {pressure, limit}); sentence 2 covers 1/4. The earliest, 0, from the higher-ranked chunk,
    is quoted."""
    sentences = [{"pump", "bar"}, {"pressure", "limit"}, {"bar"}]
    ans = read(QUESTION, sentences, threshold=0.25)
    assert ans.sentence == 0
    np.testing.assert_array_equal(ans.coverages, [0.5, 0.5, 0.25])
    # Reversing the context moves the quote to the tie that is now first.
    assert read(QUESTION, sentences[::-1], threshold=0.25).sentence == 1


def test_read_not_found_cases() -> None:
    """oracle: the documented rule. Empty question, no sentences, and no shared term all answer
    "not found", even at threshold 0."""
    empty_q = read(set(), SENTENCES, threshold=0.0)
    assert not empty_q.found and empty_q.sentence is None
    np.testing.assert_array_equal(empty_q.coverages, np.zeros(4))
    no_context = read(QUESTION, [], threshold=0.0)
    assert not no_context.found and no_context.coverages.shape == (0,)
    unrelated = read(QUESTION, [{"office", "hours"}], threshold=0.0)
    assert not unrelated.found and unrelated.coverage == 0.0


def test_read_counts_repeated_terms_once() -> None:
    """oracle: hand computation with sets. Q = {pump, pump, bar} is {pump, bar}; a sentence
    [pump, pump] covers 1/2."""
    ans = read(["pump", "pump", "bar"], [["pump", "pump"]], threshold=0.5)
    assert ans.found and ans.coverage == 0.5


def test_read_invariant_to_term_order() -> None:
    """oracle: coverage is a set ratio, so listing terms in another order changes nothing."""
    a = read(sorted(QUESTION), [sorted(s) for s in SENTENCES], threshold=0.5)
    b = read(
        sorted(QUESTION, reverse=True), [sorted(s, reverse=True) for s in SENTENCES], threshold=0.5
    )
    assert a.sentence == b.sentence
    np.testing.assert_array_equal(a.coverages, b.coverages)


@pytest.mark.parametrize("threshold", [-0.1, 1.1])
def test_read_rejects_bad_threshold(threshold: float) -> None:
    """oracle: the validation contract (ValueError)."""
    with pytest.raises(ValueError):
        read(QUESTION, SENTENCES, threshold=threshold)


# --------------------------------------------------------------------------------------------
# is_correct
# --------------------------------------------------------------------------------------------


def test_quote_containing_short_answer_is_correct() -> None:
    """oracle: span containment by hand: answer [20, 40) lies inside the quote [10, 50)."""
    assert is_correct(("safety", 10, 50), [("safety", 20, 40)])


def test_quote_inside_long_answer_is_correct() -> None:
    """oracle: span containment by hand: the quote [20, 30) lies inside the answer [10, 50)."""
    assert is_correct(("safety", 20, 30), [("safety", 10, 50)])
    assert is_correct(("safety", 10, 50), [("safety", 10, 50)])  # identical spans


def test_partial_overlap_is_wrong() -> None:
    """oracle: by hand: [5, 25) and [10, 50) overlap but neither contains the other."""
    assert not is_correct(("safety", 5, 25), [("safety", 10, 50)])
    assert not is_correct(("safety", 40, 60), [("safety", 10, 50)])


def test_page_mismatch_is_wrong() -> None:
    """oracle: by hand: the same offsets on another page are a different passage (an outdated
    copy of the policy, say)."""
    assert not is_correct(("safety-2019", 20, 30), [("safety", 10, 50)])


def test_any_occurrence_counts() -> None:
    """oracle: by hand: the quote [100, 140) on page b contains the second occurrence [110, 120)."""
    answers = [("a", 0, 10), ("b", 110, 120)]
    assert is_correct(("b", 100, 140), answers)
    assert not is_correct(("a", 100, 140), answers)


def test_not_found_is_wrong_for_answerable_question() -> None:
    """oracle: the definition: an answerable question needs a quote."""
    assert not is_correct(None, [("safety", 10, 50)])


def test_out_of_corpus_both_directions() -> None:
    """oracle: the definition: with no answer spans only "not found" is correct."""
    assert is_correct(None, [])
    assert not is_correct(("safety", 10, 50), [])


@pytest.mark.parametrize(
    ("quote", "answers"),
    [(("a", 30, 10), [("a", 0, 50)]), (("a", 0, 5), [("a", -1, 4)]), (("a", 0), [("a", 0, 5)])],
)
def test_is_correct_rejects_bad_spans(quote: object, answers: object) -> None:
    """oracle: the validation contract (ValueError)."""
    with pytest.raises(ValueError):
        is_correct(quote, answers)  # type: ignore[arg-type]
