// The encoder's matrix product as WebAssembly SIMD, its bytes written here (wasm.js), no binary file.
//
// One exported function, gemm(a, lda, b, ldb, bias, c, ldc, t, n, m), computes
//   c[i, j] = fl(fl(sum_k a[i, k] b[k, j]) + bias[j])     for i < t, j < m, k < n,
// every array float32 in the module's one memory, addresses and row strides in bytes (so a
// block of columns of a wider matrix, one head of Q K V, is read in place). Each sum runs in
// float32 in k's order, s <- fl(s + fl(a b)), as a plain float32 matrix product does (numpy's
// BLAS sums in float32 too, in blocks): ~1e-7 relative per sum, measured in the tests. Tiles of
// ROWS rows of a by 4 VECTORS columns of b: ROWS x VECTORS f32x4 accumulators (8 with 4 x 2,
// within the 16 vector registers of x86-64 and arm64 beside the operands), each b row's 4
// VECTORS numbers loaded once for ROWS rows, each a number splatted once for 4 VECTORS columns.
// Rows past the last whole tile take the same loop one row at a time, columns past the last
// whole vector (m mod 4) a scalar float32 loop, so every shape is exact to its edges.

import { F32, I32, OP, SIMD, V128, VOID, body, module, signed, unsigned } from "./wasm.js";

/** Rows of a and vectors of 4 columns of b per tile. */
const ROWS = 4;
const VECTORS = 2;

// Locals: the ten parameters, then i32s, then v128s, then one f32.
const [A, LDA, B, LDB, BIAS, C, LDC, T, N, M] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
const I = 10;
const J = 11;
const K = 12;
const PA = 13; // ROWS row pointers into a
const PB = PA + ROWS;
const PC = PB + 1;
const I32_LOCALS = PC + 1 - 10;
const ACC = PC + 1; // ROWS x VECTORS accumulators
const BV = ACC + ROWS * VECTORS; // VECTORS vectors of a row of b
const S = BV + VECTORS; // the splatted number of a
const SUM = S + 1; // the scalar loop's float32 sum

const get = (l) => [OP.localGet, ...unsigned(l)];
const set = (l) => [OP.localSet, ...unsigned(l)];
const i32 = (v) => [OP.i32Const, ...signed(v)];
const simd = (op, ...memarg) => [0xfd, ...unsigned(op), ...memarg.flatMap((x) => unsigned(x))];
const add = (l, bytes) => [...get(l), ...bytes, OP.i32Add, ...set(l)];

/** while (cond) body: the loop ends when `cond` (i32 bytes) is 0. */
const whileTrue = (cond, code) => [OP.block, VOID, OP.loop, VOID, ...cond, OP.i32Eqz, OP.brIf, 1, ...code, OP.br, 0, OP.end, OP.end];

/** do body while (--k): `k` starts at n >= 1. */
const overK = (code) => [...get(N), ...set(K), OP.loop, VOID, ...code, ...get(K), ...i32(1), OP.i32Sub, OP.localTee, ...unsigned(K), OP.brIf, 0, OP.end];

/** The tile of `rows` rows from i by 4 `vectors` columns from j. */
function tile(rows, vectors) {
  const acc = (r, v) => ACC + r * VECTORS + v;
  const code = [...get(A), ...get(I), ...get(LDA), OP.i32Mul, OP.i32Add, ...set(PA)];
  for (let r = 1; r < rows; r++) code.push(...get(PA + r - 1), ...get(LDA), OP.i32Add, ...set(PA + r));
  code.push(...get(B), ...get(J), ...i32(2), OP.i32Shl, OP.i32Add, ...set(PB));
  for (let r = 0; r < rows; r++) {
    for (let v = 0; v < vectors; v++) code.push(OP.f32Const, 0, 0, 0, 0, ...simd(SIMD.f32x4Splat), ...set(acc(r, v)));
  }
  const step = [];
  for (let v = 0; v < vectors; v++) step.push(...get(PB), ...simd(SIMD.load, 2, 16 * v), ...set(BV + v));
  for (let r = 0; r < rows; r++) {
    step.push(...get(PA + r), ...simd(SIMD.load32Splat, 2, 0), ...set(S));
    for (let v = 0; v < vectors; v++) {
      step.push(...get(acc(r, v)), ...get(S), ...get(BV + v), ...simd(SIMD.f32x4Mul), ...simd(SIMD.f32x4Add), ...set(acc(r, v)));
    }
    step.push(...add(PA + r, i32(4)));
  }
  step.push(...add(PB, get(LDB)));
  code.push(...overK(step));
  // pb <- the bias at column j; pc <- c[i, j]
  code.push(...get(BIAS), ...get(J), ...i32(2), OP.i32Shl, OP.i32Add, ...set(PB));
  code.push(...get(C), ...get(I), ...get(LDC), OP.i32Mul, OP.i32Add, ...get(J), ...i32(2), OP.i32Shl, OP.i32Add, ...set(PC));
  for (let r = 0; r < rows; r++) {
    for (let v = 0; v < vectors; v++) {
      code.push(...get(PC), ...get(acc(r, v)), ...get(PB), ...simd(SIMD.load, 2, 16 * v), ...simd(SIMD.f32x4Add), ...simd(SIMD.store, 2, 16 * v));
    }
    code.push(...add(PC, get(LDC)));
  }
  return code;
}

/** Columns from j by whole tiles of 4 VECTORS, then one of 4 if 4 more fit, for `rows` rows. */
function rowBlock(rows) {
  const code = [...i32(0), ...set(J)];
  code.push(...whileTrue([...get(J), ...i32(4 * VECTORS), OP.i32Add, ...get(M), OP.i32LeS], [...tile(rows, VECTORS), ...add(J, i32(4 * VECTORS))]));
  for (let v = VECTORS - 1; v >= 1; v--) {
    code.push(...get(J), ...i32(4 * v), OP.i32Add, ...get(M), OP.i32LeS, OP.if, VOID, ...tile(rows, v), ...add(J, i32(4 * v)), OP.end);
  }
  return code;
}

/** c[i, j] for one (i, j), summed in scalar float32. */
function scalar() {
  const code = [...get(A), ...get(I), ...get(LDA), OP.i32Mul, OP.i32Add, ...set(PA)];
  code.push(...get(B), ...get(J), ...i32(2), OP.i32Shl, OP.i32Add, ...set(PB));
  code.push(OP.f32Const, 0, 0, 0, 0, ...set(SUM));
  const step = [...get(SUM), ...get(PA), OP.f32Load, 2, 0, ...get(PB), OP.f32Load, 2, 0, OP.f32Mul, OP.f32Add, ...set(SUM)];
  step.push(...add(PA, i32(4)), ...add(PB, get(LDB)));
  code.push(...overK(step));
  code.push(...get(C), ...get(I), ...get(LDC), OP.i32Mul, OP.i32Add, ...get(J), ...i32(2), OP.i32Shl, OP.i32Add);
  code.push(...get(SUM), ...get(BIAS), ...get(J), ...i32(2), OP.i32Shl, OP.i32Add, OP.f32Load, 2, 0, OP.f32Add, OP.f32Store, 2, 0);
  return code;
}

function gemmCode() {
  const code = [...i32(0), ...set(I)];
  code.push(...whileTrue([...get(I), ...i32(ROWS), OP.i32Add, ...get(T), OP.i32LeS], [...rowBlock(ROWS), ...add(I, i32(ROWS))]));
  code.push(...whileTrue([...get(I), ...get(T), OP.i32LtS], [...rowBlock(1), ...add(I, i32(1))]));
  // The last m mod 4 columns, every row.
  code.push(...get(M), ...i32(-4), OP.i32And, ...set(J));
  const column = [...i32(0), ...set(I), ...whileTrue([...get(I), ...get(T), OP.i32LtS], [...scalar(), ...add(I, i32(1))])];
  code.push(...whileTrue([...get(J), ...get(M), OP.i32LtS], [...column, ...add(J, i32(1))]));
  return code;
}

const locals = [...Array(I32_LOCALS).fill(I32), ...Array(ROWS * VECTORS + VECTORS + 1).fill(V128), F32];

/** The kernel module's bytes: it imports env.memory (at least `pages` pages of 64 KiB). */
export function kernelBytes(pages = 1) {
  return module({
    memory: { module: "env", name: "memory", pages },
    functions: [{ name: "gemm", params: Array(10).fill(I32), body: body(locals, gemmCode()) }],
  });
}

let supported = null;

/** Whether this engine runs WebAssembly with 128-bit SIMD: the kernel's own bytes validate. */
export function simdSupported() {
  if (supported === null) {
    supported = typeof WebAssembly === "object" && typeof WebAssembly.validate === "function" && WebAssembly.validate(kernelBytes());
  }
  return supported;
}

/** A kernel over a new memory of `bytes` (rounded up to whole pages): {memory, gemm}, gemm as
 * described above (addresses and strides in bytes). */
export function productKernel(bytes) {
  const pages = Math.max(1, Math.ceil(bytes / 65536));
  const memory = new WebAssembly.Memory({ initial: pages });
  const instance = new WebAssembly.Instance(new WebAssembly.Module(kernelBytes(1)), { env: { memory } });
  return { memory, gemm: instance.exports.gemm };
}
