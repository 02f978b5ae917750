// Exhibit IV: every ranker measured on the training split at the slider's weight and on the test
// split at the weight chosen on train, and the question-by-question grid.

import { $, fill, $$, applyBounds, bindOutput, debounce, el, fixedOf, get, gridStep, keepingFocus, num, sequence, settingOf, showTuning, status, tuningSentences, NOT_CHOSEN_ON_TRAIN } from "./lib.js";
import { pageLink } from "./page_view.js";

const COLUMNS = ["recall@1", "recall@3", "recall@5", "recall@10", "mrr", "ndcg@10"];

export async function init({ meta, store }) {
  // Display names and the weight's range come from /api/meta, never from here.
  const NAMES = meta.labels.retrievers;
  const saved = store.settings("fusion");
  const state = {
    weight: saved.weight ?? null,
    method: saved.method || "score",
    k: saved.k || fixedOf(meta, "grid_recall_k"),
    selected: saved.selected || null,
    chosen: null,
    grid: null,
  };
  const weightInput = $("#fusion-weight");
  applyBounds(weightInput, settingOf(meta, "weight"), gridStep(fixedOf(meta, "fusion_weights")));
  const statusLine = $("#fusion-status");
  const showWeight = bindOutput(weightInput, $("#fusion-weight-out"), 2);
  const tableSeq = sequence();
  const gridSeq = sequence();
  const listSeq = sequence();
  const save = () => store.setSettings("fusion", { weight: state.weight, method: state.method, k: state.k, selected: state.selected });

  // Two tables: the training split follows the slider; the test split stays at the weight
  // chosen on train, the one test figure the rule allows to report.
  function renderTable(data, which) {
    const trained = Math.abs(data.weight - state.chosen) < 1e-9;
    $(which === "train" ? "#fusion-train-caption" : "#fusion-caption").textContent =
      which === "train"
        ? `Training split, ${data.questions} answerable questions; score fusion at the slider's w = ${num(data.weight, 2)}${trained ? ", the weight chosen on train" : ""}`
        : `Test split, ${data.questions} answerable questions; score fusion at w = ${num(data.weight, 2)}, the weight chosen on the training split`;
    const label = (name) => {
      if (name === "score") return `${NAMES[name]} (w = ${num(data.weight, 2)})`;
      if (name === "neural-score" && data.neural_weight !== null) return `${NAMES[name]} (w = ${num(data.neural_weight, 2)})`;
      return NAMES[name];
    };
    // Without the model, its rows stay in the table and say how to install it.
    const missing = Object.entries(data.unavailable || {}).map(([name, why]) =>
      el("tr", { "data-ranker": name, class: "unavailable" }, el("th", { scope: "row", text: NAMES[name] }), el("td", { colspan: String(COLUMNS.length), text: why })),
    );
    $(which === "train" ? "#fusion-train-table tbody" : "#fusion-table tbody").replaceChildren(
      ...Object.entries(data.rankers).map(([name, m]) =>
        el("tr", { "data-ranker": name }, el("th", { scope: "row", text: label(name) }), ...COLUMNS.map((c) => el("td", { text: num(m[c]) }))),
      ),
      ...missing,
    );
  }

  const askTable = () => get("fusion/table", { weight: state.weight, split: "train" });
  async function loadTable(asked = askTable()) {
    const token = tableSeq.next();
    try {
      const data = await asked;
      if (!tableSeq.is(token)) return;
      status(statusLine, "");
      renderTable(data, "train");
    } catch (error) {
      if (tableSeq.is(token)) status(statusLine, error.message);
    }
  }

  // Beside the weight chosen on train: how many training questions chose it, when they were too
  // few or the weight lies on an edge of its grid (the API's sentences, as exhibit VI shows
  // them), for score fusion and for BM25 + neural score fusion once its rows are there.
  function showChosenTuning(data) {
    showTuning($("#fusion-tuning"), [...tuningSentences(data.tuning), ...tuningSentences(data.neural_tuning, `${NAMES["neural-score"]}: `)]);
  }

  // A test figure at a weight not chosen on train says so (score fusion only: RRF has no weight).
  const unchosen = () => state.method === "score" && state.chosen !== null && Math.abs(state.weight - state.chosen) > 1e-9;

  const lit = (rank) => rank !== null && rank <= state.k;

  function renderGrid() {
    const g = state.grid;
    if (!g) return;
    const answerable = g.questions.filter((q) => q.answerable);
    const count = (name) => answerable.filter((q) => lit(q.ranks[name])).length;
    $("#fusion-summary").textContent =
      `Within the first ${state.k}: BM25 finds ${count("bm25")}, the embedding ${count("lsa")} and your fusion ${count("fusion")}${unchosen() ? ` (${NOT_CHOSEN_ON_TRAIN}, w = ${num(state.weight, 2)})` : ""} of ${answerable.length} answerable questions.`;
    const grid = $("#fusion-grid");
    // A square chosen from the keyboard keeps the focus through the redraw.
    keepingFocus(grid, "id", () => grid.replaceChildren(
      ...g.questions.map((q) => {
        const label = q.answerable
          ? `${q.id}: ${["bm25", "lsa", "fusion"].map((n) => `${NAMES[n === "fusion" ? state.method : n]} ${q.ranks[n] === null ? "not ranked" : `rank ${q.ranks[n]}`}`).join(", ")}`
          : `${q.id}: no answer in the documents`;
        return el(
          "button",
          {
            type: "button",
            class: `square${q.answerable ? "" : " unanswerable"}${q.id === state.selected ? " selected" : ""}`,
            "aria-pressed": q.id === state.selected ? "true" : "false",
            "aria-label": label,
            title: `${q.id}: ${q.question}`,
            "data-id": q.id,
            onclick: () => choose(q.id),
          },
          el("span", { class: "square-id", text: q.id }),
          el(
            "span",
            { class: "marks", "aria-hidden": "true" },
            ...["bm25", "lsa", "fusion"].map((n) => el("span", { class: `dot ${n}${q.answerable && lit(q.ranks[n]) ? " on" : ""}` })),
          ),
        );
      }),
    ));
  }

  const askGrid = () => get("fusion/grid", { method: state.method, weight: state.weight });
  async function loadGrid(asked = askGrid()) {
    const token = gridSeq.next();
    try {
      const data = await asked;
      if (!gridSeq.is(token)) return;
      state.grid = data;
      renderGrid();
    } catch (error) {
      if (gridSeq.is(token)) status(statusLine, error.message);
    }
  }

  function list(name, block, split) {
    return el(
      "div",
      { class: "ranked" },
      el("h4", { text: name === "fusion" ? (state.method === "rrf" ? NAMES.rrf : `${NAMES.score}, w = ${num(state.weight, 2)}${unchosen() && split === "test" ? ` (${NOT_CHOSEN_ON_TRAIN})` : ""}`) : NAMES[name] }),
      el("p", { class: "small", text: block.first === null ? "Answer not in the list." : `First answer at rank ${block.first}.` }),
      el(
        "ol",
        { class: "mini-list" },
        ...block.rows.map((r) =>
          el(
            "li",
            { class: r.relevant ? "hit" : "" },
            pageLink(r.page, r.chunk, state.selected),
            ` ${r.heading || r.title} `,
            r.relevant ? el("span", { class: "badge good", text: "answer" }) : null,
            el("span", { class: "score", text: num(r.score) }),
          ),
        ),
      ),
    );
  }

  const askLists = () =>
    state.selected ? get(`fusion/lists/${encodeURIComponent(state.selected)}`, { method: state.method, weight: state.weight, top: Math.max(5, state.k) }) : null;
  async function loadLists(asked = askLists()) {
    if (!asked) return;
    const token = listSeq.next();
    try {
      const data = await asked;
      if (!listSeq.is(token)) return;
      const split = state.grid && state.grid.questions.some((q) => q.id === data.id) ? state.grid.split : null;
      fill(
        $("#fusion-lists"),
        el("h4", { class: "wide", text: `${data.id}: ${data.question}` }),
        data.answerable ? null : el("p", { class: "wide", text: "The documents hold no answer to this question; every list is a miss by definition." }),
        list("bm25", data.lists.bm25, split),
        list("lsa", data.lists.lsa, split),
        list("fusion", data.lists.fusion, split),
      );
    } catch (error) {
      if (listSeq.is(token)) status(statusLine, error.message);
    }
  }

  function choose(id) {
    state.selected = id;
    save();
    store.markExplored("fusion");
    renderGrid();
    loadLists();
  }

  const reloadSoon = debounce(() => {
    loadTable();
    loadGrid();
    loadLists();
  }, 50);

  weightInput.addEventListener("input", () => {
    state.weight = Number(weightInput.value);
    save();
    store.markExplored("fusion");
    reloadSoon();
  });
  $("#fusion-use-chosen").addEventListener("click", () => {
    state.weight = state.chosen;
    weightInput.value = state.chosen;
    showWeight();
    save();
    reloadSoon();
  });
  for (const radio of $$("input[name=fusion-method]")) {
    radio.checked = radio.value === state.method;
    radio.addEventListener("change", () => {
      state.method = radio.value;
      save();
      loadGrid();
      loadLists();
    });
  }
  const kSelect = $("#fusion-k");
  // The depths a question counts as found at: the R@k columns' k, from /api/meta.
  kSelect.replaceChildren(...fixedOf(meta, "recall_ks").map((k) => el("option", { value: String(k), text: String(k) })));
  kSelect.value = String(state.k);
  kSelect.addEventListener("change", () => {
    state.k = Number(kSelect.value);
    save();
    renderGrid();
  });

  // The test table, the training table, the grid and the lists asked at once. With no weight
  // saved none is given, so each is at the weight chosen on train; each is drawn once the
  // test table has said which weight that is.
  const firstAsked = get("fusion/table", { split: "test" });
  const trainAsked = askTable();
  const gridAsked = askGrid();
  const listsAsked = askLists();
  for (const asked of [trainAsked, gridAsked, listsAsked]) if (asked) asked.catch(() => {});
  let trainTable = null;
  try {
    // The test table: no weight asked, so the weight chosen on train.
    const first = await firstAsked;
    state.chosen = first.chosen_weight;
    if (state.weight === null) state.weight = first.chosen_weight;
    weightInput.value = state.weight;
    showWeight();
    $("#fusion-weight-marks").replaceChildren(el("option", { value: state.chosen, label: `trained ${num(state.chosen, 2)}` }));
    $("#fusion-chosen").textContent = `On the training questions the best weight is w = ${num(state.chosen, 2)} (best recall@5, then MRR); it is marked on the slider.`;
    renderTable(first, "test");
    showChosenTuning(first);
    trainTable = loadTable(trainAsked);
  } catch (error) {
    status(statusLine, error.message);
  }
  // Neural rows that waited for the encoding (their cells said "encoding, n of N"): fill them in.
  // Both tables: the test split's (at the chosen weight) and the training split's.
  document.addEventListener("raglab:neural-ready", async () => {
    try {
      const test = await get("fusion/table", { split: "test" });
      renderTable(test, "test");
      showChosenTuning(test);
    } catch (error) {
      status(statusLine, error.message);
    }
    await loadTable();
  });
  await Promise.all([trainTable, loadGrid(gridAsked), loadLists(listsAsked)]);
}
