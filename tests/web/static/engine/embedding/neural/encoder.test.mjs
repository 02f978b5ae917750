// The BERT forward pass in JavaScript equals sentence-transformers' and the Python engine's
// (src/raglab/embedding/neural/encoder.py), on both of its paths (the products on WebAssembly
// SIMD, summed in float32, this engine's; plain JavaScript summing in float64, the fallback).
// Oracles: minilm-reference/reference.json (torch's unit vectors of 30 texts) within 1e-4, the
// Python encoder's vectors of handbook chunks (parity fixture neural.json) within 1e-5, both
// from float32 weights; erf against Abramowitz and Stegun's table 7.1.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { maxDifference, neural, reference, weights } from "./neural.mjs";
import { PATHS, encodeIds, encoderPath, erf, tokenStates } from "../../../../../../src/raglab/web/static/engine/embedding/neural/encoder.js";

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
