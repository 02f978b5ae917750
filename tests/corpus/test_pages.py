"""Reading pages: front matter, defaults, sections, and every kind of bad input."""

from __future__ import annotations

from datetime import date
from itertools import pairwise
from pathlib import Path

import pytest

from raglab.corpus.pages import find_sections, load_corpus, parse_page
from raglab.errors import InputError
from raglab.text.tokens import whitespace_blocks

PAGE = """---
id: returns-policy
title: Returns policy
updated: 2025-02-01
status: current
supersedes: returns-policy-2023
---
# Returns policy

Intro sentence.

## Time limits

Forty-five days.

### Opened goods

Five percent.

## Where to send

Kendal.
"""


def test_front_matter_fields_are_read() -> None:
    page = parse_page(PAGE, stem="ignored")
    assert page.id == "returns-policy"
    assert page.title == "Returns policy"
    assert page.updated == date(2025, 2, 1)
    assert page.status == "current"
    assert page.supersedes == "returns-policy-2023"
    assert page.text.startswith("# Returns policy\n")
    assert page.first_line == 8


def test_sections_are_spans_with_heading_paths() -> None:
    page = parse_page(PAGE, stem="x")
    heads = [(s.heading, s.level, s.path) for s in page.sections]
    assert heads == [
        ("Returns policy", 1, ("Returns policy",)),
        ("Time limits", 2, ("Returns policy", "Time limits")),
        ("Opened goods", 3, ("Returns policy", "Time limits", "Opened goods")),
        ("Where to send", 2, ("Returns policy", "Where to send")),
    ]
    # Sections tile the text: each ends where the next starts, the last at the end.
    spans = [(s.start, s.end) for s in page.sections]
    assert spans[0][0] == 0 and spans[-1][1] == len(page.text)
    assert all(a[1] == b[0] for a, b in pairwise(spans))
    assert page.text[spans[2][0] : spans[2][1]].startswith("### Opened goods")


def test_defaults_without_front_matter() -> None:
    page = parse_page("Just words here.\nMore words.", stem="tripod-care")
    assert (page.id, page.title, page.updated, page.status, page.supersedes) == (
        "tripod-care",
        "Tripod care",
        None,
        "current",
        None,
    )
    assert len(page.sections) == 1 and page.sections[0].level == 0
    assert page.n_words == 5


def test_title_defaults_to_first_heading() -> None:
    assert parse_page("# Cold weather\n\ntext", stem="cw").title == "Cold weather"


def test_headings_inside_code_fences_are_not_sections() -> None:
    sections = find_sections("# A\n```\n# not a heading\n```\n## B\n", title="t")
    assert [s.heading for s in sections] == ["A", "B"]


@pytest.mark.parametrize(
    ("front", "field", "line"),
    [
        ("updated: 2025-13-01", "updated", 2),
        ("status: draft", "status", 2),
        ("colour: blue", "colour", 2),
    ],
)
def test_bad_front_matter_names_line_and_field(front: str, field: str, line: int) -> None:
    with pytest.raises(InputError) as info:
        parse_page(f"---\n{front}\n---\ntext", stem="p", source="p.md")
    (problem,) = info.value.problems
    assert (problem.file, problem.line, problem.field) == ("p.md", line, field)


def test_unclosed_front_matter() -> None:
    with pytest.raises(InputError, match="never closed"):
        parse_page("---\nid: x\ntext", stem="p")


def test_load_corpus_reports_every_problem_at_once(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("---\nid: same\n---\n# A\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("---\nid: same\n---\n# B\n", encoding="utf-8")
    (tmp_path / "c.md").write_bytes(b"caf\xe9 au lait\n")
    (tmp_path / "d.md").write_text("---\nsupersedes: ghost\n---\n# D\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_corpus(tmp_path)
    messages = [str(p) for p in info.value.problems]
    assert len(messages) == 3
    assert any("b.md" in m and "duplicate page id" in m for m in messages)
    assert any("c.md:1" in m and "not UTF-8" in m for m in messages)
    assert any("d.md" in m and "ghost" in m for m in messages)


def test_empty_and_missing_corpus(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no \*\.md or \*\.txt pages"):
        load_corpus(tmp_path)
    with pytest.raises(InputError, match="does not exist"):
        load_corpus(tmp_path / "nowhere")


def test_txt_pages_and_nested_folders(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "notes.txt").write_text("Plain text page.", encoding="utf-8")
    (tmp_path / "z.md").write_text("# Zed\n\nBody.", encoding="utf-8")
    (tmp_path / "ignored.json").write_text("{}", encoding="utf-8")
    corpus = load_corpus(tmp_path)
    assert [p.id for p in corpus] == ["notes", "z"]
    assert corpus.page("z").title == "Zed"
    # "#", "Zed", "Body." and "Plain", "text", "page.": heading markers are words too.
    assert corpus.n_words == 6


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
def test_whitespace_blocks_rejoin_and_never_split_a_word_or_a_run(size: int) -> None:
    """Oracle: joined, the blocks are the text; each block's words are the text's words in
    order (str.split on the whole text), and no block starts inside a run of whitespace."""
    text = "  alpha beta\n\n gamma\tdelta  epsilon zeta \r\n eta  "
    blocks = list(whitespace_blocks(text, size))
    assert "".join(blocks) == text
    assert [w for b in blocks for w in b.split()] == text.split()
    for before, block in pairwise(blocks):
        assert not before[-1].isspace() and block[0].isspace()


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
@pytest.mark.parametrize(("start", "stop"), [(0, None), (2, 30), (9, 13), (14, 14), (5, 52)])
def test_whitespace_blocks_of_a_range_are_the_blocks_of_its_slice(
    size: int, start: int, stop: int | None
) -> None:
    """Oracle: the slice itself. Joined, the blocks of text[start:stop] are that slice, and they
    are cut where the slice's own blocks are cut (no piece reaches past ``stop``)."""
    text = "  alpha beta\n\n gamma\tdelta  epsilon zeta \r\n eta  "
    piece = text[start:stop]
    blocks = list(whitespace_blocks(text, size, start=start, stop=stop))
    assert "".join(blocks) == piece
    assert blocks == list(whitespace_blocks(piece, size))


def test_front_matter_of_a_page_longer_than_the_head_it_reads() -> None:
    body = "# Big\n\n" + "word " * 40_000 + "\n"
    page = parse_page("---\nid: big\ntitle: Big one\n---\n" + body, stem="x")
    assert (page.id, page.title, page.text, page.first_line) == ("big", "Big one", body, 5)
    long_front = "---\nid: big\n" + "# note\n" * 20_000 + "---\n"
    page = parse_page(long_front + body, stem="x")
    assert page.id == "big" and page.text == body
