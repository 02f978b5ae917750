// The BERT forward pass in JavaScript equals sentence-transformers' and the Python engine's
// (src/raglab/embedding/neural/encoder.py), on both of its paths (the products on WebAssembly
// SIMD, summed in float32, this engine's; plain JavaScript summing in float64, the fallback).
// Oracles: minilm-reference/reference.json (torch's unit vectors of 30 texts) within 1e-4, the
// Python encoder's vectors of handbook chunks (parity fixture neural.json) within 1e-5, both
// from float32 weights; erf against Abramowitz and Stegun's table 7.1, the table-driven erf GELU
// runs (fastErf) against that float64 erf (series and continued fraction).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { maxDifference, neural, reference, weights } from "./neural.mjs";
import { loadWeights } from "../../../../../../src/raglab/web/static/engine/embedding/neural/weights.js";
import { PATHS, encodeIds, encoderPath, erf, fastErf, gelu, tokenStates } from "../../../../../../src/raglab/web/static/engine/embedding/neural/encoder.js";

test("this engine encodes on the WebAssembly SIMD path, the JavaScript one its fallback", () => {
  assert.deepEqual(PATHS, ["wasm-simd", "js"]);
  assert.equal(encoderPath(), "wasm-simd", "Node 20's V8 validates the kernel's SIMD module");
  assert.throws(() => encodeIds(weights("float32"), [101, 102], { path: "gpu" }), /not one of wasm-simd, js/);
});

test("where WebAssembly SIMD does not validate, the encoder takes the JavaScript path", () => {
  // A Node whose WebAssembly.validate refuses every module, as an engine without SIMD refuses
  // the kernel's: the path it picks, and a text encoded on it equal to the JS path's here.
  const encoder = new URL("../../../../../../src/raglab/web/static/engine/embedding/neural/encoder.js", import.meta.url);
  const ids = reference().input_ids[0];
  const script = `import("${encoder.href}").then(async (m) => {
    const { weights } = await import("${new URL("./neural.mjs", import.meta.url).href}");
    process.stdout.write(JSON.stringify([m.encoderPath(), Array.from(m.encodeIds(weights("float32"), ${JSON.stringify(ids)}))]));
  });`;
  const args = ["--import", "data:text/javascript,WebAssembly.validate = () => false;", "--input-type=module", "-e", script];
  const [path, vector] = JSON.parse(execFileSync(process.execPath, args, { encoding: "utf8" }));
  assert.equal(path, "js");
  assert.deepEqual(vector, Array.from(encodeIds(weights("float32"), ids, { path: "js" })));
});

test("erf, against the printed table", () => {
  for (const [x, value] of [[0.1, 0.1124629160], [1, 0.8427007929], [2, 0.9953222650], [-0.5, -0.5204998778]]) {
    assert.ok(Math.abs(erf(x) - value) < 1e-10, `erf(${x})`);
  }
  assert.ok(Math.abs(erf(3) - 0.9999779095030014) < 1e-15, "erf(3), past the series");
  assert.equal(erf(7), 1);
});

test("fastErf, GELU's erf, within 2e-14 of erf, and GELU's float32 values equal erf's", () => {
  // Every 97th float32 from 0 to 6.5 and its negative (about 22 million): the largest
  // |fastErf - erf| (1.2e-14 measured), and how many float32 roundings of the two differ (none
  // measured; a difference needs erf within 2e-14 of a rounding boundary).
  const f = new Float32Array(1);
  const bits = new Uint32Array(f.buffer);
  let worst = 0;
  let differ = 0;
  for (let b = 0; b < 0x40d00000; b += 97) {
    bits[0] = b;
    for (const x of [f[0], -f[0]]) {
      const [exact, fast] = [erf(x), fastErf(x)];
      worst = Math.max(worst, Math.abs(exact - fast));
      if (Math.fround(exact) !== Math.fround(fast)) differ += 1;
    }
  }
  assert.ok(worst < 2e-14, `largest difference ${worst}`);
  assert.equal(differ, 0);
  assert.equal(fastErf(6), 1);
  assert.equal(fastErf(-Infinity), -1);
  assert.ok(Number.isNaN(fastErf(NaN)));
  // GELU of a spread of activations, as numpy's float32 pass with the float64 erf rounds it.
  const z = Float32Array.from({ length: 4001 }, (_, i) => (i - 2000) / 250);
  const f32 = Math.fround;
  const expected = z.map((v) => f32(f32(f32(erf(f32(v * f32(Math.SQRT1_2)))) + 1) * f32(v * 0.5)));
  assert.deepEqual(gelu(z.slice()), expected);
});

test("on the SIMD path the layers' matrices are held once, in the kernel's memory", () => {
  // A weights of its own (the others are shared): the loader's 24 matrices, each its own
  // (out, in) array, then, after one text, every one a view of the kernel's one memory, in the
  // file's (in, out) layout, so the bytes held outside it for matrices are none (42 MB before).
  const bytes = readFileSync(join(process.env.RAGLAB_PARITY_DIR, "weights-float32.bin"));
  const w = loadWeights(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const names = ["qkv", "attn_out", "ffn_in", "ffn_out"];
  const matrices = () => w.layers.flatMap((layer) => names.map((name) => layer[name]));
  const loaded = new Set(matrices().map((m) => m.buffer));
  const { hidden_size: h, intermediate_size: inner, num_hidden_layers: layers } = w.config;
  const fromShapes = 4 * layers * (3 * h * h + h * h + 2 * h * inner);
  assert.equal(matrices().reduce((a, m) => a + m.byteLength, 0), fromShapes);
  const ids = reference().input_ids[3];
  const before = encodeIds(w, ids, { path: "js" });
  const first = w.layers[0].qkv.slice(); // (out, in): row j holds output j's weights
  encodeIds(w, ids, { path: "wasm-simd" });
  const held = new Set(matrices().map((m) => m.buffer));
  assert.equal(held.size, 1, "one buffer, the kernel's memory");
  const [memory] = held;
  assert.ok(!loaded.has(memory), "not one of the loader's arrays");
  assert.ok(memory.byteLength >= fromShapes, `${memory.byteLength} bytes`);
  const outsideKernel = matrices().filter((m) => m.buffer !== memory).reduce((a, m) => a + m.byteLength, 0);
  assert.equal(outsideKernel, 0);
  // The view is (in, out): entry (k, j) is the loader's (j, k).
  const qkv = w.layers[0].qkv;
  for (const [k, j] of [[0, 0], [1, 0], [0, 1], [h - 1, 3 * h - 1], [17, 700]]) {
    assert.equal(qkv[k * 3 * h + j], first[j * h + k], `(${k}, ${j})`);
  }
  // And the JavaScript path still encodes as before the move.
  assert.deepEqual(encodeIds(w, ids, { path: "js" }), before);
});

for (const path of PATHS) {
  test(`float32 weights, ${path}: the reference's unit vectors within 1e-4, every text`, (t) => {
    const { input_ids: ids, embedding_normalized: expected } = reference();
    let worst = 0;
    ids.forEach((row, i) => {
      const difference = maxDifference(encodeIds(weights("float32"), row, { path }), expected[i]);
      assert.ok(difference <= 1e-4, `text ${i}: ${difference}`);
      worst = Math.max(worst, difference);
    });
    t.diagnostic(`largest difference ${worst.toExponential(2)}`);
  });

  test(`float32 weights, ${path}: the reference's token states of texts 2 and 3 within 1e-4`, () => {
    const { input_ids: ids, token_embeddings_of_texts_2_and_3: expected } = reference();
    [2, 3].forEach((text, n) => {
      const states = tokenStates(weights("float32"), ids[text], { path });
      const flat = expected[n].flat();
      assert.equal(states.length, flat.length, `text ${text}: shape`);
      const difference = maxDifference(states, flat);
      assert.ok(difference <= 1e-4, `text ${text}: ${difference}`);
    });
  });
}

// The handbook's chunks are longer (up to 256 pieces): the engine's own path only, the
// JavaScript one being checked above.
test("float32 weights: the Python encoder's vectors of handbook chunks within 1e-5", (t) => {
  const { chunks } = neural();
  let worst = 0;
  for (const { id, ids, vector } of chunks) {
    const difference = maxDifference(encodeIds(weights("float32"), ids), vector);
    assert.ok(difference <= 1e-5, `${id}: ${difference}`);
    worst = Math.max(worst, difference);
  }
  t.diagnostic(`largest difference ${worst.toExponential(2)}`);
});
