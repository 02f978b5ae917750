"""The page's HTML holds no default, range or option list of its own: every control backed by a
setting is filled from ``/api/meta`` (its browser half is in test_browser_neural.py and
test_browser_settings.py). Oracle: the HTML itself, parsed with the standard library."""

from __future__ import annotations

from html.parser import HTMLParser
from importlib.resources import files
from typing import Any

#: Selects whose options are a setting's choices or a list of the defaults.
FILLED_SELECTS = ("run-chunker", "run-retriever", "rerank-first", "fusion-k")


class _Controls(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ranges: dict[str, dict[str, str | None]] = {}
        self.numbers: dict[str, dict[str, str | None]] = {}
        self.options: dict[str, int] = {}
        self.outputs: dict[str, str] = {}
        self._select: str | None = None
        self._output: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "input" and a.get("type") == "range":
            self.ranges[str(a["id"])] = a
        elif tag == "input" and a.get("type") == "number":
            self.numbers[str(a["id"])] = a
        elif tag == "select":
            self._select = str(a.get("id"))
            self.options[self._select] = 0
        elif tag == "option" and self._select is not None:
            self.options[self._select] += 1
        elif tag == "output":
            self._output = str(a.get("id"))
            self.outputs[self._output] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None
        elif tag == "output":
            self._output = None

    def handle_data(self, data: str) -> None:
        if self._output is not None:
            self.outputs[self._output] += data


def _controls() -> _Controls:
    parser = _Controls()
    parser.feed(files("raglab.web").joinpath("static/index.html").read_text("utf-8"))
    return parser


def test_no_slider_carries_a_range_or_value_of_its_own() -> None:
    c = _controls()
    assert len(c.ranges) == 10
    for name, attrs in c.ranges.items():
        assert not {"min", "max", "step", "value"} & set(attrs), name
    for name, attrs in c.numbers.items():
        assert not {"min", "max", "value"} & set(attrs), name


def test_no_output_shows_a_number_before_the_api_answers() -> None:
    c = _controls()
    assert c.outputs and all(text.strip() == "" for text in c.outputs.values())


def test_option_lists_come_from_the_api() -> None:
    c = _controls()
    for name in FILLED_SELECTS:
        assert c.options[name] == 0, name


def test_a_test_figures_labels_come_from_the_api() -> None:
    """The two labels of a test figure are raglab.labels.TEST_FIGURE_LABELS, sent by /api/meta:
    no page file spells them out (the prose holds ``data-test-label`` slots instead)."""
    from raglab.labels import TEST_FIGURE_LABELS

    static = files("raglab.web") / "static"
    pages = [p for p in static.iterdir() if p.name.endswith((".html", ".js"))]
    assert len(pages) > 10
    for page in pages:
        assert TEST_FIGURE_LABELS[False] not in page.read_text(encoding="utf-8"), page.name
    assert 'data-test-label="not_chosen"' in (static / "index.html").read_text(encoding="utf-8")


def test_meta_sends_the_test_figures_labels(api: Any) -> None:
    from raglab.labels import TEST_FIGURE_LABELS

    labels = api.get("/api/meta").json()["labels"]["test_figures"]
    assert labels == {"chosen": TEST_FIGURE_LABELS[True], "not_chosen": TEST_FIGURE_LABELS[False]}
