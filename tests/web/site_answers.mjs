// The in-tab engine's answers to API requests, for tests/web/test_site.py: reads a written
// site's data/site.json and a JSON list of request URLs, prints {url: {status, body}} as JSON.
//
//   node tests/web/site_answers.mjs SITE_DIR URLS_JSON_FILE
//
// A URL written "POST /api/..." is asked with that method, and "POST /api/... {json}" with
// that JSON body; "ENCODE text" gives the JavaScript encoder's vector of the text, and
// "CHUNKS {key}" the neural vectors of a chunk set ({method, size, overlap}) as the tab holds
// them, with the milliseconds and the count of chunks it encoded for them.

import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [site, urlsFile] = process.argv.slice(2);
const engine = (path) => import(pathToFileURL(resolve(site, "static/engine", path)).href);
const { answer, Refusal } = await engine("routes.js");
const { NeedsChunkVectors, NeedsEncoding, addChunkVectors, addVector, attachNeural, attachSentences, chunkVectors, hasSentences } =
  await engine("exhibits/neural.js");
const { Lab } = await engine("exhibits/lab.js");
const { encode } = await engine("embedding/neural/encoder.js");
const { loadWeights } = await engine("embedding/neural/weights.js");
const { wordPieceTokenizer } = await engine("embedding/neural/wordpiece.js");
const data = JSON.parse(readFileSync(join(site, "data/site.json"), "utf-8"));
const bytes = (name) => {
  const b = readFileSync(join(site, name));
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
};
// As the Worker does: the vectors with the data, the encoder only when a typed text needs it.
if (data.neural) attachNeural(data, bytes(data.neural.file));
let encoder = null;
const encodings = [];
function encoded(text) {
  if (encoder === null) {
    const w = data.neural.weights;
    const tokenizer = wordPieceTokenizer(JSON.parse(readFileSync(join(site, w.tokenizer), "utf-8")), w.max_seq_length);
    encoder = { tokenizer, weights: loadWeights(bytes(w.file)) };
  }
  return encode(encoder.tokenizer, encoder.weights, text);
}
function compute(ask) {
  for (;;) {
    try {
      return ask();
    } catch (error) {
      if (error instanceof NeedsChunkVectors) {
        // As the Worker does: each missing text encoded alone, the set kept.
        const started = performance.now();
        addChunkVectors(data, error, new Map(error.missing.map((t) => [t, encoded(t)])));
        encodings.push({ ms: performance.now() - started, encoded: error.missing.length });
        continue;
      }
      if (!(error instanceof NeedsEncoding)) throw error;
      if (hasSentences(data)) addVector(data, error.text, encoded(error.text));
      else attachSentences(data, bytes(data.neural.sentences_file));
    }
  }
}
const out = {};
const split = (rest) => {
  const at = rest.indexOf(" ");
  return at < 0 ? [rest, null] : [rest.slice(0, at), JSON.parse(rest.slice(at + 1))];
};
for (const url of JSON.parse(readFileSync(urlsFile, "utf-8"))) {
  try {
    if (url.startsWith("ENCODE ")) {
      // The JavaScript encoder's vector of a typed text, as the Worker makes it.
      out[url] = { status: 200, body: Array.from(encoded(url.slice(7))) };
      continue;
    }
    if (url.startsWith("CHUNKS ")) {
      const lab = new Lab(data, { stem: data.meta.stem });
      const cs = lab.chunkSet(JSON.parse(url.slice(7)));
      const vectors = compute(() => chunkVectors(lab, cs));
      const dim = data.neural.dim;
      const rows = Array.from({ length: cs.length }, (_, j) => Array.from(vectors.subarray(j * dim, (j + 1) * dim)));
      out[url] = { status: 200, body: { key: cs.key, vectors: rows, encodings: encodings.splice(0) } };
      continue;
    }
    const [method, path, body] = url.startsWith("POST ") ? ["POST", ...split(url.slice(5))] : ["GET", url, null];
    out[url] = { status: 200, body: compute(() => answer(data, path, () => {}, { method, body })) };
  } catch (error) {
    out[url] = { status: error instanceof Refusal ? error.status : 422, body: { detail: error.message } };
  }
}
process.stdout.write(JSON.stringify(out));
