// The neural encoder's fixtures (parity.py's neural_fixture): the exported weights, the model's
// tokenizer and the reference embeddings, each read once.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fixture } from "../../fixtures.mjs";
import { loadWeights } from "../../../../../../src/raglab/web/static/engine/embedding/neural/weights.js";
import { wordPieceTokenizer } from "../../../../../../src/raglab/web/static/engine/embedding/neural/wordpiece.js";

const loaded = new Map();

/** The weights file of `dtype` ("float32" or "float16") as the loader reads it. */
export function weights(dtype) {
  if (!loaded.has(dtype)) {
    neural(); // a clear error when the fixtures' folder is not set
    const bytes = readFileSync(join(process.env.RAGLAB_PARITY_DIR, `weights-${dtype}.bin`));
    loaded.set(dtype, loadWeights(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)));
  }
  return loaded.get(dtype);
}

/** neural.json: the Python encoder's ids and vectors of handbook chunks, the files' paths. */
export function neural() {
  return fixture("neural");
}

/** The reference embeddings (tests/fixtures/minilm-reference/reference.json). */
export function reference() {
  if (!loaded.has("reference")) loaded.set("reference", JSON.parse(readFileSync(neural().reference, "utf8")));
  return loaded.get("reference");
}

/** The model's tokenizer, truncating where the Python side does (the manifest's max_seq_length). */
export function tokenizer() {
  if (!loaded.has("tokenizer")) {
    const json = JSON.parse(readFileSync(neural().tokenizer, "utf8"));
    loaded.set("tokenizer", wordPieceTokenizer(json, neural().manifests.float32.config.max_seq_length));
  }
  return loaded.get("tokenizer");
}

/** The largest |a_i - b_i|. */
export function maxDifference(a, b) {
  let worst = 0;
  for (let i = 0; i < b.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}
