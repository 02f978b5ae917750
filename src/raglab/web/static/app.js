// The page's entry point: load the data summary, restore progress, start every exhibit.

import { $, $$, EXHIBITS, Store, el, fixedOf, get, useTestLabels } from "./lib.js";
import { ENGINE, warmUp } from "./answers.js";
import { watchHosts } from "./charts.js";
import * as chunking from "./chunking.js";
import * as bm25 from "./bm25.js";
import * as lsa from "./lsa.js";
import * as neural from "./neural.js";
import * as fusion from "./fusion.js";
import * as rerank from "./rerank.js";
import * as endToEnd from "./end_to_end.js";
import * as pageView from "./page_view.js";

const MODULES = [chunking, bm25, lsa, neural, fusion, rerank, endToEnd];

// A written site (raglab site) computes its numbers in this tab: say so, and what it lacks.
function showSite(meta) {
  if (ENGINE !== "tab" || !meta.site) return;
  const lacks = meta.site.lacks.length ? ` This site does not hold ${meta.site.lacks.join(", ")}.` : "";
  $("#data-summary").after(
    el("p", { id: "site-note", class: "site-note", text: `Every number below is computed in this tab, with no server.${lacks}` }),
  );
}

function fillMeta(meta) {
  useTestLabels(meta);
  const test = meta.questions.splits.test;
  const train = meta.questions.splits.train;
  // The numbers the text states: every setting's default and every fixed value, by name, from
  // the settings table /api/meta sends (the HTML holds none of them), and RRF's worked example.
  const values = { test_total: test.total, test_answerable: test.answerable };
  for (const s of meta.settings) if (s.default !== null) values[s.name] = s.default;
  for (const f of meta.fixed) values[f.name] = f.value;
  const rrfK = fixedOf(meta, "rrf_k");
  Object.assign(values, {
    rrf_k_plus_1: rrfK + 1,
    rrf_k_plus_2: rrfK + 2,
    rrf_both_second: (2 / (rrfK + 2)).toFixed(3),
    rrf_one_first: (1 / (rrfK + 1)).toFixed(3),
  });
  for (const node of $$("[data-meta]")) {
    const value = values[node.dataset.meta];
    if (value !== undefined) node.textContent = String(value);
  }
  // The exhibits' names, in the navigation and the closing note, are the API's.
  const names = meta.labels.exhibits;
  for (const link of $$("[data-progress]")) $(".label", link).textContent = names[link.dataset.progress];
  $("#closing-stages").replaceChildren(
    ...EXHIBITS.map((name) => {
      const numeral = $(`[data-progress="${name}"] .numeral`).textContent;
      return el("li", {}, el("a", { href: `#${name}` }, el("span", { class: "numeral", text: numeral }), ` ${names[name]}`));
    }),
  );
  const noun = meta.bundled ? "handbook" : "corpus";
  for (const node of $$("[data-corpus-noun]")) node.textContent = noun;
  const words = meta.corpus.words.toLocaleString("en-GB");
  const q = meta.questions;
  const stem = meta.stem ? " Retrieval tokens are stemmed." : "";
  const summary = meta.bundled
    ? `The data: the handbook of Ostler Instruments, an invented maker of surveying levels, rangefinders, telescope mounts and tripods. It has ${meta.corpus.pages} pages (${words} words) and ${q.total} labelled questions: ${train.total} for training and ${test.total} for testing, of which ${test.answerable} have an answer in the handbook. The company and its questions are fictional.${stem}`
    : `The data: your corpus “${meta.corpus.name}”, ${meta.corpus.pages} pages (${words} words), with ${q.total} labelled questions: ${train.total} for training and ${test.total} for testing, of which ${test.answerable} can be answered from the corpus.${stem}`;
  $("#data-summary").textContent = summary;
  showSite(meta);
  showWarnings(meta);
  if (!meta.bundled) {
    const credit = $(".colophon .fine");
    if (credit) credit.textContent = "RAG lab, running on your own documents. Every number on this page is computed, none is typed in.";
  }
}

// What reading the data found (a page read in a detected encoding, a file skipped, an empty page,
// front-matter keys kept as metadata, a question of an unknown kind): one line under the data's
// summary, opened to list each warning in the words `raglab validate` prints. None: no line.
function showWarnings(meta) {
  const warnings = [...meta.corpus.warnings, ...meta.questions.warnings];
  const box = $("#data-warnings");
  box.hidden = !warnings.length;
  if (!warnings.length) return;
  $("#data-warnings-count").textContent = `${warnings.length} warning${warnings.length === 1 ? "" : "s"} from reading the ${meta.questions.warnings.length ? "data" : meta.bundled ? "handbook" : "corpus"}`;
  $("#data-warnings-list").replaceChildren(...warnings.map((w) => el("li", { text: w })));
}

// Whether every exhibit was explored when progress was last shown (null before the first time).
let complete = null;

function showProgress(store) {
  let done = 0;
  for (const name of EXHIBITS) {
    const link = $(`[data-progress="${name}"]`);
    const explored = store.explored(name);
    if (explored) done += 1;
    if (!link) continue;
    link.classList.toggle("done", explored);
    $(".state", link).textContent = explored ? "explored" : "not explored yet";
    $(".mark", link).textContent = explored ? "✓" : "";
  }
  $("#progress-count").textContent = `${done} of ${EXHIBITS.length} explored`;
  const closing = $("#closing");
  const now = done === EXHIBITS.length;
  closing.hidden = !now;
  // Finishing the last exhibit, wherever it is on the page, brings the closing note to the
  // reader as a card over the page; closed, it stays at the foot of the page. A visit that
  // opens with everything explored finds it there.
  if (now && complete === false) closing.classList.add("toast");
  if (!now) closing.classList.remove("toast");
  complete = now;
}

function setUpClosing() {
  const closing = $("#closing");
  const dock = () => closing.classList.remove("toast");
  $("#closing-dock").addEventListener("click", dock);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && closing.classList.contains("toast")) dock();
  });
}

function setUpReset(store) {
  const button = $("#reset");
  let armed = null;
  button.addEventListener("click", () => {
    if (!armed) {
      button.textContent = "Press again to forget everything";
      armed = setTimeout(() => {
        armed = null;
        button.textContent = "Reset progress";
      }, 4000);
      return;
    }
    clearTimeout(armed);
    store.reset();
    window.location.reload();
  });
}

async function main() {
  let meta;
  try {
    meta = await get("meta");
  } catch (error) {
    $("#data-summary").textContent = `The lab could not load its data: ${error.message}`;
    return;
  }
  fillMeta(meta);
  pageView.init();
  const store = new Store(meta.fingerprint);
  store.onChange(() => showProgress(store));
  setUpClosing();
  showProgress(store);
  setUpReset(store);
  const context = { meta, store };
  const started = MODULES.map(async (module) => {
    try {
      await module.init(context);
    } catch (error) {
      console.error(error);
    }
  });
  // Every chart host is in the page once each exhibit's first synchronous part has run: their
  // widths are measured from the next layout on, before any answer is drawn (charts.js).
  watchHosts();
  await Promise.all(started);
  document.body.dataset.ready = "true";
  warmUp();
}

main();
