"""What the exhibit modules share: question lookup and search-result snippets."""

from __future__ import annotations

import re

from raglab.corpus.questions import Question
from raglab.pipeline.lab import Lab

# Characters of a chunk's text returned with a search result.
SNIPPET_CHARS = 280


def question(lab: Lab, question_id: str) -> Question:
    """The question with this id; ``KeyError`` when there is none."""
    return lab.questions.by_id(question_id)


_HEADING_MARKS = re.compile(r"^#{1,6}[ \t]+", re.MULTILINE)


def _snippet(text: str) -> str:
    """The start of a chunk as one line, Markdown heading marks dropped."""
    flat = " ".join(_HEADING_MARKS.sub("", text).split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1].rstrip() + "…"
