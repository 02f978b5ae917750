// Text primitives shared by every stage: retrieval tokens, identifiers, words and sentences.
//
// Mirrors src/raglab/text/tokens.py rule for rule (its docstring states the rules:
// docs/design.md#retrieval-tokens, #words): the same regular expressions with Python's Unicode
// classes written out, the same stop words, and the Snowball English stemmer (./snowball.js)
// behind `stem`. Offsets are UTF-16 code units, a JavaScript string's own.
// Oracle: the Python module, through the parity fixtures (tests/web/static/engine/text/).

import { analyze } from "./lucene.js";
import { stem as snowballStem } from "./snowball.js";
import { bisectLeft } from "../base/bisect.js";

// Python's classes for str patterns, written out: whitespace is str.isspace() (which, unlike
// JavaScript's \s, holds \x1c-\x1f and \x85 and not U+FEFF); a digit (\d) is Unicode's Nd; an
// alphanumeric ([^\W_]) is a letter or any number; a letter ([^\W\d_]) a letter or a non-decimal
// number.
const WS = "\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const DIGIT = "\\p{Nd}";
const ALNUM = "\\p{L}\\p{N}";
const LETTER = "\\p{L}\\p{Nl}\\p{No}";

/** RAG lab's English stop words (the Python module's STOP_WORDS). */
// prettier-ignore
export const STOP_WORDS = new Set([
  "a", "about", "above", "after", "again", "against", "all", "also", "although", "am",
  "among", "an", "and", "another", "any", "are", "as", "at", "be", "because", "been",
  "before", "being", "below", "between", "both", "but", "by", "can", "could", "did",
  "do", "does", "doing", "done", "down", "during", "each", "eg", "either", "else",
  "etc", "every", "few", "for", "from", "further", "had", "has", "have", "having",
  "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "however",
  "i", "ie", "if", "in", "into", "is", "it", "its", "itself", "just", "many", "may",
  "me", "might", "more", "most", "much", "must", "my", "myself", "of", "off", "on",
  "once", "only", "onto", "or", "other", "others", "our", "ours", "ourselves", "out",
  "over", "own", "per", "same", "shall", "she", "should", "since", "so", "some",
  "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then",
  "there", "these", "they", "this", "those", "though", "through", "to", "too",
  "toward", "towards", "under", "until", "up", "upon", "us", "very", "via", "vs",
  "was", "we", "were", "what", "when", "where", "whereas", "whether", "which",
  "while", "who", "whom", "whose", "why", "will", "with", "within", "without",
  "would", "yet", "you", "your", "yours", "yourself", "yourselves",
]);

// --- tokens ----------------------------------------------------------------------------------

const GROUP = `(?:[${DIGIT}]{1,3}(?:,[${DIGIT}]{3})+(?![${DIGIT}])[${ALNUM}]*|[${ALNUM}]+)`;
const RUN = new RegExp(`(${GROUP}(?:[-.]${GROUP})*)(?:['’]([${LETTER}]+))?`, "gu");
const HAS_DIGIT = new RegExp(`[${DIGIT}]`, "u");
const JOINERS = /[-.]/u;
const DOTTED_LETTERS = new RegExp(`^(?:[${LETTER}]\\.)+[${LETTER}]$`, "u");
const ALPHA = /^\p{L}+$/u;
const DROPPED_SUFFIXES = new Set(["s", "re", "ve", "ll", "d", "m"]);
const NOT_BASES = new Map([["wo", "will"], ["ca", "can"], ["sha", "shall"]]);
const SPLIT_WORDS = new Map([["cannot", ["can", "not"]]]);

/** The tokens of `text` before stemming, leaving out those in `drop`, with `isWord` beside them
 * (false for identifiers and numbers: runs that hold a digit); `starts`, when given, receives
 * each token's run's offset in the lower-cased text. */
function rawTokens(text, drop, starts = null) {
  const tokens = [];
  const isWord = [];
  let at = 0;
  const add = (token, word) => {
    if (!drop.has(token)) {
      tokens.push(token);
      isWord.push(word);
      if (starts !== null) starts.push(at);
    }
  };
  for (const m of text.toLowerCase().matchAll(RUN)) {
    at = m.index;
    let run = m[1];
    const suffix = m[2];
    if (suffix === undefined && ALPHA.test(run) && !SPLIT_WORDS.has(run)) {
      add(run, true);
      continue;
    }
    let negated = false;
    if (suffix !== undefined) {
      if (suffix === "t" && run.endsWith("n") && !HAS_DIGIT.test(run)) {
        const base = run.slice(0, -1);
        run = NOT_BASES.get(base) ?? base;
        negated = true;
      } else if (!DROPPED_SUFFIXES.has(suffix)) {
        run = `${run}${suffix}`;
      }
    }
    if (HAS_DIGIT.test(run)) add(run.replaceAll(",", ""), false);
    else if (DOTTED_LETTERS.test(run)) add(run.replaceAll(".", ""), true);
    else {
      for (const word of run.split(JOINERS)) {
        if (word) for (const w of SPLIT_WORDS.get(word) ?? [word]) add(w, true);
      }
    }
    if (negated) add("not", true);
  }
  return { tokens, isWord };
}

const stems = new Map();

/** The Snowball English stem of a word, remembered (a corpus repeats a few thousand words). */
export function stemWord(word) {
  let s = stems.get(word);
  if (s === undefined) {
    s = snowballStem(word);
    stems.set(word, s);
  }
  return s;
}

/** How many texts tokenize() was asked for (for tests: what reuse saves). */
export const CALLS = { tokenize: 0 };

/** Lower-cased retrieval tokens of `text`, in order; `stem` stems the word tokens only.
 * `analyzer` "raglab" follows this module's rules, "lucene" is Lucene's English analyzer
 * (./lucene.js: its own tokens, stop words and Porter stemmer; `stem` is ignored). */
export function tokenize(text, { stem, analyzer }) {
  CALLS.tokenize += 1;
  if (analyzer !== "raglab") {
    if (analyzer !== "lucene") throw new Error(`analyzer must be one of raglab, lucene; not ${analyzer}`);
    return analyze(text);
  }
  const { tokens, isWord } = rawTokens(text, STOP_WORDS);
  if (!stem) return tokens;
  return tokens.map((t, i) => (isWord[i] ? stemWord(t) : t));
}

/** tokenize(text, {stem, analyzer: "raglab"}) with each token's offset in `text` ({tokens,
 * starts}, starts ascending), or null when lower-casing changes the text's length (a dotted
 * capital I), which would shift the offsets: a page's tokens once, for slicing by chunkTokens. */
export function tokenStream(text, { stem }) {
  if (text.toLowerCase().length !== text.length) return null;
  const starts = [];
  const { tokens, isWord } = rawTokens(text, STOP_WORDS, starts);
  return { tokens: stem ? tokens.map((t, i) => (isWord[i] ? stemWord(t) : t)) : tokens, starts };
}

/** tokenStream(text, {stem: true}) from `stream` = tokenStream(text, {stem: false}): its word
 * tokens stemmed. A token is a word (stemmed by tokenize) exactly when it holds no decimal
 * digit: rawTokens marks as words the letters-only runs, the dotted letters and the pieces of a
 * digit-free run, and as not the runs that hold a digit, which keep it. */
export function stemmedStream(stream) {
  return { tokens: stream.tokens.map((t) => (HAS_DIGIT.test(t) ? t : stemWord(t))), starts: stream.starts };
}

/** tokenize(text.slice(start, end), {stem, analyzer: "raglab"}) read off `stream` =
 * tokenStream(text, {stem}), or null when the span does not begin and end at whitespace or an
 * end of `text`. Then it is exactly equal: a run holds no whitespace (letters, numbers and
 * ",.-'’" only) and the run pattern looks neither behind nor (its one lookahead, "not a digit")
 * past whitespace, so the runs of the slice are the runs of the text that start in it; lower
 * case keeps the length (tokenStream's check) and its one context rule, the final sigma, does
 * not see across whitespace; stop words and stems are per token. */
export function chunkTokens(stream, text, start, end) {
  const range = chunkRange(stream, text, start, end);
  return range === null ? null : stream.tokens.slice(range[0], range[1]);
}

/** The positions [from, to) in `stream` of chunkTokens(stream, text, start, end)'s tokens, or
 * null where it is null. */
export function chunkRange(stream, text, start, end) {
  if (start > 0 && start < text.length && !isSpace(text[start - 1]) && !isSpace(text[start])) return null;
  if (end > 0 && end < text.length && !isSpace(text[end - 1]) && !isSpace(text[end])) return null;
  return [bisectLeft(stream.starts, start), bisectLeft(stream.starts, end)];
}

const DIGIT_GROUPS_JOINED = new RegExp(
  `^(?:[${DIGIT}]+(?:-[${DIGIT}]+)+|[${DIGIT}]+(?:\\.[${DIGIT}]+){2,})$`,
  "u",
);
const HAS_LETTER = new RegExp(`[${LETTER}]`, "u");

/** The lower-cased identifier tokens of `text` (a Set): a digit and a letter, or digit groups
 * joined by hyphens or by two or more dots. */
export function identifiers(text) {
  const { tokens, isWord } = rawTokens(text, new Set());
  const out = new Set();
  tokens.forEach((t, i) => {
    if (!isWord[i] && HAS_DIGIT.test(t) && (HAS_LETTER.test(t) || DIGIT_GROUPS_JOINED.test(t))) {
      out.add(t);
    }
  });
  return out;
}

/** identifiers(text) read off the text's tokens by tokenize() with the "raglab" analyzer,
 * stemmed or not, without tokenising the text again: the same Set in the same order. A token
 * holding a decimal digit is never a word (a word is letters only), so it is never stemmed, and
 * no stop word holds one: the tokens that hold one are the raw ones, in order. */
export function identifiersAmong(tokens) {
  const out = new Set();
  for (const t of tokens) {
    if (HAS_DIGIT.test(t) && (HAS_LETTER.test(t) || DIGIT_GROUPS_JOINED.test(t))) out.add(t);
  }
  return out;
}

// --- words -----------------------------------------------------------------------------------

const WORD = new RegExp(`[^${WS}]+`, "gu");
const SPACE = new RegExp(`[${WS}]`, "u");

/** Whether the character `ch` is whitespace as Python's str.isspace() has it. */
export const isSpace = (ch) => SPACE.test(ch);

/** Character spans [start, end] of the whitespace-separated words of `text`. */
export function wordSpans(text) {
  return Array.from(text.matchAll(WORD), (m) => [m.index, m.index + m[0].length]);
}

/** The number of whitespace-separated words of `text` (Python's len(text.split())). */
export function countWords(text) {
  let n = 0;
  WORD.lastIndex = 0;
  while (WORD.exec(text) !== null) n++;
  return n;
}

/** The start offsets of the whitespace words of `text`, ascending. */
export function wordStarts(text) {
  return Array.from(text.matchAll(WORD), (m) => m.index);
}

// --- sentences -------------------------------------------------------------------------------

const HEADING_LINE = new RegExp(`^ {0,3}#{1,6}[ \\t]+(?=[^${WS}])`, "u");
const HEADING_CLOSE = /[ \t]+#+[ \t]*$/u;
const LIST_MARKER = new RegExp(`^[ \\t]*(?:[-*+]|[${DIGIT}]{1,9}[.)])[ \\t]+(?=[^${WS}])`, "u");
const THEMATIC_BREAK = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/u;
const FENCE = /^ {0,3}(?:```|~~~)/u;
const TERMINATOR = new RegExp(`[.!?]+["'”’)\\]]*(?=[${WS}])`, "gu");
const OPENERS = new Set(["\"", "'", "“", "‘", "(", "[", "`"]);
// prettier-ignore
const ABBREVIATIONS = new Set([
  "al", "approx", "ca", "cf", "dept", "dr", "eg", "esp", "fig", "figs", "ie", "incl",
  "jr", "mr", "mrs", "ms", "prof", "ref", "resp", "sr", "st", "viz", "vol", "vs",
]);
const NUMBER_ABBREVIATIONS = new Set(["no", "nos"]);
const CLOSERS = "\"'”’)]";
const WORD_OPENERS = "\"'“‘([*_";
const UPPER = /^\p{Uppercase}$/u;
// Python's str.isdigit(): decimal digits and the other digits (superscripts, circled digits).
const PY_DIGIT =
  /^[\p{Nd}\u00b2\u00b3\u00b9\u1369-\u1371\u19da\u2070\u2074-\u2079\u2080-\u2089\u2460-\u2468\u2474-\u247c\u2488-\u2490\u24ea\u24f5-\u24fd\u24ff\u2776-\u277e\u2780-\u2788\u278a-\u2792\u{10a40}-\u{10a43}\u{10e60}-\u{10e68}\u{11052}-\u{1105a}\u{1f100}-\u{1f10a}]$/u;

const rstripChars = (s, chars) => {
  let end = s.length;
  while (end > 0 && chars.includes(s[end - 1])) end--;
  return s.slice(0, end);
};
const lstripChars = (s, chars) => {
  let start = 0;
  while (start < s.length && chars.includes(s[start])) start++;
  return s.slice(start);
};
const charAt = (text, i) => String.fromCodePoint(text.codePointAt(i));

function endsSentence(text, termStart, termEnd, nextPos) {
  if (nextPos >= text.length) return true;
  const nxt = charAt(text, nextPos);
  const digit = PY_DIGIT.test(nxt);
  if (!(UPPER.test(nxt) || digit || OPENERS.has(nxt))) return false;
  if (rstripChars(text.slice(termStart, termEnd), CLOSERS) !== ".") return true;
  let wordStart = termStart;
  while (wordStart > 0 && !isSpace(text[wordStart - 1])) wordStart--;
  const word = lstripChars(text.slice(wordStart, termStart), WORD_OPENERS).toLowerCase();
  if (NUMBER_ABBREVIATIONS.has(word)) return !digit;
  return !ABBREVIATIONS.has(word) && !DOTTED_LETTERS.test(word);
}

function appendTrimmed(text, start, end, out) {
  while (start < end && isSpace(text[start])) start++;
  while (end > start && isSpace(text[end - 1])) end--;
  if (start < end) out.push([start, end]);
}

function splitSegment(text, start, end, out) {
  // Python's finditer(text, start, end) sees no further than `end`, lookahead included.
  const view = text.slice(0, end);
  let cut = start;
  TERMINATOR.lastIndex = start;
  for (let m = TERMINATOR.exec(view); m !== null; m = TERMINATOR.exec(view)) {
    const mEnd = m.index + m[0].length;
    let nxt = mEnd;
    while (nxt < end && isSpace(text[nxt])) nxt++;
    if (endsSentence(text, m.index, mEnd, nxt < end ? nxt : text.length)) {
      appendTrimmed(text, cut, mEnd, out);
      cut = mEnd;
    }
  }
  appendTrimmed(text, cut, end, out);
}

/** Character spans [start, end] of the sentences of `text`, trimmed of whitespace: Markdown
 * blocks first (blank lines, thematic breaks, headings, list items, fences), then terminators
 * that are not abbreviations (the Python function's docstring gives every rule). */
export function sentenceSpans(text) {
  const out = [];
  let segStart = null;
  let fenceStart = null;
  let lineStart = 0;
  while (lineStart < text.length) {
    const newline = text.indexOf("\n", lineStart);
    const lineEnd = newline === -1 ? text.length : newline + 1;
    const contentEnd = newline === -1 ? text.length : newline;
    const line = text.slice(lineStart, contentEnd);
    if (fenceStart !== null) {
      if (FENCE.test(line)) {
        appendTrimmed(text, fenceStart, contentEnd, out);
        fenceStart = null;
      }
    } else if (FENCE.test(line)) {
      if (segStart !== null) {
        splitSegment(text, segStart, lineStart, out);
        segStart = null;
      }
      fenceStart = lineStart;
    } else if (!new RegExp(`[^${WS}]`, "u").test(line) || THEMATIC_BREAK.test(line)) {
      if (segStart !== null) {
        splitSegment(text, segStart, lineStart, out);
        segStart = null;
      }
    } else {
      const heading = HEADING_LINE.exec(line);
      if (heading) {
        if (segStart !== null) {
          splitSegment(text, segStart, lineStart, out);
          segStart = null;
        }
        const close = HEADING_CLOSE.exec(line);
        const end = lineStart + (close ? close.index : line.length);
        appendTrimmed(text, lineStart + heading[0].length, end, out);
      } else {
        const item = LIST_MARKER.exec(line);
        if (item) {
          if (segStart !== null) splitSegment(text, segStart, lineStart, out);
          segStart = lineStart + item[0].length;
        } else if (segStart === null) {
          segStart = lineStart;
        }
      }
    }
    lineStart = lineEnd;
  }
  if (fenceStart !== null) appendTrimmed(text, fenceStart, text.length, out);
  if (segStart !== null) splitSegment(text, segStart, text.length, out);
  return out;
}
