// The page-text view: any page id an exhibit shows opens the page's text exactly as retrieval
// sees it (GET /api/page/{id}, what `raglab show PAGE` prints), its answer passages marked.

import { $, el, fill, get, sequence } from "./lib.js";

const seq = sequence();
// The element that opened the view: the keyboard goes back to it when the view closes.
let opener = null;

/** The page a chunk id names: a chunk's id is "<page id>#<position>" (raglab.chunking.chunk). */
export function pageOfChunk(chunkId) {
  const at = chunkId.lastIndexOf("#");
  return at < 0 ? chunkId : chunkId.slice(0, at);
}

/**
 * A button showing `text` (a chunk id, or the page id itself) that opens page `pageId`'s text;
 * with `question`, that question's answer passage is the one brought into view.
 */
export function pageLink(pageId, text = pageId, question = null) {
  return el("button", {
    type: "button",
    class: "chunk-id page-link",
    "aria-haspopup": "dialog",
    title: `Show the text of page ${pageId}`,
    "aria-label": `${text}: show the text of page ${pageId}`,
    dataset: { page: pageId },
    text,
    onclick: (event) => openPage(pageId, question, event.currentTarget),
  });
}

// The text with each answer passage in a <mark>: the text is cut at every start and end, and a
// piece inside one or more passages is marked with their question ids. Nothing is added to the
// text itself, so what is copied from it is what an answer passage is looked for in.
function markedText(text, answers, question) {
  const cuts = [...new Set([0, text.length, ...answers.flatMap((a) => [a.start, a.end])])].sort((a, b) => a - b);
  const pieces = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    const [from, to] = [cuts[i], cuts[i + 1]];
    const piece = text.slice(from, to);
    const over = answers.filter((a) => a.start <= from && to <= a.end).map((a) => a.question);
    if (!over.length) {
      pieces.push(document.createTextNode(piece));
      continue;
    }
    pieces.push(
      el("mark", {
        class: `answer${question !== null && over.includes(question) ? " current" : ""}`,
        title: `answer passage of ${over.join(", ")}`,
        dataset: { questions: over.join(" ") },
        text: piece,
      }),
    );
  }
  return pieces;
}

function facts(page) {
  const parts = [`id ${page.id}`, `file ${page.path}`, `${page.words.toLocaleString("en-GB")} words`, `${page.text.length.toLocaleString("en-GB")} characters`];
  if (page.status !== "current") parts.push(page.status);
  if (page.updated) parts.push(`updated ${page.updated}`);
  if (page.supersedes) parts.push(`supersedes ${page.supersedes}`);
  return parts.join(" · ");
}

function show(page, question) {
  $("#page-view-title").textContent = page.title;
  $("#page-view-facts").textContent = facts(page);
  const meta = Object.entries(page.meta);
  const metaNode = $("#page-view-meta");
  metaNode.hidden = !meta.length;
  fill(
    metaNode,
    meta.length ? el("p", { class: "small", text: "Front-matter keys RAG lab does not use, kept as metadata:" }) : null,
    meta.length ? el("dl", { class: "page-meta" }, ...meta.flatMap(([key, value]) => [el("dt", { text: key }), el("dd", { text: value })])) : null,
  );
  const answers = page.answers;
  const ids = [...new Set(answers.map((a) => a.question))];
  $("#page-view-answers").textContent = answers.length
    ? `Answer passages on this page, highlighted: ${ids.join(", ")}${question !== null && !ids.includes(question) ? ` (not ${question}'s: its answer lies elsewhere)` : ""}.`
    : "No labelled answer passage lies on this page.";
  const textNode = $("#page-view-text");
  fill(textNode, markedText(page.text, answers, question));
  textNode.scrollTop = 0;
  const first = $("mark.current", textNode) || $("mark.answer", textNode);
  if (first) first.scrollIntoView({ block: "center" });
}

/** Open the view on page `pageId` (its answer passage of `question` brought into view). */
export async function openPage(pageId, question = null, from = null) {
  const dialog = $("#page-view");
  opener = from || document.activeElement;
  const token = seq.next();
  $("#page-view-title").textContent = pageId;
  $("#page-view-facts").textContent = "Loading the page…";
  $("#page-view-answers").textContent = "";
  $("#page-view-meta").hidden = true;
  $("#page-view-text").replaceChildren();
  if (!dialog.open) dialog.showModal();
  try {
    const page = await get(`page/${encodeURIComponent(pageId)}`);
    if (seq.is(token)) show(page, question);
  } catch (error) {
    if (seq.is(token)) $("#page-view-facts").textContent = `The page could not be shown: ${error.message}`;
  }
}

/** Wire the view's close button, and return the keyboard to the opener when it closes (the
 *  browser closes a modal dialog on Escape). */
export function init() {
  const dialog = $("#page-view");
  $("#page-view-close").addEventListener("click", () => dialog.close());
  // A click on the backdrop (outside the dialog's box) closes it too.
  dialog.addEventListener("click", (event) => {
    if (event.target === dialog) dialog.close();
  });
  dialog.addEventListener("close", () => {
    seq.next();
    const back = opener;
    opener = null;
    if (back && back.isConnected) back.focus();
  });
}
