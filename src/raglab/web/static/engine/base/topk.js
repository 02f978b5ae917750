// The one top-k selection every ranker uses: best first, ties to the smaller index.
//
// Mirrors src/raglab/base/topk.py: the first k of a sort by (-score, index), NaN after every
// number, NaNs among themselves by index.

/** Whether entry a comes before entry b in the order (-score, index), NaN last. */
function before(scores, a, b) {
  const x = scores[a];
  const y = scores[b];
  const xn = Number.isNaN(x);
  const yn = Number.isNaN(y);
  if (xn || yn) return xn && yn ? a < b : yn;
  return x > y || (x === y && a < b);
}

// Up to this k the selection keeps a sorted list of the best k seen (one pass, k comparisons
// at most per entry); past it, a full sort.
const INSERTION_MAX_K = 64;

/** Indices of the first min(k, N) entries of `scores` in the order (-score, index); k omitted:
 * all N in that order. */
export function topK(scores, k = scores.length) {
  const n = scores.length;
  const m = Math.min(k, n);
  if (m <= INSERTION_MAX_K) {
    const best = [];
    for (let i = 0; i < n; i++) {
      if (best.length === m && !before(scores, i, best[m - 1])) continue;
      let at = best.length === m ? m - 1 : best.length;
      while (at > 0 && before(scores, i, best[at - 1])) {
        best[at] = best[at - 1];
        at--;
      }
      best[at] = i;
    }
    return best;
  }
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => (before(scores, a, b) ? -1 : before(scores, b, a) ? 1 : 0));
  return order.slice(0, m);
}
