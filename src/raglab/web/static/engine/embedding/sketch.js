// The randomised SVD's seeded test matrix, drawn bit for bit alike by both engines.
//
// Mirrors src/raglab/embedding/sketch.py (docs/design.md#the-seeded-test-matrix): entry (r, c) of
// Omega (n × l) is the sum of twelve 32-bit words word(12 i + j), i = r l + c, divided by 2^32,
// minus 6; word(k) = mix(mix(k mod 2^32 XOR key) XOR floor(k / 2^32)), key = mix(seed mod 2^32
// XOR 0x9E3779B9), mix the 32-bit hash lowbias32. Integer sums below 2^36 and one subtraction:
// every entry is exact or correctly rounded, so equal to numpy's to the last bit.

const TERMS = 12;
const TWO_32 = 4294967296;

/** lowbias32 (Wellons 2018) of a 32-bit unsigned integer. */
export function mix(x) {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

/** Omega (n × width) from `seed`, row-major in a Float64Array. */
export function seededMatrix(n, width, seed) {
  const key = mix((seed % TWO_32 ^ 0x9e3779b9) >>> 0);
  const out = new Float64Array(n * width);
  for (let i = 0; i < n * width; i++) {
    let total = 0;
    for (let j = 0; j < TERMS; j++) {
      const k = TERMS * i + j;
      total += mix(mix((k % TWO_32 ^ key) >>> 0) ^ Math.floor(k / TWO_32));
    }
    out[i] = total / TWO_32 - 6.0;
  }
  return out;
}
