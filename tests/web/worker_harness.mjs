// A written site's engine/worker.js run in Node, for the Worker scripts of tests/web/: self,
// postMessage and fetch of the site's files stood in for.
//
//   const h = await startWorker(SITE_DIR, { turn: true });
//   h.listen((message) => ...); h.ask(id, url, method, body);
//
// With ``turn`` a file answers after a turn of the event loop, as the network does (not within
// the caller's own microtasks), so that the second of two requests asked at once finds the
// first waiting.

import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export async function startWorker(dir, { turn = false } = {}) {
  const site = resolve(dir);
  const engine = (path) => import(pathToFileURL(join(site, "static/engine", path)).href);
  const posted = [];
  let onPosted = () => {};
  globalThis.self = globalThis;
  globalThis.postMessage = (message) => {
    posted.push(message);
    onPosted(message);
  };
  globalThis.fetch = async (url) => {
    if (turn) await new Promise((next) => setTimeout(next, 0));
    return new Response(readFileSync(fileURLToPath(url)));
  };
  const worker = await engine("worker.js");
  return {
    site,
    engine,
    posted,
    worker,
    listen: (f) => {
      onPosted = f;
    },
    ask: (id, url, method = "GET", body = null) =>
      setTimeout(() => self.onmessage({ data: { id, url, method, body } }), 0),
  };
}
