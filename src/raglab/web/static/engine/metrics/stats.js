// Uncertainty of an accuracy and the comparison of two runs on the same questions.
//
// Mirrors src/raglab/metrics/stats.py: Wilson's score interval (Wilson 1927) and the exact
// McNemar test (McNemar 1947), its p-value from exact integer sums (BigInt) rounded once.

/** Wilson's score interval (low, high) for `successes` of `n` at normal quantile `z`. */
export function wilsonInterval(successes, n, { z }) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`n must be at least 1, got ${n}`);
  if (!Number.isInteger(successes) || successes < 0 || successes > n) {
    throw new Error(`successes must be between 0 and n = ${n}, got ${successes}`);
  }
  if (!(Number.isFinite(z) && z > 0)) throw new Error(`z must be a positive finite number, got ${z}`);
  const p = successes / n;
  const z2 = z ** 2;
  const denom = 1 + z2 / n;
  const center = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n ** 2))) / denom;
  const low = successes === 0 ? 0.0 : Math.max(0.0, center - half);
  const high = successes === n ? 1.0 : Math.min(1.0, center + half);
  return [low, high];
}

/** `num` / 2^`shift` for a BigInt num >= 0, correctly rounded (subnormal results excepted). */
function divideByPowerOfTwo(num, shift) {
  const bits = num.toString(2).length;
  let kept = num;
  let dropped = 0;
  if (bits > 1000) {
    // Keep 1000 bits and a sticky bit for what is dropped: Number() then rounds as the whole
    // would round.
    dropped = bits - 1000;
    const rest = num & ((1n << BigInt(dropped)) - 1n);
    kept = (num >> BigInt(dropped)) | (rest !== 0n ? 1n : 0n);
  }
  let out = Number(kept);
  let e = dropped - shift; // multiply by 2^e, in steps that stay finite
  while (e < -1000) {
    out *= 2 ** -1000;
    e += 1000;
  }
  return out * 2 ** e;
}

/** min(1, 2 P(X <= smaller)) for X ~ Binomial(m, 1/2), from exact integer sums. */
function twoSidedSignP(smaller, m) {
  let term = 1n;
  let total = 1n;
  for (let i = 0n; i < BigInt(smaller); i++) {
    term = (term * (BigInt(m) - i)) / (i + 1n);
    total += term;
  }
  return Math.min(1.0, divideByPowerOfTwo(total, m - 1));
}

/** The exact McNemar test of two runs' per-question correctness (arrays of booleans):
 * {n, bothRight, onlyA, onlyB, bothWrong, pValue}. */
export function mcnemarExact(a, b) {
  if (a.length !== b.length) {
    throw new Error(`a and b must score the same questions, got ${a.length} and ${b.length}`);
  }
  let onlyA = 0;
  let onlyB = 0;
  let bothRight = 0;
  a.forEach((x, i) => {
    if (x && !b[i]) onlyA++;
    else if (!x && b[i]) onlyB++;
    else if (x && b[i]) bothRight++;
  });
  const discordant = onlyA + onlyB;
  const pValue = discordant ? twoSidedSignP(Math.min(onlyA, onlyB), discordant) : 1.0;
  return { n: a.length, bothRight, onlyA, onlyB, bothWrong: a.length - bothRight - discordant, pValue };
}
