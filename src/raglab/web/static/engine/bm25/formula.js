// The BM25 formula, written once: Lucene's IDF, the saturation and their checks.
//
// Mirrors src/raglab/bm25/formula.py (Robertson and Zaragoza 2009, as Lucene's BM25Similarity):
//   IDF(t)     = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))
//   saturation = f (k1 + 1) / (f + k1 ((1 - b) + b |d| / avgdl))
// with the same floating-point operations in the same order as the Python engine, so that equal
// inputs give equal scores and ties fall where Python's fall.

/** Lucene's IDF of a term held by `df` of `nDocs` documents. */
export const luceneIdf = (df, nDocs) => Math.log1p((nDocs - df + 0.5) / (df + 0.5));

/** Document length normalisation, (1 - b) + b ratio, with ratio = |d| / avgdl. */
export const lengthFactor = (ratio, b) => 1.0 - b + b * ratio;

/** The saturation's document part, k1 ((1 - b) + b ratio). */
export const lengthTerm = (ratio, k1, b) => k1 * lengthFactor(ratio, b);

/** The saturation from its document part: tf (k1 + 1) / (tf + length). */
export const impact = (tf, length, k1) => (tf * (k1 + 1.0)) / (tf + length);

/** tf (k1 + 1) / (tf + k1 ((1 - b) + b ratio)). */
export const saturation = (tf, ratio, k1, b) => impact(tf, lengthTerm(ratio, k1, b), k1);

/** Refuse a k1 that is not a finite number >= 0, or a b outside [0, 1]. */
export function checkParams(k1, b) {
  if (!(Number.isFinite(k1) && k1 >= 0)) throw new Error(`k1 must be a finite number >= 0, got ${k1}`);
  if (!(Number.isFinite(b) && b >= 0 && b <= 1)) throw new Error(`b must lie in [0, 1], got ${b}`);
}

/** Refuse a depth k that is not a positive integer. */
export function checkK(k) {
  if (!Number.isInteger(k) || k < 1) throw new Error(`k must be a positive integer, got ${k}`);
}
