// Exhibit VI's views beside the run itself: the reader's scoring switch, accuracy and bound on
// one base, each miss's quote beside its answer passage, and the risk-coverage view. Every
// number comes from POST /api/run; the page only lays the counts out.

import { $, el, fill, num, testLabel, NOT_CHOSEN_ON_TRAIN } from "./lib.js";
import { plot } from "./charts.js";
import { pageLink, pageOfChunk } from "./page_view.js";

// The stage that lost an answer, as the page names it (the route's diagnosis names are the keys).
export const LOSS_NAMES = {
  cut: "cut by the chunker",
  "not retrieved": "not retrieved",
  "past budget": "ranked past the budget",
  reader: "missed by the reader",
  "false answer": "answered when it should not",
};
// How a wrong quote lies against the answer passage (raglab.reading.reader.QUOTE_RELATIONS).
const RELATION_NAMES = {
  overlaps: "overlaps the answer passage, but neither holds the other",
  "same page": "comes from the answer's page, outside the answer passage",
  "other page": "comes from another page",
  "no answer": "answers a question the documents cannot answer",
  "not found": "the reader declined: no sentence reached the threshold",
};

// The diagnosis as the table shows it: a miss whose reader quoted a wrong sentence anyway says
// so beside the stage that lost it ("not retrieved, false answer").
export function diagnosis(o) {
  if (o.outcome === "correct") return "";
  const name = LOSS_NAMES[o.outcome] || o.outcome;
  return o.answerable && o.false_answer ? `${name}, false answer` : name;
}

// The controls and panels this exhibit adds to its section of the page, once.
export function buildExtras(scoring) {
  const fieldset = $("#run-threshold").closest("fieldset");
  const select = el("select", { id: "run-reader-scoring" });
  fieldset.append(el("div", {}, el("label", { for: "run-reader-scoring", text: scoring.label }), select));
  const readout = $("#run-used").closest("dl");
  readout.append(el("div", { class: "wide" }, el("dt", { text: "On one base" }), el("dd", { id: "run-bases", text: "–" })));
  readout.after(
    el(
      "p",
      { id: "run-correct-rule", class: "small" },
      "What counts as a correct quote: the quoted sentence lies inside the answer passage, or contains the whole passage (an answer shorter than a sentence), on the same page. ",
      "A sentence that only overlaps the passage, or comes from elsewhere, is wrong, and so is “not found”. ",
      "For a question the documents cannot answer, only “not found” is right.",
    ),
  );
  const table = $("#run-table").closest(".scroll-table");
  table.after(
    el("h3", { id: "run-misses-title", text: "Each miss: the reader's quote beside the answer" }),
    el("div", { id: "run-misses", class: "misses", "aria-labelledby": "run-misses-title" }),
    el("h3", { id: "run-risk-title", text: "Abstention both ways" }),
    el("p", { class: "small", text: "The same run, its reader replayed at every threshold: a higher threshold declines more, which spares the questions the documents cannot answer a false answer and costs answerable questions their right answers." }),
    el("figure", { class: "chart" }, el("div", { id: "run-risk", class: "chart-host" }), el("figcaption", { id: "run-risk-caption" })),
    el("p", { id: "run-risk-summary", "aria-live": "polite" }),
    el(
      "div",
      { class: "scroll-table", tabindex: "0", role: "region", "aria-label": "The reader at every threshold" },
      el(
        "table",
        { class: "data numeric compact", id: "run-risk-table" },
        el(
          "thead",
          {},
          el(
            "tr",
            {},
            ...["Threshold", "Answerable, right", "Answerable, false answer", "Out of corpus, false answer", "All right"].map((t) => el("th", { scope: "col", text: t })),
          ),
        ),
        el("tbody"),
      ),
    ),
  );
  return select;
}

// Accuracy and bound on the same questions: the answerable ones, then all of them.
export function showBases(result) {
  const a = result.bases.answerable;
  const all = result.bases.all;
  $("#run-bases").textContent =
    `Answerable: ${a.correct} of ${a.n} right (${num(a.n ? a.correct / a.n : 0)}), bound ${a.bound} of ${a.n} (${num(a.n ? a.bound / a.n : 0)}); ` +
    `all questions: ${all.correct} of ${all.n} right (${num(all.n ? all.correct / all.n : 0)}), at most ${all.bound} of ${all.n} (${num(all.n ? all.bound / all.n : 0)}). ` +
    `Of the ${a.bound} answers that reached the context, the reader quoted ${a.correct}.`;
}

// A miss gives the score of the run's own reader scoring, by its label from /api/meta: the
// outcome's `coverage` holds the best sentence's score whatever the scoring (its coverage, its
// IDF-weighted coverage or its cosine).
export function showMisses(result, scoring) {
  const chosen = result.settings.reader_scoring || scoring.default;
  const measure = (scoring.choice_labels || {})[chosen] || chosen;
  const misses = result.outcomes.filter((o) => o.outcome !== "correct");
  const host = $("#run-misses");
  if (!misses.length) {
    fill(host, el("p", { class: "small", text: "No miss: every question was answered correctly." }));
    return;
  }
  fill(
    host,
    ...misses.map((o) =>
      el(
        "article",
        { class: "miss", "data-miss": o.id },
        el("h4", {}, el("span", { class: "chunk-id", text: o.id }), ` ${o.question} `, el("span", { class: "badge bad", text: diagnosis(o) })),
        el(
          "div",
          { class: "miss-pair" },
          el(
            "div",
            { class: "miss-quote" },
            o.quote
              ? el("p", { class: "small" }, `The reader's quote (${measure} ${num(o.coverage, 2)}, `, pageLink(pageOfChunk(o.quote_chunk), o.quote_chunk, o.id), `): it ${RELATION_NAMES[o.quote_relation] || o.quote_relation}.`)
              : el("p", { class: "small", text: `The reader's quote: none. Best ${measure} ${num(o.coverage, 2)}, below the threshold ${num(result.threshold, 2)}.` }),
            el("blockquote", { class: "quote", text: o.quote ? o.quote : "not found" }),
          ),
          el(
            "div",
            { class: "miss-answer" },
            el("p", { class: "small", text: o.answerable ? "The answer passage:" : "The answer passage: none; the documents cannot answer this question." }),
            el("blockquote", { class: "quote answer", text: o.answerable ? o.answer : "“not found” is the right answer" }),
          ),
        ),
      ),
    ),
  );
}

// The risk-coverage view: every number comes from the route (threshold_sweep); the page only
// divides a count by its base to draw it.
export function showRisk(rc) {
  const pts = rc.points;
  if (!pts.length) return;
  const A = pts[0].answerable;
  const U = pts[0].unanswerable;
  const share = (c, n) => (n ? c / n : 0);
  const series = [
    { type: "line", className: "rc-right", points: pts.map((p) => [p.threshold, share(p.answerable_correct, A)]) },
    { type: "line", className: "rc-wrong", points: pts.map((p) => [p.threshold, share(p.answerable_false, A)]) },
  ];
  const legend = [
    { name: `answerable, right (of ${A})`, className: "rc-right" },
    { name: `answerable, false (of ${A})`, className: "rc-wrong" },
  ];
  if (U) {
    series.push({ type: "line", className: "rc-false", points: pts.map((p) => [p.threshold, share(p.unanswerable_false, U)]) });
    legend.push({ name: `out of corpus, false (of ${U})`, className: "rc-false" });
  }
  const run = rc.at_run;
  series.push({ type: "dots", className: "current", points: [[run.threshold, share(run.answerable_correct, A)], ...(U ? [[run.threshold, share(run.unanswerable_false, U)]] : [])] });
  const chosen = rc.at_chosen;
  plot($("#run-risk"), {
    label: `The reader at every threshold from 0 to 1: answerable questions answered right and falsely, out-of-corpus questions answered falsely; chosen on train ${num(rc.chosen_on_train, 2)}`,
    height: 300,
    x: { min: 0, max: 1, label: "reader threshold", ticks: [0, 0.2, 0.4, 0.6, 0.8, 1], format: (v) => v.toFixed(1) },
    // The axis runs below 0 to leave the legend a band of its own under the lines.
    y: { min: -0.3, max: 1, label: "share of its questions", ticks: [0, 0.25, 0.5, 0.75, 1], format: (v) => `${Math.round(v * 100)}%` },
    series,
    vline: { x: rc.chosen_on_train, label: `train ${num(rc.chosen_on_train, 2)}` },
    legend,
  });
  $("#run-risk-caption").textContent =
    `Lines: shares of the ${A} answerable questions quoted right and quoted wrongly${U ? `, and of the ${U} out-of-corpus questions answered anyway` : ""}. Dashed line: the threshold chosen on train; circles: this run's threshold. ` +
    `Every point off the dashed line is a test figure at a threshold not chosen on train (“${NOT_CHOSEN_ON_TRAIN}”).`;
  const words = (p) =>
    `${p.answerable_correct} of ${A} answerable questions right, ${p.answerable_false} answered falsely${U ? `, and ${p.unanswerable_false} of ${U} out-of-corpus questions answered falsely` : ""}`;
  $("#run-risk-summary").textContent =
    `At the threshold chosen on train, ${num(rc.chosen_on_train, 2)}: ${words(chosen)}.` +
    (rc.given ? ` At this run's given threshold, ${num(rc.threshold, 2)} (${NOT_CHOSEN_ON_TRAIN}): ${words(run)}.` : "");
  // Every row is a test figure: the one at the threshold chosen on train says so, every other
  // row says it was not chosen on train.
  const isChosen = (p) => Math.abs(p.threshold - rc.chosen_on_train) < 1e-9;
  $("#run-risk-table tbody").replaceChildren(
    ...pts.map((p) =>
      el(
        "tr",
        { "data-threshold": num(p.threshold, 2), class: isChosen(p) ? "chosen" : "" },
        el("th", { scope: "row" }, num(p.threshold, 2), " ", testLabel(isChosen(p))),
        el("td", { text: `${p.answerable_correct} of ${A}` }),
        el("td", { text: `${p.answerable_false} of ${A}` }),
        el("td", { text: U ? `${p.unanswerable_false} of ${U}` : "–" }),
        el("td", { text: `${p.correct} of ${A + U}` }),
      ),
    ),
  );
}
