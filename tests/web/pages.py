"""Opening the lab in Chromium for a browser test: a fresh page per call, each in its own context
(empty localStorage, so no saved progress), loaded and ready; any page error or console error
fails the test that opened it. The fixtures ``open_page`` and ``page`` (tests/web/conftest.py)
are built on :func:`opener`; a test module with a server of its own calls it directly."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from playwright.sync_api import Browser, Page, ViewportSize

LAPTOP: ViewportSize = {"width": 1280, "height": 900}
PHONE: ViewportSize = {"width": 390, "height": 844}
Opener = Callable[[ViewportSize], Page]

#: The page's name for each diagnosis (the category names the library and reports use are keys).
STAGE_NAMES = {
    "cut": "cut by the chunker",
    "not retrieved": "not retrieved",
    "past budget": "ranked past the budget",
    "reader": "missed by the reader",
    "false answer": "answered when it should not",
}


#: For each element: its box, and the first box around it that clips it or scrolls past it.
OUT_OF_VIEW = """(nodes) => nodes.flatMap((node) => {
  const r = node.getBoundingClientRect();
  const name = node.getAttribute("aria-label") || node.getAttribute("class") || node.tagName;
  const text = (node.textContent || "").trim().slice(0, 40);
  const what = `${name} "${text}"`;
  if (r.left < -0.5 || r.right > window.innerWidth + 0.5) {
    return [`${what}: ${r.left.toFixed(1)} to ${r.right.toFixed(1)}, outside the viewport`];
  }
  for (let box = node.parentElement; box && box !== document.body; box = box.parentElement) {
    const b = box.getBoundingClientRect();
    const clips = getComputedStyle(box).overflowX !== "visible";
    if (clips && (r.left < b.left - 0.5 || r.right > b.right + 0.5)) {
      return [`${what}: ${r.left.toFixed(1)} to ${r.right.toFixed(1)}, outside its box ${box.id || box.className}`];
    }
    if (clips && box.scrollWidth > box.clientWidth + 1) {
      return [`${what}: its box ${box.id || box.className} scrolls sideways (${box.scrollWidth} > ${box.clientWidth})`];
    }
  }
  return [];
})"""


def out_of_view(page: Page, selector: str) -> list[str]:
    """Each element of ``selector`` outside the viewport or a box that clips or scrolls it."""
    found: list[str] = page.locator(selector).evaluate_all(OUT_OF_VIEW)
    return found


def opener(browser: Browser, base: str) -> Iterator[Opener]:
    """Yield ``open(viewport)``, which opens ``base`` in a fresh context; on exit close every
    context and assert the pages reported no error."""
    contexts = []
    errors: list[str] = []

    def opened(viewport: ViewportSize) -> Page:
        context = browser.new_context(viewport=viewport)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(f"{base}/")
        page.wait_for_selector("body[data-ready=true]")
        return page

    yield opened
    for context in contexts:
        context.close()
    assert errors == []
