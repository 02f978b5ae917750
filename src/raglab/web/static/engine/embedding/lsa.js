// Latent semantic analysis (Deerwester et al. 1990) by randomised SVD, on evenly spaced windows.
//
// Mirrors src/raglab/embedding/lsa.py and vectors.py (and the lab's windows,
// src/raglab/pipeline/indexes.py): max(100, ⌈words / 256⌉) windows of 256 words with starts
// rint(linspace(0, N − 256, count)); A the TF-IDF term × window matrix, idf = ln(N / df); its
// rank-k truncated SVD (./svd.js); a text folded in as U_kᵀ q; cosines of the fold-ins.

import { topK } from "../base/topk.js";
import { compareCodePoints } from "../bm25/statistics.js";
import { wordSpans } from "../text/tokens.js";
import { SparseMatrix, randomizedSvd, transpose } from "./svd.js";

/** Round half to even (numpy's rint). */
function rint(x) {
  const r = Math.round(x);
  return Math.abs(x - Math.trunc(x)) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** `count` windows [start, stop) of `size` of `n` items, starts rint(linspace(0, n − size,
 * count)); one window of everything when n <= size. */
export function evenWindows(n, { count, size }) {
  if (n <= size) return [[0, n]];
  const stop = n - size;
  const step = stop / (count - 1);
  return Array.from({ length: count }, (_, i) => {
    const start = i === count - 1 ? stop : rint(i * step);
    return [start, start + size];
  });
}

/** max(`minimum`, ⌈nWords / `size`⌉): the windows cover every word. */
export const windowCount = (nWords, { minimum, size }) => Math.max(minimum, Math.ceil(nWords / size));

/** Power passes: `base` at `minimum` windows or fewer, `base` more for each doubling past. */
export function powerIterationsFor(nWindows, { base, minimum }) {
  const doublings = Math.ceil(nWindows / minimum) - 1;
  return base * (1 + (doublings === 0 ? 0 : doublings.toString(2).length)); // Python's bit_length
}

/** The LSA training windows of `pages`, tokenised by `tokens(page, start, end)` (the tokens of
 * page.text.slice(start, end)): words numbered across pages, each window's words tokenised
 * page piece by page piece. */
export function lsaWindows(pages, tokens, { count = null, minimum, size }) {
  const offsets = pages.map((p) => wordSpans(p.text));
  const first = [0];
  for (const o of offsets) first.push(first[first.length - 1] + o.length);
  const n = first[first.length - 1];
  const ranges = evenWindows(n, { count: count ?? windowCount(n, { minimum, size }), size });
  return ranges.map(([start, stop]) => {
    const out = [];
    pages.forEach((page, p) => {
      const lo = first[p];
      const hi = first[p + 1];
      if (stop <= lo || start >= hi) return;
      const a = Math.max(start, lo) - lo;
      const b = Math.min(stop, hi) - lo;
      for (const t of tokens(page, offsets[p][a][0], offsets[p][b - 1][1])) out.push(t);
    });
    return out;
  });
}

/** The TF-IDF weights of token lists over a vocabulary (Map term -> column) and idf: each
 * list's [[column, tf × idf], ...] ascending, terms outside the vocabulary dropped. */
export function tfidfRows(lists, vocabulary, idf) {
  return lists.map((tokens) => {
    const counts = new Map();
    for (const t of tokens) {
      const col = vocabulary.get(t);
      if (col !== undefined) counts.set(col, (counts.get(col) ?? 0) + 1);
    }
    return [...counts].sort((a, b) => a[0] - b[0]).map(([col, tf]) => [col, tf * idf[col]]);
  });
}

/** The vocabulary, idf and TF-IDF weights of token lists, in one pass over their tokens:
 * {terms (code-point order), vocabulary (term -> column), idf, lines}, lines holding
 * tfidfRows(lists, vocabulary, idf) flat ({start, index, value}: list i's columns ascending at
 * start[i]..start[i+1]), the same products, no arrays of pairs. */
function tfidfLines(lists) {
  const ids = new Map(); // term -> its id in first-seen order
  const start = new Int32Array(lists.length + 1);
  let capacity = 0;
  for (const tokens of lists) capacity += tokens.length;
  const index = new Int32Array(capacity);
  const value = new Float64Array(capacity);
  let counts = new Int32Array(1024); // each list's term counts by id, cleared after it
  let p = 0;
  lists.forEach((tokens, i) => {
    const first = p;
    for (const t of tokens) {
      let id = ids.get(t);
      if (id === undefined) {
        ids.set(t, (id = ids.size));
        if (id === counts.length) counts = grown(counts);
      }
      if (counts[id]++ === 0) index[p++] = id;
    }
    for (let q = first; q < p; q++) {
      value[q] = counts[index[q]]; // tf, times idf below
      counts[index[q]] = 0;
    }
    start[i + 1] = p;
  });
  const terms = [...ids.keys()].sort(compareCodePoints);
  const vocabulary = new Map();
  const column = new Int32Array(terms.length); // id -> column
  terms.forEach((t, col) => {
    vocabulary.set(t, col);
    column[ids.get(t)] = col;
  });
  const df = new Float64Array(terms.length);
  for (let q = 0; q < p; q++) df[(index[q] = column[index[q]])] += 1;
  const idf = Float64Array.from(df, (d) => (d > 0 ? Math.log(lists.length / d) : 0.0));
  // Each list's columns ascending, each with its count (kept by column meanwhile); then tf × idf.
  const tf = new Float64Array(terms.length);
  for (let i = 0; i < lists.length; i++) {
    for (let q = start[i]; q < start[i + 1]; q++) tf[index[q]] = value[q];
    index.subarray(start[i], start[i + 1]).sort();
    for (let q = start[i]; q < start[i + 1]; q++) value[q] = tf[index[q]] * idf[index[q]];
  }
  return { terms, vocabulary, idf, lines: { start, index: index.slice(0, p), value: value.slice(0, p) } };
}

/** A copy of `counts` twice as long. */
function grown(counts) {
  const out = new Int32Array(counts.length * 2);
  out.set(counts);
  return out;
}

/** A fitted LSA space: {terms, vocabulary, idf, U (nTerms × k), s, Vt (k × nWindows), rank}. */
export function fitLsa(windows, { rank, oversample, powerIterations, seed }) {
  const { terms, vocabulary, idf, lines } = tfidfLines(windows);
  const A = new SparseMatrix(terms.length, windows.length, transpose(lines, terms.length), lines);
  const { U, s, Vt } = randomizedSvd(A, { rank, oversample, powerIterations, seed });
  return { terms, vocabulary, idf, U, s, Vt, rank };
}

/** Fold-in: U_kᵀ q for the TF-IDF vector q of each token list (rows of a Float64Array). */
export function project(model, lists) {
  const { rank, U } = model;
  const out = new Float64Array(lists.length * rank);
  tfidfRows(lists, model.vocabulary, model.idf).forEach((row, i) => {
    for (const [col, v] of row) for (let c = 0; c < rank; c++) out[i * rank + c] += v * U[col * rank + c];
  });
  return out;
}

/** Each row of X (rows × k) divided by its norm; a zero row stays zero. */
export function unitRows(X, k) {
  const out = new Float64Array(X.length);
  for (let i = 0; i < X.length / k; i++) {
    let norm = 0;
    for (let c = 0; c < k; c++) norm += X[i * k + c] ** 2;
    norm = Math.sqrt(norm);
    for (let c = 0; c < k; c++) out[i * k + c] = norm > 0 ? X[i * k + c] / norm : X[i * k + c];
  }
  return out;
}

// The unit rows of each fold-in matrix searched, normalised on its first search, not on each.
const UNIT_ROWS = new WeakMap();
// Each model's unit query fold-ins by token array: a question is searched on every cut.
const UNIT_QUERIES = new WeakMap();

/** The `k` rows of `docs` (fold-ins, rows × rank) closest to the query by cosine, ties to the
 * lower index: {indices, scores}. */
export function search(model, queryTokens, docs, { k }) {
  const { rank } = model;
  let queries = UNIT_QUERIES.get(model);
  if (queries === undefined) UNIT_QUERIES.set(model, (queries = new WeakMap()));
  let q = queries.get(queryTokens);
  if (q === undefined) {
    q = unitRows(project(model, [queryTokens]), rank);
    queries.set(queryTokens, q);
  }
  let unit = UNIT_ROWS.get(docs);
  if (unit === undefined) {
    unit = unitRows(docs, rank);
    UNIT_ROWS.set(docs, unit);
  }
  const scores = new Float64Array(docs.length / rank);
  for (let i = 0; i < scores.length; i++) {
    let d = 0;
    for (let c = 0; c < rank; c++) d += unit[i * rank + c] * q[c];
    scores[i] = Math.min(1.0, Math.max(-1.0, d));
  }
  const indices = topK(scores, Math.min(k, scores.length));
  return { indices, scores: indices.map((i) => scores[i]) };
}
