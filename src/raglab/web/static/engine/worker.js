// The in-tab engine's Web Worker: answers the page's API requests from the site's data files.
//
// The page (../answers.js) posts {id, url, method} where url is the request the server would get
// ("/api/bm25/search?q=...&k1=1.2") method its HTTP method and body a POST's JSON; the Worker answers {id, status, body} with the JSON the
// server's route gives (routes.js), and posts {id, progress: {done, total, what}} during long
// steps (the k1 × b grid). All the maths runs here, so no slider waits on it in the page.

import { Refusal, answer } from "./routes.js";

const DATA_URL = new URL("../../data/site.json", import.meta.url);

let loaded = null;
const answers = new Map();

function load() {
  if (loaded === null) {
    loaded = fetch(DATA_URL).then((r) => {
      if (!r.ok) throw new Refusal(500, `the site's data file ${DATA_URL.pathname} answered ${r.status}`);
      return r.json();
    });
  }
  return loaded;
}

self.onmessage = async (event) => {
  const { id, url, method = "GET", body = null } = event.data;
  const key = `${method} ${url} ${JSON.stringify(body)}`;
  try {
    const data = await load();
    if (!answers.has(key)) {
      const progress = (done, total, what) => postMessage({ id, progress: { done, total, what } });
      answers.set(key, answer(data, url, progress, { method, body }));
    }
    postMessage({ id, status: 200, body: answers.get(key) });
  } catch (error) {
    const status = error instanceof Refusal ? error.status : 422;
    postMessage({ id, status, body: { detail: error.message } });
  }
};
