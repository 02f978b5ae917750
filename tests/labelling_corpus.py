"""A corpus of four small pages for the labelling tests, one sentence on two pages and twice on one."""

from __future__ import annotations

from pathlib import Path

#: A sentence that occurs on page alpha twice and on page beta once.
SHARED = "Return the unit in its original box."

PAGES = {
    "alpha": "# Returns\n\nTo send a mount back, book a return first. "
    f"{SHARED}\n\n## Packing\n\n{SHARED} Tape every seam.\n",
    "beta": f"# Shipping\n\nCouriers collect on weekdays. {SHARED}\n",
    "gamma": "# Cold weather\n\nThe grease stiffens below minus ten degrees, so let the mount "
    "warm up for an hour.\n",
    "delta": "# Batteries\n\nThe PS-1210 supply gives 12 V at 10 A; a café charger will not do.\n",
}


def write_corpus(folder: Path) -> Path:
    """The four pages as ``folder/<id>.md``; returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for page_id, text in PAGES.items():
        (folder / f"{page_id}.md").write_text(text, encoding="utf-8")
    return folder
