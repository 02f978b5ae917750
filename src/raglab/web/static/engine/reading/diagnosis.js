// The diagnosis of a miss: where in the pipeline a question's answer was lost.
//
// Mirrors src/raglab/reading/diagnosis.py (docs/design.md#diagnosis), checked in pipeline order:
// "correct"; "cut" (no chunk holds the whole answer); "not retrieved" (no answer chunk within the
// final list's depth); "past budget" (ranked, but past the chunks the context holds); "reader"
// (in the context, another sentence or none quoted); "false answer" (out of corpus, answered).

import { COVERAGE_EPSILON } from "./reader.js";

export const DIAGNOSES = ["cut", "not retrieved", "past budget", "reader", "false answer"];
export const OUTCOMES = ["correct", ...DIAGNOSES];

/** Whether the reader quotes its best sentence at `threshold`. */
export const found = (r, threshold) => r.best !== null && r.coverage >= threshold - COVERAGE_EPSILON;

/** Whether the best sentence is a correct quote. */
export const quoteCorrect = (r) => r.relation === "inside" || r.relation === "contains";

/** The outcome of reading `r` at `threshold`: "correct" or one of DIAGNOSES. */
export function diagnose(r, threshold) {
  const quoted = found(r, threshold);
  if (!r.answerable) return quoted ? "false answer" : "correct";
  if (quoted && quoteCorrect(r)) return "correct";
  if (r.cut) return "cut";
  if (r.rank === null || r.rank > r.depth) return "not retrieved";
  if (r.rank > r.kBudget) return "past budget";
  return "reader";
}

/** The threshold under which the most readings come out correct, ties to the smallest. */
export function chooseThreshold(readings, thresholds) {
  let best = null;
  let bestCount = -1;
  for (const t of thresholds) {
    const count = readings.filter((r) => diagnose(r, t) === "correct").length;
    if (count > bestCount || (count === bestCount && t < best)) {
      best = t;
      bestCount = count;
    }
  }
  return best;
}
