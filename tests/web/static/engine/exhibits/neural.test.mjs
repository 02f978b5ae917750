// The tab's neural vectors by text (engine/exhibits/neural.js): the typed questions' vectors are
// kept in a bounded cache, the shipped ones always. Oracle: the definition of LRU, worked by
// hand on the sequence below (a cache of 2 texts). Another chunking's vectors are kept by its
// cut: oracle, the chunker's own spans (two heading sizes that cut the same chunks).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  NeedsChunkVectors,
  NeedsEncoding,
  addChunkVectors,
  addVector,
  attachNeural,
  chunkVectors,
  textVector,
} from "../../../../../src/raglab/web/static/engine/exhibits/neural.js";
import { Lab } from "../../../../../src/raglab/web/static/engine/exhibits/lab.js";
import { chunkPages } from "../../../../../src/raglab/web/static/engine/chunking/chunkers.js";
import { fixture } from "../fixtures.mjs";

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

/** The handbook's lab with made-up shipped vectors (dim 2) of its own chunks, a text cache of
 * one text (so an encoded chunking's texts are not all kept by text) and room for 4 cuts. */
function handbookLab() {
  const data = structuredClone(fixture("site-handbook"));
  const lab = new Lab(data, { stem: data.meta.stem });
  const own = lab.chunkSet();
  const chunking = { method: own.key.method, size: own.key.size, overlap: own.key.overlap };
  data.neural = { dim: 2, chunks: own.length, texts: [], chunking, file: "data/neural.bin", chunk_sets: 4, text_cache: 1 };
  attachNeural(data, new Float32Array(2 * own.length).fill(1).buffer);
  return lab;
}

/** The NeedsChunkVectors that `chunkVectors` throws for `cs` (it must throw one). */
function needOf(lab, cs) {
  try {
    chunkVectors(lab, cs);
  } catch (error) {
    if (error instanceof NeedsChunkVectors) return error;
    throw error;
  }
  return assert.fail(`the ${cs.key.method} chunks at ${cs.key.size} need no encoding`);
}

test("two settings that cut the same chunks share one key and one encoding of their vectors", () => {
  const lab = handbookLab();
  const own = lab.chunkSet();
  // Oracle: the chunker itself, asked for the spans of each heading size.
  const cuts = new Map();
  const spans = (size) => {
    if (!cuts.has(size)) cuts.set(size, JSON.stringify(chunkPages(lab.pages, { method: "heading", size, overlap: null }).map((c) => [c.pageId, c.start, c.end])));
    return cuts.get(size);
  };
  const sizes = Array.from({ length: 300 }, (_, i) => i + 20);
  const size = sizes.find((n) => spans(n) === spans(n + 1) && spans(n) !== own.cut);
  assert.ok(size !== undefined, "two heading sizes cut the same chunks on the handbook, not the lab's own");
  const [a, b] = [size, size + 1].map((n) => lab.chunkSet({ method: "heading", size: n }));
  const needA = needOf(lab, a);
  assert.equal(needOf(lab, b).id, needA.id, "one key: the Worker runs one encoding for both settings");
  assert.ok(needA.missing.length > 1, "more texts to encode than the text cache keeps");
  const encoded = new Map(needA.missing.map((t, i) => [t, new Float32Array([i, 1])]));
  addChunkVectors(lab.data, needA, encoded);
  const vectors = chunkVectors(lab, a);
  // The second setting asks for nothing more (its texts dropped from the one-text cache do not
  // matter): the first's vectors, the same array.
  assert.equal(chunkVectors(lab, b), vectors);
  a.chunks.forEach((c, j) => {
    if (encoded.has(c.text)) assert.deepEqual([...vectors.subarray(2 * j, 2 * j + 2)], [...encoded.get(c.text)]);
  });
  // A setting that cuts other chunks has its own key.
  assert.notEqual(needOf(lab, lab.chunkSet({ method: "fixed", size: 50 })).id, needA.id);
  // A size other than the lab's own that cuts the lab's own chunks reads the shipped vectors.
  const same = sizes.find((n) => n !== own.key.size && spans(n) === own.cut);
  assert.ok(same !== undefined && own.key.method === "heading", "the handbook's lab cuts by headings, some other size alike");
  assert.equal(chunkVectors(lab, lab.chunkSet({ method: "heading", size: same })), chunkVectors(lab, own));
});
