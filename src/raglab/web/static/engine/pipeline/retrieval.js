// Retrieval's choice on the training split: score fusion's weight.
//
// Mirrors choose_weight of src/raglab/pipeline/retrieval.py: every weight w of the grid fuses
// each training question's BM25 and embedding lists (scoreFusion), the fused lists are measured
// (evaluate) and the weight with the highest (R@5, MRR) wins, ties to the smaller w.

import { scoreFusion } from "../fusion/score.js";
import { evaluate } from "../metrics/measures.js";

/** Each weight's measures and the weight chosen: `bm25` and `cosine` hold each question's lists
 * ({indices, scores}, at least `depth` long or whole), `relevant` its labels; the fused lists are
 * cut at `cut`. Returns {measures: one evaluate() per weight, weight}. */
export function chooseWeight(bm25, cosine, relevant, { weights, depth, cut, ks, ndcgK, precisionK }) {
  if (bm25.length === 0) throw new Error("choosing the fusion weight needs training questions");
  let best = null;
  let chosen = null;
  const measures = weights.map((weight) => {
    const lists = bm25.map((b, q) => scoreFusion(b, cosine[q], { weight, depth }).indices.slice(0, cut));
    const m = evaluate(lists, relevant, { ks, ndcgK, precisionK });
    const key = [m["recall@5"], m.mrr];
    // Strictly better only: on a tie the smaller weight, met first, stays.
    if (best === null || key[0] > best[0] || (key[0] === best[0] && key[1] > best[1])) {
      best = key;
      chosen = weight;
    }
    return m;
  });
  return { measures, weight: chosen };
}
