// Exhibit VI: run the whole pipeline, diagnose every miss, keep runs and compare two of them.

import { $, NOT_CHOSEN_ON_TRAIN, fill, applyBounds, applySlider, bindOutput, el, fillChoices, fixedOf, gridStep, interval, keepingFocus, num, post, settingOf, showTuning, status, tuningSentences } from "./lib.js";
import { hbars } from "./charts.js";
import { LOSS_NAMES, buildExtras, diagnosis, showBases, showMisses, showRisk } from "./end_to_end_views.js";

// The sliders whose default is "chosen on the training split": the form's key, the setting's
// name in /api/meta and the grid (in meta.fixed) the pipeline chooses it on.
const TUNED_SLIDERS = [
  { key: "weight", name: "weight", grid: "fusion_weights" },
  { key: "lambda", name: "mmr_lambda", grid: "mmr_lambdas" },
  { key: "threshold", name: "threshold", grid: "reader_thresholds" },
];
// What a control the run does not use shows instead of a value.
const NOT_USED = "not used";
// What a run saved before its counts by kind were kept shows in their place.
const MISSING = "—";

export async function init({ meta, store }) {
  // Every default, bound, choice and display name comes from /api/meta (the settings table).
  const spec = (name) => settingOf(meta, name);
  const labels = meta.labels;
  // A slider whose default is tuned starts (once unticked) in the middle of its range.
  const start = (s) => (s.default !== null ? s.default : (s.minimum + s.maximum) / 2);
  const blank = (v) => (v === null ? "" : v);
  const saved = store.settings("end-to-end");
  const form = {
    chunker: spec("chunker").default,
    size: blank(spec("size").default),
    overlap: blank(spec("overlap").default),
    retriever: spec("retriever").default,
    rerank: spec("rerank").default,
    mmr: spec("mmr").default,
    budget: spec("budget").default,
    readerScoring: spec("reader_scoring").default,
  };
  for (const t of TUNED_SLIDERS) {
    form[t.key] = start(spec(t.name));
    form[`${t.key}Tuned`] = spec(t.name).tuned;
  }
  Object.assign(form, saved.form || {});
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
    readerScoring: buildExtras(spec("reader_scoring")),
  };
  fillChoices(ids.readerScoring, spec("reader_scoring"));
  fillChoices(ids.chunker, spec("chunker"));
  fillChoices(ids.retriever, spec("retriever"));
  applyBounds(ids.size, spec("size"), 1);
  applyBounds(ids.overlap, spec("overlap"), 1);
  for (const t of TUNED_SLIDERS) applyBounds(ids[t.key], spec(t.name), gridStep(fixedOf(meta, t.grid)));
  // The budget's allowed range (up to millions of words) is too wide for a slider: the slider
  // spans the setting's own slider range, from /api/meta.
  applySlider(ids.budget, spec("budget"));
  const showBudget = bindOutput(ids.budget, $("#run-budget-out"));
  const tunedOut = Object.fromEntries(TUNED_SLIDERS.map((t) => [t.key, $(`#run-${t.key}-out`)]));
  // The settings the shown run resolved, with the request that asked for them.
  let resolved = null;
  let selected = [];

  // A tuned slider shows the value the run uses: the shown run's, while the form still asks
  // for that run; "tuned" before a run (or once the form asks for another).
  function showSliders() {
    const current = JSON.stringify(request());
    const used = resolved && resolved.request === current ? resolved.settings : null;
    for (const t of TUNED_SLIDERS) {
      const input = ids[t.key];
      const value = used ? used[t.name] : null;
      if (input.dataset.unused === "true") tunedOut[t.key].value = NOT_USED;
      else if (!form[`${t.key}Tuned`]) tunedOut[t.key].value = num(input.value, 2);
      else if (value === null || value === undefined) tunedOut[t.key].value = "tuned";
      else {
        input.value = value;
        tunedOut[t.key].value = num(value, 2);
      }
    }
  }

  function writeForm() {
    for (const [key, node] of Object.entries(ids)) {
      if (node.type === "checkbox") node.checked = Boolean(form[key]);
      else node.value = form[key];
    }
    showBudget();
    enable();
  }

  // A control the run would not use shows no value: what was typed into it before is kept in
  // the form (and comes back with the control), but never shown beside a run that ignored it.
  function readForm() {
    for (const [key, node] of Object.entries(ids)) {
      if (node.dataset.unused === "true") continue;
      form[key] = node.type === "checkbox" ? node.checked : node.value;
    }
    store.setSettings("end-to-end", { form });
  }

  function markUnused(key, unused) {
    const node = ids[key];
    node.dataset.unused = String(unused);
    if (node.type === "checkbox") node.checked = unused ? false : Boolean(form[key]);
    else if (node.type === "number") {
      node.value = unused ? "" : form[key];
      node.placeholder = unused ? NOT_USED : "";
    } else if (node.type === "range") node.closest(".slider").classList.toggle("unused", unused);
  }

  function enable() {
    const score = form.retriever === "score";
    const mmr = Boolean(form.rerank && form.mmr);
    const unused = { overlap: form.chunker !== "fixed", weight: !score, weightTuned: !score, mmr: !form.rerank, lambda: !mmr, lambdaTuned: !mmr };
    for (const [key, off] of Object.entries(unused)) markUnused(key, off);
    ids.overlap.disabled = unused.overlap;
    ids.weightTuned.disabled = !score;
    ids.weight.disabled = !score || form.weightTuned;
    ids.mmr.disabled = !form.rerank;
    ids.lambdaTuned.disabled = !mmr;
    ids.lambda.disabled = !mmr || form.lambdaTuned;
    ids.threshold.disabled = form.thresholdTuned;
    showSliders();
  }

  // The form as a request asked for it: "Show run N again" puts run N's settings back, so the
  // form beside its results is the one that made them. A setting the run did not use keeps
  // what the form held.
  function formOf(r) {
    const given = (v) => v !== null && v !== undefined;
    const next = { ...form, chunker: r.chunker, size: given(r.size) ? r.size : "", retriever: r.retriever, rerank: Boolean(r.rerank), budget: r.budget };
    if (r.chunker === "fixed") next.overlap = given(r.overlap) ? r.overlap : "";
    if (r.retriever === "score") {
      next.weightTuned = !given(r.weight);
      if (given(r.weight)) next.weight = r.weight;
    }
    if (r.rerank) next.mmr = Boolean(r.mmr);
    if (r.rerank && r.mmr) {
      next.lambdaTuned = !given(r.mmr_lambda);
      if (given(r.mmr_lambda)) next.lambda = r.mmr_lambda;
    }
    next.thresholdTuned = !given(r.threshold);
    if (given(r.threshold)) next.threshold = r.threshold;
    // Runs saved before the reader's scoring was a setting used its default.
    next.readerScoring = r.reader_scoring || spec("reader_scoring").default;
    return next;
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
      reader_scoring: form.readerScoring,
    };
  }

  function describe(r) {
    const parts = [`${labels.chunkers[r.chunker] || r.chunker}${r.size ? ` ${r.size}` : ""}${r.chunker === "fixed" && r.overlap ? `/${r.overlap}` : ""}`];
    const retriever = labels.retrievers[r.retriever] || r.retriever;
    parts.push(r.retriever === "score" ? `${retriever} ${r.weight === null ? "w tuned" : `w ${num(r.weight, 2)}`}` : retriever);
    parts.push(r.rerank ? "reranker" : "no reranker");
    if (r.rerank) parts.push(r.mmr ? `MMR ${r.mmr_lambda === null ? "λ tuned" : `λ ${num(r.mmr_lambda, 2)}`}` : "no MMR");
    parts.push(`budget ${r.budget}`);
    parts.push(r.threshold === null ? "threshold tuned" : `threshold ${num(r.threshold, 2)}`);
    return parts.join(", ");
  }

  // The reader's scoring by its label; runs saved before it was a setting used its default.
  function readerOf(r) {
    const scoring = spec("reader_scoring");
    const chosen = r.reader_scoring || scoring.default;
    return (scoring.choice_labels || {})[chosen] || chosen;
  }

  // "Used": every setting whose default is tuned that the run used, and whether it was chosen
  // on the training split (chosen_on_train) or given.
  function usedLine(result) {
    const parts = [];
    for (const s of meta.settings.filter((x) => x.tuned)) {
      const value = result.settings[s.name];
      if (s.name === "mmr_lambda" && !result.settings.mmr) parts.push(`${spec("mmr").label} off`);
      if (value === null || value === undefined) continue;
      parts.push(`${s.label} ${num(value, 2)} (${result.chosen_on_train.includes(s.name) ? "tuned on train" : "given"})`);
    }
    return parts.join(", ");
  }

  // Beside "Used": the API's sentence for each value chosen on too few training questions or on
  // an edge of its grid (result.tuning), so a collapsed choice is never shown without a word.
  function showRunTuning(result) {
    let dd = $("#run-tuning");
    if (!dd) {
      dd = el("dd", { id: "run-tuning", class: "small tuning" });
      $("#run-used").after(dd);
    }
    showTuning(dd, tuningSentences(result.tuning));
  }

  function showResult(result, label, asked) {
    resolved = { request: JSON.stringify(asked), settings: result.settings };
    showSliders();
    $("#run-accuracy").textContent = `${result.correct} of ${result.n} = ${num(result.accuracy)}`;
    // The run measures the test split: with a tuned setting given rather than chosen on train,
    // its figures are test figures at a setting not chosen on train, and say so.
    const given = meta.settings.filter((s) => s.tuned && result.settings[s.name] !== null && result.settings[s.name] !== undefined && !result.chosen_on_train.includes(s.name));
    $("#run-accuracy-note").textContent = given.length ? `${NOT_CHOSEN_ON_TRAIN} (${given.map((s) => `${s.label} given`).join(", ")})` : "";
    $("#run-interval").textContent = interval(result.interval);
    $("#run-bound").textContent = `${num(result.bound)} (answerable right: ${result.answerable_correct} of ${result.answerable})`;
    $("#run-used").textContent = `${usedLine(result)}${label ? `; ${label}` : ""}`;
    showRunTuning(result);
    const f = result.stages;
    const rows = f.stages.map((s) => ({
      label: s.stage,
      value: s.count,
      className: "funnel",
      note: s.lost ? `${s.count} (${s.lost} ${LOSS_NAMES[s.loss]}${s.answered ? `, ${s.answered} answered falsely` : ""})` : String(s.count),
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
      `How many of the ${result.answerable} answerable questions survive each stage, in pipeline order; the last bar shows the questions the documents cannot answer. Right by kind, then where the rest were lost: ${f.kinds.map((k) => [`${k.kind} ${k.correct} of ${k.n}`, ...Object.entries(k.lost).filter(([, c]) => c).map(([d, c]) => `${LOSS_NAMES[d]} ${c}`)].join(", ")).join("; ")}.`;
    $("#run-table tbody").replaceChildren(
      ...result.outcomes.map((o) =>
        el(
          "tr",
          { class: o.outcome === "correct" ? "right" : "wrong" },
          el("th", { scope: "row", text: o.id }),
          el("td", { text: o.question }),
          el("td", {}, el("span", { class: `badge ${o.outcome === "correct" ? "good" : "bad"}`, text: o.outcome === "correct" ? "right" : "wrong" })),
          el("td", { text: o.answerable ? (o.rank === null ? "–" : `${o.rank}${o.rank > o.k_budget ? ` (fits ${o.k_budget})` : ""}`) : "no answer" }),
          el("td", { text: diagnosis(o) }),
          el("td", { class: "quote", text: o.quote ? `“${o.quote}”` : "not found" }),
        ),
      ),
    );
    showBases(result);
    showMisses(result, spec("reader_scoring"));
    showRisk(result.risk_coverage);
  }

  // The runs table's head: a column per question kind the runs met, in the order the API
  // gives them (the questions file's kinds), under "Right by kind"; the numbers to compare
  // come first, each run's settings last. With no run that kept its
  // counts by kind (runs saved by an older page), one column stands for them all.
  function runsHead(kinds) {
    const col = (text, attrs = {}) => el("th", { scope: "col", rowspan: "2", text, ...attrs });
    $("#runs-table thead").replaceChildren(
      el(
        "tr",
        {},
        col("Compare"),
        col("Run"),
        col(spec("reader_scoring").label),
        col("Correct"),
        el("th", { scope: "colgroup", colspan: String(Math.max(kinds.length, 1)), class: "kinds", text: "Right by kind" }),
        col("95% interval"),
        col("Settings"),
      ),
      el("tr", {}, ...(kinds.length ? kinds.map((k) => el("th", { scope: "col", class: "kind", "data-kind": k, text: k })) : [el("th", { scope: "col", class: "kind", "data-kind": "", text: MISSING })])),
    );
  }

  // A run's right answers per kind, "—" where it kept none (saved before they were kept).
  function kindCells(run, kinds) {
    const counts = Object.fromEntries((run.kinds || []).map((k) => [k.kind, k]));
    return (kinds.length ? kinds : [""]).map((kind) => {
      const k = counts[kind];
      return el("td", { class: "num", "data-kind": kind, text: k ? `${k.correct} of ${k.n}` : MISSING });
    });
  }

  function renderRuns() {
    const runs = store.data.runs;
    selected = selected.filter((n) => runs.some((r) => r.number === n));
    const kinds = [...new Set(runs.flatMap((r) => (r.kinds || []).map((k) => k.kind)))];
    runsHead(kinds);
    const body = $("#runs-table tbody");
    // A run ticked or shown from the keyboard keeps the focus through the redraw.
    const draw = () => body.replaceChildren(
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
              "data-compare": r.number,
              onchange: (event) => pick(r.number, event.target.checked),
            }),
          ),
          el("th", { scope: "row" }, el("button", { type: "button", class: "link", text: `Run ${r.number}`, "aria-label": `Show run ${r.number} again`, "data-show": r.number, onclick: () => show(r) })),
          el("td", { "data-reader": "", text: readerOf(r.request) }),
          el("td", { text: `${r.correct} of ${r.n}` }),
          ...kindCells(r, kinds),
          el("td", { text: interval(r.interval) }),
          el("td", { class: "settings", text: describe(r.request) }),
        ),
      ),
    );
    keepingFocus(body, "compare", () => keepingFocus(body, "show", draw));
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
      Object.assign(form, formOf(run.request));
      writeForm();
      store.setSettings("end-to-end", { form, last: run.number });
      showResult(result, `run ${run.number}`, run.request);
      status(statusLine, "");
    } catch (error) {
      status(statusLine, error.message);
    }
  }

  let running = false;
  async function runNow(event) {
    event.preventDefault();
    if (running) return;
    readForm();
    const body = request();
    const button = $("#run-button");
    // Marked busy rather than disabled: a disabled button would drop the keyboard's focus to
    // the page's body.
    running = true;
    button.setAttribute("aria-disabled", "true");
    status(statusLine, "Running…", "info");
    try {
      const result = await post("run", body);
      // Right answers per question kind, as the funnel counts them, to compare runs by kind.
      const kinds = result.stages.kinds.map((k) => ({ kind: k.kind, n: k.n, correct: k.correct }));
      const entry = store.addRun({ request: body, correct: result.correct, n: result.n, accuracy: result.accuracy, interval: result.interval, kinds });
      store.setSettings("end-to-end", { form, last: entry.number });
      store.markExplored("end-to-end");
      showResult(result, `run ${entry.number}`, body);
      renderRuns();
      status(statusLine, "");
    } catch (error) {
      status(statusLine, error.message);
    } finally {
      running = false;
      button.removeAttribute("aria-disabled");
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
