// The Worker's encoding of another chunking, for tests/web/test_site.py: runs a written site's
// engine/worker.js in Node (self, postMessage and fetch of the site's files stood in for), asks
// two runs at chunking A at once, a BM25 search as soon as A's first chunk is encoding, then a
// run at chunking B, and prints as JSON the order of what the Worker posted, its count of texts
// encoded after A and after B, the encoder's path it posted, and the texts each chunking lacks
// on a fresh copy of the data.
//
//   node tests/web/site_encoding.mjs SITE_DIR KEY_A KEY_B [together]
//
// KEY_* are the chunkings ({method, size}) as JSON; A's runs are a neural one and a neural
// fusion without the reranker, B's a neural one. With `together`, it asks instead a neural run
// at A and one at B at once, and prints the count of texts encoded once both are answered
// (afterBoth), the replies and what each chunking lacks.

import { readFileSync } from "node:fs";
import { join } from "node:path";

import { startWorker } from "./worker_harness.mjs";

const [dir, keyA, keyB, mode] = process.argv.slice(2);
const run = (key, settings) => {
  const { method, size } = JSON.parse(key);
  return { chunker: method, size, ...settings };
};
const { site, engine, posted, worker, listen, ask } = await startWorker(dir, { turn: true });
const replied = (m, ids) => m.status !== undefined && ids.includes(m.id);
const DURING = "/api/bm25/search?q=warm%20batteries&top=5";

const data = JSON.parse(readFileSync(join(site, "data/site.json"), "utf-8"));
const what = data.neural.progress.chunks;
const order = [];
const out = {};
if (mode === "together") {
  // A run at A and one at B at once: two chunkings' encodings overlapping in time.
  await new Promise((done) => {
    const left = new Set([1, 2]);
    listen((m) => {
      if (replied(m, [1, 2])) left.delete(m.id);
      if (left.size === 0) done();
    });
    ask(1, "/api/run", "POST", run(keyA, { retriever: "neural" }));
    ask(2, "/api/run", "POST", run(keyB, { retriever: "neural" }));
  });
  out.afterBoth = worker.encodedTexts();
} else {
  // A's two runs at once; the search once A's first text is under way (its 0-of-n progress).
  await new Promise((done) => {
    let asked = false;
    const left = new Set([1, 2]);
    listen((m) => {
      if (m.progress?.what === what) order.push(`chunk ${m.id} ${m.progress.done}/${m.progress.total}`);
      if (m.status !== undefined) order.push(`reply ${m.id} ${m.status}`);
      if (!asked && m.progress?.what === what) {
        asked = true;
        ask(3, DURING);
      }
      if (replied(m, [1, 2])) left.delete(m.id);
      if (left.size === 0) done();
    });
    ask(1, "/api/run", "POST", run(keyA, { retriever: "neural" }));
    ask(2, "/api/run", "POST", run(keyA, { retriever: "neural-score", rerank: false }));
  });
  out.afterA = worker.encodedTexts();
  await new Promise((done) => {
    listen((m) => replied(m, [4]) && done());
    ask(4, "/api/run", "POST", run(keyB, { retriever: "neural" }));
  });
  out.afterB = worker.encodedTexts();
}
out.order = order;
// The encoder's path, as the Worker posts it once the weights are loaded ({encoder: {path}}).
out.paths = posted.filter((m) => m.encoder !== undefined).map((m) => m.encoder.path);
out.replies = Object.fromEntries(posted.filter((m) => m.status !== undefined).map((m) => [m.id, m.status]));
out.during = posted.find((m) => m.id === 3 && m.status !== undefined)?.body ?? null;

// What each chunking lacks on a fresh copy of the data (nothing encoded yet).
const { NeedsChunkVectors, attachNeural, chunkVectors } = await engine("exhibits/neural.js");
const { Lab } = await engine("exhibits/lab.js");
const b = readFileSync(join(site, data.neural.file));
attachNeural(data, b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
const lab = new Lab(data, { stem: data.meta.stem });
const missing = (key) => {
  try {
    chunkVectors(lab, lab.chunkSet(JSON.parse(key)));
    return [];
  } catch (error) {
    if (!(error instanceof NeedsChunkVectors)) throw error;
    return error.missing;
  }
};
out.missingA = missing(keyA);
out.missingB = missing(keyB);
process.stdout.write(JSON.stringify(out));
