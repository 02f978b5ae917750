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

/** A sparse m × n matrix from its rows: rows[i] = [[column, value], ...] ascending. */
export class SparseMatrix {
  constructor(m, n, rows) {
    this.m = m;
    this.n = n;
    this.rows = rows;
    this.cols = Array.from({ length: n }, () => []);
    rows.forEach((row, i) => row.forEach(([j, v]) => this.cols[j].push([i, v])));
    // The same entries flat (compressed rows, and columns), for the products' inner loops.
    this.byRow = compressed(rows);
    this.byCol = compressed(this.cols);
  }

  /** A X for X (n × w): each output row adds its entries' products in column order. */
  times(X, w) {
    return product(this.byRow, this.m, X, w);
  }

  /** Aᵀ Y for Y (m × w): each output row adds its entries' products in row order. */
  transposeTimes(Y, w) {
    return product(this.byCol, this.n, Y, w);
  }
}

/** Lines of [index, value] pairs as {start, index, value}: line i's entries at start[i]..start[i+1]. */
function compressed(lines) {
  const start = new Int32Array(lines.length + 1);
  lines.forEach((line, i) => (start[i + 1] = start[i] + line.length));
  const index = new Int32Array(start[lines.length]);
  const value = new Float64Array(start[lines.length]);
  lines.forEach((line, i) => line.forEach(([j, v], k) => ((index[start[i] + k] = j), (value[start[i] + k] = v))));
  return { start, index, value };
}

function product({ start, index, value }, count, X, w) {
  const out = new Float64Array(count * w);
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
 * X's columns with entries of magnitude at most 1. */
export function luBasis(X, m, w) {
  const a = Float64Array.from(X);
  const perm = Array.from({ length: m }, (_, i) => i);
  for (let j = 0; j < w; j++) {
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
    if (pivot === 0) continue; // no pivot left: the column stays a unit vector below
    for (let i = j + 1; i < m; i++) {
      const f = (a[i * w + j] /= pivot);
      if (f !== 0) for (let c = j + 1; c < w; c++) a[i * w + c] -= f * a[j * w + c];
    }
  }
  const out = new Float64Array(m * w);
  for (let i = 0; i < m; i++) {
    for (let c = 0; c < Math.min(i, w); c++) out[perm[i] * w + c] = a[i * w + c];
    if (i < w) out[perm[i] * w + i] = 1.0;
  }
  return out;
}

/** Columns `from`..w−1 of X (m × w, rows j..m−1) reflected by u: x ← x − (u · x) u. Row by
 * row, so the walk follows memory; each column's dot still adds its terms in row order and no
 * column's update touches another's, so every entry rounds as a column-by-column loop's would. */
function reflect(u, X, m, w, j, from) {
  const d = new Float64Array(w);
  for (let i = j; i < m; i++) {
    const ui = u[i - j];
    const row = i * w;
    for (let c = from; c < w; c++) d[c] += ui * X[row + c];
  }
  for (let i = j; i < m; i++) {
    const ui = u[i - j];
    const row = i * w;
    for (let c = from; c < w; c++) X[row + c] -= d[c] * ui;
  }
}

/** An orthonormal basis Q (m × w) of the columns of Y (m × w) by Householder reflections. */
export function orthonormal(Y, m, w) {
  const a = Float64Array.from(Y);
  const vs = [];
  for (let j = 0; j < w; j++) {
    let norm = 0;
    for (let i = j; i < m; i++) norm += a[i * w + j] ** 2;
    norm = Math.sqrt(norm);
    const v = new Float64Array(m - j);
    for (let i = j; i < m; i++) v[i - j] = a[i * w + j];
    v[0] += v[0] >= 0 ? norm : -norm;
    let vv = 0;
    for (const x of v) vv += x * x;
    vs.push(vv > 0 ? v.map((x) => x * Math.sqrt(2 / vv)) : v);
    reflect(vs[j], a, m, w, j, j);
  }
  const q = new Float64Array(m * w);
  for (let c = 0; c < w; c++) q[c * w + c] = 1.0;
  // Reflection j leaves columns before j alone: their rows from j on are still +0 (the identity's
  // zeros, which every earlier reflection, touching rows past j only, kept at +0).
  for (let j = w - 1; j >= 0; j--) {
    reflect(vs[j], q, m, w, j, j);
  }
  return q;
}

/** Eigenvalues and eigenvectors (columns of W) of a symmetric w × w matrix, by cyclic Jacobi
 * rotations until the off-diagonal part is negligible. */
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
        for (let k = 0; k < w; k++) {
          const akp = a[k * w + p];
          const akr = a[k * w + r];
          a[k * w + p] = c * akp - s * akr;
          a[k * w + r] = s * akp + c * akr;
        }
        for (let k = 0; k < w; k++) {
          const apk = a[p * w + k];
          const ark = a[r * w + k];
          a[p * w + k] = c * apk - s * ark;
          a[r * w + k] = s * apk + c * ark;
        }
        for (let k = 0; k < w; k++) {
          const vkp = v[k * w + p];
          const vkr = v[k * w + r];
          v[k * w + p] = c * vkp - s * vkr;
          v[k * w + r] = s * vkp + c * vkr;
        }
      }
    }
  }
  return { values: Array.from({ length: w }, (_, i) => a[i * w + i]), vectors: v };
}

/** Truncated SVD A ≈ U diag(s) Vᵀ of a SparseMatrix A: {U (m × rank), s, Vt (rank × n)}. */
export function randomizedSvd(A, { rank, oversample, powerIterations, seed }) {
  const { m, n } = A;
  if (rank > Math.min(m, n)) throw new Error(`rank ${rank} exceeds min(A.shape) = ${Math.min(m, n)}`);
  const w = Math.min(rank + oversample, m, n);
  let Y = A.times(seededMatrix(n, w, seed), w);
  for (let pass = 0; pass < powerIterations; pass++) {
    Y = A.transposeTimes(luBasis(Y, m, w), w);
    Y = A.times(luBasis(Y, n, w), w);
  }
  const Q = orthonormal(Y, m, w);
  const Bt = A.transposeTimes(Q, w); // (n × w) = Bᵀ
  // B Bᵀ's upper triangle summed over t in order, walking Bᵀ row by row; then mirrored.
  const BBt = new Float64Array(w * w);
  for (let t = 0; t < n; t++) {
    const row = t * w;
    for (let i = 0; i < w; i++) {
      const bi = Bt[row + i];
      for (let j = i; j < w; j++) BBt[i * w + j] += bi * Bt[row + j];
    }
  }
  for (let i = 0; i < w; i++) for (let j = i + 1; j < w; j++) BBt[j * w + i] = BBt[i * w + j];
  const { values, vectors } = symmetricEigen(BBt, w);
  const order = Array.from({ length: w }, (_, i) => i).sort((a, b) => values[b] - values[a]).slice(0, rank);
  const s = order.map((i) => Math.sqrt(Math.max(values[i], 0)));
  const U = new Float64Array(m * rank);
  const Vt = new Float64Array(rank * n);
  order.forEach((col, r) => {
    // Eigenvector `col` laid out contiguously: the same products, summed in the same order.
    const e = Float64Array.from({ length: w }, (_, c) => vectors[c * w + col]);
    for (let i = 0; i < m; i++) {
      let d = 0;
      for (let c = 0; c < w; c++) d += Q[i * w + c] * e[c];
      U[i * rank + r] = d;
    }
    for (let t = 0; t < n; t++) {
      let d = 0;
      for (let c = 0; c < w; c++) d += e[c] * Bt[t * w + c];
      Vt[r * n + t] = s[r] > 0 ? d / s[r] : 0.0;
    }
    let pivot = 0;
    for (let i = 1; i < m; i++) if (Math.abs(U[i * rank + r]) > Math.abs(U[pivot * rank + r])) pivot = i;
    if (U[pivot * rank + r] < 0) {
      for (let i = 0; i < m; i++) U[i * rank + r] = -U[i * rank + r];
      for (let t = 0; t < n; t++) Vt[r * n + t] = -Vt[r * n + t];
    }
  });
  return { U, s, Vt };
}
