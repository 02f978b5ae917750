"""The design definitions the code cites live in the repository: every ``docs/design.md#anchor``
cited in the source and the tests names a heading of docs/design.md (GitHub's anchor rule:
lower case, spaces to hyphens, other punctuation dropped)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _anchors() -> set[str]:
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    heads = re.findall(r"^#+\s+(.+?)\s*$", text, flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in heads}


def test_every_cited_definition_exists() -> None:
    anchors = _anchors()
    cited: dict[str, str] = {}
    for folder in ("src", "tests"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "test_docs.py":
                continue
            for anchor in re.findall(r"docs/design\.md#([\w-]+)", path.read_text(encoding="utf-8")):
                cited.setdefault(anchor, str(path.relative_to(ROOT)))
    assert len(cited) >= 8  # the citations this test guards are really there
    missing = {a: where for a, where in cited.items() if a not in anchors}
    assert missing == {}


def test_no_citation_points_outside_the_repository() -> None:
    for folder in ("src", "tests"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "test_docs.py":
                continue
            assert "DESIGN" + ".md" not in path.read_text(encoding="utf-8"), path
