// Randomised truncated SVD (Halko, Martinsson and Tropp 2011), the solver behind LSA.
//
// Mirrors src/raglab/embedding/svd.py step for step: Y = A Ω from the seeded test matrix
// (./sketch.js, the same bits as Python's), q power passes Y = A lu(Aᵀ lu(Y)) with lu(X) = P L
// from partial pivoting, a Householder QR, the exact eigenproblem of B Bᵀ (B = Qᵀ A, l × l, by
// cyclic Jacobi rotations), U = Q W, Vᵀ = Wᵀ B / s, each U column signed so that its largest
// entry is positive. Its own LU, QR and eigensolver round differently from LAPACK's, so the
// factors agree with Python's to rounding, not to the bit. Dense matrices are row-major
// Float64Arrays with their shape beside them; A is sparse, given by its rows and its columns.

import { seededMatrix } from "./sketch.js";

/** A sparse m × n matrix, its entries flat by rows and by columns ({start, index, value}: line
 * i's entries at start[i]..start[i+1], indices ascending; see `transpose`). */
export class SparseMatrix {
  constructor(m, n, byRow, byCol) {
    this.m = m;
    this.n = n;
    this.byRow = byRow;
    this.byCol = byCol;
  }

  /** A X for X (n × w): each output row adds its entries' products in column order. */
  times(X, w, out = new Float64Array(this.m * w)) {
    return product(this.byRow, this.m, X, w, out);
  }

  /** Aᵀ Y for Y (m × w): each output row adds its entries' products in row order. */
  transposeTimes(Y, w, out = new Float64Array(this.n * w)) {
    return product(this.byCol, this.n, Y, w, out);
  }
}

/** The other lines of compressed lines ({start, index, value}) over `count` indices: line j
 * holds the entries whose index is j, ordered by the line they came from. */
export function transpose({ start, index, value }, count) {
  const out = {
    start: new Int32Array(count + 1),
    index: new Int32Array(index.length),
    value: new Float64Array(index.length),
  };
  for (let p = 0; p < index.length; p++) out.start[index[p] + 1] += 1;
  for (let j = 0; j < count; j++) out.start[j + 1] += out.start[j];
  const next = out.start.slice(0, count);
  for (let i = 0; i + 1 < start.length; i++) {
    for (let p = start[i]; p < start[i + 1]; p++) {
      const q = next[index[p]]++;
      out.index[q] = i;
      out.value[q] = value[p];
    }
  }
  return out;
}

/** `out` (count × w) ← the compressed lines times X, each line's products added in its order. */
function product({ start, index, value }, count, X, w, out) {
  out.fill(0);
  for (let i = 0; i < count; i++) {
    const o = i * w;
    for (let p = start[i]; p < start[i + 1]; p++) {
      const v = value[p];
      const x = index[p] * w;
      for (let c = 0; c < w; c++) out[o + c] += v * X[x + c];
    }
  }
  return out;
}

/** P L from the LU factorisation with partial pivoting X = P L U (m × w, m >= w): a basis of
 * X's columns with entries of magnitude at most 1, written into `out`. X is overwritten (by L
 * below its diagonal and U above, rows permuted), so the power passes copy no matrix. */
export function luBasis(X, m, w, out = new Float64Array(m * w)) {
  const perm = new Int32Array(m);
  for (let i = 0; i < m; i++) perm[i] = i;
  for (let j = 0; j < w; j++) eliminate(X, perm, m, w, j);
  out.fill(0);
  for (let i = 0; i < m; i++) {
    for (let c = 0; c < Math.min(i, w); c++) out[perm[i] * w + c] = X[i * w + c];
    if (i < w) out[perm[i] * w + i] = 1.0;
  }
  return out;
}

/** Step j of luBasis's elimination on a (m × w), rows swapped in `perm`. Each step its own
 * call: the compiler sees every branch of it before it optimises the loop. */
function eliminate(a, perm, m, w, j) {
  let p = j;
  for (let i = j + 1; i < m; i++) if (Math.abs(a[i * w + j]) > Math.abs(a[p * w + j])) p = i;
  if (p !== j) {
    for (let c = 0; c < w; c++) {
      const t = a[j * w + c];
      a[j * w + c] = a[p * w + c];
      a[p * w + c] = t;
    }
    const t = perm[j];
    perm[j] = perm[p];
    perm[p] = t;
  }
  const pivot = a[j * w + j];
  if (pivot === 0) return; // no pivot left: the column stays a unit vector below
  const rj = j * w;
  for (let i = j + 1; i < m; i++) {
    const ri = i * w;
    const f = (a[ri + j] /= pivot);
    if (f !== 0) for (let c = j + 1; c < w; c++) a[ri + c] -= f * a[rj + c];
  }
}

/** Columns `from`..w−1 of X (m × w, rows j..m−1) reflected by u: x ← x − (u · x) u, `d` (w)
 * scratch. Row by row, so the walk follows memory, four rows a step so that each partial dot is
 * loaded and stored once for four terms; each column's dot still adds its terms one at a time
 * in row order (JavaScript fuses no multiply-add) and no column's update touches another's, so
 * every entry rounds as a column-by-column loop's would. */
function reflect(u, X, m, w, j, from, d) {
  d.fill(0);
  let i = j;
  for (; i + 3 < m; i += 4) {
    const u0 = u[i - j];
    const u1 = u[i + 1 - j];
    const u2 = u[i + 2 - j];
    const u3 = u[i + 3 - j];
    const r0 = i * w;
    const r1 = r0 + w;
    const r2 = r1 + w;
    const r3 = r2 + w;
    for (let c = from; c < w; c++) d[c] = d[c] + u0 * X[r0 + c] + u1 * X[r1 + c] + u2 * X[r2 + c] + u3 * X[r3 + c];
  }
  for (; i < m; i++) {
    const ui = u[i - j];
    const row = i * w;
    for (let c = from; c < w; c++) d[c] += ui * X[row + c];
  }
  i = j;
  for (; i + 3 < m; i += 4) {
    const u0 = u[i - j];
    const u1 = u[i + 1 - j];
    const u2 = u[i + 2 - j];
    const u3 = u[i + 3 - j];
    const r0 = i * w;
    const r1 = r0 + w;
    const r2 = r1 + w;
    const r3 = r2 + w;
    for (let c = from; c < w; c++) {
      const dc = d[c];
      X[r0 + c] -= dc * u0;
      X[r1 + c] -= dc * u1;
      X[r2 + c] -= dc * u2;
      X[r3 + c] -= dc * u3;
    }
  }
  for (; i < m; i++) {
    const ui = u[i - j];
    const row = i * w;
    for (let c = from; c < w; c++) X[row + c] -= d[c] * ui;
  }
}

/** An orthonormal basis Q (m × w) of the columns of Y (m × w) by Householder reflections,
 * written into `out`; Y is overwritten (by R and what the reflections leave below it). */
export function orthonormal(Y, m, w, out = new Float64Array(m * w)) {
  const a = Y;
  const vs = [];
  const d = new Float64Array(w);
  for (let j = 0; j < w; j++) {
    let norm = 0;
    for (let i = j; i < m; i++) norm += a[i * w + j] ** 2;
    norm = Math.sqrt(norm);
    const v = new Float64Array(m - j);
    for (let i = j; i < m; i++) v[i - j] = a[i * w + j];
    v[0] += v[0] >= 0 ? norm : -norm;
    let vv = 0;
    for (const x of v) vv += x * x;
    if (vv > 0) {
      const scale = Math.sqrt(2 / vv);
      for (let i = 0; i < v.length; i++) v[i] *= scale;
    }
    vs.push(v);
    reflect(v, a, m, w, j, j, d);
  }
  const q = out.fill(0);
  for (let c = 0; c < w; c++) q[c * w + c] = 1.0;
  // Reflection j leaves columns before j alone: their rows from j on are still +0 (the identity's
  // zeros, which every earlier reflection, touching rows past j only, kept at +0).
  for (let j = w - 1; j >= 0; j--) {
    reflect(vs[j], q, m, w, j, j, d);
  }
  return q;
}

/** Eigenvalues and eigenvectors (rows of `vectors`, W transposed: each one contiguous) of a
 * symmetric w × w matrix, by cyclic Jacobi rotations until the off-diagonal part is negligible. */
export function symmetricEigen(S, w) {
  const a = Float64Array.from(S);
  const v = new Float64Array(w * w);
  for (let i = 0; i < w; i++) v[i * w + i] = 1.0;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    let diag = 0;
    for (let i = 0; i < w; i++) {
      diag += a[i * w + i] ** 2;
      for (let j = i + 1; j < w; j++) off += a[i * w + j] ** 2;
    }
    if (off <= 1e-32 * diag || off === 0) break;
    for (let p = 0; p < w; p++) {
      for (let r = p + 1; r < w; r++) {
        const apr = a[p * w + r];
        if (apr === 0) continue;
        const theta = (a[r * w + r] - a[p * w + p]) / (2 * apr);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        rotate(a, v, w, p, r, c, s);
      }
    }
  }
  return { values: Array.from({ length: w }, (_, i) => a[i * w + i]), vectors: v };
}

/** The Jacobi rotation (c, s) of rows and columns p < r of a (w × w), then of rows p and r of v
 * (the eigenvectors as rows). One pass over k where a loop over a's columns p and r, then one
 * over its rows p and r, then one over v's rows made three: outside the 2 × 2 block the passes
 * touch disjoint entries, and the block is turned after the loop, columns first then rows, so
 * every entry takes the same operations in the same order. */
function rotate(a, v, w, p, r, c, s) {
  const P = p * w;
  const R = r * w;
  for (let k = 0; k < w; k++) {
    const vkp = v[P + k];
    const vkr = v[R + k];
    v[P + k] = c * vkp - s * vkr;
    v[R + k] = s * vkp + c * vkr;
    if (k === p || k === r) continue;
    const K = k * w;
    const akp = a[K + p];
    const akr = a[K + r];
    a[K + p] = c * akp - s * akr;
    a[K + r] = s * akp + c * akr;
    const apk = a[P + k];
    const ark = a[R + k];
    a[P + k] = c * apk - s * ark;
    a[R + k] = s * apk + c * ark;
  }
  const [app, apr, arp, arr] = [a[P + p], a[P + r], a[R + p], a[R + r]];
  // Columns p and r at rows p and r (the column loop's k = p, then k = r) ...
  const [cpp, cpr] = [c * app - s * apr, s * app + c * apr];
  const [crp, crr] = [c * arp - s * arr, s * arp + c * arr];
  // ... then rows p and r at columns p and r (the row loop's k = p, then k = r).
  a[P + p] = c * cpp - s * crp;
  a[R + p] = s * cpp + c * crp;
  a[P + r] = c * cpr - s * crr;
  a[R + r] = s * cpr + c * crr;
}

/** Truncated SVD A ≈ U diag(s) Vᵀ of a SparseMatrix A: {U (m × rank), s, Vt (rank × n)}. */
export function randomizedSvd(A, { rank, oversample, powerIterations, seed }) {
  const { m, n } = A;
  if (rank > Math.min(m, n)) throw new Error(`rank ${rank} exceeds min(A.shape) = ${Math.min(m, n)}`);
  const w = Math.min(rank + oversample, m, n);
  // Four buffers serve every pass: products into Ym and Yn, their LU bases into Lm and Ln.
  const Ym = A.times(seededMatrix(n, w, seed), w);
  const Yn = new Float64Array(n * w);
  const Lm = new Float64Array(m * w);
  const Ln = new Float64Array(n * w);
  for (let pass = 0; pass < powerIterations; pass++) {
    A.transposeTimes(luBasis(Ym, m, w, Lm), w, Yn);
    A.times(luBasis(Yn, n, w, Ln), w, Ym);
  }
  const Q = orthonormal(Ym, m, w, Lm);
  const Bt = A.transposeTimes(Q, w); // (n × w) = Bᵀ
  const BBt = gram(Bt, n, w);
  const { values, vectors } = symmetricEigen(BBt, w);
  const order = Array.from({ length: w }, (_, i) => i).sort((a, b) => values[b] - values[a]).slice(0, rank);
  const s = order.map((i) => Math.sqrt(Math.max(values[i], 0)));
  // The chosen eigenvectors, rank × w, each contiguous.
  const E = new Float64Array(rank * w);
  order.forEach((col, r) => E.set(vectors.subarray(col * w, col * w + w), r * w));
  const U = leftVectors(Q, E, m, w, rank);
  const Vt = new Float64Array(rank * n);
  for (let r = 0; r < rank; r++) rightVector(E, Bt, s[r], U, Vt, { m, n, w, rank, r });
  return { U, s, Vt };
}

/** B Bᵀ (w × w) from Bᵀ (n × w): the upper triangle summed over t in order, walking Bᵀ row by
 * row; then mirrored. */
function gram(Bt, n, w) {
  const BBt = new Float64Array(w * w);
  for (let t = 0; t < n; t++) {
    const row = t * w;
    for (let i = 0; i < w; i++) {
      const bi = Bt[row + i];
      for (let j = i; j < w; j++) BBt[i * w + j] += bi * Bt[row + j];
    }
  }
  for (let i = 0; i < w; i++) for (let j = i + 1; j < w; j++) BBt[j * w + i] = BBt[i * w + j];
  return BBt;
}

/** U = Q Eᵀ (m × rank) for Q (m × w) and E (rank × w): each entry a dot over c in order, four
 * entries of a row at a time so that each of Q's entries is loaded once for four. */
function leftVectors(Q, E, m, w, rank) {
  const U = new Float64Array(m * rank);
  for (let i = 0; i < m; i++) {
    const row = i * w;
    let r = 0;
    for (; r + 3 < rank; r += 4) {
      const [e0, e1, e2, e3] = [r * w, (r + 1) * w, (r + 2) * w, (r + 3) * w];
      let d0 = 0;
      let d1 = 0;
      let d2 = 0;
      let d3 = 0;
      for (let c = 0; c < w; c++) {
        const q = Q[row + c];
        d0 += q * E[e0 + c];
        d1 += q * E[e1 + c];
        d2 += q * E[e2 + c];
        d3 += q * E[e3 + c];
      }
      U[i * rank + r] = d0;
      U[i * rank + r + 1] = d1;
      U[i * rank + r + 2] = d2;
      U[i * rank + r + 3] = d3;
    }
    for (; r < rank; r++) {
      let d = 0;
      for (let c = 0; c < w; c++) d += Q[row + c] * E[r * w + c];
      U[i * rank + r] = d;
    }
  }
  return U;
}

/** Row r of Vᵀ = E_r B / s_r (0 where s_r is 0), then U's column r and that row signed so that
 * the column's largest entry (the first of the largest) is positive. */
function rightVector(E, Bt, sr, U, Vt, { m, n, w, rank, r }) {
  const e = r * w;
  for (let t = 0; t < n; t++) {
    let d = 0;
    for (let c = 0; c < w; c++) d += E[e + c] * Bt[t * w + c];
    Vt[r * n + t] = sr > 0 ? d / sr : 0.0;
  }
  let pivot = 0;
  for (let i = 1; i < m; i++) if (Math.abs(U[i * rank + r]) > Math.abs(U[pivot * rank + r])) pivot = i;
  if (U[pivot * rank + r] < 0) {
    for (let i = 0; i < m; i++) U[i * rank + r] = -U[i * rank + r];
    for (let t = 0; t < n; t++) Vt[r * n + t] = -Vt[r * n + t];
  }
}
