// The labelling page: search the pages, select an answer passage, save questions through the API.
// Kinds and splits come from /api/label/meta; every check is the server's (raglab validate's).

const $ = (id) => document.getElementById(id);
// pagesForm: how the question being edited is labelled by pages ("list" of ids, or "grades"
// an object of id to grade), null for a passage or no answer.
const state = { meta: null, page: null, selection: null, editing: null, pagesForm: null, located: {} };

// The server counts characters as code points; a textarea counts UTF-16 units.
const toPoints = (text, units) => Array.from(text.slice(0, units)).length;
const toUnits = (text, points) => Array.from(text).slice(0, points).join("").length;

async function call(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.detail || `the server answered ${response.status}`);
  return data;
}

function say(text, good) {
  const status = $("label-status");
  status.textContent = text;
  status.className = good ? "good" : "bad";
}

function cell(row, text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  row.append(td);
  return td;
}

function showCounts(counts) {
  const splits = state.meta.splits;
  const head = $("label-counts").tHead;
  head.replaceChildren();
  const top = head.insertRow();
  for (const name of ["Kind", ...splits, "All"]) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = name;
    top.append(th);
  }
  const kinds = [...new Set(splits.flatMap((s) => Object.keys(counts[s])))].sort();
  const body = $("label-counts").tBodies[0];
  body.replaceChildren();
  const totals = splits.map(() => 0);
  for (const kind of kinds) {
    const row = body.insertRow();
    row.dataset.kind = kind;
    cell(row, kind);
    let all = 0;
    splits.forEach((s, i) => {
      const n = counts[s][kind] || 0;
      totals[i] += n;
      all += n;
      cell(row, String(n)).dataset.split = s;
    });
    cell(row, String(all));
  }
  const row = body.insertRow();
  row.dataset.kind = "";
  cell(row, "All kinds");
  totals.forEach((n, i) => (cell(row, String(n)).dataset.split = splits[i]));
  cell(row, String(totals.reduce((a, b) => a + b, 0)));
}

function showQuestions(listing) {
  state.located = listing.located;
  showCounts(listing.counts);
  const body = $("question-list").tBodies[0];
  body.replaceChildren();
  // Each cell carries its column's name, which a phone shows before it (label.css).
  const names = Array.from($("question-list").tHead.rows[0].cells, (th) => th.textContent);
  for (const q of listing.questions) {
    const row = body.insertRow();
    row.dataset.id = q.id;
    cell(row, q.id);
    cell(row, q.split);
    cell(row, q.kind);
    cell(row, q.question);
    cell(row, answerText(q), "answer");
    const actions = cell(row, "");
    for (const [label, act] of [["Edit", () => startEdit(q)], ["Delete", () => remove(q)]]) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = label;
      button.setAttribute("aria-label", `${label} ${q.id}`);
      button.addEventListener("click", act);
      actions.append(button, " ");
    }
    Array.from(row.cells).forEach((td, i) => (td.dataset.label = names[i]));
  }
}

function answerText(q) {
  if (q.pages) {
    const ids = Array.isArray(q.pages) ? q.pages : Object.entries(q.pages).map(([id, g]) => `${id} (${g})`);
    return `relevant pages: ${ids.join(", ")}`;
  }
  if (q.answer === null) return "(not answerable from these documents)";
  return q.page === undefined ? q.answer : `${q.answer} [${q.page}@${q.start}]`;
}

// The relevant pages as the form shows them: one id a line, its grade after it when graded.
function pagesText(pages) {
  if (Array.isArray(pages)) return pages.join("\n");
  return Object.entries(pages).map(([id, grade]) => `${id} ${grade}`).join("\n");
}

// The form's relevant pages as the file holds them: a list of ids, kept a list unless a grade
// other than 1 is given; an object of id to grade for a graded question. Throws on a bad line.
function readPages(text) {
  const entries = [];
  text.split("\n").forEach((line, i) => {
    const parts = line.trim().split(/\s+/).filter(Boolean);
    if (!parts.length) return;
    if (parts.length > 2 || (parts.length === 2 && !/^[0-9]+$/.test(parts[1]))) {
      throw new Error(`Relevant pages, line ${i + 1}: write a page id, or a page id and a whole-number grade.`);
    }
    entries.push([parts[0], parts.length === 2 ? Number(parts[1]) : 1]);
  });
  if (state.pagesForm === "list" && entries.every(([, grade]) => grade === 1)) return entries.map(([id]) => id);
  return Object.fromEntries(entries);
}

function showPagesForm(pages) {
  state.pagesForm = pages ? (Array.isArray(pages) ? "list" : "grades") : null;
  $("q-pages-box").hidden = !pages;
  $("q-none-box").hidden = Boolean(pages);
  $("q-pages").value = pages ? pagesText(pages) : "";
}

function addOpenPage() {
  if (!state.page) {
    say("Open a page first (search, then choose it).", false);
    return;
  }
  const area = $("q-pages");
  const ids = area.value.split("\n").map((line) => line.trim().split(/\s+/)[0]);
  if (!ids.includes(state.page.id)) area.value = [area.value.trimEnd(), state.page.id].filter(Boolean).join("\n");
}

function showSelection() {
  const sel = state.selection;
  $("selection").textContent = sel ? sel.text : "";
  $("selection-where").textContent = sel ? `(${state.page.id}, characters ${sel.start} to ${sel.end})` : "none selected";
}

function readSelection() {
  const area = $("page-text");
  if (!state.page || area.selectionStart === area.selectionEnd) return;
  const text = state.page.text;
  state.selection = {
    start: toPoints(text, area.selectionStart),
    end: toPoints(text, area.selectionEnd),
    text: area.value.slice(area.selectionStart, area.selectionEnd),
  };
  showSelection();
}

async function openPage(id) {
  const page = await call("GET", `/api/label/page/${encodeURIComponent(id)}`);
  state.page = page;
  state.selection = null;
  $("page-title").textContent = page.title;
  $("page-text").value = page.text;
  $("page-text").scrollTop = 0;
  for (const b of document.querySelectorAll("#search-results button")) {
    b.setAttribute("aria-current", String(b.dataset.id === id));
  }
  showSelection();
  return page;
}

async function search(query) {
  const data = await call("GET", `/api/label/pages?q=${encodeURIComponent(query)}`);
  const list = $("search-results");
  list.replaceChildren();
  for (const hit of data.pages) {
    const item = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.id = hit.id;
    button.textContent = hit.title;
    button.title = hit.id;
    button.addEventListener("click", () => openPage(hit.id).then(() => $("page-text").focus()));
    item.append(button);
    list.append(item);
  }
  if (!data.pages.length) list.textContent = "No page matches.";
}

function resetForm() {
  state.editing = null;
  $("question-form").reset();
  $("q-split").value = "";
  $("form-title").textContent = "New question";
  $("q-save").textContent = "Save question";
  $("q-cancel").hidden = true;
  showPagesForm(null);
}

async function startEdit(q) {
  state.editing = q.id;
  $("form-title").textContent = `Edit ${q.id}`;
  $("q-save").textContent = "Save changes";
  $("q-cancel").hidden = false;
  $("q-question").value = q.question;
  // A kind of the file's own (an imported collection's "glasgow") is offered too, so an edit
  // keeps it.
  const kinds = $("q-kind");
  if (!Array.from(kinds.options, (o) => o.value).includes(q.kind)) kinds.append(new Option(q.kind, q.kind));
  kinds.value = q.kind;
  $("q-split").value = q.split;
  $("q-none").checked = q.answer === null;
  showPagesForm(q.pages || null);
  const where = state.located[q.id];
  if (q.answer !== null && where) {
    const page = await openPage(where.page);
    const start = toUnits(page.text, where.start);
    const end = toUnits(page.text, where.end);
    $("page-text").setSelectionRange(start, end);
    readSelection();
  }
  $("q-question").focus();
}

async function remove(q) {
  if (!window.confirm(`Delete ${q.id}: ${q.question}?`)) return;
  try {
    showQuestions(await call("DELETE", `/api/label/questions/${encodeURIComponent(q.id)}`));
    if (state.editing === q.id) resetForm();
    say(`Deleted ${q.id}.`, true);
  } catch (error) {
    say(error.message, false);
  }
}

async function save(event) {
  event.preventDefault();
  const none = $("q-none").checked;
  const body = { question: $("q-question").value.trim(), kind: $("q-kind").value };
  if ($("q-split").value) body.split = $("q-split").value;
  if (state.pagesForm) {
    try {
      body.pages = readPages($("q-pages").value);
    } catch (error) {
      say(error.message, false);
      return;
    }
  } else if (!none) {
    if (!state.selection) {
      say("Select the answer passage in the page text, or tick 'Not answerable from these documents'.", false);
      return;
    }
    Object.assign(body, { page: state.page.id, start: state.selection.start, end: state.selection.end });
  }
  try {
    const path = state.editing ? `/api/label/questions/${encodeURIComponent(state.editing)}` : "/api/label/questions";
    const data = await call(state.editing ? "PUT" : "POST", path, body);
    showQuestions(data);
    say(`Saved ${data.question.id} (${data.question.split}).`, true);
    resetForm();
    // The next question needs a passage of its own: a stale one must not be saved with it.
    state.selection = null;
    showSelection();
    $("q-question").focus();
  } catch (error) {
    say(error.message, false);
  }
}

function fillChoices(meta) {
  const kinds = $("q-kind");
  for (const k of meta.kinds) kinds.append(new Option(k, k));
  const splits = $("q-split");
  splits.append(new Option("assigned from the id", ""));
  for (const s of meta.splits) splits.append(new Option(s, s));
}

async function start() {
  state.meta = await call("GET", "/api/label/meta");
  $("label-file").textContent = state.meta.file;
  fillChoices(state.meta);
  const area = $("page-text");
  // Not the readonly attribute: Chromium then moves no caret, and the keyboard could not
  // select. Every edit is refused instead (typing, pasting, dropping, deleting).
  area.addEventListener("beforeinput", (e) => e.preventDefault());
  for (const type of ["select", "mouseup", "keyup"]) area.addEventListener(type, readSelection);
  $("q-none").addEventListener("change", () => {
    if ($("q-none").checked) $("q-kind").value = state.meta.no_answer_kind;
  });
  $("search-form").addEventListener("submit", (e) => {
    e.preventDefault();
    search($("search-q").value);
  });
  $("question-form").addEventListener("submit", save);
  $("q-question").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) save(e);
  });
  $("q-cancel").addEventListener("click", resetForm);
  $("q-add-page").addEventListener("click", addOpenPage);
  showQuestions(await call("GET", "/api/label/questions"));
  await search("");
  document.body.dataset.ready = "true";
}

start().catch((error) => say(`The labelling page could not start: ${error.message}`, false));
