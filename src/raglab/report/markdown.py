"""A report as Markdown: the same sections, in the same order, as the lab's six exhibits.

The sections come from :mod:`raglab.report.sections` (shared with :mod:`raglab.report.html`, so
the two formats never disagree); :func:`render_markdown` writes them as GitHub-flavoured
Markdown. The same dict gives the same text, byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from raglab.report.model import Note, Table
from raglab.report.sections import (
    sections,
    subtitle,
)

__all__ = [
    "render_markdown",
]


# --- Markdown ----------------------------------------------------------------------------------


def _escape_text(text: str) -> str:
    # Keep user text from turning into markup: angle brackets would pass through as raw HTML.
    return " ".join(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").split())


def _cell(text: str) -> str:
    return _escape_text(text).replace("\\", "\\\\").replace("|", "\\|") or " "


def _markdown_table(table: Table) -> list[str]:
    lines = [f"**{_escape_text(table.caption)}**", ""]
    lines.append("| " + " | ".join(_cell(h) for h in table.header) + " |")
    lines.append("|" + "|".join("---:" if n else "---" for n in table.numeric) + "|")
    lines.extend("| " + " | ".join(_cell(c) for c in row) + " |" for row in table.rows)
    return lines


def render_markdown(report: Mapping[str, Any]) -> str:
    """The report as Markdown; deterministic given the dict."""
    lines = ["# RAG lab report", "", _escape_text(subtitle(report)), ""]
    for section in sections(report):
        lines += [f"## {section.title}", ""]
        for part in section.parts:
            if isinstance(part, Table):
                lines += _markdown_table(part)
            elif isinstance(part, Note):
                lines.append(f"> **Note.** {_escape_text(part.text)}")
            else:
                lines.append(_escape_text(part))
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
