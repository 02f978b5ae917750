// Exactly rounded sums: Python's math.fsum, so a mean does not depend on the order of its terms.
//
// Mirrors math.fsum (CPython's msum: Shewchuk 1997, "Adaptive Precision Floating-Point Arithmetic
// and Fast Robust Geometric Predicates", with the final half-way correction), which
// src/raglab/metrics/judging.py's means use. Finite inputs only.

/** The correctly rounded sum of the finite numbers `values`. */
export function fsum(values) {
  const partials = [];
  for (let x of values) {
    let i = 0;
    for (let j = 0; j < partials.length; j++) {
      let y = partials[j];
      if (Math.abs(x) < Math.abs(y)) [x, y] = [y, x];
      const hi = x + y;
      const lo = y - (hi - x);
      if (lo !== 0) partials[i++] = lo;
      x = hi;
    }
    partials.length = i;
    partials.push(x);
  }
  let n = partials.length;
  if (n === 0) return 0.0;
  let hi = partials[--n];
  let lo = 0;
  while (n > 0) {
    const x = hi;
    const y = partials[--n];
    hi = x + y;
    const yr = hi - x;
    lo = y - yr;
    if (lo !== 0) break;
  }
  // Round half-way cases correctly: the rest of the partials decide the direction.
  if (n > 0 && ((lo < 0 && partials[n - 1] < 0) || (lo > 0 && partials[n - 1] > 0))) {
    const y = lo * 2;
    const x = hi + y;
    if (y === x - hi) hi = x;
  }
  return hi;
}
