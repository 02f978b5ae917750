// The weights file the Python side exports (src/raglab/embedding/neural/export.py) read back in
// JavaScript. Oracles: the Python manifest (names, shapes, hash); the file's own bytes for the
// layers' matrices, which the loader transposes to (out, in); IEEE 754's rounding bound for
// the float16 copy against the float32 one; minilm-reference/reference.json for what float16
// costs the vectors (measured: 1.96e-4 at most over its 30 texts, asserted under 2.5e-4).
import { test } from "node:test";
import assert from "node:assert/strict";
import { maxDifference, neural, reference, weights } from "./neural.mjs";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { encodeIds } from "../../../../../../src/raglab/web/static/engine/embedding/neural/encoder.js";
import { readManifest } from "../../../../../../src/raglab/web/static/engine/embedding/neural/weights.js";

const FLOAT16_BOUND = 2.5e-4;

test("the manifest is Python's, the tensors of its shapes", () => {
  for (const dtype of ["float32", "float16"]) {
    const w = weights(dtype);
    assert.deepEqual(w.manifest, neural().manifests[dtype], dtype);
    assert.equal(w.manifest.model_hash, reference().model_safetensors_sha256);
    assert.equal(w.layers.length, 6);
    assert.equal(w.word.length, 30522 * 384);
    assert.equal(w.layers[5].qkv.length, 384 * 3 * 384);
  }
});

test("each layer's matrices are the file's (in, out) ones transposed, every entry", () => {
  // Oracle: the float32 file's bytes, read with a DataView at the manifest's offsets.
  const bytes = readFileSync(join(process.env.RAGLAB_PARITY_DIR, "weights-float32.bin"));
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const { manifest, start } = readManifest(buffer);
  const view = new DataView(buffer);
  const w = weights("float32");
  for (const [l, field] of [[0, "qkv"], [2, "attn_out"], [4, "ffn_in"], [5, "ffn_out"]]) {
    const { shape: [rows, cols], offset } = manifest.tensors.find((t) => t.name === `layer.${l}.${field}`);
    const got = w.layers[l][field];
    assert.equal(got.length, rows * cols);
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const file = view.getFloat32(start + offset + 4 * (r * cols + c), true);
        if (got[c * rows + r] !== file) assert.fail(`layer ${l} ${field} [${r}, ${c}]`);
      }
    }
  }
});

test("each float16 weight is its float32 weight rounded to the nearest float16", () => {
  const [full, half] = [weights("float32"), weights("float16")];
  const pairs = [[full.word, half.word], [full.layers[0].ffn_in, half.layers[0].ffn_in], [full.layers[5].ln2_beta, half.layers[5].ln2_beta]];
  for (const [a, b] of pairs) {
    let moved = 0;
    for (let i = 0; i < a.length; i++) {
      if (a[i] !== b[i]) moved++;
      // Half a float16 step: 2^-11 relative for normal values, 2^-25 below 2^-14.
      if (!(Math.abs(a[i] - b[i]) <= Math.max(Math.abs(a[i]) * 2 ** -11, 2 ** -25))) {
        assert.fail(`weight ${i}: ${b[i]} is not ${a[i]} rounded`);
      }
    }
    assert.ok(moved > a.length / 2, "most float32 weights are not float16 numbers");
  }
});

test(`float16 weights: the reference's unit vectors within ${FLOAT16_BOUND}, every text`, (t) => {
  const { input_ids: ids, embedding_normalized: expected } = reference();
  let worst = 0;
  ids.forEach((row, i) => {
    worst = Math.max(worst, maxDifference(encodeIds(weights("float16"), row), expected[i]));
  });
  t.diagnostic(`largest difference ${worst.toExponential(3)}`);
  assert.ok(worst <= FLOAT16_BOUND, `${worst}`);
  assert.ok(worst > 1e-5, "float16 weights should move the vectors: is the float32 file read?");
});
