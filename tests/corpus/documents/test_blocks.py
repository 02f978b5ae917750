"""Assembling blocks into page text: heading lines, escaping, NFC and ligatures."""

from __future__ import annotations

import unicodedata

from raglab.corpus.documents.blocks import Block, assemble, clean
from raglab.corpus.pages import find_sections


def test_text_is_nfc_with_ligatures_spelled_out() -> None:
    decomposed = "Cafe\u0301 \ufb01ne \ufb02ow \ufb00 x\u00b2"
    assert clean(decomposed) == "Café fine flow ff x\u00b2"  # "²" is no ligature: it stays
    assert unicodedata.is_normalized("NFC", clean(decomposed))


def test_headings_become_lines_the_page_reader_splits_at() -> None:
    text = assemble(
        [Block("Guide", 1), Block("Intro."), Block("Setup", 2), Block("Deep", 5), Block("End.")]
    )
    assert text == "# Guide\n\nIntro.\n\n## Setup\n\n### Deep\n\nEnd.\n"
    heads = [(s.heading, s.level, s.start) for s in find_sections(text, title="T")]
    assert heads == [
        ("Guide", 1, 0),
        ("Setup", 2, text.index("## Setup")),
        ("Deep", 3, text.index("### Deep")),  # levels 4-6 split as the deepest Markdown level
    ]


def test_paragraph_lines_that_look_like_markup_are_escaped() -> None:
    text = assemble([Block("---"), Block("# not a heading\n```"), Block("Real", 1)])
    assert text == "\\---\n\n\\# not a heading\n\\```\n\n# Real\n"
    assert [s.heading for s in find_sections(text, title="T") if s.level] == ["Real"]
