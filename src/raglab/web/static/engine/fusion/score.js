// Min-max score fusion: fused(d) = w mm(BM25)(d) + (1 - w) mm(cos)(d).
//
// Mirrors src/raglab/fusion/score.py: each ranker's first `depth` scores stretched onto [0, 1]
// ((x - min) / (max - min); all equal: 0), mixed with the weight w of BM25; a chunk missing from
// a list gets 0 there.

import { fuse, head } from "./kernel.js";

/** Min-max scaling of one ranker's scores. */
export function minmax(scores) {
  if (!scores.every(Number.isFinite)) throw new Error("scores must be finite");
  const lo = Math.min(...scores);
  const hi = Math.max(...scores);
  const span = hi - lo;
  return scores.map((x) => (span > 0 ? (x - lo) / span : 0.0));
}

/** Score fusion of a BM25 and a cosine ranking ({indices, scores}) for one question. */
export function scoreFusion(bm25, cosine, { weight, depth }) {
  if (!(Number.isFinite(weight) && weight >= 0 && weight <= 1)) {
    throw new Error(`weight must be a number in [0, 1], got ${weight}`);
  }
  const contributions = [];
  [bm25, cosine].forEach((ranking, r) => {
    const chunks = head(ranking.indices, depth, `ranker ${r}`);
    const scaled = minmax(ranking.scores.slice(0, depth));
    const w = r === 0 ? weight : 1.0 - weight;
    chunks.forEach((chunk, i) => contributions.push([chunk, scaled[i] * w]));
  });
  return fuse(contributions);
}
