// The Snowball English stemmer (Porter 2001, "Porter2"), as PyStemmer's libstemmer runs it.
//
// Mirrors the stemmer behind src/raglab/text/tokens.py's `stem=True` (PyStemmer 3's "english",
// Snowball 3.0's english.sbl): the algorithm of snowballstem.org/algorithms/english, written out
// step by step, with Snowball 3.0's changes to the 2001 description: more prefixes that end R1
// (inter-, organ-, past-, ...), "-ogist" in step 2, "dying" and "inning" handled inside step 1b,
// no undoubling after a lone initial a, e or o ("added" gives "add"), and "past" counting as a
// short syllable. A word is handled as an array of code points, as libstemmer counts its characters.
// Oracle: PyStemmer itself, on every distinct word of the handbook and of Cranfield (the parity
// fixtures, tests/web/static/engine/text/snowball.test.mjs).

const VOWELS = new Set(["a", "e", "i", "o", "u", "y"]);
const isVowel = (ch) => VOWELS.has(ch);
const VALID_LI = new Set(["c", "d", "e", "g", "h", "k", "m", "n", "r", "t"]);
const NOT_WXY = new Set(["w", "x", "Y"]);

const EXCEPTIONS_1 = new Map([
  ["skis", "ski"], ["skies", "sky"], ["idly", "idl"], ["gently", "gentl"], ["ugly", "ugli"], ["early", "earli"], ["only", "onli"],
  ["singly", "singl"], ["sky", "sky"], ["news", "news"], ["howe", "howe"], ["atlas", "atlas"],
  ["cosmos", "cosmos"], ["bias", "bias"], ["andes", "andes"],
]);
// Words whose "-ing" stays (inning, outing, ...) and stems whose "-eed" stays (proceed, ...).
const KEPT_BEFORE_ING = new Set(["even", "cann", "inn", "earr", "herr", "out"]);
const KEPT_BEFORE_EED = new Set(["succ", "proc", "exc"]);
const REGION_PREFIXES = ["arsen", "commun", "emerg", "gener", "inter", "later", "organ", "past", "univers"];

const STEP_2 = [
  ["tional", "tion"], ["enci", "ence"], ["anci", "ance"], ["abli", "able"], ["entli", "ent"],
  ["izer", "ize"], ["ization", "ize"], ["ational", "ate"], ["ation", "ate"], ["ator", "ate"],
  ["alism", "al"], ["aliti", "al"], ["alli", "al"], ["fulness", "ful"], ["ousli", "ous"],
  ["ousness", "ous"], ["iveness", "ive"], ["iviti", "ive"], ["biliti", "ble"], ["bli", "ble"],
  ["ogi", "og"], ["fulli", "ful"], ["lessli", "less"], ["li", ""], ["ogist", "og"],
];
const STEP_3 = [
  ["tional", "tion"], ["ational", "ate"], ["alize", "al"], ["icate", "ic"], ["iciti", "ic"],
  ["ical", "ic"], ["ful", ""], ["ness", ""], ["ative", ""],
];
const STEP_4 = [
  "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ism", "ate",
  "iti", "ous", "ive", "ize", "ion",
];

/** The longest of `suffixes` (strings, or [suffix, replacement] pairs) that `w` ends with. */
function longest(w, suffixes) {
  let best = null;
  let bestLength = -1;
  for (const entry of suffixes) {
    const suffix = typeof entry === "string" ? entry : entry[0];
    const n = suffix.length; // every suffix is ASCII: its length counts code points
    if (n > bestLength && n <= w.length && endsWith(w, suffix)) {
      best = entry;
      bestLength = n;
    }
  }
  return best;
}

function endsWith(w, suffix) {
  const start = w.length - suffix.length;
  for (let i = 0; i < suffix.length; i++) if (w[start + i] !== suffix[i]) return false;
  return true;
}

/** Snowball's shortv at `end` (exclusive): a short syllable ends w[0..end). */
function shortSyllableAt(w, end) {
  if (end >= 4 && w.slice(end - 4, end).join("") === "past") return true;
  if (end >= 3) {
    const [a, b, c] = [w[end - 3], w[end - 2], w[end - 1]];
    if (!isVowel(a) && isVowel(b) && !isVowel(c) && !NOT_WXY.has(c)) return true;
  }
  return end === 2 && isVowel(w[0]) && !isVowel(w[1]);
}

/** The end of the region after the first non-vowel following a vowel, from `from`. */
function regionStart(w, from) {
  let i = from;
  while (i < w.length && !isVowel(w[i])) i++;
  while (i < w.length && isVowel(w[i])) i++;
  return i < w.length ? i + 1 : w.length;
}

function hasVowel(w, from, to) {
  for (let i = from; i < to; i++) if (isVowel(w[i])) return true;
  return false;
}

function replace(w, n, by) {
  w.length -= n;
  for (const ch of by) w.push(ch);
}

/** The Snowball English stem of a lower-cased word. */
export function stem(word) {
  if (EXCEPTIONS_1.has(word)) return EXCEPTIONS_1.get(word);
  const w = Array.from(word);
  if (w.length < 3) return word;
  // Prelude: a leading apostrophe goes; y at the start or after a vowel is a consonant (Y).
  if (w[0] === "'") w.shift();
  if (w[0] === "y") w[0] = "Y";
  for (let i = 1; i < w.length; i++) if (w[i] === "y" && isVowel(w[i - 1])) w[i] = "Y";
  // Regions R1 and R2.
  let p1 = w.length;
  const joined = w.join("");
  const prefix = REGION_PREFIXES.find((p) => joined.startsWith(p));
  p1 = prefix !== undefined ? Array.from(prefix).length : regionStart(w, 0);
  const p2 = regionStart(w, p1);
  const inR1 = (n) => w.length - n >= p1;
  const inR2 = (n) => w.length - n >= p2;

  // Step 1a.
  const apostrophe = longest(w, ["'", "'s", "'s'"]);
  if (apostrophe !== null) replace(w, apostrophe.length, "");
  const s1a = longest(w, ["sses", "ied", "ies", "s", "us", "ss"]);
  if (s1a === "sses") replace(w, 4, "ss");
  else if (s1a === "ied" || s1a === "ies") replace(w, 3, w.length - 3 > 1 ? "i" : "ie");
  else if (s1a === "s") {
    if (hasVowel(w, 0, w.length - 2)) replace(w, 1, "");
  }
  // Step 1b.
  const s1b = longest(w, ["eed", "eedly", "ed", "edly", "ing", "ingly"]);
  let strip = s1b !== null && s1b !== "eed" && s1b !== "eedly";
  if (s1b === "eed" || s1b === "eedly") {
    const base = w.slice(0, w.length - s1b.length).join("");
    if (inR1(s1b.length) && !KEPT_BEFORE_EED.has(base)) replace(w, s1b.length, "ee");
  } else if (s1b === "ing") {
    const base = w.slice(0, w.length - 3);
    if (KEPT_BEFORE_ING.has(base.join(""))) strip = false;
    else if (base.length === 2 && base[1] === "y" && !isVowel(base[0])) {
      replace(w, 4, "ie"); // dying, lying, tying
      strip = false;
    }
  }
  if (strip && hasVowel(w, 0, w.length - s1b.length)) {
    replace(w, s1b.length, "");
    const end = longest(w, ["at", "bl", "iz", "bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt"]);
    if (end === "at" || end === "bl" || end === "iz") w.push("e");
    else if (end !== null) {
      // A double after a lone initial a, e or o stays (add, egg, odd).
      if (!(w.length === 3 && "aeo".includes(w[0]))) w.length -= 1;
    } else if (w.length === p1 && shortSyllableAt(w, w.length)) w.push("e");
  }

  // Step 1c: y or Y after a non-vowel that is not the first letter becomes i.
  const last = w[w.length - 1];
  if ((last === "y" || last === "Y") && w.length > 2 && !isVowel(w[w.length - 2])) {
    w[w.length - 1] = "i";
  }

  // Step 2.
  const s2 = longest(w, STEP_2);
  if (s2 !== null && inR1(s2[0].length)) {
    const [suffix, by] = s2;
    if (suffix === "ogi") {
      if (w[w.length - 4] === "l") replace(w, 3, by);
    } else if (suffix === "li") {
      if (VALID_LI.has(w[w.length - 3])) replace(w, 2, by);
    } else replace(w, suffix.length, by);
  }

  // Step 3.
  const s3 = longest(w, STEP_3);
  if (s3 !== null && inR1(s3[0].length)) {
    const [suffix, by] = s3;
    if (suffix !== "ative" || inR2(suffix.length)) replace(w, suffix.length, by);
  }

  // Step 4.
  const s4 = longest(w, STEP_4);
  if (s4 !== null && inR2(s4.length)) {
    if (s4 !== "ion") replace(w, s4.length, "");
    else if (w[w.length - 4] === "s" || w[w.length - 4] === "t") replace(w, 3, "");
  }

  // Step 5.
  const s5 = w[w.length - 1];
  if (s5 === "e") {
    if (inR2(1) || (inR1(1) && !shortSyllableAt(w, w.length - 1))) w.length -= 1;
  } else if (s5 === "l") {
    if (inR2(1) && w[w.length - 2] === "l") w.length -= 1;
  }
  return w.join("").replaceAll("Y", "y");
}
