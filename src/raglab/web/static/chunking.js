// Exhibit I: cut the text, count the chunks, check which answers survive, draw the cuts.

import { $, fill, $$, applySlider, bindOutput, debounce, el, fixedOf, get, keepingFocus, num, sequence, settingOf, share, status, testLabel, NOT_CHOSEN_ON_TRAIN } from "./lib.js";
import { plot } from "./charts.js";
import { pageLink } from "./page_view.js";

export async function init({ meta, store }) {
  // Each chunker's size slider (label and span) and its own size come from /api/meta, as every
  // default does.
  const SIZE = meta.labels.size_sliders;
  const saved = store.settings("chunking");
  const state = {
    method: saved.method || "fixed",
    sizes: { ...fixedOf(meta, "chunk_sizes"), ...(saved.sizes || {}) },
    overlap: saved.overlap ?? fixedOf(meta, "fixed_overlap"),
    cut: Boolean(saved.cut),
    selected: saved.selected || null,
    filter: saved.filter || "test",
    report: null,
    questions: [],
  };
  const sizeInput = $("#chunk-size");
  const overlapInput = $("#chunk-overlap");
  const statusLine = $("#chunk-status");
  const showSize = bindOutput(sizeInput, $("#chunk-size-out"));
  applySlider(overlapInput, settingOf(meta, "overlap"));
  const showOverlap = bindOutput(overlapInput, $("#chunk-overlap-out"));
  const reportSeq = sequence();
  const curveSeq = sequence();
  const answerSeq = sequence();

  function params() {
    const p = { method: state.method, size: state.sizes[state.method] };
    if (state.method === "fixed") p.overlap = state.overlap;
    return p;
  }

  function save() {
    store.setSettings("chunking", {
      method: state.method,
      sizes: state.sizes,
      overlap: state.overlap,
      cut: state.cut,
      selected: state.selected,
      filter: state.filter,
    });
  }

  function showControls() {
    const spec = SIZE[state.method];
    $(`#chunk-method-${state.method}`).checked = true;
    $("#chunk-size-label").textContent = spec.label;
    Object.assign(sizeInput, { min: spec.min, max: spec.max, step: spec.step });
    sizeInput.value = state.sizes[state.method];
    overlapInput.value = state.overlap;
    overlapInput.disabled = state.method !== "fixed";
    showSize();
    showOverlap();
  }

  function showReport(r) {
    const fixed = r.key.method === "fixed";
    $("#chunk-count").textContent = String(r.n_chunks);
    $("#chunk-expected").textContent = fixed
      ? `${r.expected_chunks}${r.expected_chunks === r.n_chunks ? " (agrees)" : " (differs!)"}`
      : "none for this rule";
    $("#chunk-mean").textContent = `${num(r.mean_words, 1)} words`;
    if (!r.total) {
      $("#chunk-intact").textContent = "needs answer passages";
      $("#chunk-predicted").textContent = "–";
      status(statusLine, "These questions name relevant pages, not answer passages, so there is no answer span that a cut could split.", "info");
      return;
    }
    // No cut here is chosen on the training split, so its test figure carries the page's label.
    fill($("#chunk-intact"), `${share(r.intact, r.total)} `, testLabel(false));
    $("#chunk-predicted").textContent = fixed ? num(r.predicted_intact) : "no formula: never cuts a sentence";
  }

  function drawCurve(curve) {
    if (!curve.total) {
      fill($("#chunk-chart"), el("p", { class: "small", text: "No answer passages to check, so there is no curve to draw." }));
      return;
    }
    const r = state.report;
    const fixed = state.method === "fixed";
    const series = [
      { type: "line", className: "predicted", points: curve.predicted_sizes.map((s, i) => [s, curve.predicted[i]]) },
      { type: "dots", className: "measured", points: curve.sizes.map((s, i) => [s, curve.measured[i]]) },
    ];
    if (fixed && r) series.push({ type: "dots", className: "current", r: 7, points: [[state.sizes.fixed, r.intact_rate]] });
    plot($("#chunk-chart"), {
      label: `Answer-intact rate of fixed chunks against chunk size at overlap ${curve.overlap}: measured dots and the formula's line`,
      x: { min: 0, max: 400, label: "chunk size s (words)", ticks: [0, 50, 100, 150, 200, 250, 300, 350, 400] },
      y: { min: 0, max: 1, label: "test answers whole", ticks: [0, 0.25, 0.5, 0.75, 1], format: (v) => v.toFixed(2) },
      series,
      vline: fixed ? { x: state.sizes.fixed, label: `s = ${state.sizes.fixed}` } : null,
      legend: [
        { name: "measured", className: "measured" },
        { name: "formula", className: "predicted" },
      ],
    });
    $("#chunk-chart-caption").textContent =
      `Share of the ${curve.total} test answers left whole by fixed chunks of each size, at overlap ${curve.overlap}. ` +
      "Dots are the chunker's real result; the line is the formula's prediction. " +
      `Every dot is a test figure at a size not chosen on the training split: “${NOT_CHOSEN_ON_TRAIN}”.` +
      (fixed ? " The large dot is your current setting." : " Switch to fixed windows to place your setting on it.");
  }

  function markFor(q) {
    if (q.labels !== "passage") return null;
    if (!state.report) return null;
    const a = state.report.answers.find((x) => x.id === q.id);
    if (!a) return null;
    return a.intact ? el("span", { class: "badge good", text: "whole" }) : el("span", { class: "badge bad", text: "cut" });
  }

  function renderTable() {
    const body = $("#questions-table tbody");
    const rows = state.questions.filter((q) => state.filter === "all" || q.split === state.filter);
    // An id chosen from the keyboard keeps the focus through the redraw.
    keepingFocus(body, "id", () => body.replaceChildren(
      ...rows.map((q) => {
        const answer =
          q.labels === "passage"
            ? [markFor(q), " ", q.answer]
            : q.labels === "pages"
              ? ["labelled by pages: ", ...Object.keys(q.pages || {}).flatMap((id, i) => [i ? ", " : "", pageLink(id)])]
              : el("em", { text: "none: the documents cannot answer this" });
        return el(
          "tr",
          { class: q.id === state.selected ? "selected" : "" },
          el(
            "td",
            {},
            el("button", {
              type: "button",
              class: "link",
              "aria-pressed": q.id === state.selected ? "true" : "false",
              "aria-label": `Show the answer to ${q.id} with the chunk edges`,
              text: q.id,
              "data-id": q.id,
              onclick: () => choose(q.id),
            }),
          ),
          el("td", { text: q.split }),
          el("td", { text: q.kind }),
          el("td", { text: q.question }),
          el("td", { class: "answer-cell" }, answer),
        );
      }),
    ));
    const whole = (answers) => `${answers.filter((a) => a.intact).length} of ${answers.length}`;
    const of = (split) => (state.report ? state.report.answers.filter((a) => a.split === split) : []);
    const counts = state.report
      ? ` With the current cut, ${whole(state.report.answers)} answer passages stay whole: ${whole(of("train"))} training and ${whole(of("test"))} test (${NOT_CHOSEN_ON_TRAIN}).`
      : "";
    const s = meta.questions.splits;
    $("#questions-summary").textContent =
      `${meta.questions.total} questions, ${s.train.total} for training and ${s.test.total} for testing.${counts}`;
  }

  function renderAnswer(data) {
    const host = $("#answer-view");
    const view = data.view;
    if (!view) {
      fill(
        host,
        el("h4", { text: `${data.id}: ${data.question}` }),
        el("p", { text: data.labels === "pages" ? "This question is labelled by pages, not by a passage, so there is no span to draw." : "The documents hold no answer to this question, so there is nothing to cut." }),
      );
      return;
    }
    const points = new Set([0, view.excerpt.length, view.answer_start, view.answer_end, ...view.boundaries.map((b) => b.offset)]);
    const sorted = [...points].sort((a, b) => a - b);
    const text = el("p", { class: "excerpt" });
    for (let i = 0; i < sorted.length; i++) {
      const at = sorted[i];
      for (const b of view.boundaries.filter((x) => x.offset === at)) {
        const n = b.chunk.split("#").pop();
        text.append(
          el(
            "span",
            { class: `edge ${b.kind}`, title: `${b.kind === "start" ? "start" : "end"} of chunk ${b.chunk}` },
            el("span", { "aria-hidden": "true", text: b.kind === "start" ? `[#${n}` : `#${n}]` }),
            el("span", { class: "visually-hidden", text: ` [${b.kind === "start" ? "start" : "end"} of chunk ${b.chunk}] ` }),
          ),
        );
      }
      if (i + 1 < sorted.length) {
        const piece = view.excerpt.slice(at, sorted[i + 1]);
        const inside = at >= view.answer_start && sorted[i + 1] <= view.answer_end;
        text.append(inside ? el("mark", { text: piece }) : document.createTextNode(piece));
      }
    }
    const verdict = view.intact
      ? `Held whole by ${view.containing.join(", ")}.`
      : `Cut: the answer is spread over ${view.touching.join(" and ")}, and no single chunk holds all of it.`;
    fill(
      host,
      el("h4", { text: `${data.id}: ${data.question}` }),
      el("p", { class: "small" }, `From “${view.title}” (`, pageLink(view.page, view.page, data.id), "). The answer is highlighted; tags mark where each chunk of the page begins ([#n) and ends (#n])."),
      text,
      el("p", { class: view.intact ? "verdict good" : "verdict bad", text: verdict }),
    );
  }

  async function loadAnswer() {
    if (!state.selected || !state.cut) return;
    const token = answerSeq.next();
    try {
      const data = await get(`chunking/answer/${encodeURIComponent(state.selected)}`, params());
      if (answerSeq.is(token)) renderAnswer(data);
    } catch (error) {
      if (answerSeq.is(token)) status(statusLine, error.message);
    }
  }

  async function refresh() {
    if (!state.cut) return;
    const token = reportSeq.next();
    const curveToken = curveSeq.next();
    // The report and the curve asked together; the curve is drawn after the report, as before.
    const reportAsked = get("chunking", params());
    const curveAsked = get("chunking/curve", { overlap: state.method === "fixed" ? state.overlap : 0 });
    curveAsked.catch(() => {});
    try {
      const report = await reportAsked;
      if (!reportSeq.is(token)) return;
      status(statusLine, "");
      state.report = report;
      showReport(report);
      renderTable();
    } catch (error) {
      if (reportSeq.is(token)) status(statusLine, error.message);
      return;
    }
    loadAnswer();
    try {
      const curve = await curveAsked;
      if (curveSeq.is(curveToken)) drawCurve(curve);
    } catch (error) {
      if (curveSeq.is(curveToken)) status(statusLine, error.message);
    }
  }
  const refreshSoon = debounce(refresh, 50);

  function choose(id) {
    state.selected = id;
    save();
    renderTable();
    if (!state.cut) {
      $("#answer-view").replaceChildren(el("p", { class: "small", text: "Cut the text first to see where the chunk edges fall." }));
      return;
    }
    loadAnswer();
  }

  for (const radio of $$("input[name=chunk-method]")) {
    radio.addEventListener("change", () => {
      state.method = radio.value;
      showControls();
      save();
      refreshSoon();
    });
  }
  sizeInput.addEventListener("input", () => {
    state.sizes[state.method] = Number(sizeInput.value);
    if (state.method === "fixed" && state.overlap >= state.sizes.fixed) {
      state.overlap = Math.max(0, state.sizes.fixed - Number(overlapInput.step));
      overlapInput.value = state.overlap;
      showOverlap();
    }
    save();
    refreshSoon();
  });
  overlapInput.addEventListener("input", () => {
    state.overlap = Number(overlapInput.value);
    save();
    refreshSoon();
  });
  $("#chunk-form").addEventListener("submit", (event) => event.preventDefault());
  $("#chunk-cut").addEventListener("click", () => {
    state.cut = true;
    save();
    store.markExplored("chunking");
    refresh();
  });
  const filter = $("#questions-filter");
  filter.value = state.filter;
  filter.addEventListener("change", () => {
    state.filter = filter.value;
    save();
    renderTable();
  });

  showControls();
  try {
    state.questions = (await get("questions")).questions;
  } catch (error) {
    status(statusLine, error.message);
  }
  renderTable();
  if (state.cut) await refresh();
}
