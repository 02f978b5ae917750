// Ranking metrics over a set of labelled questions.
//
// Mirrors src/raglab/metrics/measures.py and judging.py (docs/design.md#metrics): per question,
// with ranking d_1, d_2, ..., gains g(d) (0 when unlabelled) and R relevant chunks:
//   hit rate@k = [some i <= k has g(d_i) > 0]     (the product's "recall@k")
//   fractional recall@k = #{i <= k : g(d_i) > 0} / R
//   P@k = #{i <= k : g(d_i) > 0} / k,  top-1 = hit rate@1,  RR = 1 / first relevant rank
//   nDCG@k = DCG@k / IDCG@k, DCG@k = sum_{i<=k} g(d_i) / log2(i + 1), IDCG over the ideal order
// averaged with an exactly rounded sum (math.fsum). A ranking is an array of chunk indices, best
// first; labels are an iterable of relevant indices (gain 1) or a Map index -> gain (a gain of 0
// counts as unlabelled).

import { fsum } from "../base/exact.js";

/** The positive labels of a question as a Map chunk -> gain. */
function labelMap(relevant) {
  const out = new Map();
  if (relevant instanceof Map) {
    for (const [doc, gain] of relevant) {
      if (!(Number.isFinite(gain) && gain >= 0)) {
        throw new Error(`the gain of chunk ${doc} must be finite and >= 0, got ${gain}`);
      }
      if (gain > 0) out.set(doc, gain);
    }
  } else {
    for (const doc of relevant) out.set(doc, 1.0);
  }
  return out;
}

function checkCutoff(k, name = "k") {
  if (!Number.isInteger(k) || k < 1) throw new Error(`${name} must be a positive integer, got ${k}`);
  return k;
}

/** The labels laid against the rankings: per question the gains of the first `depth` ranks,
 * the ideal gains (decreasing), the first relevant rank (1-based, 0 if none) and R. */
export function judge(rankings, relevant, depth) {
  if (rankings.length !== relevant.length) {
    throw new Error(`got ${rankings.length} rankings but ${relevant.length} relevance labels`);
  }
  return rankings.map((ranking, q) => {
    if (new Set(ranking).size !== ranking.length) throw new Error(`question ${q}: a chunk is ranked twice`);
    const labels = labelMap(relevant[q]);
    // Plain arrays: a Float64Array of more than eight entries is allocated off the heap, and
    // the cold page judges thousands of rankings.
    const gains = new Array(depth).fill(0);
    let first = 0;
    ranking.forEach((doc, i) => {
      const g = labels.get(doc) ?? 0;
      if (i < depth) gains[i] = g;
      if (g > 0 && first === 0) first = i + 1;
    });
    const ideal = new Array(depth).fill(0);
    [...labels.values()].sort((a, b) => b - a).slice(0, depth).forEach((g, i) => (ideal[i] = g));
    return { gains, ideal, first, nRelevant: labels.size };
  });
}

function countHits(j, k) {
  let hits = 0;
  for (let i = 0; i < Math.min(k, j.gains.length); i++) if (j.gains[i] > 0) hits += 1;
  return hits;
}

function discountedSum(gains, k) {
  let out = 0.0;
  for (let i = 0; i < Math.min(k, gains.length); i++) out += gains[i] * (1.0 / Math.log2(i + 2));
  return out;
}

const ndcgOf = (j, k) => {
  const idcg = discountedSum(j.ideal, k);
  return idcg > 0 ? discountedSum(j.gains, k) / idcg : 0.0;
};

/** The mean of per-question values, exactly rounded sum over their count. */
export function meanOf(values) {
  if (values.length === 0) throw new Error("no questions to average over");
  return fsum(values) / values.length;
}

/** Hit rate at k per question (1 when a relevant chunk is in the first k). */
export function hitRateAtKPerQuery(rankings, relevant, { k }) {
  checkCutoff(k);
  return judge(rankings, relevant, k).map((j) => (countHits(j, k) > 0 ? 1.0 : 0.0));
}

/** Share of each question's relevant chunks found in the first k (0 when it has none). */
export function fractionalRecallAtKPerQuery(rankings, relevant, { k }) {
  checkCutoff(k);
  return judge(rankings, relevant, k).map((j) => (j.nRelevant > 0 ? countHits(j, k) / j.nRelevant : 0.0));
}

/** Relevant chunks in the first k divided by k, per question. */
export function precisionAtKPerQuery(rankings, relevant, { k }) {
  checkCutoff(k);
  return judge(rankings, relevant, k).map((j) => countHits(j, k) / k);
}

/** 1 / rank of the first relevant chunk (no cutoff), else 0, per question. */
export function reciprocalRankPerQuery(rankings, relevant) {
  return judge(rankings, relevant, 1).map((j) => (j.first > 0 ? 1.0 / j.first : 0.0));
}

/** nDCG at k per question (Järvelin and Kekäläinen 2002), linear gains. */
export function ndcgAtKPerQuery(rankings, relevant, { k }) {
  checkCutoff(k);
  return judge(rankings, relevant, k).map((j) => ndcgOf(j, k));
}

/** The 1-based rank of the first relevant chunk, or null when none is ranked. */
export function firstRelevantRank(ranking, relevant) {
  const first = judge([ranking], [relevant], 1)[0].first;
  return first > 0 ? first : null;
}

export const hitRateAtK = (r, l, o) => meanOf(hitRateAtKPerQuery(r, l, o));
export const fractionalRecallAtK = (r, l, o) => meanOf(fractionalRecallAtKPerQuery(r, l, o));
export const precisionAtK = (r, l, o) => meanOf(precisionAtKPerQuery(r, l, o));
export const top1Accuracy = (r, l) => meanOf(hitRateAtKPerQuery(r, l, { k: 1 }));
export const mrr = (r, l) => meanOf(reciprocalRankPerQuery(r, l));
export const ndcgAtK = (r, l, o) => meanOf(ndcgAtKPerQuery(r, l, o));

/** Every headline measure, averaged over the questions given, keys in Python's order:
 * "recall@{k}" for each k of `ks` (the hit rate), "mrr", "ndcg@{ndcgK}", "p@{precisionK}",
 * "top1". */
export function evaluate(rankings, relevant, { ks, ndcgK, precisionK }) {
  ks.forEach((k) => checkCutoff(k, "every k in ks"));
  checkCutoff(ndcgK, "ndcg_k");
  checkCutoff(precisionK, "precision_k");
  if (rankings.length === 0) throw new Error("no questions to average over");
  const judged = judge(rankings, relevant, Math.max(...ks, ndcgK, precisionK, 1));
  const out = {};
  for (const k of ks) out[`recall@${k}`] = meanOf(judged.map((j) => (countHits(j, k) > 0 ? 1.0 : 0.0)));
  out.mrr = meanOf(judged.map((j) => (j.first > 0 ? 1.0 / j.first : 0.0)));
  out[`ndcg@${ndcgK}`] = meanOf(judged.map((j) => ndcgOf(j, ndcgK)));
  out[`p@${precisionK}`] = meanOf(judged.map((j) => countHits(j, precisionK) / precisionK));
  out.top1 = meanOf(judged.map((j) => (countHits(j, 1) > 0 ? 1.0 : 0.0)));
  return out;
}
