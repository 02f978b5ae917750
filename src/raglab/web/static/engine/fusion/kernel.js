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
  const byChunk = new Map();
  for (const [chunk, value] of contributions) {
    if (!byChunk.has(chunk)) byChunk.set(chunk, []);
    byChunk.get(chunk).push(value);
  }
  const rows = [...byChunk].map(([chunk, values]) => {
    values.sort((a, b) => a - b);
    let total = values[0];
    for (let i = 1; i < values.length; i++) total += values[i];
    return [chunk, total];
  });
  rows.sort((a, b) => (a[1] > b[1] ? -1 : a[1] < b[1] ? 1 : a[0] - b[0]));
  return { indices: rows.map((r) => r[0]), scores: rows.map((r) => r[1]) };
}
