// Cutting pages into chunks: fixed word windows, sentence packing, or one chunk per section.
//
// Mirrors src/raglab/chunking/chunkers.py: every chunk is a character span of one page
// (docs/design.md#spans), sizes count whitespace words (docs/design.md#words), chunkers never
// cross pages. A page is {id, title, text, sections: [{heading, level, path, start, end}]} as
// the corpus reader found them; offsets are UTF-16 code units.

import { isSpace, sentenceSpans, wordSpans } from "../text/tokens.js";
import { bisectLeft, bisectRight } from "../base/bisect.js";
import { checkInt, checkWindow, expectedChunkCount } from "./closed_forms.js";

export const METHODS = ["fixed", "sentence", "heading"];

// What every cut of a page reuses, found once per page (a cut is a chunker at a size): its
// whitespace words, its sentences with their paragraph labels, and each section block's.
const FACTS = new WeakMap();

/** How many texts' spans were found: "words" (a text's whitespace words) and "sentences" (its
 * sentence units), a page's or a long section block's; each text's at most once. */
export const SPANS_FOUND = { words: 0, sentences: 0 };

/** The facts of `page` (textFacts's, and its section blocks once the heading chunker asks),
 * kept while the page lives. */
function pageFacts(page) {
  let f = FACTS.get(page);
  if (f === undefined || f.text !== page.text) {
    f = textFacts(page.text);
    FACTS.set(page, f);
  }
  return f;
}

/** A text's word spans and their starts; its sentence units come on first use (unitsOf). */
function textFacts(text) {
  const words = wordSpans(text);
  SPANS_FOUND.words += 1;
  return { text, words, starts: words.map((w) => w[0]), units: null, sectionBlocks: null };
}

/** The sentence units of a text's facts, found once. */
function unitsOf(f) {
  if (f.units === null) {
    f.units = sentenceUnits(f.text, sentenceSpans(f.text), blankLines(f.text));
    SPANS_FOUND.sentences += 1;
  }
  return f.units;
}

/** The number of whitespace words of text.slice(start, end) (Python's len(text.split())), read
 * off the text's word starts: those in the span, and one more when the span opens inside a word. */
function wordsWithin(text, starts, start, end) {
  const opensInWord = start < end && start > 0 && !isSpace(text[start - 1]) && !isSpace(text[start]);
  return bisectLeft(starts, end) - bisectLeft(starts, start) + (opensInWord ? 1 : 0);
}

/** Chunks for every page, in page order, from `spansOf(page)`'s sorted spans. */
function makeChunks(pages, spansOf) {
  const chunks = [];
  for (const page of pages) {
    const starts = page.sections.map((s) => s.start);
    const wordStarts = pageFacts(page).starts;
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
        nWords: wordsWithin(page.text, wordStarts, start, end),
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
  return makeChunks(pages, (page) => fixedWindowSpans(pageFacts(page).words, { size: s, overlap: o }));
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

/** Sentence packing of a text's facts (textFacts) at `size` words; `fromStart`: the first
 * sentence opens at the text's start. */
function sentenceChunks(facts, size, fromStart = false) {
  let units = unitsOf(facts);
  if (fromStart && units.length > 0) units = [[0, units[0][1], units[0][2]], ...units.slice(1)];
  return pack(units, facts.starts, size);
}

/** Whole sentences packed greedily up to `size` words, paragraph-aware. */
export function chunkSentences(pages, { size }) {
  const s = checkInt("size", size, 1);
  return makeChunks(pages, (page) => sentenceChunks(pageFacts(page), s));
}

// --- sections --------------------------------------------------------------------------------

function trimmed(text, start, end) {
  let a = start;
  let b = end;
  while (a < b && isSpace(text[a])) a++;
  while (b > a && isSpace(text[b - 1])) b--;
  return [a, b];
}

/** The section blocks of a page ([start, end] pairs): sections trimmed, heading-only ones merged
 * forward. */
function sectionBlocks(page) {
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
  return blocks;
}

/** A page's facts with its section blocks, each [start, end, facts or null, words]: the words
 * are the page's within the block, the facts (textFacts of the block's text) found on the first
 * cut that splits it. */
function blockFacts(page) {
  const f = pageFacts(page);
  f.sectionBlocks ??= sectionBlocks(page).map(([start, end]) => [start, end, null, wordsWithin(page.text, f.starts, start, end)]);
  return f;
}

function headingSpans(page, maxWords) {
  const spans = [];
  for (const block of blockFacts(page).sectionBlocks) {
    const [start, end, , words] = block;
    if (words <= maxWords) spans.push([start, end]);
    else {
      block[2] ??= textFacts(page.text.slice(start, end));
      for (const [a, b] of sentenceChunks(block[2], maxWords, true)) spans.push([start + a, start + b]);
    }
  }
  return spans;
}

/** Finds now, for every page, what a cut at `minSize` words or more would find on first use
 * and every later cut reuses: the page's sentence units (the sentence chunker's) and those of
 * each section block over `minSize` words (the heading chunker's, which splits such a block at
 * some size). The same facts a cut finds itself, from the same texts: cuts are unchanged, only
 * the time they take (the Worker does this in its idle warm-up, not on a visitor's new cut). */
export function prepareCuts(pages, { minSize }) {
  const m = checkInt("min_size", minSize, 1);
  for (const page of pages) {
    const f = blockFacts(page);
    unitsOf(f);
    for (const block of f.sectionBlocks) {
      if (block[3] > m) unitsOf((block[2] ??= textFacts(page.text.slice(block[0], block[1]))));
    }
  }
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
