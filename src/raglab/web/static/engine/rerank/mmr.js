// Maximal marginal relevance (Carbonell and Goldstein 1998), one list at a time.
//
// Mirrors src/raglab/rerank/mmr.py: the first pick is the most relevant candidate; each later
// pick of the first min(k, n) is argmax_{d not picked} λ rel(d) − (1 − λ) max_{s picked} sim(d, s);
// the rest follow in relevance order; ties go to the lower candidate index everywhere.

import { topK } from "../base/topk.js";

/** The MMR order of all n candidates (indices into `relevance`); `similarity` is n rows of n,
 * or, symmetric, {n, column(j)} giving its column j (pipeline/reranking.js's cosineColumns:
 * only the picked candidates' columns are read). `order`, when given, is topK(relevance),
 * worked out once by a caller that reorders one list at many λ. */
export function mmr(relevance, similarity, { lam, k, order = null }) {
  const n = relevance.length;
  if (!relevance.every(Number.isFinite)) throw new Error("relevance must be finite");
  const byColumn = typeof similarity.column === "function";
  if (byColumn ? similarity.n !== n : similarity.length !== n || similarity.some((row) => row.length !== n)) {
    throw new Error(`similarity must have shape (${n}, ${n})`);
  }
  if (!(lam >= 0 && lam <= 1)) throw new Error(`lam must lie in [0, 1], got ${lam}`);
  if (!(k >= 0)) throw new Error("k must be non-negative");
  const picked = [];
  const available = new Array(n).fill(true);
  // A plain array: a Float64Array of more than eight entries is allocated off the heap, and
  // the λ sweep reorders every list at every λ.
  const maxSim = new Array(n).fill(-Infinity);
  for (let step = 0; step < Math.min(k, n); step++) {
    let next = -1;
    let best = -Infinity;
    for (let d = 0; d < n; d++) {
      const score = !available[d]
        ? -Infinity
        : step === 0
          ? relevance[d]
          : lam * relevance[d] - (1.0 - lam) * maxSim[d];
      // np.argmax: the first maximum (every score -inf: index 0).
      if (next === -1 || score > best) {
        next = d;
        best = score;
      }
    }
    picked.push(next);
    available[next] = false;
    if (byColumn) {
      const column = similarity.column(next);
      for (let d = 0; d < n; d++) maxSim[d] = Math.max(maxSim[d], column[d]);
    } else {
      for (let d = 0; d < n; d++) maxSim[d] = Math.max(maxSim[d], similarity[d][next]);
    }
  }
  return [...picked, ...(order ?? topK(relevance)).filter((i) => available[i])];
}
