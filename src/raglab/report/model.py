"""The report's section model: the display pieces both renderers draw, and how numbers read.

One job: define what a rendered report is made of (a :class:`Section` of paragraphs, :class:`Note`
callouts and :class:`Table` of display strings), the display names shared with every other face,
and the formatting of a number (:func:`fmt`) or a rank (:func:`rank_text`). The sections
themselves are built in :mod:`raglab.report.sections` and :mod:`raglab.report.exhibit_sections`.

Numbers are shown with three decimals (rates, scores) or two (k1, b, lambda, thresholds); a rank
that is not in a ranker's list shows as "-", an out-of-corpus question's rank as "n/a".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from raglab.labels import FEATURE_LABELS, RETRIEVER_LABELS
from raglab.pipeline.report import SECTIONS

# Display names shared with every other face (:mod:`raglab.settings`).
RANKER_NAMES = RETRIEVER_LABELS
FEATURE_NAMES = FEATURE_LABELS


@dataclass(frozen=True, slots=True)
class Table:
    """A table of display strings; ``numeric[i]`` right-aligns column i."""

    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...]


@dataclass(frozen=True, slots=True)
class Note:
    """A callout: something the data does not support, or a caveat."""

    text: str


Part = str | Note | Table


@dataclass(frozen=True, slots=True)
class Section:
    key: str
    title: str
    parts: tuple[Part, ...]


def fmt(value: Any, digits: int = 3) -> str:
    """A number for display: ``digits`` decimals, "-" for None."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{float(value):.{digits}f}"


def rank_text(rank: Any, answerable: bool) -> str:
    if not answerable:
        return "n/a"
    return "-" if rank is None else str(rank)


def make_table(
    caption: str, header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool]
) -> Table:
    return Table(caption, tuple(header), tuple(tuple(r) for r in rows), tuple(numeric))


def section_title(key: str) -> str:
    return dict(SECTIONS)[key]


__all__ = [
    "FEATURE_NAMES",
    "RANKER_NAMES",
    "Note",
    "Part",
    "Section",
    "Table",
    "fmt",
    "make_table",
    "rank_text",
    "section_title",
]
