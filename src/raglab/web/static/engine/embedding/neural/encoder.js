// The BERT forward pass of a sentence-embedding model (all-MiniLM-L6-v2), one text at a time.
//
// Mirrors src/raglab/embedding/neural/encoder.py, its equations there: for the t word-piece ids
// of one text ([CLS] first, [SEP] last; no padding, so no mask),
//   x_0 = LayerNorm(E_word[id] + E_pos[0..t-1] + E_type[0])                       (t, h)
//   per layer: Q, K, V = x W_qkv + b, H heads of width d = h / H;
//              a = LayerNorm(x + concat_h softmax(Q K^T / sqrt d) V W_o + b_o);
//              x = LayerNorm(a + GELU(a W_1 + b_1) W_2 + b_2)
//   GELU(z) = z/2 (1 + erf(z / sqrt 2)), exact; LayerNorm with the model's eps (1e-12)
//   pooled = mean of the t states (or the [CLS] state), then divided by max(||pooled||, 1e-12).
// Every tensor is a Float32Array, as numpy's float32 pass keeps them. Two paths (PATHS) run the
// matrix products: "wasm-simd", where the engine validates WebAssembly SIMD, on kernel.js's
// kernel, each sum in float32 as BLAS's (in another order), its operands in the kernel's memory;
// "js", the fallback, in JavaScript with float64 sums rounded to float32 when stored. Either
// agrees with numpy's pass to float rounding: within 3.5e-7 and 2.1e-7 of the reference's unit
// vectors (tests). GELU rounds as numpy does: erf of the float32 z/sqrt 2 in float64 (from a
// table and its Taylor series, fastErf, within 1.2e-14 of erf), rounded to float32, then 1 + and
// the product in float32; LayerNorm and the softmax sum in float64. On the SIMD path the layers'
// matrices live in the kernel's memory only (simdState), not also as JavaScript arrays.

import { productKernel, simdSupported } from "./kernel.js";

const fround = Math.fround;
const INV_SQRT2 = fround(Math.SQRT1_2);
const TWO_OVER_SQRT_PI = 2 / Math.sqrt(Math.PI);
const INV_SQRT_PI = 1 / Math.sqrt(Math.PI);

/** erf(x) to float64 accuracy: the series 2/sqrt(pi) e^(-x^2) sum_n (2x^2)^n x / (2n+1)!! below
 * |x| = 2.5 (every term positive, so nothing cancels), Laplace's continued fraction for erfc
 * from 2.5 to 6, and +-1 beyond (erfc(6) = 2e-17). */
export function erf(x) {
  const ax = Math.abs(x);
  if (Number.isNaN(x)) return NaN;
  if (ax >= 6) return x > 0 ? 1 : -1;
  const x2 = ax * ax;
  if (ax < 2.5) {
    let term = ax;
    let sum = ax;
    for (let n = 1; term > 1e-17 * sum; n++) {
      term *= (2 * x2) / (2 * n + 1);
      sum += term;
    }
    const out = TWO_OVER_SQRT_PI * Math.exp(-x2) * sum;
    return x < 0 ? -out : out;
  }
  // erfc(x) = e^(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + ...))))).
  let f = ax;
  for (let k = 80; k >= 1; k--) f = ax + k / 2 / f;
  const out = 1 - (INV_SQRT_PI * Math.exp(-x2)) / f;
  return x < 0 ? -out : out;
}

/** erf's table: erf(x0) and its Taylor coefficients at x0 = i / ERF_STEPS, 0 <= x0 <= ERF_LIMIT. */
const ERF_STEPS = 64;
const ERF_LIMIT = 6;
const ERF_TABLE = (() => {
  const table = new Float64Array(6 * (ERF_LIMIT * ERF_STEPS + 1));
  for (let i = 0; i <= ERF_LIMIT * ERF_STEPS; i++) {
    const x = i / ERF_STEPS;
    const x2 = x * x;
    // erf' = 2/sqrt(pi) g, g = e^(-x^2), whose derivatives are -2x g, (4x^2 - 2) g,
    // (12x - 8x^3) g and (16x^4 - 48x^2 + 12) g: the Taylor terms d^k / k! over erf'(x0) d.
    const terms = [-x, (2 * x2 - 1) / 3, (x * (3 - 2 * x2)) / 6, (4 * x2 * x2 - 12 * x2 + 3) / 30];
    table.set([erf(x), TWO_OVER_SQRT_PI * Math.exp(-x2), ...terms], 6 * i);
  }
  return table;
})();

/** erf(x) from a table: erf and its Taylor series to d^5 at the nearest x0 = i/64 (|d| <= 1/128),
 * no exp, no loop; within 1e-13 of erf (the next term, below 3e-14, and the table's float64
 * rounding; tests), so its float32 rounding is erf's but where erf lies within 1e-13 of a
 * rounding boundary. +-1 from |x| = 6 (erfc(6) = 2e-17). */
export function fastErf(x) {
  const ax = Math.abs(x);
  if (!(ax < ERF_LIMIT)) return Number.isNaN(x) ? NaN : x > 0 ? 1 : -1;
  const i = (ax * ERF_STEPS + 0.5) | 0;
  const d = ax - i / ERF_STEPS;
  const at = 6 * i;
  const t = ERF_TABLE;
  const out = t[at] + t[at + 1] * d * (1 + d * (t[at + 2] + d * (t[at + 3] + d * (t[at + 4] + d * t[at + 5]))));
  return x < 0 ? -out : out;
}

/** GELU of the first `n` entries (all by default) of a Float32Array, in place, rounded as
 * numpy's float32 pass rounds it: erf (fastErf) of the float32 z/sqrt 2 in float64, rounded to
 * float32, then 1 + and the product in float32. */
export function gelu(x, n = x.length) {
  for (let i = 0; i < n; i++) {
    const v = x[i];
    const e = fround(fastErf(fround(v * INV_SQRT2)));
    x[i] = fround(fround(e + 1) * fround(v * 0.5));
  }
  return x;
}

/** x (t, n) W + b (m,) into `out` (t, m), W given transposed: `wt` (m, n), each output's
 * weights one contiguous row (weights.js). */
export function linear(x, t, wt, b, out) {
  const m = b.length;
  return product(x, t, wt.length / m, wt, m, b, out, m, 0);
}

/** x (t, n) y^T + b into out[i * stride + offset + j] for j < m: y (m, n) and every array a
 * Float32Array (one element type, so V8 compiles one fast path). Each output is the dot product
 * of two contiguous rows, summed in float64 and rounded to float32 once, when stored; four rows
 * of x by four rows of y at a time, their sixteen sums in locals, so each number read serves
 * four products. Rows of y outermost: four of them (6 to 24 KB) stay in cache while every row
 * of x streams past them. */
function product(x, t, n, y, m, b, out, stride, offset) {
  const t4 = t - (t % 4);
  let j = 0;
  for (; j + 4 <= m; j += 4) {
    const w0 = j * n;
    const w1 = w0 + n;
    const w2 = w1 + n;
    const w3 = w2 + n;
    const b0 = b[j];
    const b1 = b[j + 1];
    const b2 = b[j + 2];
    const b3 = b[j + 3];
    for (let i = 0; i < t4; i += 4) {
      const x0 = i * n;
      const x1 = x0 + n;
      const x2 = x1 + n;
      const x3 = x2 + n;
      let s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
      let s20 = 0, s21 = 0, s22 = 0, s23 = 0, s30 = 0, s31 = 0, s32 = 0, s33 = 0;
      for (let k = 0; k < n; k++) {
        const a0 = x[x0 + k];
        const a1 = x[x1 + k];
        const a2 = x[x2 + k];
        const a3 = x[x3 + k];
        const c0 = y[w0 + k];
        const c1 = y[w1 + k];
        const c2 = y[w2 + k];
        const c3 = y[w3 + k];
        s00 += a0 * c0; s01 += a0 * c1; s02 += a0 * c2; s03 += a0 * c3;
        s10 += a1 * c0; s11 += a1 * c1; s12 += a1 * c2; s13 += a1 * c3;
        s20 += a2 * c0; s21 += a2 * c1; s22 += a2 * c2; s23 += a2 * c3;
        s30 += a3 * c0; s31 += a3 * c1; s32 += a3 * c2; s33 += a3 * c3;
      }
      let o = i * stride + offset + j;
      out[o] = s00 + b0; out[o + 1] = s01 + b1; out[o + 2] = s02 + b2; out[o + 3] = s03 + b3;
      o += stride;
      out[o] = s10 + b0; out[o + 1] = s11 + b1; out[o + 2] = s12 + b2; out[o + 3] = s13 + b3;
      o += stride;
      out[o] = s20 + b0; out[o + 1] = s21 + b1; out[o + 2] = s22 + b2; out[o + 3] = s23 + b3;
      o += stride;
      out[o] = s30 + b0; out[o + 1] = s31 + b1; out[o + 2] = s32 + b2; out[o + 3] = s33 + b3;
    }
    for (let i = t4; i < t; i++) {
      const xi = i * n;
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (let k = 0; k < n; k++) {
        const a = x[xi + k];
        s0 += a * y[w0 + k]; s1 += a * y[w1 + k]; s2 += a * y[w2 + k]; s3 += a * y[w3 + k];
      }
      const o = i * stride + offset + j;
      out[o] = s0 + b0; out[o + 1] = s1 + b1; out[o + 2] = s2 + b2; out[o + 3] = s3 + b3;
    }
  }
  for (; j < m; j++) {
    const wj = j * n;
    for (let i = 0; i < t; i++) {
      const xi = i * n;
      let sum = 0;
      for (let k = 0; k < n; k++) sum += x[xi + k] * y[wj + k];
      out[i * stride + offset + j] = sum + b[j];
    }
  }
  return out;
}

/** LayerNorm of each row of x (t, h), in place: (x - mean) / sqrt(var + eps) gamma + beta, the
 * variance biased, as torch's. */
export function layerNorm(x, t, gamma, beta, eps) {
  const h = gamma.length;
  for (let i = 0; i < t; i++) {
    const row = i * h;
    let mean = 0;
    for (let j = 0; j < h; j++) mean += x[row + j];
    mean /= h;
    let variance = 0;
    for (let j = 0; j < h; j++) variance += (x[row + j] - mean) ** 2;
    const scale = 1 / Math.sqrt(variance / h + eps);
    for (let j = 0; j < h; j++) x[row + j] = (x[row + j] - mean) * scale * gamma[j] + beta[j];
  }
  return x;
}

/** The pass's working arrays, kept between calls (one Worker encodes one text at a time) and
 * grown when a text is longer than any before or the model's sizes change. */
let scratch = null;

function buffers(t, h, inner) {
  if (scratch === null || scratch.t < t || scratch.h !== h || scratch.inner !== inner) {
    const rows = Math.max(t, scratch !== null && scratch.h === h && scratch.inner === inner ? scratch.t : 0);
    scratch = {
      t: rows,
      h,
      inner,
      x: new Float32Array(rows * h),
      qkv: new Float32Array(rows * 3 * h),
      // One head's queries and keys (t, d) then its values transposed (d, t), contiguous.
      head: new Float32Array(3 * rows * h),
      mixed: new Float32Array(rows * h),
      wide: new Float32Array(rows * inner),
      // One head's scores, then its softmax, (t, t); zeros as the products' bias.
      scores: new Float32Array(rows * rows),
      zeros: new Float32Array(Math.max(rows, h)),
      exps: new Float64Array(rows),
    };
  }
  return scratch;
}

/** Each row of the (t, t) scores, in place: times the float32 `scale`, rounded, then its
 * softmax in float64 (`exps` a Float64Array of t), rounded to float32 when stored. */
function softmaxRows(scores, t, scale, exps) {
  for (let i = 0; i < t; i++) {
    const row = i * t;
    let max = -Infinity;
    for (let j = 0; j < t; j++) {
      const score = fround(scores[row + j] * scale);
      scores[row + j] = score;
      if (score > max) max = score;
    }
    let total = 0;
    for (let j = 0; j < t; j++) {
      const e = Math.exp(scores[row + j] - max);
      exps[j] = e;
      total += e;
    }
    for (let j = 0; j < t; j++) scores[row + j] = exps[j] / total;
  }
}

/** softmax(Q K^T / sqrt d) V of every head, heads side by side: qkv (t, 3h) -> out (t, h). Each
 * head's Q, K (t, d) and V^T (d, t) are first copied to contiguous blocks, so both products
 * are dot products of contiguous rows (product). As numpy's float32 pass: the scores Q K^T
 * rounded to float32, times the float32 1/sqrt d, rounded; the softmax in float64, rounded to
 * float32 when stored; the context summed in float64, rounded when stored. */
function attention(qkv, t, h, heads, s, out) {
  const d = h / heads;
  const scale = fround(1 / Math.sqrt(d));
  const block = t * d;
  const { head: q, scores, exps, zeros } = s;
  const k = q.subarray(block, 2 * block);
  const vt = q.subarray(2 * block, 3 * block);
  for (let head = 0; head < heads; head++) {
    for (let i = 0; i < t; i++) {
      const row = i * 3 * h + head * d;
      for (let c = 0; c < d; c++) {
        q[i * d + c] = qkv[row + c];
        k[i * d + c] = qkv[row + h + c];
        vt[c * t + i] = qkv[row + 2 * h + c];
      }
    }
    product(q, t, d, k, t, zeros, scores, t, 0);
    softmaxRows(scores, t, scale, exps);
    product(scores, t, t, vt, d, zeros, out, h, head * d);
  }
  return out;
}

/** x += y over the first `n` entries, rounded to float32 as stored. */
function addInto(x, y, n) {
  for (let i = 0; i < n; i++) x[i] += y[i];
}

/** x_0 of `ids` into `x` (t, h): LayerNorm(E_word[id] + E_pos + E_type[0]), each sum rounded. */
function embed(weights, ids, x) {
  const h = weights.config.hidden_size;
  const t = ids.length;
  for (let i = 0; i < t; i++) {
    const w = ids[i] * h;
    for (let j = 0; j < h; j++) {
      x[i * h + j] = fround(fround(weights.word[w + j] + weights.position[i * h + j]) + weights.token_type[j]);
    }
  }
  layerNorm(x, t, weights.emb_gamma, weights.emb_beta, weights.config.layer_norm_eps);
}

/** The forward pass of `ids` into the scratch arrays, every product in JavaScript (float64
 * sums): the last hidden states (t, h), a view of the scratch's `x`, valid until the next pass. */
function forwardJs(weights, ids) {
  const { config } = weights;
  const h = config.hidden_size;
  const t = ids.length;
  const inner = weights.layers[0].ffn_in_bias.length;
  const s = buffers(t, h, inner);
  const x = s.x.subarray(0, t * h);
  embed(weights, ids, x);
  const eps = config.layer_norm_eps;
  const qkv = s.qkv;
  const mixed = s.mixed;
  const attended = s.qkv; // free once the heads are mixed: (t, h) of its (t, 3h)
  const wide = s.wide;
  const n = t * h;
  for (const layer of jsLayers(weights)) {
    linear(x, t, layer.qkv, layer.qkv_bias, qkv);
    attention(qkv, t, h, config.num_attention_heads, s, mixed);
    linear(mixed, t, layer.attn_out, layer.attn_out_bias, attended);
    addInto(x, attended, n);
    layerNorm(x, t, layer.ln1_gamma, layer.ln1_beta, eps);
    gelu(linear(x, t, layer.ffn_in, layer.ffn_in_bias, wide), t * inner);
    linear(wide, t, layer.ffn_out, layer.ffn_out_bias, attended);
    addInto(x, attended, n);
    layerNorm(x, t, layer.ln2_gamma, layer.ln2_beta, eps);
  }
  return x;
}

/** Each layer's matrices' (in, out) shapes, by name. */
function matrixShapes(weights) {
  const h = weights.config.hidden_size;
  const inner = weights.layers[0].ffn_in_bias.length;
  return { qkv: [h, 3 * h], attn_out: [h, h], ffn_in: [h, inner], ffn_out: [inner, h] };
}

/** The (out, in) matrices of each layer the JavaScript path reads, by weights, made only when
 * the SIMD path has moved the loader's into the kernel's memory (both paths on one weights). */
const JS_LAYERS = new WeakMap();

/** The layers as the JavaScript path reads them, each matrix (out, in) (weights.js): the
 * loader's own, or, once simdState has moved those, (out, in) copies of the kernel's. */
function jsLayers(weights) {
  if (!SIMD_STATE.has(weights)) return weights.layers;
  let layers = JS_LAYERS.get(weights);
  if (layers === undefined) {
    const shapes = matrixShapes(weights);
    layers = weights.layers.map((layer) => {
      const out = { ...layer };
      for (const [name, [n, m]] of Object.entries(shapes)) {
        const a = layer[name]; // (n, m)
        const t = new Float32Array(n * m);
        for (let k = 0; k < n; k++) for (let j = 0; j < m; j++) t[j * n + k] = a[k * m + j];
        out[name] = t;
      }
      return out;
    });
    JS_LAYERS.set(weights, layers);
  }
  return layers;
}

/** The layers' matrices and biases, the pass's working arrays, all in the kernel's memory
 * (kernel.js), by weights: made on a weights' first pass on this path. */
const SIMD_STATE = new WeakMap();

/** The kernel's memory laid out for `weights`: the matrices back in the file's (in, out)
 * layout (weights.js turned them (out, in) for the JavaScript products), each output's
 * weights a column, so the kernel reads 4 outputs' weights as one vector; then room for a text
 * of the model's every position. Offsets in bytes, each a multiple of 16. The layers' matrices
 * then move: `weights.layers[l].qkv` etc. become (in, out) views of that memory, so the
 * loader's (out, in) arrays (42 MB for MiniLM) are no longer held beside it. */
function simdState(weights) {
  let st = SIMD_STATE.get(weights);
  if (st !== undefined) return st;
  const h = weights.config.hidden_size;
  const d = h / weights.config.num_attention_heads;
  const inner = weights.layers[0].ffn_in_bias.length;
  const rows = weights.position.length / h;
  let end = 0;
  const alloc = (floats) => {
    const at = end;
    end += Math.ceil(floats / 4) * 16;
    return at;
  };
  const shapes = matrixShapes(weights);
  const layers = weights.layers.map((layer) => {
    const out = {};
    for (const [name, [n, m]] of Object.entries(shapes)) {
      out[name] = alloc(n * m);
      out[`${name}_bias`] = alloc(m);
    }
    return out;
  });
  const at = {
    x: alloc(rows * h), qkv: alloc(rows * 3 * h), mixed: alloc(rows * h), wide: alloc(rows * inner),
    scores: alloc(rows * rows), kt: alloc(d * rows), zeros: alloc(Math.max(rows, h)),
  };
  const { memory, gemm } = productKernel(end);
  const heap = new Float32Array(memory.buffer);
  weights.layers.forEach((layer, l) => {
    for (const [name, [n, m]] of Object.entries(shapes)) {
      const wt = layer[name]; // (m, n), the loader's
      const base = layers[l][name] >> 2;
      for (let j = 0; j < m; j++) {
        const row = j * n;
        for (let k = 0; k < n; k++) heap[base + k * m + j] = wt[row + k];
      }
      heap.set(layer[`${name}_bias`], layers[l][`${name}_bias`] >> 2);
    }
  });
  // The loader's (out, in) copies are let go: each layer's matrix becomes a view of its (in, out)
  // block of the kernel's memory (which never grows, so the views stay valid), 42 MB held once.
  weights.layers.forEach((layer, l) => {
    for (const [name, [n, m]] of Object.entries(shapes)) {
      layer[name] = heap.subarray(layers[l][name] >> 2, (layers[l][name] >> 2) + n * m);
    }
  });
  st = { gemm, heap, layers, at, exps: new Float64Array(rows) };
  SIMD_STATE.set(weights, st);
  return st;
}

/** heap[to + c t + i] = heap[from + i stride + c] for i < t, c < d: one head's K (t, d), a
 * block of rows `stride` apart, copied as K^T (d, t). */
function transposeInto(heap, from, stride, t, d, to) {
  for (let i = 0; i < t; i++) {
    const row = from + i * stride;
    for (let c = 0; c < d; c++) heap[to + c * t + i] = heap[row + c];
  }
}

/** The forward pass of `ids` with every product on the WebAssembly SIMD kernel (float32 sums,
 * kernel.js), the rest as forwardJs: the last hidden states (t, h), a view of the kernel's
 * memory, valid until the next pass. Attention reads each head's Q and V in place in qkv
 * (strides of 3h) and K^T from a copy (d, t), as the kernel's b is (n, m) rows. */
function forwardSimd(weights, ids) {
  const { config } = weights;
  const h = config.hidden_size;
  const heads = config.num_attention_heads;
  const d = h / heads;
  const inner = weights.layers[0].ffn_in_bias.length;
  const st = simdState(weights);
  const { gemm, heap, at } = st;
  const t = ids.length;
  const view = (offset, floats) => heap.subarray(offset >> 2, (offset >> 2) + floats);
  const x = view(at.x, t * h);
  embed(weights, ids, x);
  const eps = config.layer_norm_eps;
  const n = t * h;
  const attended = view(at.qkv, n); // free once the heads are mixed, as in forwardJs
  const wide = view(at.wide, t * inner);
  const scores = view(at.scores, t * t);
  const scale = fround(1 / Math.sqrt(d));
  const row3 = 3 * h * 4;
  weights.layers.forEach((layer, l) => {
    const w = st.layers[l];
    gemm(at.x, h * 4, w.qkv, row3, w.qkv_bias, at.qkv, row3, t, h, 3 * h);
    for (let head = 0; head < heads; head++) {
      const q = at.qkv + head * d * 4;
      transposeInto(heap, (at.qkv >> 2) + h + head * d, 3 * h, t, d, at.kt >> 2);
      gemm(q, row3, at.kt, t * 4, at.zeros, at.scores, t * 4, t, d, t);
      softmaxRows(scores, t, scale, st.exps);
      gemm(at.scores, t * 4, q + 2 * h * 4, row3, at.zeros, at.mixed + head * d * 4, h * 4, t, t, d);
    }
    gemm(at.mixed, h * 4, w.attn_out, h * 4, w.attn_out_bias, at.qkv, h * 4, t, h, h);
    addInto(x, attended, n);
    layerNorm(x, t, layer.ln1_gamma, layer.ln1_beta, eps);
    gemm(at.x, h * 4, w.ffn_in, inner * 4, w.ffn_in_bias, at.wide, inner * 4, t, h, inner);
    gelu(wide);
    gemm(at.wide, inner * 4, w.ffn_out, h * 4, w.ffn_out_bias, at.qkv, h * 4, t, inner, h);
    addInto(x, attended, n);
    layerNorm(x, t, layer.ln2_gamma, layer.ln2_beta, eps);
  });
  return x;
}

/** The encoder's two paths: "wasm-simd" (the products on kernel.js's WebAssembly SIMD kernel,
 * float32 sums) and "js" (plain JavaScript, float64 sums), the fallback. */
export const PATHS = Object.freeze(["wasm-simd", "js"]);

/** The path this engine runs: "wasm-simd" where WebAssembly SIMD validates, else "js". */
export const encoderPath = () => (simdSupported() ? "wasm-simd" : "js");

function forward(weights, ids, path) {
  const h = weights.config.hidden_size;
  const t = ids.length;
  if (t < 1) throw new Error("a text needs at least one word piece");
  if (t * h > weights.position.length) {
    throw new Error(`${t} word pieces exceed the model's ${weights.position.length / h} positions`);
  }
  if (path === "wasm-simd") return forwardSimd(weights, ids);
  if (path === "js") return forwardJs(weights, ids);
  throw new Error(`the encoder's path ${path} is not one of ${PATHS.join(", ")}`);
}

/** The last hidden states (t, h) of one text's word-piece `ids` (at most the model's positions),
 * a new Float32Array, row-major; `path` one of PATHS (this engine's by default). */
export function tokenStates(weights, ids, { path = encoderPath() } = {}) {
  return forward(weights, ids, path).slice();
}

/** One text's sentence vector (h,) Float32Array from its word-piece `ids`: pooled as the model
 * says ("mean" over the tokens, or "cls"), divided by its L2 norm unless `normalize` is false;
 * `path` one of PATHS (this engine's by default). */
export function encodeIds(weights, ids, { normalize = true, path = encoderPath() } = {}) {
  const h = weights.config.hidden_size;
  const t = ids.length;
  const states = forward(weights, ids, path);
  const pooled = new Float32Array(h);
  if (weights.config.pooling === "cls") {
    pooled.set(states.subarray(0, h));
  } else {
    for (let j = 0; j < h; j++) {
      let sum = 0;
      for (let i = 0; i < t; i++) sum += states[i * h + j];
      pooled[j] = sum / t;
    }
  }
  if (!normalize) return pooled;
  let norm = 0;
  for (let j = 0; j < h; j++) norm += pooled[j] * pooled[j];
  norm = Math.max(Math.sqrt(norm), 1e-12);
  for (let j = 0; j < h; j++) pooled[j] /= norm;
  return pooled;
}

/** One text's unit sentence vector: `tokenizer` from wordpiece.js, `weights` from weights.js,
 * `path` one of PATHS (this engine's by default). */
export function encode(tokenizer, weights, text, { path = encoderPath() } = {}) {
  return encodeIds(weights, tokenizer.ids(text), { path });
}
