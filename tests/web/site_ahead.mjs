// The engine's second Worker, for tests/web/test_site.py: runs a written site's engine/ahead.js
// in a Node thread and its engine/worker.js in this one (self, postMessage and fetch of the
// site's files stood in for, as the page gives them a MessageChannel), asks the cold page's
// requests in the page's order, and prints as JSON what the first Worker posted about the
// second, each reply beside the same request answered cold (routes.js over a fresh copy of
// the data), and whether the second Worker's LSA fit, passed as a message passes it, equals
// bit for bit the fit the first Worker makes after the table's requests.
//
//   node tests/web/site_ahead.mjs SITE_DIR [without]
//
// With "without" the second Worker is not started and the first is told it failed.

import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { MessageChannel, Worker, isMainThread, parentPort, workerData } from "node:worker_threads";

if (!isMainThread) {
  // The second Worker: a Worker's globals over this thread's port.
  globalThis.self = globalThis;
  globalThis.fetch = async (url) => new Response(readFileSync(fileURLToPath(url)));
  globalThis.close = () => parentPort.close();
  await import(pathToFileURL(join(workerData.site, "static/engine/ahead.js")).href);
  parentPort.on("message", (data) => self.onmessage({ data }));
} else {
  const { startWorker } = await import("./worker_harness.mjs");
  const site = resolve(process.argv[2]);
  const without = process.argv[3] === "without";
  const { engine, posted, listen, ask } = await startWorker(site, { turn: true });
  if (without) {
    self.onmessage({ data: { aheadGone: true } });
  } else {
    const channel = new MessageChannel();
    self.onmessage({ data: { ahead: channel.port1 } });
    const second = new Worker(fileURLToPath(import.meta.url), { workerData: { site } });
    second.postMessage({ port: channel.port2 }, [channel.port2]);
  }
  // The cold page's requests in its order (bench_site.py's cold load): the page's first
  // renders, then its buttons' (the grid and the LSA fit among them).
  const first = ["/api/meta", "/api/questions", "/api/bm25/examples", "/api/fusion/table?split=test",
    "/api/fusion/table?split=train", "/api/fusion/grid?method=score", "/api/bm25/recall?k1=1.2&b=0.75&stem=false"];
  const clicks = ["/api/chunking?method=fixed&size=200&overlap=0", "/api/bm25/grid?stem=false", "/api/lsa",
    "/api/lsa/pairs", "/api/lsa/twins", "/api/rerank/sweep?retriever=rrf"];
  const urls = [...first, ...clicks];
  const replies = new Map();
  await new Promise((done) => {
    listen((m) => {
      if (m.id !== undefined && m.status !== undefined) replies.set(m.id, m);
      if (replies.size === urls.length) done();
    });
    first.forEach((url, i) => ask(i + 1, url));
    // The clicks once the page is ready (its first requests answered).
    const later = setInterval(() => {
      if (first.every((_, i) => replies.has(i + 1))) {
        clearInterval(later);
        clicks.forEach((url, i) => ask(first.length + i + 1, url));
      }
    }, 1);
  });

  const { answer, fitAhead } = await engine("routes.js");
  const { attachNeural } = await engine("exhibits/neural.js");
  const fresh = () => {
    const data = JSON.parse(readFileSync(join(site, "data/site.json"), "utf-8"));
    const b = readFileSync(join(site, data.neural.file));
    attachNeural(data, b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
    return data;
  };
  const cold = fresh();
  const out = {
    ahead: posted.filter((m) => m.ahead).map((m) => m.ahead),
    replies: urls.map((url, i) => ({
      url,
      status: replies.get(i + 1).status,
      same: JSON.stringify(replies.get(i + 1).body) === JSON.stringify(answer(cold, url)),
    })),
  };
  // The fit as the second Worker sends it (a fresh copy of the data, the fit alone, cloned as
  // postMessage clones it), against the first Worker's own after exhibit IV's table.
  const own = fresh();
  for (const url of first) answer(own, url);
  const mine = fitAhead(own);
  const theirs = structuredClone(fitAhead(JSON.parse(readFileSync(join(site, "data/site.json"), "utf-8"))));
  // Every number's 64 bits (a plain array of numbers as a Float64Array's), in hexadecimal.
  const bits = (v) => {
    const a = ArrayBuffer.isView(v) ? v : Float64Array.from(v);
    return Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString("hex");
  };
  const fields = {};
  for (const name of ["U", "s", "Vt", "idf"]) fields[name] = bits(mine.model[name]) === bits(theirs.model[name]);
  fields.terms = JSON.stringify(mine.model.terms) === JSON.stringify(theirs.model.terms);
  fields.vocabulary = JSON.stringify([...mine.model.vocabulary]) === JSON.stringify([...theirs.model.vocabulary]);
  fields.frobeniusSq = bits([mine.model.frobeniusSq]) === bits([theirs.model.frobeniusSq]);
  fields.rest = JSON.stringify([mine.model.rank, mine.windows, mine.power, mine.minimum, mine.size]) ===
    JSON.stringify([theirs.model.rank, theirs.windows, theirs.power, theirs.minimum, theirs.size]);
  fields.typed = ["U", "s", "Vt", "idf"].map((n) => theirs.model[n]?.constructor.name);
  fields.keys = JSON.stringify(Object.keys(mine.model).sort()) === JSON.stringify(Object.keys(theirs.model).sort());
  out.fit = fields;
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
}
