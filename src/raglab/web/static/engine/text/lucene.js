// Lucene's English analyzer, as Anserini indexes with it by default, in plain JavaScript.
//
// Mirrors src/raglab/text/lucene.py (its docstring gives every rule): StandardTokenizer's word
// boundaries (Unicode UAX #29, WB4 to WB13b) over character classes taken from the Unicode
// general categories and script blocks, the possessive filter, Java's per-character lower
// case, the 33 stop words and Porter's stemmer as Lucene's PorterStemmer runs it (the published
// algorithm, Snowball's porter.sbl, with the reference implementation's departures put back).
// Tokens are scanned code point by code point, as Python's regular expression does.

/** EnglishAnalyzer.ENGLISH_STOP_WORDS_SET. */
// prettier-ignore
export const STOP_WORDS = new Set([
  "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
  "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
  "they", "this", "to", "was", "will", "with",
]);
export const MAX_TOKEN_LENGTH = 255;

const MID_LETTER = ":\u00b7\u0387\u055f\u05f4\u2027\ufe13\ufe55\uff1a";
const MID_NUM_LET = ".\u2018\u2019\u2024\ufe52\uff07\uff0e";
const MID_NUM = ",;\u037e\u0589\u060c\u060d\u066c\u07f8\u2044\ufe10\ufe14\ufe50\ufe54\uff0c\uff1b";
const ML = new Set([...MID_LETTER, ...MID_NUM_LET, "'"]);
const MN = new Set([...MID_NUM, ...MID_NUM_LET, "'"]);
// (first, last, class): H Han, I hiragana, K katakana, S South-East Asian.
// prettier-ignore
const BLOCKS = [
  [0x2e80, 0x2fdf, "H"], [0x3005, 0x3007, "H"], [0x3021, 0x3029, "H"], [0x3038, 0x303b, "H"],
  [0x3400, 0x4dbf, "H"], [0x4e00, 0x9fff, "H"], [0xf900, 0xfaff, "H"], [0x20000, 0x3ffff, "H"],
  [0x3041, 0x3096, "I"], [0x309d, 0x309f, "I"], [0x3031, 0x3035, "K"], [0x309b, 0x309c, "K"],
  [0x30a0, 0x30ff, "K"], [0x31f0, 0x31ff, "K"], [0x32d0, 0x32fe, "K"], [0x3300, 0x3357, "K"],
  [0xff66, 0xff9d, "K"], [0x0e00, 0x0eff, "S"], [0x1000, 0x109f, "S"], [0x1780, 0x17ff, "S"],
  [0x1980, 0x19df, "S"], [0x1a20, 0x1aaf, "S"], [0xaa60, 0xaadf, "S"],
];
const SYMBOL_LETTERS = [[0x24b6, 0x24e9], [0x1f130, 0x1f149], [0x1f150, 0x1f169], [0x1f170, 0x1f189]];
const PICTOGRAPHIC_RANGES = `
  a9 ae 203c 2049 2122 2139 2194-2199 21a9-21aa 231a-231b 2328 2388 23cf 23e9-23f3 23f8-23fa
  24c2 25aa-25ab 25b6 25c0 25fb-25fe 2600-2605 2607-2612 2614-2685 2690-2705 2708-2712 2714
  2716 271d 2721 2728 2733-2734 2744 2747 274c 274e 2753-2755 2757 2763-2767 2795-2797 27a1
  27b0 27bf 2934-2935 2b05-2b07 2b1b-2b1c 2b50 2b55 3030 303d 3297 3299 1f000-1f0ff
  1f10d-1f10f 1f12f 1f16c-1f16f 1f18e 1f191-1f19a 1f1ad-1f1e5 1f201-1f20f 1f21a 1f22f
  1f232-1f23a 1f23c-1f23f 1f249-1f3fa 1f400-1f53d 1f546-1f64f 1f680-1f6ff 1f774-1f77f
  1f7d5-1f7ff 1f80c-1f80f 1f848-1f84f 1f85a-1f85f 1f888-1f88f 1f8ae-1f8ff 1f90c-1f93a
  1f93c-1f945 1f947-1faff 1fc00-1fffd`;
const PICTOGRAPHIC = PICTOGRAPHIC_RANGES.trim()
  .split(/\s+/)
  .map((r) => {
    const [a, b] = r.split("-");
    return [parseInt(a, 16), parseInt(b ?? a, 16)];
  });

const EXTEND = /^[\p{Mn}\p{Mc}\p{Me}\p{Cf}]$/u;
const LETTER = /^[\p{L}\p{Nl}]$/u;
const DIGIT = /^\p{Nd}$/u;
const CONNECTOR = /^\p{Pc}$/u;
const LMN = /^[\p{L}\p{M}\p{N}]$/u;

let table = null;

/** Each code point's class (planes 0 to 3), built once: "A" letter, "N" digit, "E" connector,
 * "X" extend or format, "H" Han, "I" hiragana, "K" katakana, "S" South-East Asian, "P"
 * pictographic, "" anything else. */
function classes() {
  if (table !== null) return table;
  const names = ["", "A", "N", "E", "X", "H", "I", "K", "S", "P"];
  const code = Object.fromEntries(names.map((n, i) => [n, i]));
  table = new Uint8Array(0x40000);
  for (let cp = 0; cp < 0x40000; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue; // surrogates: category Cs
    const ch = String.fromCodePoint(cp);
    if (EXTEND.test(ch) && cp !== 0x200b) table[cp] = code.X;
    else if (LETTER.test(ch)) table[cp] = code.A;
    else if (DIGIT.test(ch)) table[cp] = code.N;
    else if (CONNECTOR.test(ch) || cp === 0x202f) table[cp] = code.E;
  }
  for (const [first, last, name] of BLOCKS) {
    for (let cp = first; cp <= last; cp++) {
      if (LMN.test(String.fromCodePoint(cp))) table[cp] = code[name];
    }
  }
  for (const [spans, name] of [[SYMBOL_LETTERS, "A"], [PICTOGRAPHIC, "P"]]) {
    for (const [first, last] of spans) table.fill(code[name], first, last + 1);
  }
  table.names = names;
  return table;
}

function classOf(ch) {
  const cp = ch.codePointAt(0);
  if (cp >= 0xe0000 && cp <= 0xe0fff) return "X";
  if (cp >= 0x40000) return "";
  const t = classes();
  return t.names[t[cp]];
}

const INNER = new Set(["A", "N", "E", "X"]);
const isModifier = (ch) => {
  const cp = ch.codePointAt(0);
  return cp === 0xfe0f || (cp >= 0x1f3fb && cp <= 0x1f3ff) || (cp >= 0xe0020 && cp <= 0xe007f);
};
const isRegional = (ch) => {
  const cp = ch.codePointAt(0);
  return cp >= 0x1f1e6 && cp <= 0x1f1ff;
};

/** The end of a word starting at i (exclusive), or -1: E* [AN] inner* then, repeatedly, a
 * MidLetter after a letter followed by a letter, or a MidNum after a digit followed by a digit
 * (extend and format characters skipped over on both sides). */
function matchWord(chars, cls, i) {
  let j = i;
  while (j < chars.length && cls[j] === "E") j++;
  if (j >= chars.length || (cls[j] !== "A" && cls[j] !== "N")) return -1;
  j++;
  while (j < chars.length && INNER.has(cls[j])) j++;
  for (;;) {
    const afterA = cls[j - 1] === "A" || (cls[j - 1] === "X" && j - 2 >= i && cls[j - 2] === "A");
    const afterN = cls[j - 1] === "N" || (cls[j - 1] === "X" && j - 2 >= i && cls[j - 2] === "N");
    let next = -1;
    for (const [after, mids, want] of [[afterA, ML, "A"], [afterN, MN, "N"]]) {
      if (!after || j >= chars.length || !mids.has(chars[j])) continue;
      let k = j + 1;
      while (k < chars.length && cls[k] === "X") k++;
      if (k >= chars.length || cls[k] !== want) continue;
      while (k < chars.length && INNER.has(cls[k])) k++;
      next = k;
      break;
    }
    if (next === -1) return j;
    j = next;
  }
}

/** The end of a kana, Han, South-East Asian or emoji token starting at i, or -1. */
function matchOther(chars, cls, i) {
  const c = cls[i];
  let j = i + 1;
  if (c === "K") {
    while (j < chars.length && (cls[j] === "K" || cls[j] === "E" || cls[j] === "X")) j++;
    return j;
  }
  if (c === "H" || c === "I") {
    while (j < chars.length && cls[j] === "X") j++;
    return j;
  }
  if (c === "S") {
    while (j < chars.length && cls[j] === "S") j++;
    return j;
  }
  if (isRegional(chars[i]) && j < chars.length && isRegional(chars[j])) return j + 1;
  if (c === "P") {
    for (;;) {
      while (j < chars.length && isModifier(chars[j])) j++;
      if (j + 1 < chars.length && chars[j] === "\u200d" && cls[j + 1] === "P") j += 2;
      else return j;
    }
  }
  return -1;
}

/** StandardTokenizer's tokens of `text` (case kept). */
export function standardTokens(text) {
  const chars = Array.from(text);
  // The lookbehinds of the Python expression see the character before a token too; its
  // classes are those of the whole text.
  const cls = chars.map(classOf);
  const out = [];
  let i = 0;
  while (i < chars.length) {
    let end = matchWord(chars, cls, i);
    if (end === -1) end = matchOther(chars, cls, i);
    if (end === -1) {
      i++;
      continue;
    }
    for (let a = i; a < end; a += MAX_TOKEN_LENGTH) {
      out.push(chars.slice(a, Math.min(end, a + MAX_TOKEN_LENGTH)).join(""));
    }
    i = end;
  }
  return out;
}

/** Java's Character.toLowerCase for every character: no context, no expansion. */
function lower(token) {
  return Array.from(token, (ch) => (ch === "\u0130" ? "i" : ch.toLowerCase())).join("");
}

// --- Porter's stemmer ------------------------------------------------------------------------

const V = new Set(["a", "e", "i", "o", "u", "y"]);
const vowel = (ch) => V.has(ch);

function longest(w, suffixes) {
  let best = null;
  for (const entry of suffixes) {
    const s = typeof entry === "string" ? entry : entry[0];
    if (s.length <= w.length && w.slice(w.length - s.length).join("") === s) {
      if (best === null || s.length > (typeof best === "string" ? best : best[0]).length) best = entry;
    }
  }
  return best;
}

const shortV = (w, end) =>
  end >= 3 && !vowel(w[end - 3]) && vowel(w[end - 2]) && !vowel(w[end - 1]) && !"wxY".includes(w[end - 1]);

function region(w, from) {
  let i = from;
  while (i < w.length && !vowel(w[i])) i++;
  while (i < w.length && vowel(w[i])) i++;
  return i < w.length ? i + 1 : w.length;
}

function cut(w, n, by) {
  w.length -= n;
  for (const ch of by) w.push(ch);
}

// prettier-ignore
const STEP_2 = [
  ["tional", "tion"], ["enci", "ence"], ["anci", "ance"], ["abli", "able"], ["entli", "ent"],
  ["eli", "e"], ["izer", "ize"], ["ization", "ize"], ["ational", "ate"], ["ation", "ate"],
  ["ator", "ate"], ["alli", "al"], ["alism", "al"], ["aliti", "al"], ["fulness", "ful"],
  ["ousli", "ous"], ["ousness", "ous"], ["iveness", "ive"], ["iviti", "ive"], ["biliti", "ble"],
];
// prettier-ignore
const STEP_3 = [
  ["alize", "al"], ["icate", "ic"], ["iciti", "ic"], ["ical", "ic"], ["ative", ""], ["ful", ""],
  ["ness", ""],
];
// prettier-ignore
const STEP_4 = [
  "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ou", "ism",
  "ate", "iti", "ous", "ive", "ize", "ion",
];

/** Porter's algorithm as published (Snowball's porter.sbl, PyStemmer's "porter"). */
export function porterPublished(word) {
  const w = Array.from(word);
  if (w[0] === "y") w[0] = "Y";
  for (let i = 1; i < w.length; i++) if (w[i] === "y" && vowel(w[i - 1])) w[i] = "Y";
  const p1 = region(w, 0);
  const p2 = region(w, p1);
  const inR1 = (n) => w.length - n >= p1;
  const inR2 = (n) => w.length - n >= p2;
  const hasVowel = (to) => w.slice(0, to).some(vowel);

  const s1a = longest(w, ["sses", "ies", "ss", "s"]);
  if (s1a === "sses" || s1a === "ies") cut(w, s1a.length, s1a === "sses" ? "ss" : "i");
  else if (s1a === "s") w.length -= 1;

  const s1b = longest(w, ["eed", "ed", "ing"]);
  if (s1b === "eed") {
    if (inR1(3)) cut(w, 3, "ee");
  } else if (s1b !== null && hasVowel(w.length - s1b.length)) {
    w.length -= s1b.length;
    const end = longest(w, ["at", "bl", "iz", "bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt"]);
    if (end === "at" || end === "bl" || end === "iz") w.push("e");
    else if (end !== null) w.length -= 1;
    else if (w.length === p1 && shortV(w, w.length)) w.push("e");
  }

  const last = w[w.length - 1];
  if ((last === "y" || last === "Y") && hasVowel(w.length - 1)) w[w.length - 1] = "i";

  const s2 = longest(w, STEP_2);
  if (s2 !== null && inR1(s2[0].length)) cut(w, s2[0].length, s2[1]);
  const s3 = longest(w, STEP_3);
  if (s3 !== null && inR1(s3[0].length)) cut(w, s3[0].length, s3[1]);
  const s4 = longest(w, STEP_4);
  if (s4 !== null && inR2(s4.length)) {
    if (s4 !== "ion") w.length -= s4.length;
    else if (w[w.length - 4] === "s" || w[w.length - 4] === "t") w.length -= 3;
  }
  if (w[w.length - 1] === "e" && (inR2(1) || (inR1(1) && !shortV(w, w.length - 1)))) w.length -= 1;
  if (w[w.length - 1] === "l" && inR2(1) && w[w.length - 2] === "l") w.length -= 1;
  return w.join("").replaceAll("Y", "y");
}

function isConsonant(word, i) {
  const ch = word[i];
  if ("aeiou".includes(ch)) return false;
  return ch !== "y" || i === 0 || !isConsonant(word, i - 1);
}

/** Porter's m: the number of vowel-consonant sequences in `stem` (an array of characters). */
function measure(stem) {
  let m = 0;
  let vowelSeen = false;
  for (let i = 0; i < stem.length; i++) {
    if (isConsonant(stem, i)) {
      if (vowelSeen) m++;
      vowelSeen = false;
    } else vowelSeen = true;
  }
  return m;
}

const UNDOUBLED = "chjkqvwx";
const porterCache = new Map();

/** Porter's stem of a lower-cased word, as Lucene's PorterStemmer gives it. */
export function porterStem(word) {
  let stem = porterCache.get(word);
  if (stem === undefined) {
    stem = lucenePorter(word);
    porterCache.set(word, stem);
  }
  return stem;
}

function lucenePorter(word) {
  const w = Array.from(word);
  if (w.length <= 2) return word;
  const stem = porterPublished(word);
  const s = Array.from(stem);
  for (const [suffix, short] of [["bli", "ble"], ["logi", "log"]]) {
    if (stem.endsWith(suffix) && measure(s.slice(0, s.length - suffix.length)) > 0) {
      return porterPublished(s.slice(0, s.length - suffix.length).join("") + short);
    }
  }
  for (const ending of ["ed", "ing"]) {
    const base = w.slice(0, w.length - ending.length);
    const n = base.length;
    if (
      word.endsWith(ending) &&
      stem === base.join("") &&
      n > 1 &&
      base[n - 1] === base[n - 2] &&
      UNDOUBLED.includes(base[n - 1]) &&
      isConsonant(base, n - 1) &&
      base.some((_, i) => !isConsonant(base, i))
    ) {
      return porterPublished(base.slice(0, n - 1).join(""));
    }
  }
  return stem;
}

/** Lucene EnglishAnalyzer's tokens of `text`, in order. */
export function analyze(text) {
  const out = [];
  for (let token of standardTokens(text)) {
    const chars = Array.from(token);
    const n = chars.length;
    if (n >= 2 && "'\u2019\uff07".includes(chars[n - 2]) && "sS".includes(chars[n - 1])) {
      token = chars.slice(0, n - 2).join("");
    }
    token = lower(token);
    if (token && !STOP_WORDS.has(token)) out.push(porterStem(token));
  }
  return out;
}
