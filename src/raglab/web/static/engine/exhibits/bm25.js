// Exhibit II in the tab: BM25 search explained term by term, recall at one (k1, b), what
// stemming fixes and breaks, and the k1 × b grid with its chosen cell.
//
// Mirrors src/raglab/pipeline/exhibits/bm25.py and pipeline/grid.py (bm25_grid), each function
// answering with the JSON shape the server's /api/bm25/* route gives (src/raglab/web/routes/bm25.py).

import { gridTopK } from "../bm25/grid.js";
import { meanOf, firstRelevantRank } from "../metrics/measures.js";
import { isSpace, tokenize } from "../text/tokens.js";
import { chunkRow, defaultOf, fixedOf } from "./lab.js";

const HEADING_MARKS = /^#{1,6}[ \t]+/gm;

/** The start of a chunk as one line, Markdown heading marks dropped (exhibits/_shared.py). */
export function snippet(text, chars) {
  const words = [];
  let word = "";
  for (const ch of text.replace(HEADING_MARKS, "")) {
    if (isSpace(ch)) {
      if (word) words.push(word);
      word = "";
    } else word += ch;
  }
  if (word) words.push(word);
  const flat = words.join(" ");
  const points = [...flat];
  if (points.length <= chars) return flat;
  return `${points.slice(0, chars - 1).join("").replace(/\s+$/u, "")}…`;
}

/** BM25's ranking of the chunks sharing a term with the query: the first `depth` (0: all). */
export function bm25Ranking(lab, cs, tokens, { k1, b, depth }) {
  const at = cs.bm25At(k1, b);
  const k = depth === 0 ? cs.length : Math.min(depth, cs.length);
  const { indices, scores } = at.index.scoresSearch(at.scores(tokens), { k });
  const keep = scores.map((s) => s > 0);
  return { indices: indices.filter((_, i) => keep[i]), scores: scores.filter((_, i) => keep[i]) };
}

/** /api/bm25/search: the first `top` chunks with each query term's share of every score. */
export function bm25Search(lab, query, { k1, b, top, snippetChars }) {
  const cs = lab.chunkSet();
  const { index } = cs.bm25At(k1, b);
  const tokens = lab.queryTokens(query);
  const ranking = bm25Ranking(lab, cs, tokens, { k1, b, depth: defaultOf(lab.meta, "depth") });
  const results = ranking.indices.slice(0, top).map((i, n) => {
    const c = cs.chunks[i];
    const score = ranking.scores[n];
    return {
      ...chunkRow(c, i, n + 1, score),
      snippet: snippet(c.text, snippetChars),
      words: c.nWords,
      terms: index.explain(tokens, i).map((t) => ({
        term: t.term,
        tf: t.tf,
        df: t.df,
        idf: t.idf,
        length_factor: t.lengthFactor,
        contribution: t.contribution,
        share: score > 0 ? t.contribution / score : 0.0,
      })),
    };
  });
  const words = tokenize(query, { stem: false, analyzer: lab.analyzer });
  const stemmed =
    lab.stem && words.length === tokens.length
      ? words.flatMap((w, i) => (w !== tokens[i] ? [{ word: w, stem: tokens[i] }] : []))
      : [];
  return {
    query,
    tokens,
    stem: lab.stem,
    stemmed,
    k1,
    b,
    chunks: cs.length,
    avgdl: index.stats.avgdl,
    results,
  };
}

/** /api/bm25/examples: one answerable training question of each kind, up to `count`. */
export function exampleQueries(lab, count) {
  const seen = new Map();
  for (const q of lab.split("train", { answerable: true })) if (!seen.has(q.kind)) seen.set(q.kind, q);
  return [...seen.values()].slice(0, count).map((q) => ({ id: q.id, kind: q.kind, query: q.question }));
}

/** Each answerable question's rank of its first relevant chunk under BM25 (null: not ranked). */
export function firstRanks(lab, split, { k1, b }) {
  const cs = lab.chunkSet();
  const depth = defaultOf(lab.meta, "depth");
  return lab.split(split, { answerable: true }).map((q) => {
    const ranking = bm25Ranking(lab, cs, lab.queryTokens(q.question), { k1, b, depth });
    return firstRelevantRank(ranking.indices, cs.relevance(q));
  });
}

/** recall@k of BM25 at (k1, b) on `split`, with the count it is the share of. */
export function bm25Recall(lab, { k1, b, split }) {
  const k = fixedOf(lab.meta, "grid_recall_k");
  const ranks = firstRanks(lab, split, { k1, b });
  const found = ranks.map((r) => (r !== null && r <= k ? 1.0 : 0.0));
  return {
    split,
    k,
    hits: found.filter((f) => f > 0).length,
    questions: ranks.length,
    recall: meanOf(found),
  };
}

/** The training questions stemming fixes and breaks at (k1, b): `plain` and `stemmed` are the
 * lab without and with stemming. */
export function stemmingEffect(plain, stemmed, { k1, b }) {
  const k = fixedOf(plain.meta, "grid_recall_k");
  const off = firstRanks(plain, "train", { k1, b });
  const on = firstRanks(stemmed, "train", { k1, b });
  const rows = { fixes: [], breaks: [] };
  plain.split("train", { answerable: true }).forEach((q, i) => {
    const before = off[i] !== null && off[i] <= k;
    const after = on[i] !== null && on[i] <= k;
    if (before !== after) rows[after ? "fixes" : "breaks"].push({ id: q.id, question: q.question });
  });
  return { split: "train", k, questions: off.length, ...rows };
}

/** numpy.interp(value, values, [0, 1, …]): a value's place on the grid, in grid steps. */
function place(value, values) {
  const last = values.length - 1;
  if (value <= values[0]) return 0;
  if (value >= values[last]) return last;
  let j = 0;
  while (values[j + 1] <= value) j++;
  if (value === values[j]) return j;
  const slope = 1 / (values[j + 1] - values[j]);
  return slope * (value - values[j]) + j;
}

/** /api/bm25/grid: training recall@k for every (k1, b) of the grid, its best cell by `rule`,
 * the cells tied with it and the defaults' cell. `onProgress(done, total)` after each cell. */
export function gridView(lab, { k1Step, bStep, rule, onProgress = null }) {
  // The grid depends on the lab and these three only: kept on the lab, computed once.
  const key = JSON.stringify([k1Step, bStep, rule]);
  if (!lab._grids) lab._grids = new Map();
  if (!lab._grids.has(key)) lab._grids.set(key, computeGridView(lab, { k1Step, bStep, rule, onProgress }));
  return lab._grids.get(key);
}

function computeGridView(lab, { k1Step, bStep, rule, onProgress }) {
  const { meta } = lab;
  const k1s = fixedOf(meta, "grid_k1");
  const bs = fixedOf(meta, "grid_b");
  const k = fixedOf(meta, "grid_recall_k");
  const cs = lab.chunkSet();
  const qs = lab.split("train", { answerable: true });
  const queries = qs.map((q) => lab.queryTokens(q.question));
  const tops = gridTopK(cs.bm25, queries, { k1s, bs, k, onProgress });
  // A cell finds a question when one of its top k holds the answer and shares a term with the
  // question (a chunk scoring 0 is not retrieved); sharing a term does not depend on k1 or b.
  const positive = queries.map((q) => cs.bm25.scores(q));
  const relevant = qs.map((q) => cs.relevance(q));
  const hits = tops.map((row) =>
    row.map((cell) => cell.filter((top, q) => top.some((d) => relevant[q].has(d) && positive[q][d] > 0)).length),
  );
  const recall = hits.map((row) => row.map((h) => (qs.length ? h / qs.length : 0)));
  const dk1 = defaultOf(meta, "k1");
  const db = defaultOf(meta, "b");
  let best = null;
  k1s.forEach((k1, i) =>
    bs.forEach((b, j) => {
      const x = (k1 - dk1) / k1Step;
      const y = (b - db) / bStep;
      const distance = x * x + y * y;
      if (best === null || recall[i][j] > best.recall || (recall[i][j] === best.recall && distance < best.distance)) {
        best = { i, j, recall: recall[i][j], distance };
      }
    }),
  );
  const tied = [];
  hits.forEach((row, i) => row.forEach((h, j) => h === hits[best.i][best.j] && tied.push([i, j])));
  const at = (k1, b) => [place(k1, k1s), place(b, bs)];
  const defaults = bm25Recall(lab, { k1: dk1, b: db, split: "train" });
  return {
    split: "train",
    k,
    stem: lab.stem,
    k1s,
    bs,
    recall,
    hits,
    questions: qs.length,
    cells: k1s.length * bs.length,
    tied,
    rule,
    best: {
      k1: k1s[best.i],
      b: bs[best.j],
      recall: best.recall,
      hits: hits[best.i][best.j],
      at: at(k1s[best.i], bs[best.j]),
    },
    default: { k1: dk1, b: db, recall: defaults.recall, hits: defaults.hits, at: at(dk1, db) },
  };
}
