// The labelling page: search the pages, select an answer passage, save questions through the API.
// Kinds and splits come from /api/label/meta; every check is the server's (raglab validate's).

const $ = (id) => document.getElementById(id);
const state = { meta: null, page: null, selection: null, editing: null, located: {} };

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
  for (const q of listing.questions) {
    const row = body.insertRow();
    row.dataset.id = q.id;
    cell(row, q.id);
    cell(row, q.split);
    cell(row, q.kind);
    cell(row, q.question);
    cell(row, q.answer === null ? "(not answerable from these documents)" : `${q.answer} [${q.page}@${q.start}]`, "answer");
    const actions = cell(row, "");
    for (const [label, act] of [["Edit", () => startEdit(q)], ["Delete", () => remove(q)]]) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = label;
      button.setAttribute("aria-label", `${label} ${q.id}`);
      button.addEventListener("click", act);
      if (label === "Edit" && q.pages) {
        // Labelled by relevant pages (an imported collection): the page edits passages only.
        button.disabled = true;
        button.title = "labelled by pages: edit this one in the file";
      }
      actions.append(button, " ");
    }
  }
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
}

async function startEdit(q) {
  state.editing = q.id;
  $("form-title").textContent = `Edit ${q.id}`;
  $("q-save").textContent = "Save changes";
  $("q-cancel").hidden = false;
  $("q-question").value = q.question;
  $("q-kind").value = q.kind;
  $("q-split").value = q.split;
  $("q-none").checked = q.answer === null;
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
  if (!none) {
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
  showQuestions(await call("GET", "/api/label/questions"));
  await search("");
  document.body.dataset.ready = "true";
}

start().catch((error) => say(`The labelling page could not start: ${error.message}`, false));
