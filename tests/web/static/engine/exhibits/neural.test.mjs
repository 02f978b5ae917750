// The tab's neural vectors by text (engine/exhibits/neural.js): the typed questions' vectors are
// kept in a bounded cache, the shipped ones always. Oracle: the definition of LRU, worked by
// hand on the sequence below (a cache of 2 texts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { NeedsEncoding, addVector, attachNeural, textVector } from "../../../../../src/raglab/web/static/engine/exhibits/neural.js";

/** Site data with one shipped chunk and one shipped question (dim 2), caches of `size`. */
function site(size) {
  const neural = { dim: 2, chunks: 1, texts: ["a labelled question"], file: "data/neural.bin", chunk_sets: size, text_cache: size };
  const data = { neural, meta: { site: { lacks: [] } } };
  attachNeural(data, new Float32Array([1, 0, 0, 1]).buffer);
  return data;
}

test("typed questions' vectors are kept in a bounded cache, the shipped ones always", () => {
  const data = site(2);
  const typed = ["first typed", "second typed", "third typed"];
  typed.forEach((text, i) => addVector(data, text, new Float32Array([i, 1])));
  // Three typed into a cache of two: the first, least recently used, is dropped.
  assert.throws(() => textVector(data, "first typed"), NeedsEncoding);
  assert.deepEqual([...textVector(data, "second typed")], [1, 1]);
  assert.deepEqual([...textVector(data, "third typed")], [2, 1]);
  // Reading "second" made it newer than "third": the next one typed drops "third".
  textVector(data, "second typed");
  addVector(data, "fourth typed", new Float32Array([3, 1]));
  assert.throws(() => textVector(data, "third typed"), NeedsEncoding);
  assert.deepEqual([...textVector(data, "second typed")], [1, 1]);
  // The shipped question's vector (row 1 of the file, after the one chunk) is never dropped.
  assert.deepEqual([...textVector(data, "a labelled question")], [0, 1]);
});
