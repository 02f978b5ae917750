"""Reading HTML pages: title, headings, dropped boilerplate, NFC text, encodings."""

from __future__ import annotations

import json
from pathlib import Path

from raglab.corpus.documents.html_file import read_html
from raglab.corpus.pages import load_corpus
from raglab.corpus.questions import parse_questions

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Cafe\u0301 pumps</title>
<style>p { color: red }</style><script>var boilerplate = 1;</script></head>
<body>
<header>Site banner</header><nav>Home | Shop</nav>
<h1>Welcome</h1>
<p>The \ufb01rst   paragraph, <b>bold</b>
across two lines.</p>
<!-- a comment -->
<h2>Set <em>up</em></h2>
<ul><li>one</li><li>#two</li></ul>
<h4>Deep detail</h4><p>deep text</p>
<footer>Copyright line</footer>
<script>document.write("more boilerplate")</script>
</body></html>
"""


def test_title_headings_and_text(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text(PAGE, encoding="utf-8")
    doc = read_html(path)
    assert doc.title == "Cafe\u0301 pumps"  # the page reader makes it NFC (see test_read)
    assert doc.text == (
        "# Welcome\n\nThe first paragraph, bold across two lines.\n\n## Set up\n\none\n\n"
        "\\#two\n\n### Deep detail\n\ndeep text\n"
    )
    for boilerplate in ("Site banner", "Home", "Copyright", "boilerplate", "color", "comment"):
        assert boilerplate not in doc.text


def test_encoding_comes_from_the_meta_charset(tmp_path: Path) -> None:
    path = tmp_path / "old.htm"
    page = '<html><head><meta charset="windows-1252"><title>Caf\u00e9</title></head>'
    path.write_bytes((page + "<body><p>na\u00efve \u2013 ok</p></body></html>").encode("cp1252"))
    doc = read_html(path)
    assert (doc.title, doc.text) == ("Caf\u00e9", "na\u00efve \u2013 ok\n")


def test_a_page_without_title_or_body_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "bare.html"
    path.write_text("just <i>text</i>", encoding="utf-8")
    doc = read_html(path)
    assert (doc.title, doc.text) == (None, "just text\n")


def test_an_articles_own_header_is_content(tmp_path: Path) -> None:
    path = tmp_path / "post.html"
    path.write_text(
        "<body><header>Site banner</header><main><article><header><h1>Post title</h1>"
        "<p>By Ann</p></header><p>Body.</p><footer>Tags: pumps</footer></article></main>"
        "<footer>Site footer</footer></body>",
        encoding="utf-8",
    )
    assert read_html(path).text == "# Post title\n\nBy Ann\n\nBody.\n\nTags: pumps\n"


def test_pre_keeps_its_line_breaks_and_indentation(tmp_path: Path) -> None:
    """Issue #30. Oracle: the ``pre`` below written by hand, as a browser shows it (its first
    newline dropped, as HTML says): each line and its indentation kept, inside a code fence so
    its ``# comment`` is no heading; a passage of two indented lines is found at offsets that
    give it back exactly, and the paragraphs around stay collapsed."""
    code = (
        "def pump(rate):\n"
        "    # litres a minute\n"
        "    if rate &gt; 10:\n"
        "        return   'fast'\n"
        "\n"
        "\treturn 'slow'   \n"
    )
    path = tmp_path / "code.html"
    path.write_text(
        "<html><body><h1>Pumps</h1><p>Call   it\nlike this:</p>"
        f'<pre>\n<code class="python">{code}</code>```\ndone<br>now</pre><p>End.</p></body></html>',
        encoding="utf-8",
    )
    text = read_html(path).text
    assert text == (
        "# Pumps\n\nCall it like this:\n\n```\ndef pump(rate):\n    # litres a minute\n"
        "    if rate > 10:\n        return   'fast'\n\n\treturn 'slow'\n\\```\ndone\nnow\n```"
        "\n\nEnd.\n"
    )
    corpus = load_corpus(tmp_path)
    (page,) = corpus
    assert [s.heading for s in page.sections] == ["Pumps"]
    answer = "if rate > 10:\n        return   'fast'"
    lines = [
        json.dumps({"id": "q", "split": "test", "kind": "k", "question": "?", "answer": answer})
    ]
    (span,) = parse_questions(lines, corpus=corpus).questions[0].spans
    assert page.text[span.start : span.end] == answer
