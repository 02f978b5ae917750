// Exhibit V's pipeline: the reranker trained on train, each list reranked, MMR after it, λ chosen.
//
// Mirrors src/raglab/pipeline/reranking.py and the rows of pipeline/exhibits/rerank.py. A
// question's candidates are its first stage's top RERANK_DEPTH; a candidate is a positive
// training row when it holds the answer. The reranked list orders them by probability (ties in
// first-stage order); MMR then picks the first MMR_DEPTH with relevance = probability over the
// best one and redundancy = the TF-IDF cosine between chunks (given), the rest following. λ is
// the smallest of the grid whose training R@5 is no lower than the reranked order's.

import { topK } from "../base/topk.js";
import { compareCodePoints } from "../bm25/statistics.js";
import { tfidfRows } from "../embedding/lsa.js";
import { evaluate } from "../metrics/measures.js";
import { candidateFeatures } from "../rerank/features.js";
import { fitLogistic, predictProba } from "../rerank/logistic.js";
import { mmr } from "../rerank/mmr.js";
import { identifiers, identifiersAmong, tokenize } from "../text/tokens.js";

/** The three orders the exhibit compares. */
export const ORDERS = ["fusion", "reranked", "reranked + MMR"];

/** What the features read of each chunk ({text, title, headingPath}): its retrieval tokens,
 * identifiers, and title terms (the tokens of its page title and heading path), as the chunk
 * set of src/raglab/pipeline/indexes.py holds them. `tokens`, when given, are the chunks'
 * retrieval tokens already made with this `stem` and `analyzer` (the chunk set's). `titles`,
 * when given, keeps each title's terms by its text for later calls with the same `stem` and
 * `analyzer` (every cut of a lab: its sections' titles are the same). */
export function chunkFeatureInputs(chunks, { stem, analyzer, tokens = null, titles = new Map() }) {
  // Chunks of one section share a title and heading path: each is tokenised once, its Set
  // shared (never changed).
  return chunks.map((c, i) => {
    const title = [c.title, ...c.headingPath].join(" ");
    let terms = titles.get(title);
    if (terms === undefined) {
      terms = new Set(tokenize(title, { stem, analyzer }));
      titles.set(title, terms);
    }
    // A chunk's identifiers are found when first read: only the candidates' ever are. The
    // "raglab" analyzer's tokens hold them in order, so the text is not tokenised again.
    let found = null;
    const own = tokens === null ? tokenize(c.text, { stem, analyzer }) : tokens[i];
    return {
      tokens: own,
      get identifiers() {
        found ??= analyzer === "raglab" ? identifiersAmong(own) : identifiers(c.text);
        return found;
      },
      titleTerms: terms,
    };
  });
}

/** The chunks' TF-IDF rows, w(t, d) = tf(t, d) ln(N / df(t)) over the chunks themselves (the
 * reranker's redundancy for MMR): each row [[column, weight], ...] by ascending column, the
 * vocabulary sorted by code point. */
export function chunkTfidf(tokenLists) {
  const terms = [...new Set(tokenLists.flat())].sort(compareCodePoints);
  const vocabulary = new Map(terms.map((t, i) => [t, i]));
  const df = new Float64Array(terms.length);
  for (const list of tokenLists) for (const t of new Set(list)) df[vocabulary.get(t)] += 1;
  const idf = Float64Array.from(df, (d) => (d > 0 ? Math.log(tokenLists.length / d) : 0.0));
  return tfidfRows(tokenLists, vocabulary, idf);
}

/** chunkTfidf's rows from a BM25 index's statistics over the same token lists (bm25/
 * statistics.js: its terms sorted by code point, df the length of a term's postings, each
 * posting a document's tf in ascending document order): the same rows, read off the postings
 * by ascending column instead of counting the tokens again. */
export function postingsTfidf({ indptr, docs, tf, nDocs }) {
  const rows = Array.from({ length: nDocs }, () => []);
  for (let col = 0; col + 1 < indptr.length; col++) {
    const df = indptr[col + 1] - indptr[col];
    const idf = df > 0 ? Math.log(nDocs / df) : 0.0;
    for (let p = indptr[col]; p < indptr[col + 1]; p++) rows[docs[p]].push([col, tf[p] * idf]);
  }
  return rows;
}

/** A sparse row scaled to unit length: {cols: Int32Array, vals: Float64Array} in the row's order
 * (a zero row stays zero), and whether its columns strictly ascend. */
function unitRow(row) {
  let ss = 0.0;
  for (const [, v] of row) ss += v * v;
  const norm = Math.sqrt(ss);
  const safe = norm > 0 ? norm : 1.0;
  const cols = new Int32Array(row.length);
  const vals = new Float64Array(row.length);
  let ascending = true;
  row.forEach(([col, v], i) => {
    cols[i] = col;
    vals[i] = v / safe;
    if (i > 0 && col <= cols[i - 1]) ascending = false;
  });
  return { cols, vals, ascending };
}

/** The dot product of two unit rows, summed over the shorter row's columns in its order (the
 * longer row looked up). With ascending columns this is a merge of the two, the same terms
 * added in the same order, so the cosine is symmetric to the last bit. */
function unitDot(a, b) {
  const [small, large] = a.cols.length <= b.cols.length ? [a, b] : [b, a];
  let dot = 0.0;
  if (small.ascending && large.ascending) {
    const n = small.cols.length;
    const m = large.cols.length;
    for (let i = 0, j = 0; i < n && j < m; ) {
      const c = small.cols[i];
      const d = large.cols[j];
      if (c === d) {
        dot += small.vals[i++] * large.vals[j++];
      } else if (c < d) {
        i++;
      } else {
        j++;
      }
    }
    return dot;
  }
  // Columns out of order (or repeated): each row a map (a column's last value, at its first
  // place), the smaller one's entries looked up in the larger, as the rows were always summed.
  const map = (u) => new Map(Array.from(u.cols, (col, i) => [col, u.vals[i]]));
  const [x, y] = [map(a), map(b)];
  const [few, many] = x.size <= y.size ? [x, y] : [y, x];
  for (const [col, v] of few) {
    const w = many.get(col);
    if (w !== undefined) dot += v * w;
  }
  return dot;
}

/** How many cosine matrices (cosineMatrix) and columns (cosineColumns' column) were worked out,
 * for tests: a list's cosines are shared by every λ that reorders it. */
export const COSINES = { matrices: 0, columns: 0 };

// A row's unit form, kept while the row lives: the chunk sets' TF-IDF rows are asked for again
// and again (every question's candidates, every MMR), and each is scaled the same way each time.
const UNITS = new WeakMap();

function unitOf(row) {
  let u = UNITS.get(row);
  if (u === undefined) {
    u = unitRow(row);
    UNITS.set(row, u);
  }
  return u;
}

/** Cosines between sparse rows ([[column, weight], ...] ascending), an n × n array clipped to
 * [-1, 1]; a zero row has cosine 0 with every row, itself included. */
export function cosineMatrix(rows) {
  COSINES.matrices += 1;
  const units = rows.map(unitOf);
  const n = units.length;
  const out = Array.from({ length: n }, () => new Array(n));
  if (!units.every((u) => u.ascending)) {
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) out[i][j] = Math.min(1.0, Math.max(-1.0, unitDot(units[i], units[j])));
    return out;
  }
  // Ascending rows: row i spread over a dense array, each later row's columns looked up in it.
  // The common columns come in the same ascending order whichever row is walked, and a column
  // the other row lacks adds a zero, which changes no sum; so each pair, summed once, is
  // symmetric and equal to the merge's (unitDot's) value to the last bit.
  let width = 0;
  for (const u of units) if (u.cols.length) width = Math.max(width, u.cols[u.cols.length - 1] + 1);
  const dense = new Float64Array(width);
  for (let i = 0; i < n; i++) {
    const a = units[i];
    for (let k = 0; k < a.cols.length; k++) dense[a.cols[k]] = a.vals[k];
    for (let j = i; j < n; j++) {
      const { cols, vals } = units[j];
      let dot = 0.0;
      for (let k = 0; k < cols.length; k++) dot += vals[k] * dense[cols[k]];
      const c = Math.min(1.0, Math.max(-1.0, dot));
      out[i][j] = c;
      out[j][i] = c;
    }
    for (let k = 0; k < a.cols.length; k++) dense[a.cols[k]] = 0.0;
  }
  return out;
}

/** cosineMatrix(rows) a column at a time, each worked out when first asked for: {n, column(j)},
 * column(j)[i] equal to cosineMatrix(rows)[i][j] to the last bit (row j spread over a dense
 * array, row i's columns looked up in it: the same common columns in the same ascending order,
 * as cosineMatrix sums them). MMR reads only the columns of the few chunks it picks. */
export function cosineColumns(rows) {
  const units = rows.map(unitOf);
  const n = units.length;
  const ascending = units.every((u) => u.ascending);
  const columns = new Array(n).fill(null);
  let dense = null;
  const column = (j) => {
    if (columns[j] !== null) return columns[j];
    COSINES.columns += 1;
    const out = new Float64Array(n);
    const b = units[j];
    if (!ascending) {
      for (let i = 0; i < n; i++) out[i] = Math.min(1.0, Math.max(-1.0, unitDot(units[i], b)));
    } else {
      if (dense === null) {
        let width = 0;
        for (const u of units) if (u.cols.length) width = Math.max(width, u.cols[u.cols.length - 1] + 1);
        dense = new Float64Array(width);
      }
      for (let k = 0; k < b.cols.length; k++) dense[b.cols[k]] = b.vals[k];
      for (let i = 0; i < n; i++) {
        const { cols, vals } = units[i];
        let dot = 0.0;
        for (let k = 0; k < cols.length; k++) dot += vals[k] * dense[cols[k]];
        out[i] = Math.min(1.0, Math.max(-1.0, dot));
      }
      for (let k = 0; k < b.cols.length; k++) dense[b.cols[k]] = 0.0;
    }
    columns[j] = out;
    return out;
  };
  return { n, column };
}

/** A question's feature rows: `question` holds the inputs of candidateFeatures but `rank`. */
export function questionFeatures(question) {
  return candidateFeatures({ ...question, rank: question.bm25.map((_, i) => i + 1) });
}

/** The reranker fitted on the training questions, each {candidates, relevant, features}:
 * {model, rows, positives}. `options` as fitLogistic's. */
export function trainReranker(questions, options) {
  const X = [];
  const y = [];
  for (const q of questions) {
    if (q.candidates.length === 0) continue;
    const relevant = new Set(q.relevant);
    q.features.forEach((row, i) => {
      X.push(row);
      y.push(relevant.has(q.candidates[i]) ? 1 : 0);
    });
  }
  const positives = y.reduce((s, v) => s + v, 0);
  if (positives === 0) {
    throw new Error("the reranker has no example to learn from: no training candidate holds the answer");
  }
  if (positives === y.length) {
    throw new Error("the reranker has no example to learn from: every training candidate holds the answer");
  }
  return { model: fitLogistic(X, y, options), rows: y.length, positives };
}

/** Candidates (chunk indices) reordered by the model's probability of their feature rows,
 * equal probabilities keeping first-stage order: {indices, scores}. */
export function rerankCandidates(model, candidates, features) {
  if (candidates.length === 0) return { indices: [], scores: [] };
  const p = predictProba(model, features);
  const order = topK(p);
  return { indices: order.map((i) => candidates[i]), scores: order.map((i) => p[i]) };
}

// A reranked list's relevance (its scores over the best) and its order by relevance, kept while
// the list lives: λ is chosen by reordering every training list at each λ of the grid.
const RELEVANCE = new WeakMap();

/** A reranked list ({indices, scores}) after MMR at `lam`; `similarity` the TF-IDF cosines
 * between its chunks, in its order (rows, or cosineColumns' columns). */
export function mmrOrdered(reranked, similarity, { lam, depth }) {
  if (reranked.indices.length === 0) return reranked;
  let r = RELEVANCE.get(reranked);
  if (r === undefined) {
    const top = Math.max(Math.max(...reranked.scores), 1e-12);
    const relevance = reranked.scores.map((s) => s / top);
    r = { relevance, order: topK(relevance) };
    RELEVANCE.set(reranked, r);
  }
  const order = mmr(r.relevance, similarity, { lam, k: depth, order: r.order });
  return { indices: order.map((i) => reranked.indices[i]), scores: order.map((i) => reranked.scores[i]) };
}

/** Whether one of the first `k` of `list` is relevant: a positive gain in `relevant` (a Map
 * chunk -> gain), or a member of it (a Set or array of chunks), as metrics/measures.js judges. */
function hitInFirst(list, relevant, k) {
  const gains = relevant instanceof Map;
  const members = gains ? null : new Set(relevant);
  for (let i = 0; i < Math.min(k, list.length); i++) {
    if (gains ? (relevant.get(list[i]) ?? 0) > 0 : members.has(list[i])) return true;
  }
  return false;
}

/** The exhibit's rows and sweep from each answerable question's lists: `questions` holds
 * {split, candidates, relevant, reranked, similarity}; `measureOpts` evaluate's options.
 * Returns {rows, sweep: {points, reference, chosen_lambda, rule_metric}, chosenLambda}. */
export function rerankExhibit(questions, { lambdas, depth, ...measureOpts }) {
  const bySplit = { train: [], test: [] };
  for (const q of questions) bySplit[q.split].push(q);
  const measured = new Map();
  const measureOrder = (split, order, lam) => {
    const key = `${split}|${order}|${order === ORDERS[2] ? lam : ""}`;
    if (!measured.has(key)) {
      const qs = bySplit[split];
      const lists = qs.map((q) => {
        if (order === ORDERS[0]) return q.candidates;
        if (order === ORDERS[1]) return q.reranked.indices;
        return mmrOrdered(q.reranked, q.similarity, { lam, depth }).indices;
      });
      measured.set(key, evaluate(lists, qs.map((q) => q.relevant), measureOpts));
    }
    return measured.get(key);
  };
  // The choice reads R@5 alone, counted as evaluate() counts it: its mean of 0s and 1s,
  // summed exactly, is the count of hits over the count of questions, to the last bit.
  const train = bySplit.train;
  if (train.length === 0) throw new Error("no questions to average over");
  const recall5 = (lists) => lists.filter((list, q) => hitInFirst(list, train[q].relevant, 5)).length / lists.length;
  const plain = recall5(train.map((q) => q.reranked.indices));
  let chosenLambda = 1.0;
  for (const lam of [...lambdas].sort((a, b) => a - b)) {
    if (recall5(train.map((q) => mmrOrdered(q.reranked, q.similarity, { lam, depth }).indices)) >= plain - 1e-12) {
      chosenLambda = lam;
      break;
    }
  }
  const splits = ["train", "test"];
  // The rows and the sweep are measured on first use: a run needs only the λ chosen on train.
  let rows = null;
  let sweep = null;
  return {
    chosenLambda,
    get rows() {
      rows ??= splits.flatMap((split) =>
        ORDERS.map((order) => ({ split, order, ...measureOrder(split, order, chosenLambda) })),
      );
      return rows;
    },
    get sweep() {
      sweep ??= {
        points: splits.flatMap((split) =>
          lambdas.map((lam) => ({ lambda: lam, split, ...measureOrder(split, ORDERS[2], lam) })),
        ),
        reference: Object.fromEntries(splits.map((s) => [s, measureOrder(s, ORDERS[1], 1.0)])),
        chosen_lambda: chosenLambda,
        rule_metric: "recall@5",
      };
      return sweep;
    },
  };
}
