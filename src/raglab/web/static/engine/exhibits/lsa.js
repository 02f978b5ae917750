// Exhibit III in the tab: the LSA fit's spectrum and its windows, and search by cosine.
//
// Mirrors src/raglab/pipeline/exhibits/lsa.py (lsa_spectrum, lsa_search) and the /api/lsa
// route's description of the windows (src/raglab/web/routes/lsa.py), the nearest words
// (nearest_words, LSAModel.neighbours) and the identifier pairs (identifier_twins,
// identifier_pairs).

import { topK } from "../base/topk.js";
import { fsum } from "../base/exact.js";
import {
  evenWindows,
  fitLsa,
  lsaWindows,
  powerIterationsFor,
  search,
  unitRows,
  windowCount,
} from "../embedding/lsa.js";
import { countWords, identifiers } from "../text/tokens.js";
import { bm25Ranking, snippet } from "./bm25.js";
import { chunkRow, defaultOf, fixedOf } from "./lab.js";

/** The lab's LSA fit (windows, model, ||A||_F^2), built once; `progress(done, total, what)`. */
export function lsaModel(lab, { windowsSet, progress = () => {} }) {
  if (lab._lsa) return lab._lsa;
  const { meta } = lab;
  const minimum = fixedOf(meta, "lsa_windows");
  const size = fixedOf(meta, "lsa_window_words");
  progress(0, 1, "the LSA fit");
  const { stem, analyzer } = lab;
  const tokens = (page, start, end) => lab.spanTokens(page.id, start, end, { stem, analyzer });
  const windows = lsaWindows(lab.pages, tokens, { count: windowsSet, minimum, size });
  const power = powerIterationsFor(windows.length, { base: fixedOf(meta, "lsa_power_iterations"), minimum });
  const model = fitLsa(windows, {
    rank: fixedOf(meta, "lsa_rank"),
    oversample: fixedOf(meta, "lsa_oversample"),
    powerIterations: power,
    seed: fixedOf(meta, "seed"),
  });
  // ||A||_F^2: every TF-IDF entry of the windows squared, summed exactly (base/exact.py).
  const squares = [];
  for (const w of windows) {
    const counts = new Map();
    for (const t of w) counts.set(t, (counts.get(t) ?? 0) + 1);
    for (const [t, tf] of counts) {
      const v = tf * model.idf[model.vocabulary.get(t)];
      squares.push(v * v);
    }
  }
  model.frobeniusSq = fsum(squares);
  progress(1, 1, "the LSA fit");
  lab._lsa = { windows, model, power, minimum, size };
  return lab._lsa;
}

/** /api/lsa: the singular values, each one's share of ||A||_F^2, words to try, the windows. */
export function lsaSpectrum(lab, { windowsSet, windowRule, sampleWords, progress }) {
  const { windows, model, power, minimum, size } = lsaModel(lab, { windowsSet, progress });
  const { rank, s, U, terms } = model;
  const share = Array.from(s, (v) => (model.frobeniusSq > 0 ? (v * v) / model.frobeniusSq : 0));
  const cumulative = [];
  share.reduce((sum, v) => {
    cumulative.push(sum + v);
    return sum + v;
  }, 0);
  const norms = new Float64Array(terms.length);
  for (let i = 0; i < terms.length; i++) {
    let n = 0;
    for (let c = 0; c < rank; c++) n += (U[i * rank + c] * s[c]) ** 2;
    norms[i] = Math.sqrt(n);
  }
  // The first sampleWords terms by norm that are not identifiers: each term checked only until
  // they are found, not every term of the vocabulary.
  const samples = [];
  for (const i of topK(norms)) {
    if (samples.length >= sampleWords) break;
    if (identifiers(terms[i]).size === 0) samples.push(terms[i]);
  }
  const words = lab.pages.reduce((n, p) => n + countWords(p.text), 0);
  const byRule = windowCount(words, { minimum, size });
  let why;
  if (windowsSet !== null) {
    why = `This lab is set to ${windows.length.toLocaleString("en-US")} windows, where the rule would give ${byRule.toLocaleString("en-US")}: ${windowRule[0].toLowerCase()}${windowRule.slice(1)}.`;
  } else if (words <= size) {
    why = `${windowRule}; these ${words.toLocaleString("en-US")} words fit in one window, which holds them all.`;
  } else {
    why = `${windowRule}: ${words.toLocaleString("en-US")} words give ${windows.length.toLocaleString("en-US")} windows.`;
  }
  return {
    rank,
    windows: windows.length,
    window_words: size,
    oversample: fixedOf(lab.meta, "lsa_oversample"),
    power_iterations: power,
    vocabulary: terms.length,
    singular_values: Array.from(s),
    variance_share: share,
    cumulative_share: cumulative,
    kept_share: fsum(share),
    sample_words: samples,
    windows_by_rule: byRule,
    windows_set: windowsSet !== null,
    windows_rule: why,
  };
}

/** The chunk set's LSA fold-in, project(model, cs.tokens) (rows × rank), kept on the chunk set
 * and read off its BM25 postings rather than counting every chunk's tokens again: both hold
 * the same counts, and with both vocabularies sorted by code point each row's terms are added
 * in the same ascending column order, tf × idf times U's row, so the sums are the same to the
 * last bit. */
export function chunkFoldIn(model, cs) {
  if (!cs._lsa) {
    const { rank, U, vocabulary, idf } = model;
    const { terms, indptr, docs, tf } = cs.bm25.stats;
    const out = new Float64Array(cs.length * rank);
    terms.forEach((term, j) => {
      const col = vocabulary.get(term);
      if (col === undefined) return;
      const u = col * rank;
      for (let p = indptr[j]; p < indptr[j + 1]; p++) {
        const v = tf[p] * idf[col];
        const at = docs[p] * rank;
        for (let c = 0; c < rank; c++) out[at + c] += v * U[u + c];
      }
    });
    cs._lsa = out;
  }
  return cs._lsa;
}

/** /api/lsa/search: the first `top` chunks by cosine to the folded-in query. */
export function lsaSearch(lab, query, { top, windowsSet, snippetChars, progress }) {
  const { model } = lsaModel(lab, { windowsSet, progress });
  const cs = lab.chunkSet();
  chunkFoldIn(model, cs);
  const tokens = lab.queryTokens(query);
  const depth = defaultOf(lab.meta, "depth");
  const k = depth === 0 ? cs.length : Math.min(depth, cs.length);
  const ranking = search(model, tokens, cs._lsa, { k });
  const results = ranking.indices.slice(0, top).map((i, n) => {
    const c = cs.chunks[i];
    return {
      ...chunkRow(c, i, n + 1, ranking.scores[n]),
      snippet: snippet(c.text, snippetChars),
    };
  });
  return { query, tokens, known_tokens: tokens.filter((t) => model.vocabulary.has(t)), results };
}

// --- nearest words and identifier pairs -------------------------------------------------------

/** Round half to even (numpy's rint). */
function rint(x) {
  const r = Math.round(x);
  return Math.abs(x - Math.trunc(x)) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** numpy.round(x, decimals): rint(x · 10^d) / 10^d. */
const roundTo = (x, decimals) => (Number.isFinite(x) ? rint(x * 10 ** decimals) / 10 ** decimals : x);

/** Each term's [windows holding it, whether they are one passage (max start < min stop)]. */
function windowEvidence(lab, fit) {
  if (fit.evidence) return fit.evidence;
  const n = lab.pages.reduce((sum, p) => sum + countWords(p.text), 0);
  const ranges = evenWindows(n, { count: fit.windows.length, size: fit.size });
  const held = new Map();
  fit.windows.forEach((tokens, w) => {
    for (const t of new Set(tokens)) {
      if (!held.has(t)) held.set(t, []);
      held.get(t).push(w);
    }
  });
  fit.evidence = new Map();
  for (const [t, ws] of held) {
    const start = Math.max(...ws.map((w) => ranges[w][0]));
    const stop = Math.min(...ws.map((w) => ranges[w][1]));
    fit.evidence.set(t, [ws.length, start < stop]);
  }
  fit.sets = fit.windows.map((w) => new Set(w));
  return fit.evidence;
}

const sharedWindows = (fit, a, b) => fit.sets.filter((s) => s.has(a) && s.has(b)).length;

/** The rows of U_k S_k, each divided by its norm (zero rows stay zero), built once. */
function termRows(fit) {
  if (fit.unitTerms) return fit.unitTerms;
  const { U, s, rank, terms } = fit.model;
  const X = new Float64Array(terms.length * rank);
  for (let i = 0; i < terms.length; i++) for (let c = 0; c < rank; c++) X[i * rank + c] = U[i * rank + c] * s[c];
  fit.unitTerms = unitRows(X, rank);
  fit.termVectors = X;
  return fit.unitTerms;
}

/** LSAModel.neighbours: the k terms nearest `word` by cosine, ties (to 12 decimals) to
 * vocabulary order: [[term, cosine], ...]. */
function neighbours(fit, word, k, tieDecimals) {
  const { model } = fit;
  const col = model.vocabulary.get(word);
  if (col === undefined) return [];
  const rows = termRows(fit);
  const { rank } = model;
  const n = model.terms.length;
  let any = false;
  for (let c = 0; c < rank; c++) if (rows[col * rank + c] !== 0) any = true;
  if (!any) return [];
  const scores = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let d = 0;
    for (let c = 0; c < rank; c++) d += rows[i * rank + c] * rows[col * rank + c];
    scores[i] = Math.min(1.0, Math.max(-1.0, d));
  }
  scores[col] = -Infinity;
  const order = topK(scores.map((x) => roundTo(x, tieDecimals)), Math.min(k, n - 1));
  return order.map((i) => [model.terms[i], scores[i]]);
}

/** The cosine of two terms' rows of U_k S_k; null when either has none. */
function termCosine(fit, a, b) {
  const { model } = fit;
  const ia = model.vocabulary.get(a);
  const ib = model.vocabulary.get(b);
  if (ia === undefined || ib === undefined) return null;
  termRows(fit);
  const { rank } = model;
  const X = fit.termVectors;
  let na = 0;
  let nb = 0;
  let dot = 0;
  for (let c = 0; c < rank; c++) {
    na += X[ia * rank + c] ** 2;
    nb += X[ib * rank + c] ** 2;
    dot += X[ia * rank + c] * X[ib * rank + c];
  }
  if (!(na > 0 && nb > 0)) return null;
  return Math.min(1.0, Math.max(-1.0, dot / (Math.sqrt(na) * Math.sqrt(nb))));
}

/** exhibits/lsa.py's term_cosine of two texts, each one term (else null), as
 * exhibits/neural.py's twin_cosines asks it. */
export function termCosineOf(lab, a, b, { windowsSet }) {
  const [ta, tb] = [lab.queryTokens(a), lab.queryTokens(b)];
  if (ta.length !== 1 || tb.length !== 1) return null;
  return termCosine(lsaModel(lab, { windowsSet }), ta[0], tb[0]);
}

function neighbourRows(lab, fit, term, k, tieDecimals) {
  const evidence = windowEvidence(lab, fit);
  return neighbours(fit, term, k, tieDecimals).map(([w, c]) => {
    const [windows, one] = evidence.get(w) ?? [0, false];
    return { word: w, cosine: c, windows, shared_windows: sharedWindows(fit, term, w), one_passage: one };
  });
}

function asTerm(lab, word) {
  const tokens = lab.queryTokens(word);
  return tokens.length ? tokens[0] : word.trim().toLowerCase();
}

/** /api/lsa/neighbours: the k words nearest `word`, each with its window evidence. */
export function nearestWords(lab, word, { k, windowsSet, tieDecimals, progress }) {
  const fit = lsaModel(lab, { windowsSet, progress });
  const term = asTerm(lab, word);
  const [windows, one] = windowEvidence(lab, fit).get(term) ?? [0, false];
  const known = fit.model.vocabulary.has(term);
  return {
    word,
    term,
    in_vocabulary: known,
    windows,
    one_passage: one,
    neighbours: known ? neighbourRows(lab, fit, term, k, tieDecimals) : [],
  };
}

const DIGIT = /^\p{Nd}$/u;
const sortedChars = (t) => [...t].sort().join("");

function twinCandidates(fit) {
  const ids = fit.model.terms.filter((t) => {
    const found = identifiers(t);
    return found.size === 1 && found.has(t);
  });
  const pairs = [];
  for (let i = 0; i < ids.length; i++) {
    for (let j = i + 1; j < ids.length; j++) {
      const a = ids[i];
      const b = ids[j];
      const ca = [...a];
      const cb = [...b];
      if (ca.length !== cb.length) continue;
      const diff = ca.flatMap((x, n) => (x !== cb[n] ? [[x, cb[n]]] : []));
      if (!diff.length || !diff.every(([x, y]) => DIGIT.test(x) && DIGIT.test(y))) continue;
      if (sortedChars(a) === sortedChars(b) || diff.length <= 2) pairs.push([a, b]);
    }
  }
  return pairs;
}

function clearestPair(lab, fit) {
  if (fit.clearest !== undefined) return fit.clearest;
  const evidence = windowEvidence(lab, fit);
  let best = null;
  for (const [x, y] of twinCandidates(fit)) {
    if (evidence.get(x)[1] || evidence.get(y)[1]) continue;
    const swapped = sortedChars(x) === sortedChars(y);
    const cosine = termCosine(fit, x, y) ?? -1.0;
    if (best === null || swapped > best.swapped || (swapped === best.swapped && cosine > best.cosine)) {
      best = { swapped, cosine, pair: [x, y] };
    }
  }
  fit.clearest = best === null ? null : best.pair;
  return fit.clearest;
}

/** The display rows of a ranking's first k (pipeline/retrieval.py's ranked_chunks). */
function rankedRows(cs, ranking, k) {
  return ranking.indices.slice(0, k).map((i, n) => chunkRow(cs.chunks[i], i, n + 1, ranking.scores[n]));
}

/** /api/lsa/twins: two identifiers (given, or the clearest pair), their nearest words and the
 * first chunks of LSA and of BM25 for each as the whole query. */
export function identifierTwins(lab, a, b, { windowsSet, tieDecimals, progress }) {
  if ((a === null) !== (b === null)) throw new Error("give both identifiers, or neither to let the lab choose a pair");
  const fit = lsaModel(lab, { windowsSet, progress });
  let pair;
  if (a !== null) pair = [asTerm(lab, a), asTerm(lab, b)];
  else {
    pair = clearestPair(lab, fit);
    if (pair === null) return { a: null, b: null, cosine: null, sides: [] };
  }
  const cs = lab.chunkSet();
  chunkFoldIn(fit.model, cs);
  const depth = defaultOf(lab.meta, "depth");
  const k = depth === 0 ? cs.length : Math.min(depth, cs.length);
  const sides = pair.map((term) => {
    const known = fit.model.vocabulary.has(term);
    const tokens = lab.queryTokens(term);
    return {
      term,
      in_vocabulary: known,
      neighbours: known ? neighbourRows(lab, fit, term, 5, tieDecimals) : [],
      lsa: rankedRows(cs, search(fit.model, tokens, cs._lsa, { k }), 3),
      bm25: rankedRows(
        cs,
        bm25Ranking(lab, cs, tokens, { k1: defaultOf(lab.meta, "k1"), b: defaultOf(lab.meta, "b"), depth }),
        3,
      ),
    };
  });
  return { a: pair[0], b: pair[1], cosine: termCosine(fit, pair[0], pair[1]), sides };
}

function pairRow(lab, fit, a, b, role, { examplePair, tieDecimals }) {
  const evidence = windowEvidence(lab, fit);
  const [na, oneA] = evidence.get(a) ?? [0, false];
  const [nb, oneB] = evidence.get(b) ?? [0, false];
  const shared = sharedWindows(fit, a, b);
  const cosine = termCosine(fit, a, b);
  const held = `${a} is in ${na} of the ${fit.windows.length} windows, ${b} in ${nb}; they share ${shared}`;
  let why;
  if (cosine === null) why = `${held}, and one of them has no vector in the embedding.`;
  else if (cosine >= 0.8) {
    why = `${held}. Written about in the same windows, they get nearly the same vector (cosine ${cosine.toFixed(3)}): to the embedding they are one word.`;
  } else {
    const nearA = neighbours(fit, a, 1, tieDecimals);
    const nearB = neighbours(fit, b, 1, tieDecimals);
    const beside = nearA.length && nearB.length ? ` (${a} beside ${nearA[0][0]}, ${b} beside ${nearB[0][0]})` : "";
    why = `${held}. Each is written about in its own context${beside}, so the embedding keeps them apart (cosine ${cosine.toFixed(3)}): codes blur when they share their windows, not because they are spelled alike.`;
  }
  if (role === "clearest") {
    const kind =
      sortedChars(a) === sortedChars(b)
        ? `the pair with swapped digits (like ${examplePair[0]} and ${examplePair[1]})`
        : "the pair";
    why = `Among the identifier pairs a digit or two apart whose codes each appear in more than one passage, ${kind} the embedding places closest. ${why}`;
  }
  return { role, a, b, cosine, windows: [na, nb], one_passage: [oneA, oneB], shared_windows: shared, why };
}

/** /api/lsa/pairs: the example pair (when both are in the vocabulary) and the clearest pair. */
export function identifierPairs(lab, { windowsSet, examplePair, tieDecimals, progress }) {
  const fit = lsaModel(lab, { windowsSet, progress });
  const rows = [];
  const [a, b] = examplePair.map((x) => asTerm(lab, x));
  if (fit.model.vocabulary.has(a) && fit.model.vocabulary.has(b)) rows.push(pairRow(lab, fit, a, b, "example", { examplePair, tieDecimals }));
  const best = clearestPair(lab, fit);
  if (best !== null && new Set([...best, a, b]).size !== 2) {
    rows.push(pairRow(lab, fit, best[0], best[1], "clearest", { examplePair, tieDecimals }));
  }
  return { windows: fit.windows.length, pairs: rows };
}
