"""Tests for raglab.reading.reader: context packing, the extractive reader and answer correctness."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from raglab.reading.reader import (
    QUOTE_RELATIONS,
    ReaderAnswer,
    cosines,
    document_frequencies,
    idf_weights,
    is_correct,
    pack,
    quote_relation,
    read,
    read_cosine,
)
from raglab.settings import READER_ANALYZER, READER_THRESHOLDS, default
from raglab.text.tokens import tokenize

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
    half = default("budget") // 2
    assert pack([half, half, half], budget=default("budget")) == 2


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


# --------------------------------------------------------------------------------------------
# IDF-weighted coverage
# --------------------------------------------------------------------------------------------

# A collection of N = 4 documents: pump is in 3 of them, pressure, limit and bar in 1 each.
DOCS = [["pump", "pressure", "pump"], ["pump", "bar"], ["pump", "limit"], ["office"]]
# idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5)):
IDF_PUMP = math.log(10 / 7)  # n_t = 3: ln(1 + 1.5 / 3.5) = ln(10/7) ≈ 0.3567
IDF_RARE = math.log(10 / 3)  # n_t = 1: ln(1 + 3.5 / 1.5) = ln(10/3) ≈ 1.2040


def test_document_frequencies_by_hand() -> None:
    """oracle: counted by hand from DOCS; pump twice in the first document counts once there."""
    n, df = document_frequencies(DOCS)
    assert n == 4
    assert df == {"pump": 3, "pressure": 1, "bar": 1, "limit": 1, "office": 1}
    assert document_frequencies([]) == (0, {})


def test_idf_weights_by_hand() -> None:
    """oracle: Lucene's IDF worked by hand (the constants above); a term in no document gets
    ln(1 + 4.5 / 0.5) = ln 10, the largest weight, and finite."""
    n, df = document_frequencies(DOCS)
    w = idf_weights(["pump", "pressure", "pump", "gauge"], df, n)
    assert w == pytest.approx({"pump": IDF_PUMP, "pressure": IDF_RARE, "gauge": math.log(10)})
    with pytest.raises(ValueError, match="document frequency"):
        idf_weights(["pump"], {"pump": 5}, 4)


def test_idf_coverage_by_hand() -> None:
    """oracle: the formula of docs/design.md#reader worked by hand on the fixture. Q = {pump,
    pressure, limit, bar} weighs ln(10/7) + 3 ln(10/3); sentence 1 holds pump, pressure and limit,
    so its weighted coverage is (ln(10/7) + 2 ln(10/3)) / (ln(10/7) + 3 ln(10/3)) = 2.7646 / 3.9686
    ≈ 0.6966."""
    n, df = document_frequencies(DOCS)
    ans = read(QUESTION, SENTENCES, threshold=0.5, weights=idf_weights(QUESTION, df, n))
    total = IDF_PUMP + 3 * IDF_RARE
    expected = [IDF_PUMP / total, (IDF_PUMP + 2 * IDF_RARE) / total, IDF_RARE / total, 0.0]
    np.testing.assert_allclose(ans.coverages, expected, rtol=1e-15)
    assert ans.found and ans.sentence == 1
    assert ans.coverage == pytest.approx(0.6966, abs=1e-4)


def test_idf_weighting_moves_the_quote_to_the_rare_word() -> None:
    """oracle: hand computation. Q = {pump, pressure}: plain coverage ties the two sentences
    {pump} and {pressure} at 1/2 and quotes the first; weighted, {pump} covers
    ln(10/7) / (ln(10/7) + ln(10/3)) ≈ 0.2286 and {pressure} ≈ 0.7714, so the rare word wins."""
    n, df = document_frequencies(DOCS)
    q = {"pump", "pressure"}
    sentences = [{"pump", "hose"}, {"pressure", "hose"}]
    plain = read(q, sentences, threshold=0.5)
    assert plain.sentence == 0 and plain.coverage == 0.5
    weighted = read(q, sentences, threshold=0.5, weights=idf_weights(q, df, n))
    assert weighted.sentence == 1
    assert weighted.coverage == pytest.approx(IDF_RARE / (IDF_PUMP + IDF_RARE), rel=1e-15)
    assert weighted.coverage == pytest.approx(0.7714, abs=1e-4)
    # At a threshold of 0.5 the common word alone would no longer be quoted.
    assert not read(q, [{"pump"}], threshold=0.5, weights=idf_weights(q, df, n)).found


@given(
    q=st.sets(st.sampled_from("abcdefgh"), max_size=6),
    sentences=st.lists(st.sets(st.sampled_from("abcdefghij"), max_size=5), max_size=6),
    weight=st.floats(min_value=0.01, max_value=100.0),
    threshold=st.sampled_from(READER_THRESHOLDS),
)
def test_equal_weights_give_plain_coverage(
    q: set[str], sentences: list[set[str]], weight: float, threshold: float
) -> None:
    """oracle: with every weight equal the weighted formula reduces to |Q ∩ S| / |Q| (the plain
    reader, an independent code path)."""
    plain = read(q, sentences, threshold=threshold)
    weighted = read(q, sentences, threshold=threshold, weights=dict.fromkeys(q, weight))
    np.testing.assert_allclose(weighted.coverages, plain.coverages, rtol=1e-12, atol=1e-15)
    assert weighted.sentence == plain.sentence


@pytest.mark.parametrize("weights", [{"pump": 1.0}, {t: 0.0 for t in QUESTION}])
def test_read_refuses_missing_or_empty_weights(weights: dict[str, float]) -> None:
    """oracle: the validation contract: every question term needs a weight above 0."""
    with pytest.raises(ValueError, match="weight of"):
        read(QUESTION, SENTENCES, threshold=0.5, weights=weights)


# --------------------------------------------------------------------------------------------
# quote_relation
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("quote", "answers", "relation"),
    [
        (("p", 20, 30), [("p", 10, 50)], "inside"),  # 10 <= 20 and 30 <= 50
        (("p", 10, 50), [("p", 10, 50)], "inside"),  # identical: inside comes first
        (("p", 10, 50), [("p", 20, 40)], "contains"),  # a short answer within the quote
        (("p", 5, 25), [("p", 10, 50)], "overlaps"),  # share [10, 25), neither holds the other
        (("p", 50, 60), [("p", 10, 50)], "same page"),  # touching ends share no character
        (("q", 20, 30), [("p", 10, 50)], "other page"),
        (("p", 20, 30), [], "no answer"),
        (None, [("p", 10, 50)], "not found"),
        (("p", 20, 30), [("q", 0, 5), ("p", 0, 10), ("p", 25, 40)], "overlaps"),  # best of three
    ],
)
def test_quote_relation_by_hand(
    quote: tuple[str, int, int] | None, answers: list[tuple[str, int, int]], relation: str
) -> None:
    """oracle: the spans compared by hand (comments)."""
    assert quote_relation(quote, answers) == relation


@given(
    quote=st.none() | st.tuples(st.sampled_from("pq"), st.integers(0, 30), st.integers(0, 30)),
    answers=st.lists(
        st.tuples(st.sampled_from("pq"), st.integers(0, 30), st.integers(0, 30)), max_size=3
    ),
)
def test_a_correct_quote_lies_inside_or_contains_the_answer(
    quote: tuple[str, int, int] | None, answers: list[tuple[str, int, int]]
) -> None:
    """oracle: is_correct, written independently: for an answerable question the quote is
    correct exactly when its relation is inside or contains."""
    quote = None if quote is None else (quote[0], min(quote[1:]), max(quote[1:]))
    answers = [(p, min(a, b), max(a, b)) for p, a, b in answers]
    relation = quote_relation(quote, answers)
    assert relation in QUOTE_RELATIONS
    if answers:
        assert is_correct(quote, answers) == (relation in ("inside", "contains"))


# --------------------------------------------------------------------------------------------
# read_cosine: the neural reader
# --------------------------------------------------------------------------------------------

# all-MiniLM-L6-v2's outputs computed by sentence-transformers (tests/fixtures/minilm-reference,
# its README gives the provenance): an oracle independent of raglab's encoder.
REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "minilm-reference" / "reference.json"


@pytest.fixture(scope="module")
def reference() -> tuple[list[str], np.ndarray, np.ndarray]:
    raw = json.loads(REFERENCE.read_text(encoding="utf-8"))
    pooled = np.asarray(raw["embedding"], dtype=np.float64)
    unit = np.asarray(raw["embedding_normalized"], dtype=np.float64)
    return raw["texts"], pooled, unit


def test_cosines_are_the_dot_products_of_the_reference_unit_vectors(
    reference: tuple[list[str], np.ndarray, np.ndarray],
) -> None:
    """oracle: numpy's dot product of sentence-transformers' own unit vectors. The reader's
    cosine of the pooled (not normalised) vectors equals it: the norms divide out."""
    _, pooled, unit = reference
    q, rows = 27, [25, 10, 26, 21, 2]
    got = cosines(pooled[q], pooled[rows])
    np.testing.assert_allclose(got, unit[rows] @ unit[q], atol=1e-6)
    # float32 unit vectors, as the encoder gives them, read the same.
    f32 = cosines(unit[q].astype(np.float32), unit[rows].astype(np.float32))
    np.testing.assert_allclose(f32, unit[rows] @ unit[q], atol=1e-6)
    assert got.dtype == np.float64 and got.shape == (5,)


def test_read_cosine_quotes_the_paraphrase_that_shares_no_word(
    reference: tuple[list[str], np.ndarray, np.ndarray],
) -> None:
    """oracle: argmax of numpy's dot products of sentence-transformers' unit vectors. "Somebody
    nicked the paperwork proving my level was tested." shares no word with "A lost certificate
    is reissued free of charge as a PDF.", so coverage finds nothing; the cosine quotes it."""
    texts, _, unit = reference
    q, rows = 27, [25, 10, 26, 21]

    def terms(text: str) -> set[str]:  # the reader's own content terms
        return set(tokenize(text, stem=True, analyzer=READER_ANALYZER))

    assert not read(terms(texts[q]), [terms(texts[i]) for i in rows], threshold=0.0).found
    want = unit[rows] @ unit[q]
    ans = read_cosine(unit[q], unit[rows], threshold=0.2)
    assert ans.found and ans.sentence == int(np.argmax(want)) == 2
    assert texts[rows[ans.sentence]].startswith("A lost certificate")
    # The reference is rounded to 8 digits, so its unit vectors' norms are 1 within 1e-7.
    assert ans.coverage == pytest.approx(float(want.max()), abs=1e-6)
    np.testing.assert_allclose(ans.coverages, want, atol=1e-6)
    # The same quote at a threshold just below its cosine, none just above.
    assert read_cosine(unit[q], unit[rows], threshold=round(float(want.max()), 2) - 0.01).found
    assert not read_cosine(unit[q], unit[rows], threshold=float(want.max()) + 0.01).found


def test_read_cosine_by_hand() -> None:
    """oracle: hand computation in the plane. q = (1, 0); sentences (0, 1), (1, 1), (-1, 0), (2, 2):
    cosines 0, 1/√2, -1, 1/√2. The best, 1/√2, is tied: the earliest (index 1) is quoted; a
    threshold of 0.7 quotes it, 0.75 declines (the cosine still reported)."""
    q = np.array([1.0, 0.0])
    s = np.array([[0.0, 1.0], [1.0, 1.0], [-1.0, 0.0], [2.0, 2.0]])
    half = 1 / math.sqrt(2)
    ans = read_cosine(q, s, threshold=0.7)
    assert (ans.found, ans.sentence) == (True, 1)
    assert ans.coverage == pytest.approx(half, abs=1e-15)
    np.testing.assert_allclose(ans.coverages, [0.0, half, -1.0, half], atol=1e-15)
    above = read_cosine(q, s, threshold=0.75)
    assert not above.found and above.sentence is None and above.coverage == pytest.approx(half)
    # Equal to the threshold counts as found, with the same slack as coverage.
    assert read_cosine(np.array([1.0, 0.0]), np.array([[3.0, 4.0]]), threshold=0.6).found


def test_read_cosine_not_found_cases() -> None:
    """oracle: the documented rule. No sentence, a best cosine of 0 or below (nothing points the
    question's way) and a zero vector answer "not found", even at threshold 0."""
    q = np.array([1.0, 0.0])
    empty = read_cosine(q, np.zeros((0, 2)), threshold=0.0)
    assert not empty.found and empty.coverages.shape == (0,)
    away = read_cosine(q, np.array([[0.0, 1.0], [-1.0, -1.0]]), threshold=0.0)
    assert not away.found and away.coverage == 0.0
    zero = read_cosine(np.zeros(2), np.array([[1.0, 0.0]]), threshold=0.0)
    assert not zero.found and zero.coverages.tolist() == [0.0]


@pytest.mark.parametrize(
    ("q", "s", "threshold", "message"),
    [
        (np.ones(2), np.ones((1, 2)), 1.1, "threshold must lie in"),
        (np.ones(2), np.ones((1, 3)), 0.5, "sentence_vectors must have shape"),
        (np.ones((1, 2)), np.ones((1, 2)), 0.5, "question_vector must be 1-d"),
        (np.array([np.nan, 1.0]), np.ones((1, 2)), 0.5, "finite"),
    ],
)
def test_read_cosine_rejects_bad_input(
    q: np.ndarray, s: np.ndarray, threshold: float, message: str
) -> None:
    """oracle: the validation contract (ValueError naming the problem)."""
    with pytest.raises(ValueError, match=message):
        read_cosine(q, s, threshold=threshold)
