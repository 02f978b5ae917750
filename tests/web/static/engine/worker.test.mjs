// The Worker's idle warm-up, driven through its message handler in Node (self, postMessage and
// fetch stood in for, the site's data the parity fixtures' handbook site): once it is done, a
// new cut finds no page's sentences (prepareCuts), and a run with another chunker finds its
// cut, rankings, features and reranker ready: no query scored, no chunk tokenised.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, same } from "./fixtures.mjs";

const ENGINE = "../../../../src/raglab/web/static/engine";
const engine = (path) => import(`${ENGINE}/${path}`);

/** The engine's Worker started on the handbook site: {posted, ask(request), warmUp()}. */
async function startWorker() {
  fixture("site-handbook"); // a clear error when the fixtures are not written
  const bytes = readFileSync(join(process.env.RAGLAB_PARITY_DIR, "site-handbook.json"));
  const posted = [];
  const waiting = [];
  globalThis.self = globalThis;
  globalThis.postMessage = (message) => {
    posted.push(message);
    for (const w of [...waiting]) {
      if (w.until(message)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve(message);
      }
    }
  };
  globalThis.fetch = async (url) => {
    assert.ok(String(url).endsWith("/data/site.json"), `the Worker asked for ${url}`);
    return new Response(bytes);
  };
  await engine("worker.js");
  const next = (until) => new Promise((resolve) => waiting.push({ until, resolve }));
  let id = 0;
  return {
    posted,
    ask(method, url, body = null) {
      const mine = ++id;
      const reply = next((m) => m.id === mine && m.status !== undefined);
      self.onmessage({ data: { id: mine, url, method, body } });
      return reply;
    },
    warmUp() {
      const done = next((m) => m.warmed && m.warmed.done === m.warmed.total);
      self.onmessage({ data: { warmUp: true } });
      return done;
    },
  };
}

/** A run request as exhibit VI's form sends it (end_to_end.js's request()), its defaults the
 * settings table's, with `changes`. */
function pageRun(meta, changes) {
  const d = (name) => meta.settings.find((s) => s.name === name).default;
  return {
    chunker: d("chunker"), size: d("size"), overlap: null, retriever: d("retriever"), weight: null, rerank: true, mmr: true,
    mmr_lambda: null, budget: d("budget"), threshold: null, reader_scoring: d("reader_scoring"), ...changes,
  };
}

test("the Worker's warm-up prepares the pages' cuts and each other chunker's run", async () => {
  const worker = await startWorker();
  const { SPANS_FOUND } = await engine("chunking/chunkers.js");
  const { TOKENISED } = await engine("exhibits/lab.js");
  const { SCORED } = await engine("bm25/index.js");
  const { answer } = await engine("routes.js");
  const meta = (await worker.ask("GET", "/api/meta")).body;
  const chunkers = meta.settings.find((s) => s.name === "chunker");
  const others = chunkers.choices.filter((c) => c !== chunkers.default);
  const least = meta.settings.find((s) => s.name === "size").slider[0];
  assert.ok(others.length === 2 && least > 1);

  const last = (await worker.warmUp()).warmed;
  const steps = worker.posted.filter((m) => m.warmed).map((m) => m.warmed);
  assert.equal(steps.length, last.total);
  assert.deepEqual([...new Set(steps.filter((s) => s.body !== null).map((s) => s.body.chunker))], others);

  // Oracle: the same requests answered by routes.js over a fresh copy of the data, nothing
  // prepared; and counting: the warmed Worker finds no sentence, scores no query and tokenises
  // no chunk for them.
  const fresh = structuredClone(fixture("site-handbook"));
  const cold = (body) => answer(fresh, "/api/run", () => {}, { method: "POST", body });
  const counts = () => [SPANS_FOUND.sentences, SCORED.queries, TOKENISED.retrieval];
  for (const chunker of others) {
    const body = pageRun(meta, { chunker, size: null });
    const before = counts();
    const reply = await worker.ask("POST", "/api/run", body);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.deepEqual(counts(), before, `${chunker}: the run found its cut, scores and tokens ready`);
    same(reply.body, cold(body), `${chunker}: the warmed run's answer`);
  }
  // A cut no step ran (the default chunker at the size slider's least and a size past it):
  // new chunks, scored and tokenised, but no page's or section's sentences found again.
  for (const size of [least, least + 17]) {
    const body = pageRun(meta, { size });
    const found = SPANS_FOUND.sentences;
    const scored = SCORED.queries;
    const reply = await worker.ask("POST", "/api/run", body);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(SPANS_FOUND.sentences, found, `${chunkers.default} at ${size}: no sentences found again`);
    assert.ok(SCORED.queries > scored, `${chunkers.default} at ${size}: a new cut, its questions scored`);
    same(reply.body, cold(body), `${chunkers.default} at ${size}: the run's answer`);
  }
});
