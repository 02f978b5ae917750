// The Worker's idle warm-up, for tests/web/test_site.py: runs a written site's engine/worker.js
// in Node (self, postMessage and fetch of the site's files stood in for), asks one request,
// tells it the page is ready, asks another request as soon as the first warm-up step is done,
// and prints as JSON the order of what the Worker posted, the cached answer to each request the
// warm-up computed or prepared, and the same request answered cold (routes.js over a fresh copy
// of the data).
//
//   node tests/web/site_warmup.mjs SITE_DIR

import { readFileSync } from "node:fs";
import { join } from "node:path";

import { startWorker } from "./worker_harness.mjs";

const { site, engine, posted, worker, listen, ask } = await startWorker(process.argv[2]);
const replied = (id) => posted.some((m) => m.id === id && m.status !== undefined);

// The page's first request, then "ready", then a request while the warm-up is under way.
const DURING = "/api/bm25/search?q=warm%20batteries&top=5";
await new Promise((done) => {
  listen((m) => m.id === 1 && m.status !== undefined && done());
  ask(1, "/api/meta");
});
let steps = null;
await new Promise((done) => {
  listen((m) => {
    if (!m.warmed) return;
    if (m.warmed.done === 1) ask(2, DURING);
    if (m.warmed.done === m.warmed.total) done();
  });
  self.onmessage({ data: { warmUp: true } });
});
// The requests the steps computed or prepared, each once, in order (a new cut's run is prepared
// in several steps, the last of which answers it).
const key = (w) => JSON.stringify([w.method, w.url, w.body]);
steps = [...new Map(posted.filter((m) => m.warmed).map((m) => [key(m.warmed), m.warmed])).values()];

// Each step's request as the warm-up asks it, its cached answer and its cold one.
const { answer } = await engine("routes.js");
const { NeedsEncoding, attachNeural, attachSentences } = await engine("exhibits/neural.js");
const fresh = JSON.parse(readFileSync(join(site, "data/site.json"), "utf-8"));
const bytes = (name) => {
  const b = readFileSync(join(site, name));
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
};
if (fresh.neural) attachNeural(fresh, bytes(fresh.neural.file));
const out = { order: posted.map((m) => (m.warmed ? `warmed ${m.warmed.done}` : m.id ? `reply ${m.id}` : "other")) };
out.steps = [];
for (const { method, url, body } of steps) {
  let cold;
  for (;;) {
    try {
      cold = { status: 200, body: answer(fresh, url, () => {}, { method, body }) };
    } catch (error) {
      if (error instanceof NeedsEncoding) {
        attachSentences(fresh, bytes(fresh.neural.sentences_file));
        continue;
      }
      cold = { status: error.status ?? 422, body: { detail: error.message } };
    }
    break;
  }
  out.steps.push({ method, url, body, cached: worker.cachedAnswer(method, url, body) ?? null, cold });
}
out.during = posted.find((m) => m.id === 2 && m.status !== undefined) ?? null;
out.replied = replied(2);
process.stdout.write(JSON.stringify(out));
