// The randomised SVD's sparse matrix (src/raglab/web/static/engine/embedding/svd.js): its lines
// turned into the other lines, and its products into a given buffer. Oracle: a 2 × 3 matrix
// worked by hand.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SparseMatrix, transpose } from "../../../../../src/raglab/web/static/engine/embedding/svd.js";

// A = [[0, 2, 4], [1, 0, 3]] by rows: row 0 holds columns 1 and 2, row 1 columns 0 and 2.
const byRow = { start: Int32Array.of(0, 2, 4), index: Int32Array.of(1, 2, 0, 2), value: Float64Array.of(2, 4, 1, 3) };

test("transpose: each column's entries, in the order of their rows", () => {
  const byCol = transpose(byRow, 3);
  // Column 0: (row 1, 1); column 1: (row 0, 2); column 2: (row 0, 4) then (row 1, 3).
  assert.deepEqual(Array.from(byCol.start), [0, 1, 2, 4]);
  assert.deepEqual(Array.from(byCol.index), [1, 0, 0, 1]);
  assert.deepEqual(Array.from(byCol.value), [1, 2, 4, 3]);
});

test("A X and Aᵀ Y, written over what a given buffer held", () => {
  const A = new SparseMatrix(2, 3, byRow, transpose(byRow, 3));
  const X = Float64Array.of(1, 2, 3, 4, 5, 6); // 3 × 2
  const out = new Float64Array(4).fill(99);
  // A X = [[2·3 + 4·5, 2·4 + 4·6], [1·1 + 3·5, 1·2 + 3·6]].
  assert.equal(A.times(X, 2, out), out);
  assert.deepEqual(Array.from(out), [26, 32, 16, 20]);
  const Y = Float64Array.of(1, 10, 100, 1000); // 2 × 2
  // Aᵀ Y = [[1·100, 1·1000], [2·1, 2·10], [4·1 + 3·100, 4·10 + 3·1000]].
  const back = new Float64Array(6).fill(-7);
  assert.equal(A.transposeTimes(Y, 2, back), back);
  assert.deepEqual(Array.from(back), [100, 1000, 2, 20, 304, 3040]);
  assert.deepEqual(Array.from(A.times(X, 2)), [26, 32, 16, 20]); // a new buffer when none is given
});
