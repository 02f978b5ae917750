// Reciprocal rank fusion (Cormack, Clarke and Buettcher 2009): RRF(d) = sum_r 1 / (k + rank_r(d)).
//
// Mirrors src/raglab/fusion/rrf.py: positions, not scores; each ranker's first `depth` results.

import { fuse, head } from "./kernel.js";

/** RRF of one question's rankings (arrays of chunk indices, best first): {indices, scores}. */
export function rrf(rankings, { k, depth }) {
  if (!(Number.isFinite(k) && k >= 0)) throw new Error(`k must be a finite number >= 0, got ${k}`);
  const contributions = [];
  rankings.forEach((ranking, r) => {
    head(ranking, depth, `ranker ${r}`).forEach((chunk, i) => contributions.push([chunk, 1.0 / (k + (i + 1))]));
  });
  return fuse(contributions);
}
