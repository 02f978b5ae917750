// Exhibit II: BM25 search with every term's share of the score, the k1 x b grid, a stemming
// switch, and test recall measured once, for the setting the learner commits to.
//
// Every number shown comes from the API (shares, counts, ties, the rule that picks the best
// cell); the page only arranges them.

import { $, fill, applySlider, bindOutput, debounce, el, get, num, sequence, settingOf, status, testLabel, NOT_CHOSEN_ON_TRAIN } from "./lib.js";
import { heatmap } from "./charts.js";
import { pageLink } from "./page_view.js";

export async function init({ meta, store }) {
  const stemSetting = settingOf(meta, "stem");
  const saved = store.settings("bm25");
  const state = {
    query: saved.query || "",
    k1: saved.k1 ?? settingOf(meta, "k1").default,
    b: saved.b ?? settingOf(meta, "b").default,
    // The served lab's stemming: the setting's default unless the server was started otherwise.
    stem: saved.stem ?? meta.stem,
    mapped: Boolean(saved.mapped),
    committed: saved.committed || null,
    grid: null,
    map: null,
  };
  const k1Input = $("#bm25-k1");
  const bInput = $("#bm25-b");
  const stemInput = $("#bm25-stem");
  const queryInput = $("#bm25-query");
  const statusLine = $("#bm25-status");
  const commitButton = $("#bm25-commit");
  applySlider(k1Input, settingOf(meta, "k1"));
  applySlider(bInput, settingOf(meta, "b"));
  k1Input.value = state.k1;
  bInput.value = state.b;
  queryInput.value = state.query;
  stemInput.checked = Boolean(state.stem);
  $("#bm25-stem-label").textContent = stemSetting.label;
  const stemStart = meta.stem
    ? "This server was started with stemming on, so it starts on here; switch it off to see BM25 match words exactly as they are written."
    : "Off to begin with, as the lessons here assume: BM25 then matches words exactly as they are written.";
  $("#bm25-stem-help").textContent = `${stemSetting.help}. ${stemStart} Switched on, the query's words and every chunk's are cut to their stems, so a plural meets its singular, and words that share a stem but not a meaning meet too. The switch changes the search and the grid below.`;
  // Lucene's English analyzer stems every word itself (Porter), so under it the switch changes
  // no token: the page says so and leaves the switch off rather than let it seem to do something.
  if (meta.analyzer === "lucene") {
    stemInput.disabled = true;
    $("#bm25-stem-help").textContent = `${stemSetting.help}. This lab reads text with the ${settingOf(meta, "analyzer").choice_labels.lucene} analyzer, which already stems every word (Porter stemming), so this switch changes nothing here: the search, the grid and the training numbers are the same either way. Start the lab with --analyzer raglab to see what stemming fixes and what it breaks.`;
  }
  const showK1 = bindOutput(k1Input, $("#bm25-k1-out"), 1);
  const showB = bindOutput(bInput, $("#bm25-b-out"), 2);
  const searchSeq = sequence();
  const recallSeq = sequence();
  const gridSeq = sequence();

  const save = () =>
    store.setSettings("bm25", {
      query: state.query,
      k1: state.k1,
      b: state.b,
      stem: state.stem,
      mapped: state.mapped,
      committed: state.committed,
    });

  const at = (k1, b, digits = 2) => `k1 = ${num(k1, digits)}, b = ${num(b, digits)}`;
  const stemNote = (stem) => `stemming ${stem ? "on" : "off"}`;
  // The counts are of the training questions that have an answer; the page's data summary
  // gives the split's total, so every mention says which it is.
  const trainTotal = meta.questions.splits.train.total;
  const answerable = (n) => `${n} answerable training questions`;
  // A share with the count it is the share of, both from the API: "0.644 (29 of 45)".
  const counted = (r) => `${num(r.recall)} (${r.hits} of ${r.questions})`;

  // One scale for every bar of the results shown: the largest contribution among them is
  // drawn full width, so bars compare across results as the column's heading says they do.
  // Each term's share of its own chunk's score (from the API) is said in words beside it.
  function termTable(row, largest) {
    return el("div", { class: "table-wrap" }, termRows(row, largest));
  }

  function termRows(row, largest) {
    const heads = ["term", "tf", "df", "IDF", "length factor", "contribution"];
    // Explicit roles: on a narrow screen the table is laid out as a grid (styles.css), and the
    // roles keep it a table to assistive technology.
    return el(
      "table",
      { class: "data numeric terms", role: "table" },
      el("caption", { class: "visually-hidden", text: `How ${row.chunk} earned its score` }),
      el("thead", { role: "rowgroup" }, el("tr", { role: "row" }, ...heads.map((h) => el("th", { scope: "col", role: "columnheader", text: h })))),
      el(
        "tbody",
        { role: "rowgroup" },
        ...row.terms.map((t) =>
          el(
            "tr",
            { class: t.tf ? "" : "absent", role: "row" },
            el("th", { scope: "row", role: "rowheader", text: t.term }),
            el("td", { role: "cell", text: t.tf }),
            el("td", { role: "cell", text: t.df }),
            el("td", { role: "cell", text: num(t.idf) }),
            el("td", { role: "cell", text: num(t.length_factor) }),
            el(
              "td",
              { class: "contribution", role: "cell" },
              el("span", { class: "contrib-bar", style: `--part:${largest > 0 ? t.contribution / largest : 0}`, dataset: { contribution: t.contribution } }),
              el("span", { class: "contrib-value", text: num(t.contribution) }),
              " ",
              el("span", { class: "contrib-share", text: `${num(100 * t.share, 0)} % of the score` }),
            ),
          ),
        ),
      ),
    );
  }

  function renderResults(data) {
    const host = $("#bm25-results");
    const stemmed = data.stemmed.length
      ? el("p", { class: "small stemmed", text: `Stemming changed ${data.stemmed.map((s) => `${s.word} → ${s.stem}`).join(", ")}.` })
      : null;
    const head = el(
      "p",
      { class: "small" },
      data.tokens.length
        ? `Query terms after lower-casing and dropping stop words${data.stem ? " and stemming" : ""}: ${data.tokens.join(", ")}. k1 = ${num(data.k1, 2)}, b = ${num(data.b, 2)}, ${stemNote(data.stem)}, average chunk length ${num(data.avgdl, 1)} terms.`
        : "Every word of this query is a stop word, so there is nothing to match.",
    );
    if (!data.results.length) {
      fill(host, head, stemmed, el("p", { text: "No chunk contains any of these words, so BM25 retrieves nothing." }));
      return;
    }
    const largest = Math.max(0, ...data.results.flatMap((row) => row.terms.map((t) => t.contribution)));
    fill(
      host,
      head,
      stemmed,
      el(
        "ol",
        { class: "result-list" },
        ...data.results.map((row) =>
          el(
            "li",
            {},
            el("p", { class: "result-head" }, el("strong", { text: row.heading || row.title }), " ", pageLink(row.page, row.chunk), row.status === "superseded" ? el("span", { class: "badge bad", text: "superseded" }) : null, el("span", { class: "score", text: `score ${num(row.score)}` })),
            el("p", { class: "snippet", text: row.snippet }),
            termTable(row, largest),
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
      const data = await get("bm25/search", { q, k1: state.k1, b: state.b, top: 5, stem: state.stem });
      if (!searchSeq.is(token)) return;
      status(statusLine, "");
      renderResults(data);
      store.markExplored("bm25");
    } catch (error) {
      if (searchSeq.is(token)) status(statusLine, error.message);
    }
  }
  const searchSoon = debounce(search, 50);

  function describeStemming(effect, r) {
    const list = (rows) => rows.map((q) => `“${q.question}”`).join(", ");
    const fixes = effect.fixes.length
      ? `finds the answer in the first ${effect.k} for ${effect.fixes.length} of the ${answerable(effect.questions)} that plain words miss (${list(effect.fixes)})`
      : `finds no training answer in the first ${effect.k} that plain words miss`;
    const breaks = effect.breaks.length ? `loses it for ${effect.breaks.length} that plain words find (${list(effect.breaks)})` : "loses none that plain words find";
    return `At ${at(r.k1, r.b)}, stemming ${fixes}, and ${breaks}.`;
  }

  // Training recall only: the test split is measured once, on commit.
  async function measure() {
    const token = recallSeq.next();
    try {
      const r = await get("bm25/recall", { k1: state.k1, b: state.b, stem: state.stem });
      if (!recallSeq.is(token)) return;
      $("#bm25-train").textContent = `${counted(r)} at ${at(r.k1, r.b)}`;
      $("#bm25-stem-effect").textContent = describeStemming(r.stemming, r);
    } catch (error) {
      if (recallSeq.is(token)) status(statusLine, error.message);
    }
  }
  const measureSoon = debounce(measure, 50);

  // The page's rule for test figures (index.html, #test-rule): a test figure belongs to the
  // setting chosen on the training split, here the grid's best cell by its rule; one for any
  // other setting is labelled so.
  async function showCommitted() {
    const c = state.committed;
    commitButton.disabled = Boolean(c);
    if (!c) {
      commitButton.textContent = "Commit and measure on test";
      $("#bm25-test").textContent = "measured once you commit";
      $("#bm25-commit-note").textContent =
        "The test questions play no part while you tune. When you have settled on k1, b and stemming by the training numbers, commit: test recall is then measured once, for that setting. The grid's best cell is the setting the training split chooses; a test figure for any other setting is labelled as not chosen on train.";
      return;
    }
    commitButton.textContent = "Measured on test";
    try {
      const [r, grid, train] = await Promise.all([
        get("bm25/test", { k1: c.k1, b: c.b, stem: c.stem }),
        get("bm25/grid", { stem: c.stem }),
        get("bm25/recall", { k1: c.k1, b: c.b, stem: c.stem }),
      ]);
      const best = grid.best;
      const same = (x, y) => Math.abs(x - y) < 1e-9;
      const chosen = same(best.k1, r.k1) && same(best.b, r.b);
      fill($("#bm25-test"), `${counted(r)} at ${at(r.k1, r.b)} `, testLabel(chosen));
      const bestAt = `the training split chooses ${at(best.k1, best.b)}, the grid's best cell (${stemNote(grid.stem)}), with ${best.hits} of the ${answerable(grid.questions)}`;
      const why = chosen
        ? "It is the grid's best cell, the setting the training split chooses, so its test figure is the one that counts."
        : `Its figure is labelled “${NOT_CHOSEN_ON_TRAIN}”: ${bestAt}, and this setting finds ${train.hits}${train.hits === best.hits ? ", a tie the grid's rule settles the other way" : ""}.`;
      $("#bm25-commit-note").textContent = `You committed to ${at(r.k1, r.b)}, ${stemNote(r.stem)}, and its test recall has been measured once. ${why} The sliders, the grid and the switch change the training numbers only: measuring the test questions again after each change would make them a second training set.`;
    } catch (error) {
      status(statusLine, error.message);
    }
  }

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
    const best = g.best.at;
    const dflt = g.default;
    const onGrid = Number.isInteger(dflt.at[0]) && Number.isInteger(dflt.at[1]);
    state.map = heatmap($("#bm25-heatmap"), {
      label: `Answerable training questions found in the first ${g.k} for each k1 (rows) and b (columns), out of ${g.questions}, ${stemNote(g.stem)}`,
      rows: g.k1s,
      cols: g.bs,
      values: g.recall,
      text: (i, j) => String(g.hits[i][j]),
      tied: g.tied,
      marks: [{ at: dflt.at, className: "default-mark", label: `The defaults, ${at(dflt.k1, dflt.b)}: ${counted({ ...dflt, questions: g.questions })}` }],
      rowLabel: "k1",
      colLabel: "b",
      current: cellOf(),
      best,
      describe: (i, j) => `k1 = ${g.k1s[i].toFixed(1)}, b = ${g.bs[j].toFixed(1)}: ${g.hits[i][j]} of ${answerable(g.questions)}, recall ${g.recall[i][j].toFixed(3)}`,
      onPick: (i, j) => {
        store.markExplored("bm25");
        setParams(g.k1s[i], g.bs[j]);
      },
    });
    $("#bm25-best").textContent = `${counted({ ...g.best, questions: g.questions })} at ${at(g.best.k1, g.best.b, 1)}`;
    $("#bm25-default").textContent = `${counted({ ...dflt, questions: g.questions })} at ${at(dflt.k1, dflt.b)}`;
    $("#bm25-ties").textContent = `${g.tied.length} of ${g.cells} cells`;
    $("#bm25-rule").textContent = g.rule;
    const unanswerable = trainTotal - g.questions;
    const which = unanswerable > 0 ? `of ${trainTotal}; the other ${unanswerable} have no answer to find` : "every training question has one";
    $("#bm25-legend").textContent = `Each cell is one setting: the number of the ${answerable(g.questions)} (${which}) whose answer chunk is among the first ${g.k} results (${stemNote(g.stem)}), shaded by that share, darker is more. The ring marks the current setting, the star the best cell, a dot every cell tied with it (${g.tied.length} of ${g.cells}), and the diamond the defaults, ${at(dflt.k1, dflt.b)}${onGrid ? "" : ", which lie between two cells of the grid"}.`;
    $("#bm25-use-best").disabled = false;
  }

  async function mapGrid() {
    const token = gridSeq.next();
    try {
      const grid = await get("bm25/grid", { stem: state.stem });
      if (!gridSeq.is(token)) return;
      state.grid = grid;
      state.mapped = true;
      save();
      drawGrid();
    } catch (error) {
      if (gridSeq.is(token)) status(statusLine, error.message);
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
  stemInput.addEventListener("change", () => {
    state.stem = stemInput.checked;
    store.markExplored("bm25");
    save();
    measureSoon();
    searchSoon();
    if (state.mapped) mapGrid();
  });
  $("#bm25-map").addEventListener("click", mapGrid);
  $("#bm25-use-best").addEventListener("click", () => {
    if (!state.grid) return;
    store.markExplored("bm25");
    setParams(state.grid.best.k1, state.grid.best.b);
  });
  commitButton.addEventListener("click", () => {
    if (state.committed) return;
    state.committed = { k1: state.k1, b: state.b, stem: state.stem };
    store.markExplored("bm25");
    save();
    showCommitted();
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
  showCommitted();
  if (state.mapped) await mapGrid();
  if (state.query) await search();
}
