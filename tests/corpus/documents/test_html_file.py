"""Reading HTML pages: title, headings, dropped boilerplate, NFC text, encodings."""

from __future__ import annotations

from pathlib import Path

from raglab.corpus.documents.html_file import read_html

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
