// The in-tab engine's second Worker: the LSA fit and the first grid and LSA answers, computed
// while the first Worker (worker.js) loads its data and answers the page's first requests.
//
// The page (../answers.js) starts it beside the first and gives each one end of a
// MessageChannel ({port}). It reads the site's data as the first does, posts the keys of the
// requests it will answer (warmup.js's aheadRequests), fits the served lab's LSA model
// (routes.js's fitAhead) and posts it ({lsa}), then answers each request in turn, posting its
// progress and its answer ({key, answer}, null where the route failed: the first Worker then
// computes it and says why), and ends ({gone}). The fit and the answers are the same functions
// of the same data as the first Worker's own (tests/web/site_ahead.mjs compares them bit for
// bit); the first adopts them instead of computing them again. Nothing here is needed: without
// this Worker the first computes everything itself.

import { answer, fitAhead } from "./routes.js";
import { aheadRequests, requestKey } from "./warmup.js";

const SITE = new URL("../../", import.meta.url);

// The data's download starts with the Worker, while the page sends the port.
const loaded = fetch(new URL("data/site.json", SITE)).then((r) => {
  if (!r.ok) throw new Error(`the site's data answered ${r.status}`);
  return r.json();
});
loaded.catch(() => {}); // reported below, once the port is here

self.onmessage = async ({ data: { port } }) => {
  try {
    const data = await loaded;
    const requests = aheadRequests(data).map(([method, url, body]) => ({ key: requestKey(method, url, body), method, url, body }));
    port.postMessage({ promised: requests.map((r) => r.key) });
    let fit = null;
    try {
      fit = fitAhead(data);
    } finally {
      port.postMessage({ lsa: fit });
    }
    for (const { key, method, url, body } of requests) {
      let value = null;
      try {
        const progress = (done, total, what) => port.postMessage({ key, progress: [done, total, what] });
        value = answer(data, url, progress, { method, body });
      } finally {
        port.postMessage({ key, answer: value });
      }
    }
  } finally {
    port.postMessage({ gone: true });
    self.close();
  }
};
