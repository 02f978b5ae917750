// Exhibit III, second half: the neural model beside LSA on the same questions.

import { $, el, get, num, status } from "./lib.js";
import { onProgress } from "./encoding.js";
import { ENGINE } from "./answers.js";

const FOUND = 5; // "found" means an answer chunk within the first five, as the exhibits' R@5

function rankText(rank) {
  return rank === null ? "not ranked" : String(rank);
}

function mb(bytes) {
  return `${num(bytes / 1e6, 1)} MB`;
}

function renderCosts(c) {
  return el(
    "p",
    { id: "neural-costs" },
    `What it costs: encoding took ${num(c.encode_ms_per_chunk, 1)} ms a chunk on ${ENGINE === "tab" ? "the machine that built this site" : "this machine"} (timed on ${c.timed_chunks} chunks, ${c.timed_at.replace("T", " ").replace("+00:00", " UTC")}), so the ${c.chunks} chunks here take about ${num((c.encode_ms_per_chunk * c.chunks) / 1000, 1)} s once; their vectors are then read from a cache on disk. The vectors take ${mb(c.vector_bytes)} (${c.dim} float32 numbers a chunk, ${mb(c.bytes_per_1000_chunks)} per 1,000 chunks) and the model's weights ${mb(c.weights_bytes)}, ${c.layers} layers. ${c.training}.`,
  );
}

function renderTwins(t, names) {
  const row = (label, pair) =>
    el("tr", {}, el("th", { scope: "row", text: label }), el("td", { text: pair.lsa === null ? "no vector" : num(pair.lsa) }), el("td", { text: num(pair.neural) }));
  const [a, b] = t.pair;
  return el(
    "table",
    { class: "data numeric", id: "neural-twins" },
    el("caption", { text: "Cosine of two identifiers in each space" }),
    el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Pair" }), el("th", { scope: "col", text: names.lsa }), el("th", { scope: "col", text: names.neural }))),
    el("tbody", {}, row(`${a} and ${b} (near twins)`, t.twin), row(`${a} and ${t.other} (unrelated)`, t.unrelated)),
  );
}

function renderQuestions(v, names) {
  const found = (r) => r !== null && r <= FOUND;
  const rows = v.questions;
  const neuralOnly = rows.filter((q) => found(q.ranks.neural) && !found(q.ranks.lsa)).length;
  const lsaOnly = rows.filter((q) => found(q.ranks.lsa) && !found(q.ranks.neural)).length;
  const summary = el(
    "p",
    { id: "neural-summary" },
    `${rows.length} ${v.kind} questions of the ${v.split} split: the neural model finds ${neuralOnly} within the first ${FOUND} that LSA misses, and misses ${lsaOnly} that LSA finds (rows marked). LSA was fitted on this corpus; the neural model never saw it.`,
  );
  const table = el(
    "table",
    { class: "data", id: "neural-questions" },
    el("caption", { text: `First answer rank of each ${v.kind} question` }),
    el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Question" }), ...["bm25", "lsa", "neural"].map((n) => el("th", { scope: "col", text: names[n] })))),
    el(
      "tbody",
      {},
      ...rows.map((q) => {
        const mark = found(q.ranks.neural) && !found(q.ranks.lsa) ? "neural-only" : found(q.ranks.lsa) && !found(q.ranks.neural) ? "lsa-only" : null;
        return el(
          "tr",
          { "data-question": q.id, class: mark },
          el("th", { scope: "row", text: `${q.id}: ${q.question}` }),
          ...["bm25", "lsa", "neural"].map((n) => el("td", { class: found(q.ranks[n]) ? "hit" : null, text: rankText(q.ranks[n]) })),
        );
      }),
    ),
  );
  return [summary, el("div", { class: "scroll-table", tabindex: "0", role: "region", "aria-label": "Ranks under LSA and the neural model" }, table)];
}

function renderSearch(data, names) {
  const table = el(
    "table",
    { class: "data", id: "neural-search-results" },
    el("caption", { text: `The chunks nearest “${data.query}” under ${names.neural}` }),
    el("thead", {}, el("tr", {}, ...["Rank", "Chunk", "Cosine"].map((t) => el("th", { scope: "col", text: t })))),
    el(
      "tbody",
      {},
      ...data.results.map((r) =>
        el("tr", { "data-chunk": r.chunk }, el("td", { text: String(r.rank) }), el("td", { text: r.heading }), el("td", { class: "score", text: num(r.score) })),
      ),
    ),
  );
  return el("div", { class: "scroll-table", tabindex: "0", role: "region", "aria-label": "Chunks nearest the question" }, table);
}

export async function init({ meta, store }) {
  const names = meta.labels.retrievers;
  const button = $("#neural-build");
  const out = $("#neural-out");
  const statusLine = $("#neural-status");

  async function build() {
    button.disabled = true;
    status(statusLine, "Asking for the neural model's numbers…", "info");
    // While the server is still encoding the vectors, say how far it is, here where the
    // numbers will appear.
    const stop = onProgress((p) => status(statusLine, `Encoding, ${p.done} of ${p.total}: the chunks and questions are encoded once, then read from a cache on disk…`, "info"));
    try {
      const v = await get("neural/view");
      status(statusLine, "");
      // Opened once, the panel opens again on reload, as every exhibit keeps its state.
      store.setSettings("neural", { open: true });
      if (!v.available) {
        out.replaceChildren(el("p", { id: "neural-missing", text: `The neural rows ${v.why}.` }));
        return;
      }
      out.replaceChildren(renderCosts(v.costs), renderTwins(v.twins, names), ...renderQuestions(v, names));
    } catch (error) {
      status(statusLine, error.message);
    } finally {
      stop();
      button.disabled = false;
    }
  }

  // A question typed here is encoded by the model: by the server, or in a static site's tab
  // (its weights fetched once, with a progress bar).
  const form = $("#neural-search-form");
  const query = $("#neural-query");
  const found = $("#neural-search-out");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const q = query.value.trim();
    if (!q) return;
    found.replaceChildren(el("p", { class: "status", text: "Encoding the question…" }));
    try {
      const data = await get("neural/search", { q, top: FOUND });
      found.replaceChildren(renderSearch(data, names));
    } catch (error) {
      found.replaceChildren(el("p", { class: "status", role: "status", text: error.message }));
    }
  });

  button.addEventListener("click", build);
  if (store.settings("neural").open) build();
}
