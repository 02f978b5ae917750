// The in-tab engine's Web Worker: answers the page's API requests from the site's data files.
//
// The page (../answers.js) posts {id, url, method, body} where url is the request the server
// would get ("/api/bm25/search?q=...&k1=1.2"), method its HTTP method and body a POST's JSON; the
// Worker answers {id, status, body} with the JSON the server's route gives (routes.js), and posts
// {id, progress: {done, total, what}} during long steps (the k1 × b grid, the weights' download).
// All the maths runs here, so no slider waits on it in the page. Answers are kept in a bounded
// cache (base/lru.js, site.json's engine.answer_cache entries). The neural vectors
// (data/neural.bin) load with the data, the sentences' (the cosine reader's) on first need, the
// weights only when a typed text, or a chunking other than the lab's own, needs encoding (a
// chunking's texts one at a time, other requests answered in between: encodeChunks). The
// data starts loading as the Worker starts, and once the page is ready, while no request waits,
// the Worker computes what a visitor's first clicks ask for (warmup.js). A page that starts the
// Worker before its own modules arrive says {prepare: true}: the Worker then computes its first
// heavy request as soon as the data is in (warmup.js's PREPARED), in time the page would
// otherwise leave it idle.

import "./modules.js"; // first: the whole engine asked for at once
import { Refusal, answer } from "./routes.js";
import { LruCache } from "./base/lru.js";
import {
  NeedsChunkVectors,
  NeedsEncoding,
  addChunkVectors,
  addVector,
  attachNeural,
  attachSentences,
  hasSentences,
} from "./exhibits/neural.js";
import { encode, encoderPath } from "./embedding/neural/encoder.js";
import { loadWeights } from "./embedding/neural/weights.js";
import { wordPieceTokenizer } from "./embedding/neural/wordpiece.js";
import { PREPARED, warmUps } from "./warmup.js";

const SITE = new URL("../../", import.meta.url);

let loaded = null;
let answers = null;
let encoder = null;

async function fetched(name) {
  const url = new URL(name, SITE);
  const r = await fetch(url);
  if (!r.ok) throw new Refusal(500, `the site's file ${url.pathname} answered ${r.status}`);
  return r;
}

function load() {
  if (loaded === null) {
    loaded = (async () => {
      const data = await (await fetched("data/site.json")).json();
      if (data.neural) attachNeural(data, await (await fetched(data.neural.file)).arrayBuffer());
      answers = new LruCache(data.engine.answer_cache);
      return data;
    })();
  }
  return loaded;
}

/** The weights file's bytes, `progress(done, total)` after each piece read. */
async function download(name, total, progress) {
  const r = await fetched(name);
  const out = new Uint8Array(total);
  const reader = r.body.getReader();
  let done = 0;
  progress(0, total);
  for (;;) {
    const { done: end, value } = await reader.read();
    if (end) break;
    out.set(value, done);
    done += value.length;
    progress(done, total);
  }
  if (done !== total) throw new Refusal(500, `the weights file ${name}: ${done} bytes, not ${total}`);
  return out.buffer;
}

/** The JavaScript encoder, its weights fetched once (with progress) on first use; once loaded,
 * the Worker posts {encoder: {path}}: "wasm-simd" (the products on WebAssembly SIMD) or "js"
 * (where this browser lacks it; the page ignores the message, tests read it). */
function loadEncoder(data, progress) {
  if (encoder === null) {
    const w = data.neural.weights;
    encoder = (async () => {
      const [tokenizer, buffer] = await Promise.all([
        fetched(w.tokenizer).then((r) => r.json()),
        download(w.file, w.bytes, (done, total) => progress(done, total, data.neural.progress.weights)),
      ]);
      const loaded = { tokenizer: wordPieceTokenizer(tokenizer, w.max_seq_length), weights: loadWeights(buffer) };
      postMessage({ encoder: { path: encoderPath() } });
      return loaded;
    })();
    encoder.catch(() => {
      encoder = null; // a failed download is tried again on the next request
    });
  }
  return encoder;
}

/** The vectors of the chunks `need` (a NeedsChunkVectors) lacks, encoded one text at a time
 * with progress (the Python encoder's batches change a vector by BLAS's rounding only, ~1e-7,
 * and this encoder's own sums differ from it by about as much, so no batching is copied), then
 * kept. Between two texts (a fraction of a second each) it yields to the message queue, so every other request is answered
 * meanwhile rather than after the whole chunking. A text another chunking's encoding is
 * already encoding (`pending`) is awaited from it, not encoded twice. */
async function encodeChunks(data, need, progress) {
  const { tokenizer, weights } = await loadEncoder(data, progress);
  const what = data.neural.progress.chunks;
  const encoded = new Map();
  const mine = [];
  const theirs = [];
  for (const text of need.missing) {
    const job = pending.get(text);
    if (job !== undefined) {
      theirs.push([text, job.vector]);
      continue;
    }
    let settle;
    const vector = new Promise((resolve, reject) => {
      settle = { resolve, reject };
    });
    vector.catch(() => {}); // a failure is reported by each request that awaits it
    pending.set(text, { vector, ...settle });
    mine.push(text);
  }
  progress(0, need.missing.length, what);
  try {
    for (const text of mine) {
      await new Promise((next) => setTimeout(next, 0));
      const vector = encode(tokenizer, weights, text);
      textsEncoded += 1;
      pending.get(text).resolve(vector);
      encoded.set(text, vector);
      progress(encoded.size, need.missing.length, what);
    }
    for (const [text, vector] of theirs) {
      encoded.set(text, await vector);
      progress(encoded.size, need.missing.length, what);
    }
    addChunkVectors(data, need, encoded);
  } catch (error) {
    for (const text of mine) pending.get(text).reject(error); // no-op on those resolved
    throw error;
  } finally {
    // Only now, each text kept by addChunkVectors, can a later chunking find it there.
    for (const text of mine) pending.delete(text);
  }
}

// One encoding per cut at a time (NeedsChunkVectors.id: settings cutting the same chunks share
// it): a request for a cut already being encoded awaits that encoding (its progress posted to
// each request waiting) instead of encoding it again.
const encodings = new Map();
// Each chunk text under way, by text: {vector (a promise), resolve, reject}.
const pending = new Map();
let textsEncoded = 0;

/** The count of chunk texts this Worker has encoded (for tests: each text once). */
export const encodedTexts = () => textsEncoded;

async function encodeOnce(data, need, progress) {
  let job = encodings.get(need.id);
  if (job === undefined) {
    const waiting = new Set();
    const all = (done, total, what) => waiting.forEach((p) => p(done, total, what));
    job = { waiting, done: encodeChunks(data, need, all).finally(() => encodings.delete(need.id)) };
    encodings.set(need.id, job);
  }
  job.waiting.add(progress);
  try {
    await job.done;
  } finally {
    job.waiting.delete(progress);
  }
}

/** The route's answer, each typed text and chunk it lacks a vector for encoded here first. */
async function compute(data, url, progress, request) {
  for (;;) {
    try {
      return answer(data, url, progress, request);
    } catch (error) {
      if (error instanceof NeedsChunkVectors) {
        await encodeOnce(data, error, progress);
        continue;
      }
      if (!(error instanceof NeedsEncoding)) throw error;
      if (!hasSentences(data)) {
        attachSentences(data, await (await fetched(data.neural.sentences_file)).arrayBuffer());
        continue;
      }
      const { tokenizer, weights } = await loadEncoder(data, progress);
      addVector(data, error.text, encode(tokenizer, weights, error.text));
    }
  }
}

// The warm-up (warmup.js's steps) starts once the page says it is ready, so the page's own
// first requests never wait on it, and once the Worker has been idle for WARM_UP_IDLE_MS (the
// page's requests come in bursts: one interaction's, then a pause). Its steps run one at a
// time, each in its own task, the next queued behind any request that came meanwhile: a
// request waits for at most the one step under way, and stops the warm-up until the Worker
// is idle again. A request part's answer is kept in the answer cache under the key its own
// request has, and the Worker posts {warmed: {done, total, method, url, body}} after each step,
// naming the request it computed or prepared (the page ignores it; tests/web/site_warmup.mjs
// reads it).
const WARM_UP_IDLE_MS = 300;
let busy = 0;
let warmed = 0;
let steps = null;
let warmTimer = null;

function warmUpLater(idle = WARM_UP_IDLE_MS) {
  clearTimeout(warmTimer);
  if (!warming) return;
  warmTimer = setTimeout(async () => {
    if (busy > 0) return;
    let data;
    try {
      data = await load();
    } catch {
      return; // the first request reports the failed load
    }
    steps ??= warmUps(data);
    if (warmed >= steps.length) return;
    const { request, parts } = steps[warmed++];
    for (const part of parts) {
      try {
        if (typeof part === "function") {
          part();
          continue;
        }
        const [m, u, b] = part;
        answers.set(keyOf(m, u, b), answer(data, u, () => {}, { method: m, body: b }));
      } catch {
        // Nothing to keep: the visitor's own request computes it and says what went wrong.
        break;
      }
    }
    const [method, url, body] = request;
    postMessage({ warmed: { done: warmed, total: steps.length, method, url, body } });
    warmUpLater(0);
  }, idle);
}

/** The answer cache's key of a request. */
const keyOf = (method, url, body) => `${method} ${url} ${JSON.stringify(body)}`;

/** The cached answer to a request, or undefined (for tests: what the warm-up left). */
export function cachedAnswer(method, url, body = null) {
  return answers === null ? undefined : answers.get(keyOf(method, url, body));
}

load().catch(() => {}); // a failed load is reported to the first request
let warming = false;

/** Once the data is in, and unless a request is under way, compute warmup.js's PREPARED and keep
 * its answer; then post {prepared: {method, url, body}} (the page ignores it; tests read it). */
function prepare() {
  load().then(
    (data) =>
      setTimeout(() => {
        const [method, url, body] = PREPARED;
        const key = keyOf(method, url, body);
        if (busy > 0 || answers.get(key) !== undefined) return;
        try {
          answers.set(key, answer(data, url, () => {}, { method, body }));
        } catch {
          return; // the page's own request computes it and says what went wrong
        }
        postMessage({ prepared: { method, url, body } });
      }, 0),
    () => {},
  );
}

self.onmessage = async (event) => {
  if (event.data.prepare) {
    // Started by the page's first script, before its modules arrive to ask anything.
    prepare();
    return;
  }
  if (event.data.warmUp) {
    // The page is ready (answers.js's warmUp): its own first requests are answered.
    warming = true;
    warmUpLater();
    return;
  }
  const { id, url, method = "GET", body = null } = event.data;
  const key = keyOf(method, url, body);
  busy += 1;
  clearTimeout(warmTimer);
  try {
    const data = await load();
    let value = answers.get(key);
    if (value === undefined) {
      const progress = (done, total, what) => postMessage({ id, progress: { done, total, what } });
      value = await compute(data, url, progress, { method, body });
      answers.set(key, value);
    }
    postMessage({ id, status: 200, body: value });
  } catch (error) {
    const status = error instanceof Refusal ? error.status : 422;
    postMessage({ id, status, body: { detail: error.message } });
  } finally {
    busy -= 1;
    warmUpLater();
  }
};
