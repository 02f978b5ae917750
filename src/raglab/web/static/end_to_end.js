// Exhibit VI: run the whole pipeline, diagnose every miss, keep runs and compare two of them.

import { $, fill, bindOutput, el, interval, num, post, status } from "./lib.js";
import { hbars } from "./charts.js";

const RETRIEVERS = { rrf: "RRF", score: "score fusion", bm25: "BM25", lsa: "embedding" };
const CHUNKERS = { heading: "headings", sentence: "sentences", fixed: "fixed windows" };
const LOSS_NAMES = {
  cut: "cut by the chunker",
  "not retrieved": "not retrieved",
  "past budget": "ranked past the budget",
  reader: "missed by the reader",
  "false answer": "answered when it should not",
};

export async function init({ meta, store }) {
  const saved = store.settings("end-to-end");
  const form = {
    chunker: "heading",
    size: "",
    overlap: "",
    retriever: meta.defaults.default_retriever,
    weight: 0.5,
    weightTuned: true,
    rerank: true,
    mmr: true,
    lambda: 0.5,
    lambdaTuned: true,
    budget: meta.defaults.budget_words,
    threshold: 0.3,
    thresholdTuned: true,
    ...(saved.form || {}),
  };
  const statusLine = $("#run-status");
  const ids = {
    chunker: $("#run-chunker"),
    size: $("#run-size"),
    overlap: $("#run-overlap"),
    retriever: $("#run-retriever"),
    weight: $("#run-weight"),
    weightTuned: $("#run-weight-tuned"),
    rerank: $("#run-rerank"),
    mmr: $("#run-mmr"),
    lambda: $("#run-lambda"),
    lambdaTuned: $("#run-lambda-tuned"),
    budget: $("#run-budget"),
    threshold: $("#run-threshold"),
    thresholdTuned: $("#run-threshold-tuned"),
  };
  const outputs = [
    bindOutput(ids.weight, $("#run-weight-out"), 2),
    bindOutput(ids.lambda, $("#run-lambda-out"), 2),
    bindOutput(ids.budget, $("#run-budget-out")),
    bindOutput(ids.threshold, $("#run-threshold-out"), 2),
  ];
  let selected = [];

  function writeForm() {
    for (const [key, node] of Object.entries(ids)) {
      if (node.type === "checkbox") node.checked = Boolean(form[key]);
      else node.value = form[key];
    }
    for (const show of outputs) show();
    enable();
  }

  function readForm() {
    for (const [key, node] of Object.entries(ids)) form[key] = node.type === "checkbox" ? node.checked : node.value;
    store.setSettings("end-to-end", { form });
  }

  function enable() {
    ids.overlap.disabled = form.chunker !== "fixed";
    const score = form.retriever === "score";
    ids.weightTuned.disabled = !score;
    ids.weight.disabled = !score || form.weightTuned;
    ids.mmr.disabled = !form.rerank;
    const mmr = form.rerank && form.mmr;
    ids.lambdaTuned.disabled = !mmr;
    ids.lambda.disabled = !mmr || form.lambdaTuned;
    ids.threshold.disabled = form.thresholdTuned;
  }

  function request() {
    const whole = (v) => (v === "" || v === null || v === undefined ? null : Number(v));
    const mmr = Boolean(form.rerank && form.mmr);
    return {
      chunker: form.chunker,
      size: whole(form.size),
      overlap: form.chunker === "fixed" ? whole(form.overlap) : null,
      retriever: form.retriever,
      weight: form.retriever === "score" && !form.weightTuned ? Number(form.weight) : null,
      rerank: Boolean(form.rerank),
      mmr,
      mmr_lambda: mmr && !form.lambdaTuned ? Number(form.lambda) : null,
      budget: Number(form.budget),
      threshold: form.thresholdTuned ? null : Number(form.threshold),
    };
  }

  function describe(r) {
    const parts = [`${CHUNKERS[r.chunker]}${r.size ? ` ${r.size}` : ""}${r.chunker === "fixed" && r.overlap ? `/${r.overlap}` : ""}`];
    parts.push(r.retriever === "score" ? `score fusion ${r.weight === null ? "w tuned" : `w ${num(r.weight, 2)}`}` : RETRIEVERS[r.retriever]);
    parts.push(r.rerank ? "reranker" : "no reranker");
    if (r.rerank) parts.push(r.mmr ? `MMR ${r.mmr_lambda === null ? "λ tuned" : `λ ${num(r.mmr_lambda, 2)}`}` : "no MMR");
    parts.push(`budget ${r.budget}`);
    parts.push(r.threshold === null ? "threshold tuned" : `threshold ${num(r.threshold, 2)}`);
    return parts.join(", ");
  }

  function showResult(result, label) {
    $("#run-accuracy").textContent = `${result.correct} of ${result.n} = ${num(result.accuracy)}`;
    $("#run-interval").textContent = interval(result.interval);
    $("#run-bound").textContent = `${num(result.bound)} (answerable right: ${result.answerable_correct} of ${result.answerable})`;
    $("#run-used").textContent = `reader threshold ${num(result.threshold, 2)}, MMR λ ${result.mmr_lambda === null ? "off" : num(result.mmr_lambda, 2)}${label ? `; ${label}` : ""}`;
    const f = result.stages;
    const rows = f.stages.map((s) => ({
      label: s.stage,
      value: s.count,
      className: "funnel",
      note: s.lost ? `${s.count} (${s.lost} ${LOSS_NAMES[s.loss]})` : String(s.count),
    }));
    if (f.unanswerable) {
      rows.push({
        label: "no answer: declined",
        value: f.declined,
        className: "declined",
        note: `${f.declined} of ${f.unanswerable}${f.false_answers ? ` (${f.false_answers} answered anyway)` : ""}`,
      });
    }
    hbars($("#run-funnel"), {
      label: `Funnel: ${f.stages.map((s) => `${s.stage} ${s.count}`).join(", ")}`,
      rows,
      labelWidth: 150,
      noteWidth: 250,
      width: 720,
    });
    $("#run-funnel-caption").textContent =
      `How many of the ${result.answerable} answerable questions survive each stage, in pipeline order; the last bar shows the questions the documents cannot answer.`;
    $("#run-table tbody").replaceChildren(
      ...result.outcomes.map((o) =>
        el(
          "tr",
          { class: o.outcome === "correct" ? "right" : "wrong" },
          el("th", { scope: "row", text: o.id }),
          el("td", { text: o.question }),
          el("td", {}, el("span", { class: `badge ${o.outcome === "correct" ? "good" : "bad"}`, text: o.outcome === "correct" ? "right" : "wrong" })),
          el("td", { text: o.answerable ? (o.rank === null ? "–" : `${o.rank}${o.rank > o.k_budget ? ` (fits ${o.k_budget})` : ""}`) : "no answer" }),
          el("td", { text: o.outcome === "correct" ? "" : LOSS_NAMES[o.outcome] || o.outcome }),
          el("td", { class: "quote", text: o.quote ? `“${o.quote}”` : "not found" }),
        ),
      ),
    );
  }

  function renderRuns() {
    const runs = store.data.runs;
    selected = selected.filter((n) => runs.some((r) => r.number === n));
    $("#runs-table tbody").replaceChildren(
      ...runs.map((r) =>
        el(
          "tr",
          {},
          el(
            "td",
            {},
            el("input", {
              type: "checkbox",
              "aria-label": `Compare run ${r.number}`,
              checked: selected.includes(r.number),
              onchange: (event) => pick(r.number, event.target.checked),
            }),
          ),
          el("th", { scope: "row" }, el("button", { type: "button", class: "link", text: `Run ${r.number}`, "aria-label": `Show run ${r.number} again`, onclick: () => show(r) })),
          el("td", { text: describe(r.request) }),
          el("td", { text: `${r.correct} of ${r.n}` }),
          el("td", { text: interval(r.interval) }),
        ),
      ),
    );
    if (!runs.length) $("#compare-out").replaceChildren();
  }

  async function compare() {
    const host = $("#compare-out");
    if (selected.length !== 2) {
      fill(host, el("p", { class: "small", text: selected.length ? "Tick one more run to compare." : "" }));
      return;
    }
    const [a, b] = selected.map((n) => store.data.runs.find((r) => r.number === n));
    try {
      const c = await post("run/compare", { a: a.request, b: b.request });
      fill(
        host,
        el("h4", { text: `Run ${a.number} against run ${b.number}` }),
        el(
          "p",
          { id: "compare-summary" },
          `Both right on ${c.both_right}, only run ${a.number} right on ${c.only_a}, only run ${b.number} right on ${c.only_b}, both wrong on ${c.both_wrong}. `,
          `Exact McNemar test on the ${c.only_a + c.only_b} disagreements: p = ${num(c.p_value)}`,
          c.p_value < 0.05 ? ", a difference unlikely to be chance." : ", no evidence that either run is better.",
        ),
        c.changed.length
          ? el(
              "ul",
              { class: "changed" },
              ...c.changed.map((x) => el("li", {}, el("strong", { text: x.id }), ` ${x.question} `, el("span", { class: "small", text: `(run ${a.number}: ${x.a}; run ${b.number}: ${x.b})` }))),
            )
          : el("p", { class: "small", text: "No question changed its outcome." }),
      );
    } catch (error) {
      status(statusLine, error.message);
    }
  }

  function pick(number, on) {
    selected = selected.filter((n) => n !== number);
    if (on) selected.push(number);
    while (selected.length > 2) selected.shift();
    renderRuns();
    compare();
  }

  async function show(run) {
    try {
      const result = await post("run", run.request);
      showResult(result, `run ${run.number}`);
      status(statusLine, "");
    } catch (error) {
      status(statusLine, error.message);
    }
  }

  async function runNow(event) {
    event.preventDefault();
    readForm();
    const body = request();
    const button = $("#run-button");
    button.disabled = true;
    status(statusLine, "Running…", "info");
    try {
      const result = await post("run", body);
      const entry = store.addRun({ request: body, correct: result.correct, n: result.n, accuracy: result.accuracy, interval: result.interval });
      store.setSettings("end-to-end", { form, last: entry.number });
      store.markExplored("end-to-end");
      showResult(result, `run ${entry.number}`);
      renderRuns();
      status(statusLine, "");
    } catch (error) {
      status(statusLine, error.message);
    } finally {
      button.disabled = false;
    }
  }

  for (const node of Object.values(ids)) {
    node.addEventListener("input", () => {
      readForm();
      enable();
    });
    node.addEventListener("change", () => {
      readForm();
      enable();
    });
  }
  $("#run-form").addEventListener("submit", runNow);
  $("#runs-clear").addEventListener("click", () => {
    store.clearRuns();
    selected = [];
    renderRuns();
  });
  writeForm();
  renderRuns();
  const last = store.data.runs.find((r) => r.number === saved.last) || store.data.runs[store.data.runs.length - 1];
  if (last) await show(last);
}
