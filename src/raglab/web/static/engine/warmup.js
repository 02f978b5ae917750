// The Worker's idle warm-up: what it computes, step by step, once the page is ready and while
// no request waits, so that a visitor's first clicks find it done (worker.js runs the steps).
//
// The long steps behind the exhibits' buttons, at the site's own settings ("Train the
// reranker", "Run the pipeline", with what any new cut of the pages reuses), then the grid with
// the other stemming and the reranker over each other first stage with its λ sweep, which
// exhibit V asks for with it when its first stage changes ("Map the grid" itself is left to its
// click, which shows the sweep's progress); then exhibit VI's run with each other chunker at its
// own size, prepared in slices (routes.js's runAhead: the cut, the questions' reranker inputs a
// batch at a time, the training), the run itself the last step. Each step's values are kept in
// the labs' own caches (a step's function, in the chunkers' own), so the click finds them.
//
// A step is {request: [method, url, body], parts}: `parts` run in turn, each a request
// ([method, url, body], its answer kept in the Worker's answer cache under that request's key)
// or a function (called; its values kept where the engine keeps them); `request` names the
// request the step computes or prepares (the Worker posts it; tests read it).

import { prepareCuts } from "./chunking/chunkers.js";
import { runAhead } from "./routes.js";

/** The questions whose reranker inputs one slice of a new cut works out: on the handbook about
 * 20 ms of a run's 70 to 100 (the 71 answerable questions in three slices), so that a request
 * arriving during a slice waits no longer than the largest step before it. */
export const QUESTIONS_A_SLICE = 24;

/** What the Worker computes the moment its data is in when the page started it early (its first
 * script's {prepare}, src/raglab/web/site.py's EARLY_WORKER), before the page's modules have
 * arrived to ask anything: exhibit IV's table on test, the first request of the page's that fits
 * the LSA model and ranks every question (the others it sends with it find their rankings
 * made). [method, url, body] as the page asks it. */
export const PREPARED = ["GET", "/api/fusion/table?split=test", null];

const setting = (data, name) => data.meta.settings.find((s) => s.name === name);

/** The warm-up's steps for the site's `data`, in the order the Worker runs them. */
export function warmUps(data, { batch = QUESTIONS_A_SLICE } = {}) {
  const retrievers = setting(data, "retriever");
  const others = retrievers.choices.filter((r) => r !== retrievers.default);
  const least = setting(data, "size")?.slider?.[0] ?? 1;
  const chunkers = setting(data, "chunker");
  const steps = [
    { request: ["POST", "/api/rerank/train", null] },
    {
      request: ["POST", "/api/run", null],
      // In the same step: every page's sentence units and those of each section longer than
      // the size slider's least, which a new cut (exhibit VI's chunker or size) would otherwise
      // find while the visitor waits.
      after: [() => prepareCuts(data.collection.pages, { minSize: least })],
    },
    { request: ["GET", `/api/bm25/grid?stem=${!data.meta.stem}`, null] },
    ...others.map((r) => ({
      request: ["POST", `/api/rerank/train?retriever=${encodeURIComponent(r)}`, null],
      // In the same step: the sweep measures MMR at every λ on both splits, the cosines of the
      // test questions' candidates included, which training alone leaves to the click.
      after: [["GET", `/api/rerank/sweep?retriever=${encodeURIComponent(r)}`, null]],
    })),
  ].map(({ request, after = [] }) => ({ request, parts: [request, ...after] }));
  for (const chunker of chunkers.choices.filter((c) => c !== chunkers.default)) {
    const request = ["POST", "/api/run", { chunker }];
    let slices;
    try {
      slices = runAhead(data, request[2], { batch });
    } catch {
      continue; // a run this site refuses: the visitor's own request says why
    }
    for (const slice of slices) steps.push({ request, parts: [slice] });
    steps.push({ request, parts: [request] });
  }
  return steps;
}
