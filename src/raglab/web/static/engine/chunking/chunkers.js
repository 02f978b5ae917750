// Cutting pages into chunks: fixed word windows, sentence packing, or one chunk per section.
//
// Mirrors src/raglab/chunking/chunkers.py: every chunk is a character span of one page
// (docs/design.md#spans), sizes count whitespace words (docs/design.md#words), chunkers never
// cross pages. A page is {id, title, text, sections: [{heading, level, path, start, end}]} as
// the corpus reader found them; offsets are UTF-16 code units.

import { countWords, isSpace, sentenceSpans, wordSpans, wordStarts } from "../text/tokens.js";
import { checkInt, checkWindow, expectedChunkCount } from "./closed_forms.js";

export const METHODS = ["fixed", "sentence", "heading"];

/** The number of entries of ascending `a` below `x` (Python's bisect_left). */
function bisectLeft(a, x) {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The number of entries of ascending `a` at most `x` (Python's bisect_right). */
function bisectRight(a, x) {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (x < a[mid]) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Chunks for every page, in page order, from `spansOf(page)`'s sorted spans. */
function makeChunks(pages, spansOf) {
  const chunks = [];
  for (const page of pages) {
    const starts = page.sections.map((s) => s.start);
    spansOf(page).forEach(([start, end], position) => {
      const k = bisectRight(starts, start) - 1;
      const text = page.text.slice(start, end);
      chunks.push({
        index: chunks.length,
        id: `${page.id}#${position}`,
        pageId: page.id,
        title: page.title,
        headingPath: k >= 0 ? page.sections[k].path : [page.title],
        start,
        end,
        position,
        nWords: countWords(text),
        text,
      });
    });
  }
  return chunks;
}

// --- fixed windows ---------------------------------------------------------------------------

/** Start and end offsets of the fixed chunker's windows over one page's words ([start, end]
 * pairs): windows start at word 0, s−o, 2(s−o), …; the last is the first to reach the end. */
export function fixedWindowSpans(words, { size, overlap }) {
  const [s, o] = checkWindow(size, overlap);
  const count = expectedChunkCount(words.length, { size: s, overlap: o });
  const out = [];
  for (let i = 0; i < count; i++) {
    const first = i * (s - o);
    const last = Math.min(first + s, words.length) - 1;
    out.push([words[first][0], words[last][1]]);
  }
  return out;
}

/** Fixed windows of `size` words, consecutive windows sharing `overlap` words. */
export function chunkFixed(pages, { size, overlap }) {
  const [s, o] = checkWindow(size, overlap);
  return makeChunks(pages, (page) => fixedWindowSpans(wordSpans(page.text), { size: s, overlap: o }));
}

// --- sentence packing ------------------------------------------------------------------------

const BLANK_LINE = /\n[ \t]*(?=\n)/gu;
const HEADING_PREFIX = /^ {0,3}#{1,6}[ \t]+$/u;

/** Sentences with their paragraph labels; a heading-only paragraph takes the next one's. */
function sentenceUnits(text, sentences, blanks) {
  const rows = [];
  const headingOnly = new Map();
  for (const [start, end] of sentences) {
    const lineStart = text.lastIndexOf("\n", start - 1) + 1;
    const isHeading = HEADING_PREFIX.test(text.slice(lineStart, start));
    const block = bisectRight(blanks, start);
    headingOnly.set(block, (headingOnly.get(block) ?? true) && isHeading);
    rows.push([start, end, block]);
  }
  const units = [];
  let label = null;
  for (let i = rows.length - 1; i >= 0; i--) {
    const [start, end, block] = rows[i];
    label = headingOnly.get(block) && label !== null ? label : block;
    units.push([start, end, label]);
  }
  return units.reverse();
}

function blankLines(text) {
  return Array.from(text.matchAll(BLANK_LINE), (m) => m.index);
}

/** Greedy, paragraph-aware packing of units into spans of at most `size` words. */
function pack(units, starts, size) {
  const words = (start, end) => bisectLeft(starts, end) - bisectLeft(starts, start);
  const paragraphs = new Map();
  for (const [start, end, par] of units) {
    paragraphs.set(par, [paragraphs.has(par) ? paragraphs.get(par)[0] : start, end]);
  }
  const spans = [];
  let openStart = null;
  let openEnd = 0;
  let previousPar = null;
  for (const [start, end, par] of units) {
    if (openStart !== null) {
      const [parStart, parEnd] = paragraphs.get(par);
      const movesParagraph =
        par !== previousPar && words(openStart, parEnd) > size && size >= words(parStart, parEnd);
      if (movesParagraph || words(openStart, end) > size) {
        spans.push([openStart, openEnd]);
        openStart = null;
      }
    }
    if (openStart === null) openStart = start;
    openEnd = end;
    previousPar = par;
  }
  if (openStart !== null) spans.push([openStart, openEnd]);
  return spans;
}

function sentenceChunks(text, size, fromStart = false) {
  const units = sentenceUnits(text, sentenceSpans(text), blankLines(text));
  if (fromStart && units.length > 0) units[0] = [0, units[0][1], units[0][2]];
  return pack(units, wordStarts(text), size);
}

/** Whole sentences packed greedily up to `size` words, paragraph-aware. */
export function chunkSentences(pages, { size }) {
  const s = checkInt("size", size, 1);
  return makeChunks(pages, (page) => sentenceChunks(page.text, s));
}

// --- sections --------------------------------------------------------------------------------

function trimmed(text, start, end) {
  let a = start;
  let b = end;
  while (a < b && isSpace(text[a])) a++;
  while (b > a && isSpace(text[b - 1])) b--;
  return [a, b];
}

function headingSpans(page, maxWords) {
  const text = page.text;
  const blocks = [];
  let pending = null;
  for (const section of page.sections) {
    const [start, end] = trimmed(text, section.start, section.end);
    if (start >= end) continue;
    const piece = text.slice(start, end);
    const newline = piece.indexOf("\n");
    const body = newline === -1 ? "" : piece.slice(newline + 1);
    if (section.level > 0 && trimmed(body, 0, body.length)[0] === body.length) {
      pending = pending === null ? start : pending;
      continue;
    }
    blocks.push([pending === null ? start : pending, end]);
    pending = null;
  }
  if (pending !== null) blocks.push(trimmed(text, pending, text.length));
  const spans = [];
  for (const [start, end] of blocks) {
    const block = text.slice(start, end);
    if (countWords(block) <= maxWords) spans.push([start, end]);
    else {
      for (const [a, b] of sentenceChunks(block, maxWords, true)) spans.push([start + a, start + b]);
    }
  }
  return spans;
}

/** One chunk per section, heading line included; heading-only sections merge forward; a
 * section over `maxWords` words is split by sentence packing. */
export function chunkHeadings(pages, { maxWords }) {
  const m = checkInt("max_words", maxWords, 1);
  return makeChunks(pages, (page) => headingSpans(page, m));
}

/** Chunk `pages` by `method` (one of METHODS): `size` is the window, the packing limit or the
 * section cap; `overlap` applies to "fixed" only. Nothing is defaulted here. */
export function chunkPages(pages, { method, size, overlap }) {
  if (size === null || size === undefined) throw new Error(`the ${method} chunker needs a size`);
  if (method === "fixed") {
    if (overlap === null || overlap === undefined) {
      throw new Error("the fixed chunker needs an overlap (0 for none)");
    }
    return chunkFixed(pages, { size, overlap });
  }
  if (!METHODS.includes(method)) throw new Error(`unknown chunking method ${method}`);
  if (overlap) throw new Error(`overlap applies only to the fixed chunker, not to ${method}`);
  if (method === "sentence") return chunkSentences(pages, { size });
  return chunkHeadings(pages, { maxWords: size });
}
