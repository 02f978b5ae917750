// Exhibit II: BM25 search with every term's share of the score, and the k1 x b grid.

import { $, fill, bindOutput, debounce, el, get, num, sequence, status } from "./lib.js";
import { heatmap } from "./charts.js";

export async function init({ meta, store }) {
  const d = meta.defaults;
  const saved = store.settings("bm25");
  const state = {
    query: saved.query || "",
    k1: saved.k1 ?? d.bm25_k1,
    b: saved.b ?? d.bm25_b,
    mapped: Boolean(saved.mapped),
    tuned: Boolean(saved.tuned),
    grid: null,
    map: null,
  };
  const k1Input = $("#bm25-k1");
  const bInput = $("#bm25-b");
  const queryInput = $("#bm25-query");
  const statusLine = $("#bm25-status");
  k1Input.value = state.k1;
  bInput.value = state.b;
  queryInput.value = state.query;
  const showK1 = bindOutput(k1Input, $("#bm25-k1-out"), 1);
  const showB = bindOutput(bInput, $("#bm25-b-out"), 2);
  const searchSeq = sequence();
  const recallSeq = sequence();

  const save = () =>
    store.setSettings("bm25", { query: state.query, k1: state.k1, b: state.b, mapped: state.mapped, tuned: state.tuned });

  function termTable(row) {
    return el("div", { class: "table-wrap" }, termRows(row));
  }

  function termRows(row) {
    return el(
      "table",
      { class: "data numeric terms" },
      el("caption", { class: "visually-hidden", text: `How ${row.chunk} earned its score` }),
      el("thead", {}, el("tr", {}, ...["term", "tf", "df", "IDF", "length factor", "contribution"].map((h) => el("th", { scope: "col", text: h })))),
      el(
        "tbody",
        {},
        ...row.terms.map((t) =>
          el(
            "tr",
            { class: t.tf ? "" : "absent" },
            el("th", { scope: "row", text: t.term }),
            el("td", { text: t.tf }),
            el("td", { text: t.df }),
            el("td", { text: num(t.idf) }),
            el("td", { text: num(t.length_factor) }),
            el(
              "td",
              {},
              el("span", { class: "contrib-bar", style: `--share:${row.score > 0 ? (100 * t.contribution) / row.score : 0}%` }),
              num(t.contribution),
            ),
          ),
        ),
      ),
    );
  }

  function renderResults(data) {
    const host = $("#bm25-results");
    const head = el(
      "p",
      { class: "small" },
      data.tokens.length
        ? `Query terms after lower-casing and dropping stop words: ${data.tokens.join(", ")}. k1 = ${num(data.k1, 2)}, b = ${num(data.b, 2)}, average chunk length ${num(data.avgdl, 1)} terms.`
        : "Every word of this query is a stop word, so there is nothing to match.",
    );
    if (!data.results.length) {
      fill(host, head, el("p", { text: "No chunk contains any of these words, so BM25 retrieves nothing." }));
      return;
    }
    fill(
      host,
      head,
      el(
        "ol",
        { class: "result-list" },
        ...data.results.map((row) =>
          el(
            "li",
            {},
            el("p", { class: "result-head" }, el("strong", { text: row.heading || row.title }), " ", el("span", { class: "chunk-id", text: row.chunk }), row.status === "superseded" ? el("span", { class: "badge bad", text: "superseded" }) : null, el("span", { class: "score", text: `score ${num(row.score)}` })),
            el("p", { class: "snippet", text: row.snippet }),
            termTable(row),
          ),
        ),
      ),
    );
  }

  async function search() {
    const q = state.query.trim();
    const token = searchSeq.next();
    if (!q) {
      $("#bm25-results").replaceChildren(el("p", { class: "small", text: "Results appear here as you type. The buttons above fill in questions from the training set." }));
      return;
    }
    try {
      const data = await get("bm25/search", { q, k1: state.k1, b: state.b, top: 5 });
      if (!searchSeq.is(token)) return;
      status(statusLine, "");
      renderResults(data);
      store.markExplored("bm25");
    } catch (error) {
      if (searchSeq.is(token)) status(statusLine, error.message);
    }
  }
  const searchSoon = debounce(search, 50);

  async function measure() {
    const token = recallSeq.next();
    try {
      const r = await get("bm25/recall", { k1: state.k1, b: state.b });
      if (!recallSeq.is(token)) return;
      $("#bm25-train").textContent = `${num(r.train)} at k1 = ${num(r.k1, 2)}, b = ${num(r.b, 2)}`;
      $("#bm25-test").textContent = state.tuned ? `${num(r.test)} at k1 = ${num(r.k1, 2)}, b = ${num(r.b, 2)}` : "hidden until you tune";
    } catch (error) {
      if (recallSeq.is(token)) status(statusLine, error.message);
    }
  }
  const measureSoon = debounce(measure, 50);

  function cellOf() {
    if (!state.grid) return null;
    const near = (values, v) => values.reduce((best, x, i) => (Math.abs(x - v) < Math.abs(values[best] - v) ? i : best), 0);
    return [near(state.grid.k1s, state.k1), near(state.grid.bs, state.b)];
  }

  function setParams(k1, b) {
    state.k1 = k1;
    state.b = b;
    k1Input.value = k1;
    bInput.value = b;
    showK1();
    showB();
    save();
    if (state.map) state.map.update(cellOf());
    measureSoon();
    searchSoon();
  }

  function drawGrid() {
    const g = state.grid;
    const bi = g.k1s.indexOf(g.best.k1);
    const bj = g.bs.indexOf(g.best.b);
    state.map = heatmap($("#bm25-heatmap"), {
      label: `Training recall@${g.k} for each k1 (rows) and b (columns)`,
      rows: g.k1s,
      cols: g.bs,
      values: g.recall,
      rowLabel: "k1",
      colLabel: "b",
      current: cellOf(),
      best: [bi, bj],
      describe: (i, j) => `k1 = ${g.k1s[i].toFixed(1)}, b = ${g.bs[j].toFixed(1)}: training recall ${g.recall[i][j].toFixed(3)}`,
      onPick: (i, j) => {
        store.markExplored("bm25");
        setParams(g.k1s[i], g.bs[j]);
      },
    });
    $("#bm25-best").textContent = `${num(g.best.recall)} at k1 = ${g.best.k1.toFixed(1)}, b = ${g.best.b.toFixed(1)}`;
    $("#bm25-use-best").disabled = false;
  }

  async function mapGrid() {
    try {
      state.grid = await get("bm25/grid");
      state.mapped = true;
      save();
      drawGrid();
    } catch (error) {
      status(statusLine, error.message);
    }
  }

  queryInput.addEventListener("input", () => {
    state.query = queryInput.value;
    save();
    searchSoon();
  });
  $("#bm25-form").addEventListener("submit", (event) => {
    event.preventDefault();
    state.query = queryInput.value;
    save();
    search();
  });
  k1Input.addEventListener("input", () => setParams(Number(k1Input.value), state.b));
  bInput.addEventListener("input", () => setParams(state.k1, Number(bInput.value)));
  $("#bm25-map").addEventListener("click", mapGrid);
  $("#bm25-use-best").addEventListener("click", () => {
    if (!state.grid) return;
    state.tuned = true;
    store.markExplored("bm25");
    setParams(state.grid.best.k1, state.grid.best.b);
  });

  try {
    const { examples } = await get("bm25/examples");
    $("#bm25-examples").replaceChildren(
      ...examples.map((x) =>
        el("button", {
          type: "button",
          class: "chip",
          title: `A training question of kind “${x.kind}”`,
          text: x.query,
          onclick: () => {
            queryInput.value = x.query;
            state.query = x.query;
            save();
            search();
          },
        }),
      ),
    );
  } catch (error) {
    status(statusLine, error.message);
  }
  measure();
  if (state.mapped) await mapGrid();
  if (state.query) await search();
}
