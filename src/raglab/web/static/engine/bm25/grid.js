// The (k1, b) grid sweep: every cell's exact BM25 top k for a batch of queries.
//
// Mirrors src/raglab/bm25/grid.py: cell [i][j][q] equals
// index.withParams({k1: k1s[i], b: bs[j]}).search(queries[q], {k}).indices exactly (the same
// products summed in the same order, the same tie-break).

import { checkK, checkParams } from "./formula.js";

/** Top-k document indices for every (k1, b) of a grid: nested arrays
 * [len(k1s)][len(bs)][len(queries)][min(k, nDocs)]. `onProgress(done, total)` after each cell. */
export function gridTopK(index, queries, { k1s, bs, k, onProgress = null }) {
  checkK(k);
  if (k1s.length === 0 || bs.length === 0) throw new Error("k1s and bs must not be empty");
  for (const k1 of k1s) for (const b of bs) checkParams(k1, b);
  const total = k1s.length * bs.length;
  let done = 0;
  const terms = queries.map((q) => index.stats.queryTerms(q));
  // One array of scores serves every query of every cell: a search keeps its indices alone.
  const scores = new Float64Array(index.nDocs);
  return k1s.map((k1) =>
    bs.map((b) => {
      const cell = index.withParams({ k1, b });
      const out = terms.map((q) => cell.scoresSearch(cell.termScores(q, scores), { k }).indices);
      done += 1;
      if (onProgress) onProgress(done, total);
      return out;
    }),
  );
}
