// The end-to-end run's figures from its readings: outcomes, counts, Wilson interval, the sweep.
//
// Mirrors src/raglab/pipeline/end_to_end.py: each reading diagnosed at the run's threshold; the
// accuracy with Wilson's interval; the bound (answerable questions whose answer chunk fits the
// context); the funnel of outcomes; the reader replayed at every threshold of the grid.

import { wilsonInterval } from "../metrics/stats.js";
import { diagnose, found, OUTCOMES, quoteCorrect } from "../reading/diagnosis.js";

/** The run's figures from its readings at `threshold`. */
export function runSummary(readings, threshold, { z }) {
  const outcomes = readings.map((r) => diagnose(r, threshold));
  const n = outcomes.length;
  const correct = outcomes.filter((o) => o === "correct").length;
  const answerable = readings.filter((r) => r.answerable);
  const fits = answerable.filter((r) => r.rank !== null && r.rank <= r.kBudget).length;
  return {
    outcomes,
    correct,
    n,
    accuracy: n ? correct / n : 0.0,
    interval: n ? wilsonInterval(correct, n, { z }) : [0.0, 0.0],
    answerable: answerable.length,
    answerable_correct: readings.filter((r, i) => r.answerable && outcomes[i] === "correct").length,
    bound: answerable.length ? fits / answerable.length : 0.0,
    funnel: Object.fromEntries(OUTCOMES.map((name) => [name, outcomes.filter((o) => o === name).length])),
  };
}

/** Right or wrong per question at `threshold`, for McNemar's paired test. */
export const outcomesVector = (readings, threshold) => readings.map((r) => diagnose(r, threshold) === "correct");

/** The reader replayed at each threshold, everything before it kept. */
export function thresholdSweep(readings, thresholds) {
  const answerable = readings.filter((r) => r.answerable).length;
  return thresholds.map((t) => {
    const quoted = readings.filter((r) => found(r, t));
    const right = quoted.filter((r) => r.answerable && quoteCorrect(r)).length;
    const falseOut = quoted.filter((r) => !r.answerable).length;
    return {
      threshold: t,
      answered: quoted.length,
      answerable,
      answerable_correct: right,
      answerable_false: quoted.length - right - falseOut,
      unanswerable: readings.length - answerable,
      unanswerable_false: falseOut,
      correct: right + (readings.length - answerable - falseOut),
    };
  });
}
