// Exhibit V: train the reranker, show its weights, compare orders, and watch MMR drop a stale copy.

import { $, fill, applyBounds, bindOutput, debounce, el, fillChoices, fixedOf, get, gridStep, num, post, sequence, settingOf, showTuning, status, tuningSentences, CHOSEN_ON_TRAIN, NOT_CHOSEN_ON_TRAIN } from "./lib.js";
import { pageLink } from "./page_view.js";
import { hbars, plot } from "./charts.js";

const COLUMNS = ["top1", "p@3", "recall@5", "mrr"];

export async function init({ meta, store }) {
  // The features' display names and λ's range come from /api/meta, never from here.
  const FEATURE_NAMES = meta.labels.features;
  const saved = store.settings("rerank");
  const firstSpec = settingOf(meta, "retriever");
  const state = { trained: Boolean(saved.trained), lam: saved.lam ?? null, question: saved.question || null, chosen: null, retriever: saved.retriever || firstSpec.default };
  // The first stage: any retriever, its choices and names from /api/meta.
  const firstSelect = $("#rerank-first");
  fillChoices(firstSelect, firstSpec);
  if (!firstSpec.choices.includes(state.retriever)) state.retriever = firstSpec.default;
  firstSelect.value = state.retriever;
  const lamInput = $("#rerank-lambda");
  applyBounds(lamInput, settingOf(meta, "mmr_lambda"), gridStep(fixedOf(meta, "mmr_lambdas")));
  const statusLine = $("#rerank-status");
  const showLam = bindOutput(lamInput, $("#rerank-lambda-out"), 2);
  const tableSeq = sequence();
  const demoSeq = sequence();
  const save = () => store.setSettings("rerank", { trained: state.trained, lam: state.lam, question: state.question, retriever: state.retriever });

  // The training rows follow the slider; the test rows stay at the λ chosen on train, the one
  // test figure the rule allows to report.
  const orderName = (order, lam, note) => (order === "reranked + MMR" ? `reranked + MMR (λ = ${num(lam, 2)}${note})` : order);
  // Asked apart from drawn, so training can ask for the table with its other requests.
  const askTable = () =>
    Promise.all([get("rerank/table", { lam: state.lam, retriever: state.retriever }), get("rerank/table", { retriever: state.retriever })]);
  async function loadTable(asked = askTable()) {
    const token = tableSeq.next();
    try {
      const [explored, chosen] = await asked;
      if (!tableSeq.is(token)) return;
      status(statusLine, "");
      const rows = [
        ...explored.rows.filter((r) => r.split === "train").map((r) => [r, orderName(r.order, explored.lambda, "")]),
        ...chosen.rows.filter((r) => r.split === "test").map((r) => [r, orderName(r.order, chosen.lambda, `, ${CHOSEN_ON_TRAIN}`)]),
      ];
      $("#rerank-table tbody").replaceChildren(
        ...rows.map(([r, name]) =>
          el(
            "tr",
            { "data-split": r.split, "data-order": r.order },
            el("th", { scope: "row", text: r.split }),
            el("td", { text: name }),
            ...COLUMNS.map((c) => el("td", { text: num(r[c]) })),
          ),
        ),
      );
      drawSweep();
    } catch (error) {
      if (tableSeq.is(token)) status(statusLine, error.message);
    }
  }

  // The sweep: MMR at every λ on both splits, the bar the rule must clear, and the chosen λ.
  let sweep = null;
  const metricSelect = $("#rerank-sweep-metric");
  function drawSweep() {
    if (!sweep) return;
    const metric = metricSelect.value;
    const name = metricSelect.selectedOptions[0].textContent;
    const line = (split) => sweep.points.filter((p) => p.split === split).map((p) => [p.lambda, p[metric]]);
    const train = line("train");
    const test = line("test");
    const chosen = sweep.chosen_lambda;
    const reference = sweep.reference.train[metric];
    const atChosen = test.find(([lam]) => Math.abs(lam - chosen) < 1e-9);
    const values = [...train, ...test].map(([, v]) => v).concat(reference);
    const top = Math.min(1, Math.ceil(Math.max(...values) * 10 + 1e-9) / 10);
    const bottom = Math.max(0, Math.floor(Math.min(...values) * 10 - 1e-9) / 10);
    const span = Math.max(top - bottom, 0.1);
    const tickCount = Math.round(span / 0.1);
    const ticks = Array.from({ length: tickCount + 1 }, (_, i) => Number((bottom + (i * span) / tickCount).toFixed(2)));
    const points = (pts) => JSON.stringify(pts);
    const testNote = (lam) => (Math.abs(lam - chosen) < 1e-9 ? CHOSEN_ON_TRAIN : NOT_CHOSEN_ON_TRAIN);
    const series = [
      { type: "line", className: "sweep-reference", points: [[0, reference], [1, reference]], data: { split: "train", order: "reranked", metric, value: reference } },
      { type: "line", className: "sweep-train", points: train, data: { split: "train", metric, points: points(train) } },
      { type: "line", className: "sweep-test", points: test, data: { split: "test", metric, points: points(test) } },
      { type: "dots", className: "sweep-train", points: train, titles: train.map(([lam, v]) => `λ = ${num(lam, 2)}: train ${name} ${num(v)}`), r: 3 },
      { type: "dots", className: "sweep-test", points: test, titles: test.map(([lam, v]) => `λ = ${num(lam, 2)}: ${name} ${num(v)} (${testNote(lam)})`), r: 3 },
    ];
    if (atChosen) {
      series.push({ type: "dots", className: "sweep-chosen", points: [atChosen], r: 6, titles: [`λ = ${num(chosen, 2)}, chosen on train: test ${name} ${num(atChosen[1])}`], data: { lambda: chosen, value: atChosen[1] } });
    }
    if (state.lam !== null) {
      const here = train.find(([lam]) => Math.abs(lam - state.lam) < 1e-9);
      if (here) series.push({ type: "dots", className: "current", points: [here], r: 6, titles: [`The slider, λ = ${num(state.lam, 2)}: train ${name} ${num(here[1])}`] });
    }
    plot($("#rerank-sweep"), {
      label: `${name} of MMR after the reranker at every λ from 0 to 1, on train and test; λ chosen on train ${num(chosen, 2)}`,
      height: 280,
      x: { min: 0, max: 1, label: "MMR λ", ticks: [0, 0.2, 0.4, 0.6, 0.8, 1], format: (v) => v.toFixed(1) },
      y: { min: bottom, max: bottom + span, label: name, ticks, format: (v) => v.toFixed(2) },
      series,
      vline: { x: chosen, label: `chosen on train ${num(chosen, 2)}` },
    });
    const swatch = (className, text) => el("span", { class: "sweep-key" }, el("span", { class: `swatch ${className}`, "aria-hidden": "true" }), ` ${text}`);
    fill(
      $("#rerank-sweep-legend"),
      swatch("sweep-train", "train"),
      swatch("sweep-test", NOT_CHOSEN_ON_TRAIN),
      swatch("sweep-reference", "train, reranked without MMR"),
      swatch("sweep-chosen", `test at λ = ${num(chosen, 2)}, ${CHOSEN_ON_TRAIN}`),
    );
    $("#rerank-sweep-caption").textContent =
      `${name} at every λ: solid, the training questions; dashed, the test questions, each point but the ringed one a test figure not chosen on train. ` +
      `Dashed vertical line: λ = ${num(chosen, 2)}, chosen on train${atChosen ? ` (test ${name} there: ${num(atChosen[1])})` : ""}; open circle: the slider.`;
  }
  let metricPicked = false;
  metricSelect.addEventListener("change", () => {
    metricPicked = true;
    drawSweep();
  });

  function topList(title, rows, superseded, question) {
    return el(
      "div",
      { class: "ranked" },
      el("h4", { text: title }),
      el(
        "ol",
        { class: "mini-list" },
        ...rows.map((r) =>
          el(
            "li",
            { class: `${r.relevant ? "hit" : ""} ${r.superseded ? "stale" : ""}` },
            pageLink(r.page, r.chunk, question),
            ` ${r.heading || r.title} `,
            r.relevant ? el("span", { class: "badge good", text: "answer" }) : null,
            r.superseded ? el("span", { class: "badge bad", text: "superseded" }) : null,
          ),
        ),
      ),
      el("p", { class: "small", text: superseded.length ? `Outdated copies in the top 3: ${superseded.length}.` : "No outdated copy in the top 3." }),
    );
  }

  const askDemo = () => get("rerank/version", { lam: state.lam, question_id: state.question, retriever: state.retriever });
  async function loadDemo(asked = askDemo()) {
    const token = demoSeq.next();
    try {
      const data = await asked;
      if (!demoSeq.is(token)) return;
      const select = $("#version-question");
      const host = $("#version-demo");
      if (!data.question) {
        select.disabled = true;
        fill(host, el("p", { text: "No question here has a superseded page among its reranked top 3." }));
        return;
      }
      select.disabled = false;
      select.replaceChildren(
        ...data.candidates.map((c) =>
          el("option", { value: c.id, selected: c.id === data.question.id, text: `${c.id} (${c.split}): ${c.question}` }),
        ),
      );
      const leaves =
        data.leaves_at === null
          ? "On this question no λ on the grid clears every outdated copy from the top 3."
          : `The outdated copies leave the top 3 once λ is at or below ${num(data.leaves_at, 2)}.`;
      fill(
        host,
        el("p", { class: "wide", text: `${data.question.id}: ${data.question.question}` }),
        topList("Reranked, top 3", data.reranked, data.superseded_reranked, data.question.id),
        topList(`After MMR at λ = ${num(data.lambda, 2)}, top 3`, data.mmr, data.superseded_mmr, data.question.id),
        el("p", { class: "wide verdict", id: "version-verdict", text: leaves }),
      );
    } catch (error) {
      if (demoSeq.is(token)) status(statusLine, error.message);
    }
  }

  async function train() {
    try {
      // Every request training needs goes at once, so none waits behind another exhibit's
      // answers for its turn: the model, its sweep, the table and the version demo. Each
      // route trains the same reranker (cached), and a λ not yet set is the one chosen on
      // train, so the table and demo asked before the model is known show what they did after.
      const modelAsked = post(`rerank/train?retriever=${encodeURIComponent(state.retriever)}`);
      const sweepAsked = get("rerank/sweep", { retriever: state.retriever });
      const tableAsked = askTable();
      const demoAsked = askDemo();
      // Awaited below only when training succeeds; its own error is said by the first await.
      for (const asked of [tableAsked, demoAsked]) asked.catch(() => {});
      const [model, swept] = await Promise.all([modelAsked, sweepAsked]);
      sweep = swept;
      state.trained = true;
      state.chosen = model.chosen_lambda;
      if (state.lam === null) state.lam = model.chosen_lambda;
      save();
      store.markExplored("rerank");
      // The rule, in the words and numbers of the sweep it was taken on.
      const rule = sweep.rule_metric;
      const atChosen = sweep.points.find((p) => p.split === "train" && Math.abs(p.lambda - sweep.chosen_lambda) < 1e-9);
      $("#rerank-summary").textContent =
        `Logistic regression on ${model.rows.toLocaleString("en-GB")} candidate rows from the training questions (${model.positives} hold the answer), ` +
        `the first stage's top ${model.depth} for each. MMR's λ is chosen on the training questions by one rule: the smallest λ on the grid whose training ${rule} ` +
        `is no lower than the reranker's without MMR (${num(sweep.reference.train[rule])}), so MMR takes the most variety that costs no training ${rule}. ` +
        `That is λ = ${num(model.chosen_lambda, 2)} (training ${rule} ${num(atChosen ? atChosen[rule] : null)}), marked on the slider and the chart; ` +
        `other measures may peak at another λ, as the chart shows.`;
      // How many training questions chose λ (and a score fusion first stage's weight), when
      // they were too few or the value lies on an edge of its grid, as exhibit VI shows it.
      showTuning($("#rerank-tuning"), tuningSentences(model.tuning));
      hbars($("#rerank-weights"), {
        label: `Learned weights: ${model.features.map((f) => `${FEATURE_NAMES[f] || f} ${num(model.weights[f], 2)}`).join(", ")}`,
        rows: model.features.map((f) => ({ label: FEATURE_NAMES[f] || f, value: model.weights[f], note: num(model.weights[f], 2) })),
      });
      lamInput.disabled = false;
      lamInput.value = state.lam;
      showLam();
      $("#rerank-lambda-marks").replaceChildren(el("option", { value: model.chosen_lambda, label: `trained ${num(model.chosen_lambda, 2)}` }));
      metricSelect.disabled = false;
      // The chart opens on the measure the rule reads, until the reader picks another.
      if (!metricPicked) metricSelect.value = rule;
      // Marked unavailable rather than disabled, so a keyboard user's focus stays on it.
      const button = $("#rerank-train");
      button.textContent = "Trained";
      button.setAttribute("aria-disabled", "true");
      await Promise.all([loadTable(tableAsked), loadDemo(demoAsked)]);
    } catch (error) {
      status(statusLine, error.message);
    }
  }

  const reloadSoon = debounce(() => {
    loadTable();
    loadDemo();
  }, 50);
  firstSelect.addEventListener("change", async () => {
    state.retriever = firstSelect.value;
    // Another first stage is another model, with its own λ chosen on train.
    state.lam = null;
    state.question = null;
    save();
    if (state.trained) {
      $("#rerank-train").removeAttribute("aria-disabled");
      await train();
    }
  });
  lamInput.addEventListener("input", () => {
    state.lam = Number(lamInput.value);
    save();
    reloadSoon();
  });
  $("#version-question").addEventListener("change", (event) => {
    state.question = event.target.value;
    save();
    loadDemo();
  });
  $("#rerank-train").addEventListener("click", (event) => {
    if (event.currentTarget.getAttribute("aria-disabled") !== "true") train();
  });
  if (state.trained) await train();
}
