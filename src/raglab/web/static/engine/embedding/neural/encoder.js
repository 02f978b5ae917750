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
// Every tensor is a Float32Array, as numpy's float32 pass keeps them; sums run in float64 and
// are rounded to float32 when stored (BLAS sums in float32 in another order), so the two passes
// agree to float rounding, about 1e-7 on a unit vector. GELU rounds as numpy does: erf of the
// float32 z/sqrt 2 in float64, rounded to float32, then 1 + and the product in float32.

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

/** GELU of each entry of a Float32Array, in place, rounded as numpy's float32 pass rounds it. */
export function gelu(x) {
  for (let i = 0; i < x.length; i++) {
    const v = x[i];
    const e = fround(erf(fround(v * INV_SQRT2)));
    x[i] = fround(fround(e + 1) * fround(v * 0.5));
  }
  return x;
}

const BLOCK = 16;

/** x (t, n) W (n, m) + b (m): a new (t, m) Float32Array. Sixteen rows of x at a time, each row
 * of W applied to all of them while it is in cache: W (up to 2.4 MB a matrix, 87 MB in all) is
 * read from memory once per sixteen word pieces, which is what a short question costs. */
export function linear(x, t, w, b) {
  const m = b.length;
  const n = w.length / m;
  const out = new Float32Array(t * m);
  const acc = new Float64Array(BLOCK * m);
  for (let i = 0; i < t; i += BLOCK) {
    const rows = Math.min(BLOCK, t - i);
    acc.fill(0);
    for (let k = 0; k < n; k++) {
      const base = k * m;
      for (let r = 0; r < rows; r++) {
        const a = x[(i + r) * n + k];
        if (a === 0) continue;
        const at = r * m;
        for (let j = 0; j < m; j++) acc[at + j] += a * w[base + j];
      }
    }
    for (let r = 0; r < rows; r++) {
      const row = (i + r) * m;
      const at = r * m;
      for (let j = 0; j < m; j++) out[row + j] = acc[at + j] + b[j];
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

/** softmax(Q K^T / sqrt d) V of every head, heads side by side: qkv (t, 3h) -> (t, h). */
function attention(qkv, t, h, heads) {
  const d = h / heads;
  const scale = fround(1 / Math.sqrt(d));
  const out = new Float32Array(t * h);
  const scores = new Float64Array(t);
  const context = new Float64Array(d);
  for (let head = 0; head < heads; head++) {
    const qAt = head * d;
    const kAt = h + head * d;
    const vAt = 2 * h + head * d;
    for (let i = 0; i < t; i++) {
      const qi = i * 3 * h + qAt;
      let max = -Infinity;
      for (let j = 0; j < t; j++) {
        const kj = j * 3 * h + kAt;
        let dot = 0;
        for (let c = 0; c < d; c++) dot += qkv[qi + c] * qkv[kj + c];
        scores[j] = fround(fround(dot) * scale);
        if (scores[j] > max) max = scores[j];
      }
      let total = 0;
      for (let j = 0; j < t; j++) {
        scores[j] = Math.exp(scores[j] - max);
        total += scores[j];
      }
      context.fill(0);
      for (let j = 0; j < t; j++) {
        const p = scores[j] / total;
        const vj = j * 3 * h + vAt;
        for (let c = 0; c < d; c++) context[c] += p * qkv[vj + c];
      }
      const row = i * h + head * d;
      for (let c = 0; c < d; c++) out[row + c] = context[c];
    }
  }
  return out;
}

/** The last hidden states (t, h) of one text's word-piece `ids` (at most the model's positions),
 * a Float32Array, row-major. */
export function tokenStates(weights, ids) {
  const { config } = weights;
  const h = config.hidden_size;
  const t = ids.length;
  if (t < 1) throw new Error("a text needs at least one word piece");
  if (t * h > weights.position.length) {
    throw new Error(`${t} word pieces exceed the model's ${weights.position.length / h} positions`);
  }
  let x = new Float32Array(t * h);
  for (let i = 0; i < t; i++) {
    const w = ids[i] * h;
    for (let j = 0; j < h; j++) {
      x[i * h + j] = fround(fround(weights.word[w + j] + weights.position[i * h + j]) + weights.token_type[j]);
    }
  }
  const eps = config.layer_norm_eps;
  layerNorm(x, t, weights.emb_gamma, weights.emb_beta, eps);
  for (const layer of weights.layers) {
    const mixed = attention(linear(x, t, layer.qkv, layer.qkv_bias), t, h, config.num_attention_heads);
    const attended = linear(mixed, t, layer.attn_out, layer.attn_out_bias);
    for (let i = 0; i < attended.length; i++) attended[i] += x[i];
    x = layerNorm(attended, t, layer.ln1_gamma, layer.ln1_beta, eps);
    const inner = gelu(linear(x, t, layer.ffn_in, layer.ffn_in_bias));
    const ffn = linear(inner, t, layer.ffn_out, layer.ffn_out_bias);
    for (let i = 0; i < ffn.length; i++) ffn[i] += x[i];
    x = layerNorm(ffn, t, layer.ln2_gamma, layer.ln2_beta, eps);
  }
  return x;
}

/** One text's sentence vector (h,) Float32Array from its word-piece `ids`: pooled as the model
 * says ("mean" over the tokens, or "cls"), divided by its L2 norm unless `normalize` is false. */
export function encodeIds(weights, ids, { normalize = true } = {}) {
  const h = weights.config.hidden_size;
  const t = ids.length;
  const states = tokenStates(weights, ids);
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

/** One text's unit sentence vector: `tokenizer` from wordpiece.js, `weights` from weights.js. */
export function encode(tokenizer, weights, text) {
  return encodeIds(weights, tokenizer.ids(text));
}
