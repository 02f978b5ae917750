// The page's entry point: load the data summary, restore progress, start every exhibit.

import { $, $$, EXHIBITS, Store, get } from "./lib.js";
import * as chunking from "./chunking.js";
import * as bm25 from "./bm25.js";
import * as lsa from "./lsa.js";
import * as fusion from "./fusion.js";
import * as rerank from "./rerank.js";
import * as endToEnd from "./end_to_end.js";

const MODULES = [chunking, bm25, lsa, fusion, rerank, endToEnd];

function fillMeta(meta) {
  const d = meta.defaults;
  const test = meta.questions.splits.test;
  const train = meta.questions.splits.train;
  const values = { ...d, test_total: test.total, test_answerable: test.answerable };
  for (const node of $$("[data-meta]")) {
    const value = values[node.dataset.meta];
    if (value !== undefined) node.textContent = String(value);
  }
  const noun = meta.bundled ? "handbook" : "corpus";
  for (const node of $$("[data-corpus-noun]")) node.textContent = noun;
  const words = meta.corpus.words.toLocaleString("en-GB");
  const q = meta.questions;
  const stem = meta.stem ? " Retrieval tokens are stemmed." : "";
  const summary = meta.bundled
    ? `The data: the handbook of Ostler Instruments, an invented maker of surveying levels, rangefinders, telescope mounts and tripods. It has ${meta.corpus.pages} pages (${words} words) and ${q.total} labelled questions: ${train.total} for training and ${test.total} for testing, of which ${test.answerable} have an answer in the handbook. The company and its questions are fictional.${stem}`
    : `The data: your corpus “${meta.corpus.name}”, ${meta.corpus.pages} pages (${words} words), with ${q.total} labelled questions: ${train.total} for training and ${test.total} for testing, of which ${test.answerable} can be answered from the corpus.${stem}`;
  $("#data-summary").textContent = summary;
  if (!meta.bundled) {
    const credit = $(".colophon .fine");
    if (credit) credit.textContent = "RAG lab, running on your own documents. Every number on this page is computed, none is typed in.";
  }
}

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
  $("#closing").hidden = done < EXHIBITS.length;
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
  const store = new Store(meta.fingerprint);
  store.onChange(() => showProgress(store));
  showProgress(store);
  setUpReset(store);
  const context = { meta, store };
  await Promise.all(
    MODULES.map(async (module) => {
      try {
        await module.init(context);
      } catch (error) {
        console.error(error);
      }
    }),
  );
  document.body.dataset.ready = "true";
}

main();
