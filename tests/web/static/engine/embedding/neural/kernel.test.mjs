// The WebAssembly SIMD product kernel (embedding/neural/kernel.js) and the emitter of its bytes
// (wasm.js). Oracles: LEB128's worked examples (the DWARF 5 standard, section 7.6, and its
// 624485 = e5 8e 26); the product summed in float64 in JavaScript, which the kernel's float32
// sum must meet within the rounding-error bound of a recursive float32 dot product plus one
// bias addition, |c - c*| <= gamma_(n+1) (sum_k |a_ik b_kj| + |bias_j|), gamma_k = k u / (1 - k u),
// u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 3.5).
import { test } from "node:test";
import assert from "node:assert/strict";
import { signed, unsigned } from "../../../../../../src/raglab/web/static/engine/embedding/neural/wasm.js";
import { kernelBytes, productKernel, simdSupported } from "../../../../../../src/raglab/web/static/engine/embedding/neural/kernel.js";

test("LEB128, the standard's worked examples", () => {
  assert.deepEqual(unsigned(0), [0]);
  assert.deepEqual(unsigned(2), [2]);
  assert.deepEqual(unsigned(127), [127]);
  assert.deepEqual(unsigned(128), [0x80, 1]);
  assert.deepEqual(unsigned(129), [0x81, 1]);
  assert.deepEqual(unsigned(12857), [0xb9, 0x64]);
  assert.deepEqual(unsigned(624485), [0xe5, 0x8e, 0x26]);
  assert.deepEqual(signed(2), [2]);
  assert.deepEqual(signed(-2), [0x7e]);
  assert.deepEqual(signed(127), [0xff, 0]);
  assert.deepEqual(signed(-127), [0x81, 0x7f]);
  assert.deepEqual(signed(128), [0x80, 1]);
  assert.deepEqual(signed(-128), [0x80, 0x7f]);
  assert.deepEqual(signed(-123456), [0xc0, 0xbb, 0x78]);
});

test("the kernel's bytes are a WebAssembly module with SIMD that this engine validates", () => {
  const bytes = kernelBytes();
  assert.deepEqual([...bytes.subarray(0, 8)], [0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0], "magic and version 1");
  assert.ok(bytes.includes(0xfd), "a SIMD-prefixed instruction");
  assert.equal(WebAssembly.validate(bytes), true);
  assert.equal(simdSupported(), true, "Node 20's V8 runs WebAssembly SIMD");
  // One byte changed into an unknown section id: the module no longer validates.
  const broken = bytes.slice();
  broken[8] = 0x7f;
  assert.equal(WebAssembly.validate(broken), false);
});

/** A seeded uniform generator on [-1, 1) (mulberry32), so every run checks the same shapes. */
function uniform(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let z = a;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return (((z ^ (z >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  };
}

const U = 2 ** -24;
const gamma = (k) => (k * U) / (1 - k * U);

test("gemm equals the float64 product within the float32 dot product's bound, every shape to its edges", (t) => {
  const random = uniform(31);
  // Ragged sizes on purpose: rows past whole tiles of 4, columns past whole vectors of 4 and
  // tiles of 8, sums of 1 term; and the encoder's own (t, 384) x (384, 1536).
  const shapes = [[1, 1, 1], [1, 3, 2], [2, 5, 3], [3, 7, 5], [4, 4, 4], [5, 9, 7], [6, 16, 8], [7, 17, 9]];
  shapes.push([9, 33, 12], [13, 2, 15], [17, 31, 16], [4, 40, 17], [21, 64, 33], [11, 1536, 6], [9, 384, 1536]);
  const { memory, gemm } = productKernel(1 << 24);
  const heap = new Float32Array(memory.buffer);
  let worst = 0;
  for (const [rows, n, m] of shapes) {
    // Each matrix a block inside a wider one (row strides lda > n, ldb > m, ldc > m), as the
    // encoder reads one head of Q K V in place; the other entries of c's rows must stay.
    const [lda, ldb, ldc] = [n + 3, m + 5, m + 2];
    const [a, b, bias, c] = [0, 4 * rows * lda, 4 * (rows * lda + n * ldb), 4 * (rows * lda + n * ldb + m)];
    const fill = (at, count) => {
      for (let i = 0; i < count; i++) heap[at / 4 + i] = random();
    };
    fill(a, rows * lda);
    fill(b, n * ldb);
    fill(bias, m);
    heap.fill(7, c / 4, c / 4 + rows * ldc);
    gemm(a + 4, 4 * lda, b + 8, 4 * ldb, bias, c + 4, 4 * ldc, rows, n, m);
    const bound = gamma(n + 1);
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < ldc; j++) {
        const got = heap[c / 4 + i * ldc + j];
        if (j < 1 || j > m) {
          assert.equal(got, 7, `(${rows}, ${n}, ${m}): c[${i}, ${j}] lies outside the block`);
          continue;
        }
        let exact = heap[bias / 4 + j - 1];
        let size = Math.abs(exact);
        for (let k = 0; k < n; k++) {
          const p = heap[a / 4 + i * lda + 1 + k] * heap[b / 4 + k * ldb + 2 + j - 1];
          exact += p;
          size += Math.abs(p);
        }
        const error = Math.abs(got - exact) / size;
        assert.ok(error <= bound, `(${rows}, ${n}, ${m}) at (${i}, ${j - 1}): ${error} > ${bound}`);
        worst = Math.max(worst, error / bound);
      }
    }
  }
  t.diagnostic(`largest error ${worst.toFixed(3)} of the bound`);
  assert.ok(worst > 0, "float32 sums round somewhere: is the product summed in float64?");
});
