// The fixed chunker's closed forms: how many chunks a page gives, and how often a span is cut.
//
// Mirrors src/raglab/chunking/closed_forms.py (integers where it counts in integers).

function checkInt(name, value, minimum) {
  if (!Number.isInteger(value)) throw new Error(`${name} must be an integer, not ${value}`);
  if (value < minimum) throw new Error(`${name} must be at least ${minimum}, got ${value}`);
  return value;
}

/** The window's size and overlap, checked: 0 <= overlap < size. */
export function checkWindow(size, overlap) {
  const s = checkInt("size", size, 1);
  const o = checkInt("overlap", overlap, 0);
  if (o >= s) throw new Error(`overlap must be smaller than size, got size=${s}, overlap=${o}`);
  return [s, o];
}

export { checkInt };

/** Chunks the fixed chunker makes from a page of N words: ⌈(N−o)/(s−o)⌉ (one when 0 < N ≤ s,
 * none when N = 0). */
export function expectedChunkCount(nWords, { size, overlap }) {
  const n = checkInt("n_words", nWords, 0);
  const [s, o] = checkWindow(size, overlap);
  if (n === 0) return 0;
  if (n <= s) return 1;
  return Math.ceil((n - o) / (s - o)); // exact: integers far below 2^53
}

/** The seed's approximation of P(a span of L words is cut): (L−1−o)/(s−o) clipped to [0, 1],
 * 0 when o ≥ L−1, 1 when L > s. */
export function cutProbability(length, { size, overlap }) {
  const n = checkInt("length", length, 1);
  const [s, o] = checkWindow(size, overlap);
  if (n > s) return 1.0;
  if (o >= n - 1) return 0.0;
  return Math.min(1.0, Math.max(0.0, (n - 1 - o) / (s - o)));
}
