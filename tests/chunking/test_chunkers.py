"""Tests for raglab.chunking.chunkers: fixed windows, sentence packing, sections, and their closed forms."""

from __future__ import annotations

import math
from datetime import date
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raglab.chunking.chunk import Chunk, ChunkIndex, containing_chunks
from raglab.chunking.chunkers import (
    METHODS,
    chunk_fixed,
    chunk_headings,
    chunk_pages,
    chunk_sentences,
    fixed_window_spans,
)
from raglab.chunking.closed_forms import cut_probabilities, cut_probability, expected_chunk_count
from raglab.corpus.pages import Page, parse_page
from raglab.settings import CHUNK_SIZES, FIXED_OVERLAP, chunk_overlap, chunk_size
from raglab.text.tokens import sentence_spans, word_offsets, word_spans

# --- fixtures -------------------------------------------------------------------------------

HANDBOOK_PAGE = """---
id: error-codes
title: Error Codes
updated: 2025-09-22
status: current
---
# Error Codes

The EQ5 reports faults as codes. Read the full code back to the customer.

## Motor faults

### E-4107

E-4107 means a stall on the RA axis. Check the balance.

### E-4012

E-4012 means the Dec encoder stopped. Check that the mount is dry.

## Link faults

E-4021 means the cable failed. Try a spare cable. Check the sockets for bent pins.

Then log the ticket for the repair centre. Quote the code and the firmware version v3.2.1.

## Notes
"""

RETURNS_PAGE = """---
id: returns-policy-2021
title: Returns Policy (2021)
updated: 2021-01-15
status: superseded
---
# Returns Policy (2021)

Goods may be returned within 14 days. A restocking fee of 15% applies.
"""


def words_page(n_words: int, page_id: str = "words") -> Page:
    """A page of ``n_words`` distinct words (w0, w1, …) with uneven whitespace between them."""
    gaps = (" ", "  ", "\n", " \t ")
    text = "".join(f"w{i}{gaps[i % len(gaps)]}" for i in range(n_words))
    return parse_page(text, stem=page_id)


def word_index(page: Page) -> dict[int, int]:
    """Word number of each word-start offset."""
    return {s: i for i, (s, _) in enumerate(word_spans(page.text))}


def check_chunks_index_pages(chunks: list[Chunk], pages: list[Page]) -> None:
    """Shared invariants: text is the page's span, order and numbering are consistent."""
    by_id = {p.id: p for p in pages}
    seen_pages: list[str] = []
    for i, c in enumerate(chunks):
        page = by_id[c.page_id]
        assert c.index == i
        assert 0 <= c.start < c.end <= len(page.text)
        assert c.text == page.text[c.start : c.end]
        assert c.id == f"{c.page_id}#{c.position}"
        assert c.n_words == len(c.text.split())
        assert (c.title, c.updated, c.status) == (page.title, page.updated, page.status)
        if not seen_pages or seen_pages[-1] != c.page_id:
            assert c.page_id not in seen_pages, "a page's chunks must be consecutive"
            seen_pages.append(c.page_id)
            assert c.position == 0
        else:
            previous = chunks[i - 1]
            assert c.position == previous.position + 1
            assert c.start > previous.start
    assert seen_pages == [p.id for p in pages if p.text.split()]


# --- closed forms ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "s", "o", "expected"),
    [
        (0, 10, 0, 0),  # empty page
        (10, 10, 0, 1),  # N = s: one chunk
        (5, 10, 3, 1),  # N <= s: one chunk, even though (N - o)/(s - o) < 1
        (11, 10, 0, 2),  # ceil(11/10) = 2
        (450, 200, 50, 3),  # ceil(400/150) = ceil(2.67) = 3
        (350, 200, 50, 2),  # ceil(300/150) = 2 exactly: the second chunk ends at word 350
        (11, 10, 9, 2),  # ceil(2/1) = 2
        (1000, 200, 0, 5),
    ],
)
def test_expected_chunk_count_hand_values(n: int, s: int, o: int, expected: int) -> None:
    """oracle: ⌈(N−o)/(s−o)⌉ worked by hand (comments), one when N ≤ s, none when N = 0."""
    assert expected_chunk_count(n, size=s, overlap=o) == expected
    assert len(chunk_fixed([words_page(n)], size=s, overlap=o)) == expected


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(min_value=0, max_value=300),
    s=st.integers(min_value=1, max_value=40),
    data=st.data(),
)
def test_fixed_chunks_match_closed_form_and_tile_the_page(
    n: int, s: int, data: st.DataObject
) -> None:
    """oracle: the closed form ⌈(N−o)/(s−o)⌉ in exact rational arithmetic; the windows are read
    back as word numbers: start k(s−o), s words each (fewer in the last), o shared with the next."""
    o = data.draw(st.integers(min_value=0, max_value=s - 1))
    page = words_page(n)
    chunks = chunk_fixed([page], size=s, overlap=o)
    closed = 0 if n == 0 else 1 if n <= s else math.ceil(Fraction(n - o, s - o))
    assert len(chunks) == closed == expected_chunk_count(n, size=s, overlap=o)
    check_chunks_index_pages(chunks, [page])
    at = word_index(page)
    spans = word_spans(page.text)
    covered: set[int] = set()
    for k, c in enumerate(chunks):
        first = at[c.start]
        assert first == k * (s - o)
        assert c.end == spans[first + c.n_words - 1][1]  # ends at its last word's end
        assert c.n_words == min(s, n - first)
        covered.update(range(first, first + c.n_words))
        if k + 1 < len(chunks):
            assert c.n_words == s
            nxt = chunks[k + 1]
            shared = page.text[nxt.start : c.end].split() if o else []
            assert len(shared) == o
            assert o or nxt.start > c.end
    assert covered == set(range(n))
    if chunks:
        assert chunks[-1].end == spans[-1][1]  # the last chunk reaches the page end
        assert len(chunks) == 1 or spans[-1][1] > chunks[-2].end  # and only the last one does


@settings(max_examples=100, deadline=None)
@given(
    n=st.integers(min_value=0, max_value=300),
    s=st.integers(min_value=1, max_value=40),
    data=st.data(),
)
def test_fixed_window_spans_are_the_fixed_chunks_spans(n: int, s: int, data: st.DataObject) -> None:
    """oracle: chunk_fixed itself; the windows a sweep takes without building chunks are the
    chunks' own spans, in order."""
    o = data.draw(st.integers(min_value=0, max_value=s - 1))
    page = words_page(n)
    starts, ends = fixed_window_spans(word_offsets(page.text), size=s, overlap=o)
    chunks = chunk_fixed([page], size=s, overlap=o)
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == [
        (c.start, c.end) for c in chunks
    ]
    assert word_offsets(page.text).tolist() == [list(span) for span in word_spans(page.text)]
    with pytest.raises(ValueError, match="overlap must be smaller"):
        fixed_window_spans(word_offsets(page.text), size=s, overlap=s)


def test_cut_probabilities_are_each_lengths_cut_probability() -> None:
    """oracle: cut_probability, one length at a time, equal as floats (not approximately)."""
    lengths = [1, 2, 20, 60, 199, 200, 201, 400]
    for size, overlap in ((200, 0), (200, 50), (120, 119), (20, 0)):
        assert cut_probabilities(lengths, size=size, overlap=overlap) == [
            cut_probability(n, size=size, overlap=overlap) for n in lengths
        ]
    with pytest.raises(ValueError, match="length"):
        cut_probabilities([3, 0], size=5, overlap=0)


def test_cut_probability_hand_values() -> None:
    """oracle: (L−1−o)/(s−o) worked by hand: 19/200, 9/150, and the 0 and 1 edges."""
    assert cut_probability(20, size=200, overlap=0) == pytest.approx(19 / 200)
    assert cut_probability(60, size=200, overlap=50) == pytest.approx(9 / 150)
    assert cut_probability(20, size=200, overlap=19) == 0.0  # o = L − 1: overlap saves every span
    assert cut_probability(1, size=200, overlap=0) == 0.0  # one word is never cut
    assert cut_probability(201, size=200, overlap=0) == 1.0  # longer than a chunk
    assert cut_probability(200, size=200, overlap=0) == pytest.approx(199 / 200)


@pytest.mark.parametrize(("s", "o"), [(12, 0), (12, 5), (9, 8), (7, 3)])
def test_cut_probability_is_exact_over_one_stride(s: int, o: int) -> None:
    """oracle: exhaustive enumeration: every offset of the span within one stride of the grid,
    away from the page end, is tried; the cut share equals the closed form exactly."""
    page = words_page(10 * s)
    index = ChunkIndex(chunk_fixed([page], size=s, overlap=o))
    spans = word_spans(page.text)
    d = s - o
    for length in range(1, s + 2):
        cut = 0
        for a in range(2 * d, 3 * d):  # one full stride, far from both page ends
            start, end = spans[a][0], spans[a + length - 1][1]
            cut += not index.containing(page.id, start, end)
        assert float(Fraction(cut, d)) == pytest.approx(cut_probability(length, size=s, overlap=o))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    ("s", "o", "length"),
    [(40, 0, 8), (40, 10, 25), (30, 5, 30), (30, 12, 10), (30, 0, 31), (50, 20, 45)],
)
def test_measured_cut_rate_matches_closed_form(seed: int, s: int, o: int, length: int) -> None:
    """oracle: the closed form (L−1−o)/(s−o); random spans of L words placed away from the page
    end are cut at that rate within a 4-sigma binomial tolerance (seeded generator)."""
    n_words, trials = 2000, 3000
    page = words_page(n_words)
    index = ChunkIndex(chunk_fixed([page], size=s, overlap=o))
    spans = word_spans(page.text)
    d = s - o
    # Starts cover whole strides and end well before the last, shorter chunk.
    span_starts = np.random.default_rng(seed).integers(0, d * ((n_words - 2 * s) // d), trials)
    cut = sum(
        not index.containing(page.id, spans[a][0], spans[a + length - 1][1])
        for a in span_starts.tolist()
    )
    p = cut_probability(length, size=s, overlap=o)
    assert abs(cut / trials - p) <= 4 * math.sqrt(p * (1 - p) / trials)


def test_closed_forms_reject_bad_arguments() -> None:
    """oracle: the documented domain 0 ≤ o < s, N ≥ 0, L ≥ 1."""
    with pytest.raises(ValueError, match="overlap must be smaller"):
        expected_chunk_count(10, size=5, overlap=5)
    with pytest.raises(ValueError, match="n_words"):
        expected_chunk_count(-1, size=5, overlap=0)
    with pytest.raises(ValueError, match="length"):
        cut_probability(0, size=5, overlap=0)
    with pytest.raises(ValueError, match="integer"):
        cut_probability(3, size=True, overlap=0)


# --- sentence packing -----------------------------------------------------------------------


def test_sentence_packing_is_paragraph_aware() -> None:
    """oracle: hand packing at size 10: paragraph one has 5 words, paragraph two 3 + 3. Plain
    greedy packing would give [5 + 3] and [3]; the paragraph (6 words) fits in an empty chunk, so
    it starts a new one: [5] and [3 + 3]."""
    page = parse_page("One two three four five.\n\nSix seven eight. Nine ten eleven.\n", stem="p")
    chunks = chunk_sentences([page], size=10)
    assert [c.text for c in chunks] == [
        "One two three four five.",
        "Six seven eight. Nine ten eleven.",
    ]


def test_sentence_packing_fills_and_long_sentences_stand_alone() -> None:
    """oracle: hand packing at size 5 of sentences of 2, 2, 8, 1 and 3 words (one paragraph):
    [2 + 2], [8] alone (longer than the size), [1 + 3]."""
    text = "A b. C d. E f g h i j k l. M. N o p."
    chunks = chunk_sentences([parse_page(text, stem="p")], size=5)
    assert [c.text for c in chunks] == ["A b. C d.", "E f g h i j k l.", "M. N o p."]
    assert [c.n_words for c in chunks] == [4, 8, 4]


def test_paragraph_too_long_for_any_chunk_is_packed_greedily() -> None:
    """oracle: hand packing at size 4 of paragraphs of 2, 2 + 2 + 2 and 1 words: the middle
    paragraph fits no chunk, so its sentences join the open chunk greedily, [2 + 2] and [2 + 2];
    the last paragraph (1 word) would fit but [2 + 2 + 1] would not, so it moves on: [1]."""
    text = "A b.\n\nC d. E f. G h.\n\nI."
    chunks = chunk_sentences([parse_page(text, stem="p")], size=4)
    assert [c.text for c in chunks] == ["A b.\n\nC d.", "E f. G h.", "I."]


def test_heading_travels_with_its_paragraph() -> None:
    """oracle: hand packing at size 8: 'Intro one two three four.' (5 words) leaves room for the
    two-word heading 'Next part', but its paragraph (4 words) would not fit, so both move on."""
    text = "Intro one two three four.\n\n## Next part\n\nBody one two three.\n"
    page = parse_page(text, stem="p")
    chunks = chunk_sentences([page], size=8)
    assert [c.text for c in chunks] == [
        "Intro one two three four.",
        "Next part\n\nBody one two three.",
    ]
    assert chunks[1].heading_path == ("Next part",)  # no level-1 heading above it


def test_list_markers_count_toward_the_size() -> None:
    """oracle: hand count at size 6: 'Check clutch.\n- Check balance.' holds 5 words (the
    second item's marker counts); the third item would bring it to 5 + 3 = 8 > 6."""
    text = "- Check clutch.\n- Check balance.\n- Check supply.\n"
    chunks = chunk_sentences([parse_page(text, stem="p")], size=6)
    assert [c.text for c in chunks] == ["Check clutch.\n- Check balance.", "Check supply."]
    assert all(c.n_words <= 6 for c in chunks)


# --- sections -------------------------------------------------------------------------------


def test_heading_chunks_follow_sections() -> None:
    """oracle: the fixture's sections read by hand: the intro, 'Motor faults' (heading only)
    merged into 'E-4107', 'E-4012', 'Link faults', and the trailing heading-only 'Notes'."""
    page = parse_page(HANDBOOK_PAGE, stem="x")
    chunks = chunk_headings([page], max_words=CHUNK_SIZES["heading"])
    check_chunks_index_pages(chunks, [page])
    heads = [c.text.splitlines()[0] for c in chunks]
    assert heads == ["# Error Codes", "## Motor faults", "### E-4012", "## Link faults", "## Notes"]
    assert chunks[1].text.startswith("## Motor faults\n\n### E-4107\n\nE-4107 means")
    assert chunks[1].text.endswith("Check the balance.")
    assert [c.heading_path for c in chunks] == [
        ("Error Codes",),
        ("Error Codes", "Motor faults"),
        ("Error Codes", "Motor faults", "E-4012"),
        ("Error Codes", "Link faults"),
        ("Error Codes", "Notes"),
    ]
    # Each chunk is its section's span (read from corpus.find_sections), trimmed; the
    # heading-only 'Motor faults' (section 1) runs on to the end of 'E-4107' (section 2).
    sec = page.sections
    text = page.text
    assert [c.text for c in chunks] == [
        text[sec[0].start : sec[0].end].strip(),
        text[sec[1].start : sec[2].end].strip(),
        text[sec[3].start : sec[3].end].strip(),
        text[sec[4].start : sec[4].end].strip(),
        text[sec[5].start : sec[5].end].strip(),
    ]


def test_long_sections_split_at_sentences() -> None:
    """oracle: hand packing of 'Link faults' at a cap of 18 words: heading line 3 words ('##',
    'Link', 'faults'), first paragraph 5 + 4 + 6 = 15, second 8 + 8 = 16; the section (34) is too
    long, the heading goes with the first paragraph (3 + 15 = 18) and the second follows (16)."""
    page = parse_page(HANDBOOK_PAGE, stem="x")
    link = [c for c in chunk_headings([page], max_words=18) if "Link faults" in c.heading_path]
    assert [c.text for c in link] == [
        "## Link faults\n\nE-4021 means the cable failed. Try a spare cable. Check the sockets "
        "for bent pins.",
        "Then log the ticket for the repair centre. Quote the code and the firmware version v3.2.1.",
    ]
    assert [c.n_words for c in link] == [18, 16]


def test_heading_chunker_on_a_page_without_headings() -> None:
    """oracle: a plain-text page is one section (level 0), so one chunk: the whole trimmed text."""
    page = parse_page("\n  Plain text page. Two sentences.  \n", stem="plain")
    chunks = chunk_headings([page], max_words=CHUNK_SIZES["heading"])
    assert [c.text for c in chunks] == ["Plain text page. Two sentences."]
    assert chunks[0].heading_path == ("Plain",)


# --- every chunker --------------------------------------------------------------------------

SENTENCE_PART = st.lists(
    st.sampled_from(["mount", "E-4107", "v3.2.1", "1.5 kg", "e.g. the", "RA", "clutch"]),
    min_size=1,
    max_size=12,
).map(lambda ws: " ".join(ws).capitalize() + ".")
PARAGRAPH = st.lists(SENTENCE_PART, min_size=1, max_size=5).map(" ".join)
BLOCK = st.one_of(
    PARAGRAPH,
    st.sampled_from(["# Title", "## Section", "### Detail"]),
    st.lists(SENTENCE_PART, min_size=1, max_size=3).map(lambda xs: "\n".join(f"- {x}" for x in xs)),
)
MARKDOWN_PAGE = st.lists(BLOCK, max_size=10).map("\n\n".join)


@settings(max_examples=120, deadline=None)
@given(
    text=MARKDOWN_PAGE, size=st.integers(min_value=1, max_value=40), method=st.sampled_from(METHODS)
)
def test_chunkers_keep_sentences_whole(text: str, size: int, method: str) -> None:
    """oracle: the definition: every sentence (text.sentence_spans) lies wholly inside a chunk of
    the sentence and heading chunkers, so a one-sentence answer always survives them; every
    chunker's chunk is its page's span; packed chunks stay within the size unless one sentence
    is longer."""
    page = parse_page(text, stem="gen")
    chunks = chunk_pages([page], method=method, size=size, overlap=chunk_overlap(method, None))
    check_chunks_index_pages(chunks, [page])
    if method == "fixed":
        return
    index = ChunkIndex(chunks)
    for s, e in sentence_spans(page.text):
        assert index.containing(page.id, s, e), page.text[s:e]
    if method == "sentence":
        for c in chunks:
            assert c.n_words <= size or len(sentence_spans(c.text)) == 1


@pytest.mark.parametrize("method", METHODS)
def test_chunkers_never_cross_pages(method: str) -> None:
    """oracle: the definition: each chunk is a span of one page, pages keep their order, and the
    page's metadata (title, date, status) is copied; empty pages give no chunks."""
    pages = [
        parse_page(HANDBOOK_PAGE, stem="x"),
        parse_page("", stem="empty"),
        parse_page(RETURNS_PAGE, stem="y"),
        words_page(450, "words"),
    ]
    chunks = chunk_pages(pages, method=method, size=20, overlap=chunk_overlap(method, None))
    check_chunks_index_pages(chunks, pages)
    old = [c for c in chunks if c.page_id == "returns-policy-2021"]
    assert old and all(c.status == "superseded" and c.updated == date(2021, 1, 15) for c in old)
    assert all(c.title == "Returns Policy (2021)" for c in old)


def test_chunk_pages_defaults_come_from_config() -> None:
    """oracle: the named chunkers called with the sizes raglab.settings gives a None size."""
    pages = [parse_page(HANDBOOK_PAGE, stem="x"), words_page(700)]
    assert chunk_pages(
        pages, method="fixed", size=chunk_size("fixed", None), overlap=chunk_overlap("fixed", None)
    ) == chunk_fixed(pages, size=CHUNK_SIZES["fixed"], overlap=FIXED_OVERLAP)
    assert chunk_pages(
        pages,
        method="sentence",
        size=chunk_size("sentence", None),
        overlap=chunk_overlap("sentence", None),
    ) == chunk_sentences(pages, size=CHUNK_SIZES["sentence"])
    assert chunk_pages(
        pages,
        method="heading",
        size=chunk_size("heading", None),
        overlap=chunk_overlap("heading", None),
    ) == chunk_headings(pages, max_words=CHUNK_SIZES["heading"])
    assert chunk_pages(pages, method="fixed", size=50, overlap=10) == chunk_fixed(
        pages, size=50, overlap=10
    )


def test_chunk_pages_rejects_bad_arguments() -> None:
    """oracle: the documented validation."""
    pages = [words_page(10)]
    with pytest.raises(ValueError, match="unknown chunking method"):
        chunk_pages(
            pages,
            method="semantic",
            size=100,
            overlap=None,
        )
    with pytest.raises(ValueError, match="overlap applies only"):
        chunk_pages(pages, method="sentence", overlap=5, size=chunk_size("sentence", None))
    with pytest.raises(ValueError, match="overlap must be smaller"):
        chunk_pages(pages, method="fixed", size=10, overlap=10)
    with pytest.raises(ValueError, match="max_words must be at least 1"):
        chunk_pages(pages, method="heading", size=0, overlap=chunk_overlap("heading", None))
    with pytest.raises(ValueError, match="overlap must be at least 0"):
        chunk_fixed(pages, size=10, overlap=-1)


# --- containing chunks ----------------------------------------------------------------------


def test_containing_chunks_hand_worked() -> None:
    """oracle: hand-worked windows of 4 words with overlap 2 over 8 words: chunks cover words
    0-3, 2-5, 4-7, so words 2-3 lie in chunks 0 and 1, words 3-4 only in chunk 1, and words 1-4
    in none."""
    page = words_page(8, "p")
    other = words_page(8, "q")
    chunks = chunk_fixed([page, other], size=4, overlap=2)
    spans = word_spans(page.text)

    def span(first: int, last: int) -> tuple[int, int]:
        return spans[first][0], spans[last][1]

    assert len(chunks) == 6
    assert containing_chunks(chunks, "p", *span(2, 3)) == [0, 1]
    assert containing_chunks(chunks, "p", *span(3, 4)) == [1]
    assert containing_chunks(chunks, "p", *span(1, 4)) == []
    assert containing_chunks(chunks, "q", *span(2, 3)) == [3, 4]
    assert containing_chunks(chunks, "missing", *span(2, 3)) == []
    with pytest.raises(ValueError, match="start <= end"):
        containing_chunks(chunks, "p", 5, 4)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=80),
    s=st.integers(min_value=1, max_value=12),
    data=st.data(),
)
def test_chunk_index_agrees_with_brute_force(n: int, s: int, data: st.DataObject) -> None:
    """oracle: brute force over every chunk: start ≤ a and b ≤ end on the same page."""
    o = data.draw(st.integers(min_value=0, max_value=s - 1))
    pages = [words_page(n, "a"), words_page(n + 3, "b")]
    chunks = chunk_fixed(pages, size=s, overlap=o)
    index = ChunkIndex(chunks)
    assert list(index) == chunks and len(index) == len(chunks) and index[0] == chunks[0]
    page = data.draw(st.sampled_from(pages))
    a = data.draw(st.integers(min_value=0, max_value=len(page.text)))
    b = data.draw(st.integers(min_value=a, max_value=len(page.text)))
    brute = [
        i for i, c in enumerate(chunks) if c.page_id == page.id and c.start <= a and b <= c.end
    ]
    assert index.containing(page.id, a, b) == brute == containing_chunks(chunks, page.id, a, b)
