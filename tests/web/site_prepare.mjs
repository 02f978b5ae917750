// The Worker's first heavy answer prepared before the page asks, for tests/web/test_site.py:
// runs a written site's engine/worker.js in Node (self, postMessage and fetch of the site's
// files stood in for), tells it {prepare: true} as the page's first script does, waits for its
// {prepared} message, then asks that request as the page would, and prints as JSON what it
// posted, the answer it kept, its reply, and the same request answered cold (routes.js over a
// fresh copy of the data).
//
//   node tests/web/site_prepare.mjs SITE_DIR

import { readFileSync } from "node:fs";
import { join } from "node:path";

import { startWorker } from "./worker_harness.mjs";

const { site, engine, posted, worker, listen, ask } = await startWorker(process.argv[2], { turn: true });
const prepared = await new Promise((done) => {
  listen((m) => m.prepared && done(m.prepared));
  self.onmessage({ data: { prepare: true } });
});
const { method, url, body } = prepared;
const kept = worker.cachedAnswer(method, url, body) ?? null;
const reply = await new Promise((done) => {
  listen((m) => m.id === 1 && m.status !== undefined && done(m));
  ask(1, url, method, body);
});
const { answer } = await engine("routes.js");
const { attachNeural } = await engine("exhibits/neural.js");
const fresh = JSON.parse(readFileSync(join(site, "data/site.json"), "utf-8"));
if (fresh.neural) {
  const b = readFileSync(join(site, fresh.neural.file));
  attachNeural(fresh, b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}
const cold = answer(fresh, url, () => {}, { method, body });
process.stdout.write(JSON.stringify({ posted: posted.map((m) => Object.keys(m)), prepared, kept, reply, cold }));
