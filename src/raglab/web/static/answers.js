// The engine interface: where the exhibits' requests are answered, the server's API or the tab.
//
// The page carries <meta name="raglab-engine">: "server" (as the package holds index.html,
// served by `raglab serve`) sends each request to the API with fetch; "tab" (as `raglab site`
// writes it) posts the same request, its URL, to a Web Worker (engine/worker.js), which answers
// with the JSON the server's route gives, computed by the in-tab engine from the site's data
// files. Either way the caller gets a Response-like {status, body}. Long steps in the Worker post
// progress, shown in one shared line; a route not yet computed in the tab answers 501, and the
// exhibit it belongs to says so.

const marker = document.querySelector('meta[name="raglab-engine"]');

/** "tab" when the page computes its numbers itself, else "server". */
export const ENGINE = marker && marker.content === "tab" ? "tab" : "server";

let worker = null;
let nextId = 0;
const waiting = new Map();

// The exhibit (its section's id) each route belongs to, for the "not yet computed" notice.
const SECTIONS = {
  chunking: "chunking",
  bm25: "bm25",
  lsa: "lsa",
  neural: "lsa",
  fusion: "fusion",
  rerank: "rerank",
  run: "end-to-end",
  diagnosis: "end-to-end",
};

function progressLine() {
  let line = document.getElementById("tab-progress");
  if (!line) {
    line = document.createElement("p");
    line.id = "tab-progress";
    line.className = "tab-progress";
    line.setAttribute("role", "status");
    line.hidden = true;
    document.body.append(line);
  }
  return line;
}

// A step counted in bytes (the neural weights' download) is said in megabytes.
const inWords = (n, total) => (total > 1e6 ? `${(n / 1e6).toFixed(1)} MB` : String(n));

function showProgress({ done, total, what }) {
  const line = progressLine();
  line.hidden = done >= total;
  // The last step's figures stay on the line once it is hidden (what a test reads back).
  Object.assign(line.dataset, { done: String(done), total: String(total), what });
  // The line's text and bar are set in place: a long step posts hundreds of marks, and
  // building the line anew for each made that many new nodes to style.
  let bar = line.querySelector("progress");
  if (!bar) {
    bar = document.createElement("progress");
    line.replaceChildren(document.createTextNode(""), bar);
  }
  line.firstChild.data = `Computing ${what} in this tab: ${inWords(done, total)} of ${inWords(total, total)}`;
  bar.max = total;
  bar.value = done;
}

/** Say, in the exhibit the route belongs to, that the tab does not compute it yet. */
function showMissing(url, message) {
  const path = new URL(url, window.location.href).pathname.replace(/^.*\/api\//, "");
  const id = SECTIONS[path.split("/")[0]];
  const section = id && document.getElementById(id);
  if (!section || section.querySelector(".tab-missing")) return;
  const note = document.createElement("p");
  note.className = "tab-missing";
  note.setAttribute("role", "note");
  note.textContent = message;
  const heading = section.querySelector("h2");
  if (heading) heading.after(note);
  else section.prepend(note);
}

function startWorker() {
  // A written site's page starts the Worker in its first script, before this module arrives
  // (src/raglab/web/site.py's EARLY_WORKER): taken here, else started now.
  worker = window.raglabWorker ?? new Worker(new URL("./engine/worker.js", import.meta.url), { type: "module" });
  worker.onmessage = (event) => {
    const { id, progress, status, body } = event.data;
    const entry = waiting.get(id);
    if (!entry) return;
    if (progress) {
      showProgress(progress);
      return;
    }
    waiting.delete(id);
    if (status === 501) showMissing(entry.url, body.detail);
    entry.resolve({ status, body });
  };
  worker.onerror = (event) => {
    for (const [id, entry] of waiting) {
      waiting.delete(id);
      entry.resolve({ status: 500, body: { detail: `the in-tab engine failed: ${event.message}` } });
    }
  };
}

/** Ask the in-tab engine for `url` (an /api/... URL with its query) by `method`, with a POST's
 * JSON `body`: {status, body}. */
function askTab(url, method = "GET", body = null) {
  if (worker === null) startWorker();
  return new Promise((resolve) => {
    const id = ++nextId;
    waiting.set(id, { url, resolve });
    worker.postMessage({ id, url, method, body });
  });
}

// The tab's engine starts with the page, loading its data while the page's scripts load.
if (ENGINE === "tab") startWorker();

/** Tell the in-tab engine the page is ready, so that it may compute, while idle, what the
 * exhibits' first buttons will ask for (engine/worker.js); nothing in server mode. */
export function warmUp() {
  if (ENGINE === "tab" && worker !== null) worker.postMessage({ warmUp: true });
}

/** The answer to a request for `url` (GET, or `init`'s method and JSON body): {status, body},
 * body null when the answer is not JSON. */
export async function ask(url, init) {
  if (ENGINE === "tab") {
    return askTab(url, (init && init.method) || "GET", init && init.body ? JSON.parse(init.body) : null);
  }
  const response = await fetch(url, init);
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  return { status: response.status, body };
}
