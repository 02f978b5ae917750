// The weights of a BERT sentence encoder, read from the one binary file the Python side writes.
//
// Mirrors src/raglab/embedding/neural/export.py: 8 bytes of manifest length (unsigned 64-bit
// little-endian), the manifest (UTF-8 JSON), then every tensor, little-endian float32 or float16,
// row-major. The caller brings the file as an ArrayBuffer (a browser fetches it with progress,
// Node reads it from disk); float32 tensors are views on it (no copy, when aligned, as the export
// writes them), float16 ones are widened to Float32Array (exactly: every float16 is a float32).
// The layers' four matrices, stored (in, out), are transposed once here to (out, in), so that
// each output of the encoder's products is a dot product of two contiguous rows (encoder.js).
// The encoder's WebAssembly SIMD path then moves them into its kernel's memory, where they are
// (in, out) again, and replaces them with views of it (encoder.js, simdState).

export const FORMAT = "raglab-bert-weights-1";

const LAYER_FIELDS = [
  "qkv", "qkv_bias", "attn_out", "attn_out_bias", "ln1_gamma", "ln1_beta",
  "ffn_in", "ffn_in_bias", "ffn_out", "ffn_out_bias", "ln2_gamma", "ln2_beta",
];
const MATRICES = new Set(["qkv", "attn_out", "ffn_in", "ffn_out"]);

let halfTable = null;

/** The float32 value of each of the 65536 float16 bit patterns (IEEE 754 binary16). */
function halves() {
  if (halfTable) return halfTable;
  halfTable = new Float32Array(65536);
  for (let bits = 0; bits < 65536; bits++) {
    const sign = bits & 0x8000 ? -1 : 1;
    const exponent = (bits >> 10) & 0x1f;
    const fraction = bits & 0x3ff;
    let value;
    if (exponent === 0) value = fraction * 2 ** -24;
    else if (exponent === 31) value = fraction ? NaN : Infinity;
    else value = (1 + fraction / 1024) * 2 ** (exponent - 15);
    halfTable[bits] = sign * value;
  }
  return halfTable;
}

/** The manifest and the data's start (bytes) of a weights file in `buffer` (an ArrayBuffer). */
export function readManifest(buffer) {
  if (buffer.byteLength < 8) throw new Error("weights file: shorter than its 8-byte header");
  const view = new DataView(buffer);
  const length = Number(view.getBigUint64(0, true));
  if (8 + length > buffer.byteLength) throw new Error("weights file: truncated manifest");
  const manifest = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 8, length)));
  if (manifest.format !== FORMAT) {
    throw new Error(`weights file: format ${manifest.format} is not ${FORMAT}`);
  }
  return { manifest, start: 8 + length };
}

/** The weights in `buffer`: { manifest, config, word, position, token_type, emb_gamma, emb_beta,
 * layers: [{ qkv, qkv_bias, ... }] }, each tensor a Float32Array (row-major, shape in the
 * manifest), except the layers' matrices qkv, attn_out, ffn_in and ffn_out: export.py stores
 * them (in, out), here they are (out, in), each output's weights one contiguous row. */
export function loadWeights(buffer) {
  const { manifest, start } = readManifest(buffer);
  const { dtype } = manifest;
  if (dtype !== "float32" && dtype !== "float16") throw new Error(`weights file: dtype ${dtype}`);
  const size = dtype === "float32" ? 4 : 2;
  const byName = new Map();
  const shapes = new Map();
  for (const { name, shape, offset, bytes } of manifest.tensors) {
    const count = shape.reduce((a, b) => a * b, 1);
    if (count * size !== bytes || start + offset + bytes > buffer.byteLength) {
      throw new Error(`weights file: tensor ${name} does not fit its shape or the file`);
    }
    byName.set(name, widen(buffer, start + offset, count, dtype));
    shapes.set(name, shape);
  }
  const get = (name) => {
    const t = byName.get(name);
    if (!t) throw new Error(`weights file: tensor ${name} is missing`);
    return t;
  };
  const layers = [];
  for (let l = 0; l < manifest.config.num_hidden_layers; l++) {
    const layer = {};
    for (const field of LAYER_FIELDS) {
      const name = `layer.${l}.${field}`;
      layer[field] = MATRICES.has(field) ? transposed(get(name), shapes.get(name)) : get(name);
    }
    layers.push(layer);
  }
  return {
    manifest,
    config: manifest.config,
    word: get("word"),
    position: get("position"),
    token_type: get("token_type"),
    emb_gamma: get("emb_gamma"),
    emb_beta: get("emb_beta"),
    layers,
  };
}

/** The (cols, rows) transpose of `a`, a (rows, cols) matrix: a new Float32Array. */
function transposed(a, [rows, cols]) {
  const out = new Float32Array(a.length);
  for (let r = 0; r < rows; r++) {
    const at = r * cols;
    for (let c = 0; c < cols; c++) out[c * rows + r] = a[at + c];
  }
  return out;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function widen(buffer, at, count, dtype) {
  if (dtype === "float32") {
    if (LITTLE_ENDIAN && at % 4 === 0) return new Float32Array(buffer, at, count);
    const view = new DataView(buffer, at, count * 4);
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = view.getFloat32(4 * i, true);
    return out;
  }
  const table = halves();
  const out = new Float32Array(count);
  if (LITTLE_ENDIAN && at % 2 === 0) {
    const bits = new Uint16Array(buffer, at, count);
    for (let i = 0; i < count; i++) out[i] = table[bits[i]];
  } else {
    const view = new DataView(buffer, at, count * 2);
    for (let i = 0; i < count; i++) out[i] = table[view.getUint16(2 * i, true)];
  }
  return out;
}
