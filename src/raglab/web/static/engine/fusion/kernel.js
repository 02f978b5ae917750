// The kernel both fusions share: contributions summed per chunk, then ranked.
//
// Mirrors src/raglab/fusion/kernel.py: each ranker contributes its first `depth` results; the
// fused ranking is their union by decreasing fused score, ties to the lower chunk index; a
// chunk's contributions are added in ascending order of value, so a fused score depends on the
// set of contributions alone.

/** The first `depth` entries of a ranking, checked: no chunk twice. */
export function head(indices, depth, where) {
  if (!Number.isInteger(depth) || depth < 1) throw new Error(`depth must be a positive integer, got ${depth}`);
  const out = indices.slice(0, depth);
  if (new Set(out).size !== out.length) {
    throw new Error(`${where}: a chunk appears more than once in the ranker's first results`);
  }
  return out;
}

/** Sum each chunk's contributions ([chunk, value] pairs), smallest first; rank by (-sum, chunk):
 * {indices, scores}. */
export function fuse(contributions) {
  // A chunk's first value and its sum so far are kept flat; only a chunk with three or more
  // values needs them sorted: the sum of two is the same added either way round.
  const at = new Map();
  const chunks = [];
  const totals = [];
  const counts = [];
  const many = new Set();
  for (const [chunk, value] of contributions) {
    const i = at.get(chunk);
    if (i === undefined) {
      at.set(chunk, chunks.length);
      chunks.push(chunk);
      totals.push(value);
      counts.push(1);
    } else if (counts[i] === 1) {
      totals[i] += value;
      counts[i] = 2;
    } else {
      many.add(i);
    }
  }
  for (const i of many) {
    const values = contributions.filter(([chunk]) => chunk === chunks[i]).map(([, v]) => v);
    values.sort((a, b) => a - b);
    let total = values[0];
    for (let k = 1; k < values.length; k++) total += values[k];
    totals[i] = total;
  }
  const order = chunks.map((_, i) => i);
  order.sort((a, b) => (totals[a] > totals[b] ? -1 : totals[a] < totals[b] ? 1 : chunks[a] - chunks[b]));
  return { indices: order.map((i) => chunks[i]), scores: order.map((i) => totals[i]) };
}
