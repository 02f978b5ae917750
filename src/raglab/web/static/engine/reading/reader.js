// Packing the context into the word budget, and the extractive reader that quotes one sentence.
//
// Mirrors src/raglab/reading/reader.py (docs/design.md#reader): chunks are packed in rank order
// while the running total of words stays within the budget; the reader quotes the sentence with
// the highest coverage of the question's content terms (plain |Q ∩ S| / |Q|, or weighted
// Σ_{Q∩S} w / Σ_Q w with exactly rounded sums) or the highest cosine with the question's vector,
// ties to the earliest sentence; "not found" below the threshold (1e-12 slack), at a best score
// of 0 or less, with no question terms or no sentences.

import { fsum } from "../base/exact.js";

/** Coverages are ratios of small integers compared with decimal thresholds (7/20 meets 0.35). */
export const COVERAGE_EPSILON = 1e-12;

/** k_budget: how many chunks, taken in rank order (their word counts), fit `budget` words. */
export function pack(chunkWords, { budget }) {
  if (!(budget >= 0)) throw new Error("budget must be non-negative");
  let total = 0;
  for (let i = 0; i < chunkWords.length; i++) {
    const w = chunkWords[i];
    if (!Number.isInteger(w) || w < 0) throw new Error("word counts must be non-negative integers");
    total += w;
    if (total > budget) return i;
  }
  return chunkWords.length;
}

/** (N, df): how many documents (iterables of terms), and how many hold each term (a Map). */
export function documentFrequencies(docs) {
  let n = 0;
  const df = new Map();
  for (const doc of docs) {
    n++;
    for (const term of new Set(doc)) df.set(term, (df.get(term) ?? 0) + 1);
  }
  return [n, df];
}

/** Each term's IDF over `nDocs` documents: ln(1 + (N − n_t + 0.5) / (n_t + 0.5)), a Map. */
export function idfWeights(terms, df, nDocs) {
  if (!(nDocs >= 0)) throw new Error("n_docs must be non-negative");
  const out = new Map();
  for (const t of new Set(terms)) {
    const nt = df.get(t) ?? 0;
    if (!(nt >= 0 && nt <= nDocs)) throw new Error(`document frequency of ${t} must lie in [0, ${nDocs}], got ${nt}`);
    out.set(t, Math.log1p((nDocs - nt + 0.5) / (nt + 0.5)));
  }
  return out;
}

function answer(scores) {
  let best = 0;
  for (let j = 1; j < scores.length; j++) if (scores[j] > scores[best]) best = j;
  return best;
}

function checkThreshold(threshold) {
  if (!(threshold >= 0 && threshold <= 1)) throw new Error(`threshold must lie in [0, 1], got ${threshold}`);
}

/** Quote the sentence (an iterable of terms each) covering the most of the question's terms:
 * {found, sentence (index or null), coverage, coverages}. `weights` a Map term -> weight or null. */
export function read(questionTerms, sentences, { threshold, weights = null }) {
  checkThreshold(threshold);
  const q = new Set(questionTerms);
  const n = sentences.length;
  if (weights !== null) {
    for (const t of q) {
      const w = weights.get(t);
      if (!(Number.isFinite(w) && w > 0)) throw new Error(`weight of ${t} must be a finite number above 0, got ${w}`);
    }
  }
  if (q.size === 0 || n === 0) return { found: false, sentence: null, coverage: 0.0, coverages: new Float64Array(n) };
  let coverages;
  if (weights === null) {
    coverages = sentences.map((s) => {
      const set = s instanceof Set ? s : new Set(s);
      let shared = 0;
      for (const t of q) if (set.has(t)) shared++;
      return shared / q.size;
    });
  } else {
    const total = fsum([...q].map((t) => weights.get(t)));
    coverages = sentences.map((s) => {
      const set = s instanceof Set ? s : new Set(s);
      return fsum([...q].filter((t) => set.has(t)).map((t) => weights.get(t))) / total;
    });
  }
  const best = answer(coverages);
  const coverage = coverages[best];
  const found = coverage > 0.0 && coverage >= threshold - COVERAGE_EPSILON;
  return { found, sentence: found ? best : null, coverage, coverages };
}

/** cos_j = q · s_j / (‖q‖ ‖s_j‖) of each sentence vector against the question's, clipped to
 * [-1, 1]; a zero vector has cosine 0. */
export function cosines(questionVector, sentenceVectors) {
  const dot = (a, b) => {
    let s = 0.0;
    for (let i = 0; i < a.length; i++) s += a[i] * b[i];
    return s;
  };
  const qn = Math.sqrt(dot(questionVector, questionVector));
  return sentenceVectors.map((s) => {
    if (s.length !== questionVector.length) throw new Error(`sentence vectors must have ${questionVector.length} entries`);
    const norms = Math.sqrt(dot(s, s)) * qn;
    const c = norms > 0 ? dot(s, questionVector) / norms : 0.0;
    return Math.min(1.0, Math.max(-1.0, c));
  });
}

/** Quote the sentence whose vector lies closest to the question's; "not found" at a best cosine
 * of 0 or less or below the threshold. */
export function readCosine(questionVector, sentenceVectors, { threshold }) {
  checkThreshold(threshold);
  const scores = cosines(questionVector, sentenceVectors);
  if (scores.length === 0) return { found: false, sentence: null, coverage: 0.0, coverages: scores };
  const best = answer(scores);
  const score = scores[best];
  const found = score > 0.0 && score >= threshold - COVERAGE_EPSILON;
  return { found, sentence: found ? best : null, coverage: score, coverages: scores };
}

/** How a quote lies against the answer, best first: the first two are correct quotes. */
export const QUOTE_RELATIONS = ["inside", "contains", "overlaps", "same page", "other page", "no answer", "not found"];

/** Where the quote [page, start, end] (or null) lies against the nearest answer span. */
export function quoteRelation(quote, answerSpans) {
  if (quote === null) return "not found";
  if (answerSpans.length === 0) return "no answer";
  const [page, qs, qe] = quote;
  const found = new Set(["other page"]);
  for (const [ap, as, ae] of answerSpans) {
    if (ap !== page) continue;
    if (as <= qs && qe <= ae) found.add("inside");
    else if (qs <= as && ae <= qe) found.add("contains");
    else if (qs < ae && as < qe) found.add("overlaps");
    else found.add("same page");
  }
  return QUOTE_RELATIONS.find((r) => found.has(r));
}

/** Whether the quote answers the question (inside or containing an answer span; out of corpus:
 * nothing quoted). */
export function isCorrect(quote, answerSpans) {
  if (quote === null) return answerSpans.length === 0;
  return ["inside", "contains"].includes(quoteRelation(quote, answerSpans));
}
