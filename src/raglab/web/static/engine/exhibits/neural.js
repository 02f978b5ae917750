// The neural embedding in the tab: the shipped vectors, cosines with them, and exhibit III's panel.
//
// Mirrors src/raglab/embedding/neural/index.py (search_vector: cos(q, d_j) = q . d_j of unit
// float32 vectors, summed in float64, clipped to [-1, 1], the best k by topK) and
// src/raglab/pipeline/exhibits/neural.py (neural_view). The vectors are the server's own:
// data/neural.bin (src/raglab/web/site.py) holds the lab's chunks' then each text's of
// site.json's `neural.texts` (labelled questions, the twin identifiers), and
// data/neural-sentences.bin those of `neural.sentences` (the quotable sentences), all encoded by
// the Python encoder. A text with no vector throws NeedsEncoding: the Worker attaches the
// sentences' file if it has not yet, else encodes the text (a question the learner typed) with
// the JavaScript encoder (embedding/neural/) from the weights file, keeps it (addVector: an LRU
// of `neural.text_cache` encoded texts, shared with the chunks') and asks again. A chunk set
// other than the lab's own throws NeedsChunkVectors: the Worker encodes the chunks whose text
// has no vector yet (a chunk whose text is a shipped one, or one the tab encoded for an earlier
// chunking, reuses its vector, as the server's per-text vector cache does), addChunkVectors
// keeps the set's vectors by its cut (the chunks' pages and spans, so settings cutting the same
// chunks share them; an LRU of site.json's `neural.chunk_sets` cuts) and each text it encoded
// (an LRU of `neural.text_cache` texts), and it asks again.

import { LruCache } from "../base/lru.js";
import { topK } from "../base/topk.js";
import { firstRelevantRank } from "../metrics/measures.js";
import { chunkRow, defaultOf } from "./lab.js";
import { snippet } from "./bm25.js";

/** What the tab cannot compute: its status (501) and the sentence the page shows. */
export class Lacking extends Error {
  constructor(message) {
    super(message);
    this.status = 501;
  }
}

/** A text with no vector yet: the caller encodes `text` (addVector) and asks again. */
export class NeedsEncoding extends Error {
  constructor(text) {
    super(`the neural vector of ${JSON.stringify(text)} is not encoded yet`);
    this.text = text;
  }
}

const STATE = new WeakMap();

/** The (rows, dim) vectors in `buffer` (an ArrayBuffer of float32s) by `texts` (one a row,
 * after `skip` rows), checked against its length. */
function byText(buffer, texts, skip, dim, file) {
  const all = new Float32Array(buffer.slice(0));
  if (all.length !== (skip + texts.length) * dim) {
    throw new Error(`${file}: ${all.length} numbers, not ${skip + texts.length} vectors of ${dim}`);
  }
  return [all, texts.map((t, i) => [t, all.subarray((skip + i) * dim, (skip + i + 1) * dim)])];
}

/** A chunk set `cs` lacking neural vectors: the caller encodes `missing` (the texts of its
 * chunks with no vector yet, each once), gives them to addChunkVectors and asks again. */
export class NeedsChunkVectors extends Error {
  constructor(cs, missing, reused) {
    super(`the neural vectors of ${missing.length} chunks of the ${cs.key.method} chunker at size ${cs.key.size} are not encoded yet`);
    this.key = cs.key;
    /** The cut (each chunk's page, start and end: lab.js's ChunkSet.cut), by which the vectors
     * are kept: one encoding at a time per cut (engine/worker.js), shared by every setting
     * that cuts the same chunks. */
    this.id = cs.cut;
    this.texts = cs.chunks.map((c) => c.text);
    this.missing = missing;
    // The vectors of the texts an earlier chunking encoded, held here so that the text cache
    // dropping one while the missing ones encode cannot lose it.
    this.reused = reused;
  }
}

/** Attach the vectors of data/neural.bin (an ArrayBuffer) to the site's `data`. */
export function attachNeural(data, buffer) {
  const section = data.neural;
  const dim = section.dim;
  const [all, rows] = byText(buffer, section.texts, section.chunks, dim, section.file);
  const chunks = all.subarray(0, section.chunks * dim);
  const chunkSets = new LruCache(section.chunk_sets);
  const encoded = new LruCache(section.text_cache);
  STATE.set(data, { section, dim, chunks, texts: new Map(rows), sentences: false, chunkSets, chunkTexts: null, encoded });
}

/** Whether the quotable sentences' vectors (data/neural-sentences.bin) are attached. */
export const hasSentences = (data) => state(data).sentences;

/** Attach the sentences' vectors (data/neural-sentences.bin, an ArrayBuffer): the cosine
 * reader's, fetched only when a text is not among the first file's. */
export function attachSentences(data, buffer) {
  const s = state(data);
  const [, rows] = byText(buffer, s.section.sentences, 0, s.dim, s.section.sentences_file);
  for (const [t, v] of rows) s.texts.set(t, v);
  s.sentences = true;
}

/** Keep `vector` (a unit Float32Array) as the neural vector of `text` (a typed question): in
 * the bounded cache of encoded texts (site.json's `neural.text_cache`), so that a long session
 * of typed questions does not grow the tab's memory without end. */
export function addVector(data, text, vector) {
  state(data).encoded.set(text, vector);
}

/** Whether the site ships the neural files (site.json's `neural` section). */
export const shipsNeural = (data) => data.neural !== null && data.neural !== undefined;

function state(data) {
  if (!shipsNeural(data)) {
    throw new Lacking(`this static site lacks ${data.meta.site.lacks.join(", ")}; run raglab serve for it`);
  }
  const s = STATE.get(data);
  if (!s) throw new Error(`the neural vectors (${data.neural.file}) are not loaded`);
  return s;
}

/** The unit vector of `text`: a labelled question's or a sentence's (shipped), or a typed
 * text's or a chunk's once encoded (while the cache of encoded texts keeps it). */
export function textVector(data, text) {
  const s = state(data);
  const v = s.texts.get(text) ?? s.encoded.get(text);
  if (v === undefined) throw new NeedsEncoding(text);
  return v;
}

/** Each shipped chunk text's vector (the lab's own chunk set `own`'s), found on first use. */
function shippedChunkTexts(s, own) {
  if (s.chunkTexts === null) {
    s.chunkTexts = new Map();
    own.chunks.forEach((c, j) => {
      if (!s.chunkTexts.has(c.text)) s.chunkTexts.set(c.text, s.chunks.subarray(j * s.dim, (j + 1) * s.dim));
    });
  }
  return s.chunkTexts;
}

/** The chunk vectors of chunk set `cs` of `lab` ((n, dim), row-major): the shipped ones for the
 * lab's own cut, else those kept for its cut once encoded (NeedsChunkVectors thrown until
 * then). Kept by the cut, not the setting: two settings that cut the same chunks (the heading
 * chunker at any size above the longest section) share one encoding and one set of vectors. */
export function chunkVectors(lab, cs) {
  const s = state(lab.data);
  const own = lab.chunkSet();
  if (cs.cut === own.cut) return s.chunks;
  const kept = s.chunkSets.get(cs.cut);
  if (kept !== undefined) return kept;
  const known = shippedChunkTexts(s, own);
  const missing = [];
  const reused = new Map();
  for (const t of new Set(cs.chunks.map((c) => c.text))) {
    if (known.has(t) || s.texts.has(t)) continue;
    const v = s.encoded.get(t);
    if (v === undefined) missing.push(t);
    else reused.set(t, v);
  }
  const need = new NeedsChunkVectors(cs, missing, reused);
  if (missing.length) throw need;
  addChunkVectors(lab.data, need, new Map());
  return s.chunkSets.get(cs.cut);
}

/** Keep the vectors of the chunk set that `need` (a NeedsChunkVectors) names: `encoded` a Map
 * text -> unit Float32Array of each of its missing texts (each also kept by text, for any later
 * chunking), the shipped or earlier encoded vectors for the others. */
export function addChunkVectors(data, need, encoded) {
  const s = state(data);
  const { dim } = s;
  for (const [t, v] of encoded) s.encoded.set(t, v);
  const vectors = new Float32Array(need.texts.length * dim);
  need.texts.forEach((t, j) => {
    const v = encoded.get(t) ?? need.reused.get(t) ?? s.chunkTexts?.get(t) ?? s.texts.get(t);
    if (v === undefined) throw new Error(`no neural vector for chunk ${j} of the ${need.key.method} chunker`);
    vectors.set(v, j * dim);
  });
  s.chunkSets.set(need.id, vectors);
}

/** q . v in float64 over `dim` entries of two Float32Arrays (v from `at`), clipped to [-1, 1]. */
function cosine(q, v, at, dim) {
  let d = 0;
  for (let c = 0; c < dim; c++) d += q[c] * v[at + c];
  return Math.min(1.0, Math.max(-1.0, d));
}

/** The neural cosine of `text` with each chunk of `cs` (Float64Array). */
export function neuralScores(lab, cs, text) {
  const { data } = lab;
  const vectors = chunkVectors(lab, cs);
  const q = textVector(data, text);
  const dim = data.neural.dim;
  const scores = new Float64Array(cs.length);
  for (let j = 0; j < scores.length; j++) scores[j] = cosine(q, vectors, j * dim, dim);
  return scores;
}

/** /api/neural/search: the lab's chunks by the neural cosine of a typed `query`, the first
 * `top` rows with their snippets (exhibits/neural.py's neural_search). */
export function neuralSearchRows(lab, query, { top, snippetChars }) {
  const cs = lab.chunkSet();
  const depth = defaultOf(lab.meta, "depth");
  const r = neuralSearch(lab, cs, query, { k: depth === 0 ? cs.length : Math.min(depth, cs.length) });
  const results = r.indices.slice(0, top).map((i, n) => ({
    ...chunkRow(cs.chunks[i], i, n + 1, r.scores[n]),
    snippet: snippet(cs.chunks[i].text, snippetChars),
  }));
  return { query, results };
}

/** The `k` chunks closest to `text` by neural cosine, ties to the lower index: {indices, scores}. */
export function neuralSearch(lab, cs, text, { k }) {
  const scores = neuralScores(lab, cs, text);
  const indices = topK(scores, Math.min(k, scores.length));
  return { indices, scores: indices.map((i) => scores[i]) };
}

/** The neural cosine of a question with each candidate chunk (pipeline/reranking.py's
 * _cosines for a neural first stage). */
export function neuralCosines(lab, cs, text, candidates) {
  const { data } = lab;
  const vectors = chunkVectors(lab, cs);
  const q = textVector(data, text);
  const dim = data.neural.dim;
  return candidates.map((i) => cosine(q, vectors, i * dim, dim));
}

/** The cosine of two texts' vectors (exhibits/neural.py's twin_cosines, the neural side). */
export function textCosine(data, a, b) {
  const va = textVector(data, a);
  return cosine(va, textVector(data, b), 0, data.neural.dim);
}

/** /api/neural/view: `kind` questions of `split` with their first answer rank under BM25, LSA
 * and the neural model, the twins' cosines and the costs (the build machine's), or, without
 * the neural files, `available` false and why. `rank(q, retriever)` gives a question's
 * ranking; `lsaTwin(a, b)` LSA's cosine of two identifiers (null when either is no term). */
export function neuralView(lab, { split, kind = "paraphrase", twins, rank, lsaTwin }) {
  const { data } = lab;
  if (!shipsNeural(data)) {
    return { available: false, why: `are not in this static site (it lacks ${data.meta.site.lacks.join(", ")}); run raglab serve for them` };
  }
  const cs = lab.chunkSet();
  const questions = [];
  for (const q of lab.split(split)) {
    if (q.kind !== kind || !q.answerable) continue;
    const rel = cs.relevance(q);
    const ranks = {};
    for (const name of ["bm25", "lsa", "neural"]) {
      const r = rank(q, name);
      ranks[name] = rel.size ? firstRelevantRank(r.indices, rel) : null;
    }
    questions.push({ id: q.id, question: q.question, kind: q.kind, answerable: q.answerable, ranks });
  }
  const [a, b, other] = twins;
  const pair = (x, y) => ({ lsa: lsaTwin(x, y), neural: textCosine(data, x, y) });
  return {
    available: true,
    model: data.neural.model,
    split,
    kind,
    questions,
    twins: { pair: [a, b], other, twin: pair(a, b), unrelated: pair(a, other) },
    costs: data.neural.costs,
  };
}
