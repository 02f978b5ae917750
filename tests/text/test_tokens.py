"""Tests for raglab.text.tokens: retrieval tokens, identifiers, words and sentences."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raglab.text.tokens import STOP_WORDS, identifiers, sentence_spans, tokenize, word_spans

# Text drawn from the characters that matter to the splitters: letters of both cases, digits,
# terminators, joiners, quotes, brackets, Markdown marks and every kind of whitespace.
TRICKY_TEXT = st.text(alphabet="aAbZe.!?-,'\"()#*+1234567890 \t\n\r\u00a0xyQ:;`~_", max_size=200)
ASCII_TEXT = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=126) | st.sampled_from("\n\t"),
    max_size=200,
)


def sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in sentence_spans(text)]


# --- tokenize -------------------------------------------------------------------------------


def test_identifiers_stay_one_token_each() -> None:
    """oracle: hand tokenisation; hyphen/dot-joined runs with a digit stay whole, lower-cased."""
    text = "E-4107 on the OT-220B after v3.2.1; PS-1210, RMA-12345 and LA9 6ND."
    assert tokenize(text, stem=False, analyzer="raglab") == [
        "e-4107", "ot-220b", "v3.2.1", "ps-1210", "rma-12345", "la9", "6nd",
    ]  # fmt: skip


def test_hyphenated_words_split_and_punctuation_drops() -> None:
    """oracle: hand tokenisation; 'to' is a stop word, the rest are words of the runs."""
    assert tokenize("Tripod-head (return-to-base)!", stem=False, analyzer="raglab") == [
        "tripod",
        "head",
        "return",
        "base",
    ]
    assert tokenize("Setup > Site: GoTo?", stem=False, analyzer="raglab") == [
        "setup",
        "site",
        "goto",
    ]


def test_numbers_stay_and_thousands_separators_go() -> None:
    """oracle: hand tokenisation; '1,500' and '1500' are one token, decimals stay whole."""
    assert tokenize("45 days, 1,500 m, 1.5 kg and 42,000", stem=False, analyzer="raglab") == [
        "45", "days", "1500", "m", "1.5", "kg", "42000",
    ]  # fmt: skip
    assert tokenize("1,500", stem=False, analyzer="raglab") == tokenize(
        "1500", stem=False, analyzer="raglab"
    )
    # A comma with fewer than three digits after it is punctuation, not a separator.
    assert tokenize("1,2,3", stem=False, analyzer="raglab") == ["1", "2", "3"]


def test_apostrophes() -> None:
    """oracle: hand rules: n't is 'not', other suffixes drop, possessives index as the base."""
    assert tokenize("The mount won't slew", stem=False, analyzer="raglab") == tokenize(
        "the mount will not slew", stem=False, analyzer="raglab"
    )
    assert tokenize("The mount won't slew", stem=False, analyzer="raglab") == [
        "mount",
        "not",
        "slew",
    ]
    assert tokenize("can't isn't cannot", stem=False, analyzer="raglab") == ["not", "not", "not"]
    assert tokenize("the PS-1210's fuse, the customer’s order", stem=False, analyzer="raglab") == [
        "ps-1210", "fuse", "customer", "order",
    ]  # fmt: skip


def test_dotted_abbreviations_are_one_word() -> None:
    """oracle: hand tokenisation; 'e.g.' is the stop word 'eg', not the letters e and g."""
    assert tokenize("a mount, e.g. the EQ5", stem=False, analyzer="raglab") == ["mount", "eq5"]


def test_stop_words_are_dropped() -> None:
    """oracle: the list itself; every listed word vanishes and content words survive."""
    assert tokenize(" ".join(sorted(STOP_WORDS)), stem=False, analyzer="raglab") == []
    assert tokenize("What is the restocking fee for an opened item?", stem=False, analyzer="raglab") == [
        "restocking", "fee", "opened", "item",
    ]  # fmt: skip


def test_stop_word_list_shape() -> None:
    """oracle: the documented choice: about 150 lower-case function words, negations kept out."""
    assert 140 <= len(STOP_WORDS) <= 170
    assert all(re.fullmatch(r"[a-z]+", w) for w in STOP_WORDS)
    assert {"the", "a", "and", "of", "to", "is", "what", "how"} <= STOP_WORDS
    assert not {"no", "not", "nor", "never", "none"} & STOP_WORDS
    assert tokenize("not no never", stem=False, analyzer="raglab") == ["not", "no", "never"]
    # Content words a support question needs are not stop words.
    for word in ("mount", "return", "fee", "days", "error", "code", "still", "stall"):
        assert word not in STOP_WORDS


def test_stemming_is_optional_and_only_for_words() -> None:
    """oracle: the Snowball English stemmer's published rules (locks, locked -> lock;
    calibration, calibrate -> calibr); identifiers and numbers are never stemmed."""
    assert tokenize("locks", stem=False, analyzer="raglab") != tokenize(
        "lock", stem=False, analyzer="raglab"
    )
    assert (
        tokenize("locks", stem=True, analyzer="raglab")
        == tokenize("lock", stem=True, analyzer="raglab")
        == ["lock"]
    )
    assert tokenize("Locked", stem=True, analyzer="raglab") == ["lock"]
    assert (
        tokenize("calibration", stem=True, analyzer="raglab")
        == tokenize("calibrate", stem=True, analyzer="raglab")
        == ["calibr"]
    )
    kept = "returns-policy-2023 v3.2.1 E-4107s 1,500 2.5"
    assert tokenize(kept, stem=True, analyzer="raglab") == tokenize(kept, stem=False, analyzer="raglab") == [
        "returns-policy-2023", "v3.2.1", "e-4107s", "1500", "2.5",
    ]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(ASCII_TEXT)
def test_tokens_properties(text: str) -> None:
    """oracle: the definition: tokens are lower-case, non-empty, no whitespace or stop words;
    case does not matter; stemming keeps the count and order of tokens and leaves identifiers."""
    tokens = tokenize(text, stem=False, analyzer="raglab")
    assert all(t and t == t.lower() and not any(c.isspace() for c in t) for t in tokens)
    assert not set(tokens) & STOP_WORDS
    assert tokenize(text.upper(), stem=False, analyzer="raglab") == tokens
    stemmed = tokenize(text, stem=True, analyzer="raglab")
    assert len(stemmed) == len(tokens)
    for plain, stem in zip(tokens, stemmed, strict=True):
        if any(c.isdigit() for c in plain):
            assert stem == plain


# --- identifiers ----------------------------------------------------------------------------


def test_identifiers_hand_set() -> None:
    """oracle: the documented definition, applied by hand to each token."""
    text = (
        "E-4107 and E-4170 on the OT-220B, CW-45 (4.5 kg), firmware v3.2.1 or 3.2.1, "
        "released 2025-09-15; 45 days, 1,500 m, 1.5 kg; model AZ2 at LA9 6NZ."
    )
    assert identifiers(text) == {
        "e-4107", "e-4170", "ot-220b", "cw-45", "v3.2.1", "3.2.1", "2025-09-15", "az2", "la9",
        "6nz",
    }  # fmt: skip
    assert identifiers("45 1,500 1.5 no codes here") == set()


def test_identifiers_are_tokens() -> None:
    """oracle: tokenize; every identifier is one of the text's tokens."""
    text = "Check the PS-1210's fuse after E-4021 on firmware v2.4.0."
    assert identifiers(text) <= set(tokenize(text, stem=False, analyzer="raglab"))
    assert identifiers(text) == {"ps-1210", "e-4021", "v2.4.0"}


# --- words ----------------------------------------------------------------------------------


def test_word_spans_hand() -> None:
    """oracle: hand-counted offsets of 'Ab  c\\nde ' (words at 0-2, 4-5, 6-8)."""
    assert word_spans("Ab  c\nde ") == [(0, 2), (4, 5), (6, 8)]
    assert word_spans("   ") == []


@settings(max_examples=200, deadline=None)
@given(TRICKY_TEXT)
def test_word_spans_agree_with_str_split(text: str) -> None:
    """oracle: str.split, the definition of words in docs/design.md#words."""
    assert [text[s:e] for s, e in word_spans(text)] == text.split()


# --- sentences ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Use a counterweight, e.g. the CW-45. Then balance it, i.e. test it. Done.",
            ["Use a counterweight, e.g. the CW-45.", "Then balance it, i.e. test it.", "Done."],
        ),
        (
            "It weighs approx. 5 kg. Call Dr. Hale or Mr. Lowe at St. Mary vs. The Rest. Next.",
            [
                "It weighs approx. 5 kg.",
                "Call Dr. Hale or Mr. Lowe at St. Mary vs. The Rest.",
                "Next.",
            ],
        ),
        (
            "Update to v3.2.1. Version 3.1.2 has a bug. It weighs 1.5 kg. Fine.",
            ["Update to v3.2.1.", "Version 3.1.2 has a bug.", "It weighs 1.5 kg.", "Fine."],
        ),
        (
            "See No. 5 for details. Is it covered? No. The warranty ends.",
            ["See No. 5 for details.", "Is it covered?", "No.", "The warranty ends."],
        ),
        (
            'Bring cables, plates, etc. The mount ships alone. Stop! "Quoted." (Aside.) 45 left.',
            [
                "Bring cables, plates, etc.",
                "The mount ships alone.",
                "Stop!",
                '"Quoted."',
                "(Aside.)",
                "45 left.",
            ],
        ),
        (
            "Error E-4107. reads lower case after it, and the U.S. Mail is fine.",
            ["Error E-4107. reads lower case after it, and the U.S. Mail is fine."],
        ),
        (
            'He said "stop." Then he left... Really?! Yes.',
            ['He said "stop."', "Then he left...", "Really?!", "Yes."],
        ),
    ],
)
def test_sentence_splitting_in_prose(text: str, expected: list[str]) -> None:
    """oracle: hand-split sentences: abbreviations, decimals, versions, quotes, brackets."""
    assert sentences(text) == expected


def test_sentence_splitting_markdown() -> None:
    """oracle: hand-split: headings stand alone without their marks, list markers are excluded,
    a blank line or a thematic break ends a sentence, a fenced block is one unit."""
    text = (
        "# Mount Error Codes\n"
        "\n"
        "The EQ5 reports faults as codes\n"
        "on the display\n"
        "\n"
        "Check the balance\n"
        "## E-4107 ##\n"
        "Steps to take:\n"
        "- Check the clutch. Then the load\n"
        "  on the RA axis.\n"
        "* Check the supply\n"
        "1. Switch off\n"
        "2) Wait 30 seconds\n"
        "---\n"
        "```\n"
        "# not a heading. Code\n"
        "```\n"
        "Last line"
    )
    assert sentences(text) == [
        "Mount Error Codes",
        "The EQ5 reports faults as codes\non the display",
        "Check the balance",
        "E-4107",
        "Steps to take:",
        "Check the clutch.",
        "Then the load\n  on the RA axis.",
        "Check the supply",
        "Switch off",
        "Wait 30 seconds",
        "```\n# not a heading. Code\n```",
        "Last line",
    ]


def test_sentence_spans_index_the_original_text() -> None:
    """oracle: hand-counted offsets in '  One. Two\\n\\n- Three' (0-based, end exclusive)."""
    text = "  One. Two\n\n- Three"
    assert sentence_spans(text) == [(2, 6), (7, 10), (14, 19)]
    assert sentence_spans("") == sentence_spans(" \n\t ") == []


@settings(max_examples=300, deadline=None)
@given(TRICKY_TEXT)
def test_sentence_span_properties(text: str) -> None:
    """oracle: the definition: spans are sorted, disjoint, within bounds, non-empty, trimmed, and
    begin and end on word boundaries (so word counts of sentences add up)."""
    spans = sentence_spans(text)
    starts = {s for s, _ in word_spans(text)}
    ends = {e for _, e in word_spans(text)}
    previous_end = 0
    for s, e in spans:
        assert previous_end <= s < e <= len(text)
        assert not text[s].isspace() and not text[e - 1].isspace()
        assert s in starts and e in ends
        previous_end = e
    # Every word of a sentence is a word of the text: no sentence merges or splits a word.
    inside = [w for s, e in spans for w in text[s:e].split()]
    assert len(inside) <= len(text.split())


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["Alpha beta", "gamma 1.5 kg", "E-4107", "v3.2.1"]), max_size=8))
def test_sentences_of_joined_prose_are_recovered(parts: list[str]) -> None:
    """oracle: construction: sentences written as 'X.' and joined by one space split back into
    exactly those sentences (each starts with a letter or digit that forces a boundary)."""
    written = [f"{p[0].upper()}{p[1:]}." for p in parts]
    assert sentences(" ".join(written)) == written
