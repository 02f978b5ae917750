"""Reading pages: front matter, defaults, sections, and every kind of bad input."""

from __future__ import annotations

import dataclasses
import pickle
from datetime import date
from itertools import pairwise
from pathlib import Path

import pytest

import raglab.corpus.pages as pages_module
from raglab.corpus.pages import (
    Corpus,
    HeldPage,
    Page,
    PageTexts,
    find_sections,
    load_corpus,
    parse_page,
)
from raglab.errors import InputError, Problem
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
        parse_page(f"---\n{front}\n---\ntext", stem="p", source="p.md", strict=True)
    (problem,) = info.value.problems
    assert (problem.file, problem.line, problem.field) == ("p.md", line, field)


def test_unclosed_front_matter() -> None:
    with pytest.raises(InputError, match="never closed"):
        parse_page("---\nid: x\ntext", stem="p")


def test_load_corpus_reports_every_problem_at_once(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("---\nid: same\n---\n# A\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("---\nid: same\n---\n# B\n", encoding="utf-8")
    (tmp_path / "c.md").write_text("---\nupdated: soon\n---\n# C\n", encoding="utf-8")
    (tmp_path / "d.md").write_text("---\nsupersedes: ghost\n---\n# D\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_corpus(tmp_path)
    messages = [str(p) for p in info.value.problems]
    assert len(messages) == 3
    assert any("b.md" in m and "duplicate page id" in m for m in messages)
    assert any("c.md:2" in m and "not an ISO date" in m for m in messages)
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


# Front matter as Jekyll, Hugo, MkDocs and MyST pages carry it: keys RAG lab has no use for, one
# of them a YAML list.
SITE_PAGE = """---
layout: post
title: Cold weather
hide-toc: true
category: 'guides'
tags:
  - winter
  - batteries
SPDX-License-Identifier: CC-BY-4.0
---
# Cold weather

Batteries lose charge below freezing.
"""
UNUSED = "SPDX-License-Identifier, category, hide-toc, layout, tags"


def test_unknown_front_matter_keys_are_kept_as_metadata() -> None:
    page = parse_page(SITE_PAGE, stem="cold", source="cold.md")
    assert page.meta == {
        "layout": "post",
        "hide-toc": "true",
        "category": "guides",
        "tags": "- winter - batteries",
        "SPDX-License-Identifier": "CC-BY-4.0",
    }
    assert (page.id, page.title, page.first_line) == ("cold", "Cold weather", 11)
    assert page.text == SITE_PAGE.split("---\n", 2)[2]


def test_unknown_keys_make_one_summary_warning(tmp_path: Path) -> None:
    (tmp_path / "cold.md").write_text(SITE_PAGE, encoding="utf-8")
    (tmp_path / "heat.md").write_text("---\nlayout: page\n---\n# Heat\n\nWords.", encoding="utf-8")
    (tmp_path / "plain.md").write_text("# Plain\n\nWords.", encoding="utf-8")
    corpus = load_corpus(tmp_path)
    assert [p.id for p in corpus] == ["cold", "heat", "plain"]
    assert corpus.page("heat").meta == {"layout": "page"} and corpus.page("plain").meta == {}
    assert corpus.warnings == (
        Problem(
            str(tmp_path),
            f"2 pages carry front-matter keys RAG lab does not use ({UNUSED}): kept as metadata "
            "(--strict refuses them)",
        ),
    )


def test_strict_refuses_unknown_keys_naming_file_line_and_key(tmp_path: Path) -> None:
    (tmp_path / "cold.md").write_text(SITE_PAGE, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_corpus(tmp_path, strict=True)
    source = str(tmp_path / "cold.md")
    where = [(p.file, p.line, p.field) for p in info.value.problems]
    # The list's "- winter" lines are not 'key: value' either, as before.
    assert where == [
        (source, 2, "layout"),
        (source, 4, "hide-toc"),
        (source, 5, "category"),
        (source, 6, "tags"),
        (source, 7, None),
        (source, 8, None),
        (source, 9, "SPDX-License-Identifier"),
    ]
    assert "unknown front-matter field" in info.value.problems[0].message


# A Hugo page: TOML front matter between '+++' lines, with a table of its own parameters.
HUGO_PAGE = """+++
title = "Cold weather"
updated = 2025-02-01T09:30:00Z
status = "superseded"
draft = false
tags = ["winter", "batteries"]

[params]
  math = true
+++
# Cold weather

Batteries drain faster.
"""


def test_toml_front_matter_is_read_like_yaml_front_matter(tmp_path: Path) -> None:
    """Issue #30. Oracle: HUGO_PAGE read by hand: the known keys used (the date-time's day as the
    page's date), the others kept as metadata, a table's keys dotted; the text starts after the
    closing '+++' (line 10), and the corpus gives its one summary line for the unknown keys."""
    page = parse_page(HUGO_PAGE, stem="cold", source="cold.md")
    assert (page.id, page.title, page.updated, page.status) == (
        "cold",
        "Cold weather",
        date(2025, 2, 1),
        "superseded",
    )
    assert page.meta == {"draft": "false", "tags": "winter, batteries", "params.math": "true"}
    assert page.first_line == 11 and page.text == HUGO_PAGE.split("+++\n", 2)[2]
    (tmp_path / "cold.md").write_text(HUGO_PAGE, encoding="utf-8")
    corpus = load_corpus(tmp_path)
    assert corpus.warnings == (
        Problem(
            str(tmp_path),
            "1 page carries front-matter keys RAG lab does not use (draft, params.math, tags): "
            "kept as metadata (--strict refuses them)",
        ),
    )
    with pytest.raises(InputError) as info:
        load_corpus(tmp_path, strict=True)
    where = [(p.line, p.field) for p in info.value.problems]
    assert where == [(5, "draft"), (6, "tags"), (9, "params.math")]


@pytest.mark.parametrize(
    ("front", "line", "reason"),
    [
        ('title = "A"\ntags = [\n', 3, "TOML front matter does not parse"),
        ('title = "A"\ntitle = "B"\n', 3, "TOML front matter does not parse"),
        ('updated = "Feb 1"\n', 2, "not an ISO date"),
        ('title = "A"\n', 1, "front matter opened with '+++' is never closed"),
    ],
)
def test_bad_toml_front_matter_names_file_and_line(
    tmp_path: Path, front: str, line: int, reason: str
) -> None:
    """Issue #30. Oracle: each front matter read by hand (the '+++' is line 1): an unclosed
    list is left open at its line 3 (TOML: "at end of document"), a key given twice is refused by TOML at its second line, a
    date that is no ISO date is named at its key's line; without a closing '+++' line 1."""
    closing = "" if "never closed" in reason else "+++\n"
    (tmp_path / "bad.md").write_text(f"+++\n{front}{closing}# Bad\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_corpus(tmp_path)
    (problem,) = info.value.problems
    assert (problem.file, problem.line) == (str(tmp_path / "bad.md"), line)
    assert problem.message.startswith(reason)
    assert "Traceback" not in str(info.value)


# Pages saved by other editors. The oracle for each page's text is Python's own codec applied to
# the bytes written.
FRENCH = "# Café\n\nLe café est très chaud. La réparation coûte cher à Genève.\n"
QUOTES = "# Prices\n\nThe \u201cquoted\u201d price \u2014 \u20ac45 \u2014 is final.\n"


@pytest.mark.parametrize(
    ("text", "codec", "detected"),
    [
        (FRENCH, "latin-1", "cp1252"),
        (QUOTES, "cp1252", "cp1252"),
        (FRENCH, "utf-16", "utf_16"),
    ],
)
def test_a_page_not_in_utf8_is_read_in_the_encoding_detected(
    tmp_path: Path, text: str, codec: str, detected: str
) -> None:
    data = text.encode(codec)
    (tmp_path / "page.md").write_bytes(data)
    (tmp_path / "other.md").write_text("# Other\n\nPlain UTF-8, naïve.\n", encoding="utf-8")
    corpus = load_corpus(tmp_path)
    assert corpus.page("page").text == data.decode(codec) == text
    assert corpus.page("other").text == "# Other\n\nPlain UTF-8, naïve.\n"
    with pytest.raises(UnicodeDecodeError) as bad:
        data.decode("utf-8")
    start = bad.value.start
    at = f"byte 0x{data[start]:02x} at offset {start}"
    line = data[:start].count(b"\n") + 1
    assert [str(w) for w in corpus.warnings] == [
        f"{tmp_path / 'page.md'}:{line}: is not UTF-8 ({at}): read as {detected} (detected; "
        "--encoding forces one)"
    ]


def test_encoding_forces_one_and_a_page_it_cannot_decode_is_skipped(tmp_path: Path) -> None:
    data = FRENCH.encode("latin-1")
    (tmp_path / "page.md").write_bytes(data)
    (tmp_path / "other.md").write_text("# Other\n\nPlain words.\n", encoding="utf-8")
    forced = load_corpus(tmp_path, encoding="latin-1")
    assert forced.page("page").text == data.decode("latin-1") and forced.warnings == ()
    ascii_only = load_corpus(tmp_path, encoding="ascii")
    assert [p.id for p in ascii_only] == ["other"]
    offset = data.index(b"\xe9")
    assert [str(w) for w in ascii_only.warnings] == [
        f"{tmp_path / 'page.md'}:1: cannot be decoded as ascii (byte 0xe9 at offset {offset}): "
        "skipped"
    ]
    with pytest.raises(ValueError, match="unknown encoding 'klingon'"):
        load_corpus(tmp_path, encoding="klingon")


def test_a_file_no_encoding_fits_is_skipped_and_the_rest_reads(tmp_path: Path) -> None:
    (tmp_path / "blob.txt").write_bytes(bytes(range(256)) * 2)
    (tmp_path / "other.md").write_text("# Other\n\nPlain words.\n", encoding="utf-8")
    corpus = load_corpus(tmp_path)
    assert [p.id for p in corpus] == ["other"]
    assert [str(w) for w in corpus.warnings] == [
        f"{tmp_path / 'blob.txt'}:2: is not UTF-8 (byte 0x80 at offset 128) and no encoding fits "
        "(a binary file?): skipped; --encoding forces one"
    ]
    (tmp_path / "other.md").unlink()
    with pytest.raises(InputError, match="no page could be read") as info:
        load_corpus(tmp_path)
    assert "blob.txt:2: is not UTF-8" in str(info.value)


def test_an_empty_page_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "blank.md").write_text("---\ntitle: Blank\n---\n   \n", encoding="utf-8")
    (tmp_path / "other.md").write_text("# Other\n\nPlain words.\n", encoding="utf-8")
    corpus = load_corpus(tmp_path)
    assert len(corpus) == 2
    assert [str(w) for w in corpus.warnings] == [
        f"{tmp_path / 'blank.md'}, id blank: page is empty (no words to index): nothing in it "
        "can be found"
    ]


def test_a_utf8_page_with_a_stray_byte_is_read_with_it_replaced(tmp_path: Path) -> None:
    """No encoding fits the whole page, and one bad byte in 60 is not a binary file."""
    data = "# Naïve café\n\nA UTF-8 page — with one stray byte: ".encode() + b"\xe9 here.\n"
    (tmp_path / "page.md").write_bytes(data)
    corpus = load_corpus(tmp_path)
    assert corpus.page("page").text == data.decode("utf-8", "replace")
    offset = data.index(b"\xe9 ")
    assert [str(w) for w in corpus.warnings] == [
        f"{tmp_path / 'page.md'}:3: is not UTF-8 (byte 0xe9 at offset {offset}): read as UTF-8 "
        "with 1 undecodable sequence replaced by U+FFFD (--encoding forces one)"
    ]


def test_held_pages_keep_the_metadata_and_fetch_each_text_when_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: the same folder read with its texts; the word counts by hand ("#", "A", "One", "two."). Held (``HeldPage.of`` each page), every page
    has the same fields, word count and warnings while no page object holds its text: each text
    comes from the PageTexts when read, kept up to the budget of characters (the one just fetched
    always), the older ones fetched again."""
    (tmp_path / "a.md").write_text("---\nid: a\nupdated: 2024-01-02\n---\n# A\n\nOne two.\n")
    (tmp_path / "b.md").write_text("# B\n\nThree four five.\n")
    (tmp_path / "c.txt").write_text("   \n")
    full = load_corpus(tmp_path)
    texts = PageTexts(len(full.page("b").text))  # room for b's text or a's, not both
    held = Corpus(tuple(HeldPage.of(p, texts) for p in full), full.root, full.warnings)
    assert [p.id for p in held] == ["a", "b", "c"]
    assert held.warnings == full.warnings
    assert [p.n_words for p in held] == [p.n_words for p in full] == [4, 5, 0]
    for mine, theirs in zip(held, full, strict=True):
        for f in dataclasses.fields(Page):
            if f.name not in ("text", "sections"):
                assert getattr(mine, f.name) == getattr(theirs, f.name)
        # Neither the text nor the sections found in it are held by the page object.
        for name in ("text", "sections"):
            with pytest.raises(AttributeError):
                Page.__dict__[name].__get__(mine, Page)
    with pytest.raises(RuntimeError, match="held elsewhere"):
        _ = held.page("a").text
    asked: list[list[str]] = []
    texts.fetch = lambda ids: asked.append(list(ids)) or [full.page(i).text for i in ids]
    assert held.page("a").text == full.page("a").text
    assert held.page("a").text == full.page("a").text  # kept
    assert held.page("b").text == full.page("b").text
    assert held.page("a").text == full.page("a").text  # dropped for b's, fetched again
    assert asked == [["a"], ["b"], ["a"]] and texts.fetched == 3
    assert texts.kept_chars == len(full.page("a").text) <= texts.budget
    texts.budget = 1  # under one page: the page just fetched is kept all the same
    assert held.page("b").text == full.page("b").text
    assert list(texts._kept) == ["b"] and texts.kept_chars == len(full.page("b").text)
    assert pickle.loads(pickle.dumps(held.page("b"))) == full.page("b")
    # The sections come from the kept text, found once while it is kept, and go with it.
    assert held.page("b").sections == full.page("b").sections
    assert held.page("b").sections is held.page("b").sections
    assert texts.fetched == 4
    assert held.page("a").sections == full.page("a").sections and texts.fetched == 5
    assert list(texts._sections) == ["a"]
    # At most CLIENT_SECTION_PAGES pages' sections: a is asked again, its sections found again.
    texts.budget = 10**6
    monkeypatch.setattr(pages_module, "CLIENT_SECTION_PAGES", 1)
    assert held.page("b").sections == full.page("b").sections and list(texts._sections) == ["b"]
    again = held.page("a").sections
    assert again == full.page("a").sections and list(texts._sections) == ["a"]
    assert texts.fetched == 6 and set(texts._kept) == {"a", "b"}
