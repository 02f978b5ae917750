// Small helpers shared by every exhibit: requests, DOM building, number formats, saved progress.

import { ask } from "./answers.js";
import { untilEncoded } from "./encoding.js";

/** An error the API answered with (status and its message). */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function answer(status, body) {
  if (status < 200 || status >= 300) {
    const detail = body && body.detail ? body.detail : `the server answered ${status}`;
    throw new ApiError(status, typeof detail === "string" ? detail : JSON.stringify(detail));
  }
  // An answer whose neural rows wait for the encoding: show its progress until they are ready
  // (encoding.js then sends "raglab:neural-ready", and the exhibit asks again).
  if (body && body.encoding && body.encoding.ready === false) untilEncoded(body.encoding);
  return body;
}

// Asked of the engine interface (answers.js): the server's API, or the in-tab engine.
// 202: the answer needs the neural vectors, still being encoded. Wait for them (the shared
// indicator shows "encoding, n of N"), then ask again.
async function request(url, init) {
  for (;;) {
    const { status, body } = await ask(url, init);
    if (status !== 202) return answer(status, body);
    await untilEncoded(body && body.encoding);
  }
}

/** GET /api/<path> with query parameters (null and undefined are left out). */
export async function get(path, params = {}) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") query.set(key, String(value));
  }
  const text = query.toString();
  return request(`/api/${path}${text ? `?${text}` : ""}`, { headers: { Accept: "application/json" } });
}

/** POST /api/<path> with a JSON body. */
export async function post(path, body = {}) {
  return request(`/api/${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify(body),
  });
}

/** Call fn at most once per `wait` ms of quiet. */
export function debounce(fn, wait = 50) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), wait);
  };
}

/** Only the newest request may draw: `const t = seq.next(); ...; if (!seq.is(t)) return;` */
export function sequence() {
  let current = 0;
  return { next: () => ++current, is: (token) => token === current };
}

/** Build an element: el("p", {class: "x", text: "hi"}, child, ...). Text is never parsed as HTML. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = String(value);
    else if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/**
 * Redraw `host` with `draw()` and keep the keyboard where it was: when focus was on an element
 * inside `host` carrying `data-<key>`, the redrawn element with the same value takes it back.
 * (Replacing a grid or a table's rows would otherwise drop focus to the page's body.)
 */
export function keepingFocus(host, key, draw) {
  const active = document.activeElement;
  const value = active && active !== host && host.contains(active) ? active.dataset[key] : undefined;
  draw();
  if (value === undefined) return;
  const again = [...host.querySelectorAll(`[data-${key}]`)].find((node) => node.dataset[key] === value);
  if (again && again !== document.activeElement) again.focus({ preventScroll: true });
}

/** Replace a node's children, skipping null, undefined and false. */
export function fill(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

export const $ = (selector, root = document) => root.querySelector(selector);
export const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];

/** A number with a fixed count of decimals ("–" for null). */
export function num(value, digits = 3) {
  return value === null || value === undefined || Number.isNaN(value) ? "–" : Number(value).toFixed(digits);
}

/** "21 of 26 (0.808)" */
export function share(count, total, digits = 3) {
  return `${count} of ${total} (${num(total ? count / total : 0, digits)})`;
}

export function interval(pair, digits = 3) {
  return pair ? `${num(pair[0], digits)} to ${num(pair[1], digits)}` : "–";
}

// The page's one rule for test figures (index.html, #test-rule): a test figure is shown for the
// setting chosen on the training split, and any other carries NOT_CHOSEN_ON_TRAIN.
// Filled from /api/meta's labels.test_figures before any exhibit starts (useTestLabels): the
// report and the command line print the same two words from raglab.labels.
export let CHOSEN_ON_TRAIN = "";
export let NOT_CHOSEN_ON_TRAIN = "";

/** Take a test figure's two labels from /api/meta, and write them into the page's prose
 * (every `[data-test-label]` node: "chosen" or "not_chosen"). */
export function useTestLabels(meta) {
  const labels = meta.labels.test_figures;
  CHOSEN_ON_TRAIN = labels.chosen;
  NOT_CHOSEN_ON_TRAIN = labels.not_chosen;
  for (const node of document.querySelectorAll("[data-test-label]")) node.textContent = labels[node.dataset.testLabel];
}

/** The badge a test figure carries: CHOSEN_ON_TRAIN or NOT_CHOSEN_ON_TRAIN (from /api/meta). */
export function testLabel(chosen) {
  return el("span", { class: `badge ${chosen ? "good" : "bad"} test-label`, text: chosen ? CHOSEN_ON_TRAIN : NOT_CHOSEN_ON_TRAIN });
}

/** The sentence of each value a response's `tuning` notes as chosen on too few training
 *  questions or on an edge of its grid (raglab.run_settings.tuning_note), each after `prefix`. */
export function tuningSentences(notes, prefix = "") {
  return (notes || []).map((t) => t.sentence).filter(Boolean).map((s) => `${prefix}${s}`);
}

/** Show those sentences in `node`, hidden when there are none: exhibits IV, V and VI show a
 *  value tuned on train this way, so a collapsed choice is never shown without a word. */
export function showTuning(node, sentences) {
  node.textContent = sentences.join(" ");
  node.hidden = !sentences.length;
}

/** Put a message in an exhibit's status line ("" clears it). */
export function status(node, message, kind = "error") {
  if (!node) return;
  node.textContent = message || "";
  node.dataset.kind = message ? kind : "";
}

// --- settings from /api/meta ---------------------------------------------------------------

/** The setting called `name` in /api/meta's `settings` (its default, bounds, choices, label). */
export function settingOf(meta, name) {
  const found = meta.settings.find((s) => s.name === name);
  if (!found) throw new Error(`/api/meta has no setting named ${name}`);
  return found;
}

/** The value called `name` in /api/meta's `fixed` (a value the lab uses but a user does not
 *  choose: a grid, RRF's k, each chunker's own size). */
export function fixedOf(meta, name) {
  const found = meta.fixed.find((f) => f.name === name);
  if (!found) throw new Error(`/api/meta has no fixed value named ${name}`);
  return found.value;
}

/** The spacing of an evenly spaced grid of values (its first two), or undefined. */
export function gridStep(grid) {
  return grid && grid.length > 1 ? Number((grid[1] - grid[0]).toFixed(6)) : undefined;
}

/** Give an input a setting's bounds (and `step`, where given). */
export function applyBounds(input, setting, step) {
  if (setting.minimum !== null && setting.minimum !== undefined) input.min = String(setting.minimum);
  if (setting.maximum !== null && setting.maximum !== undefined) input.max = String(setting.maximum);
  if (step !== undefined) input.step = String(step);
}

/** Give a range input the span the setting's slider covers on the page (from /api/meta). */
export function applySlider(input, setting) {
  const [min, max, step] = setting.slider;
  Object.assign(input, { min: String(min), max: String(max), step: String(step) });
}

/** Fill a <select> with a setting's choices, each under its display name. */
export function fillChoices(select, setting) {
  const names = setting.choice_labels || {};
  select.replaceChildren(...setting.choices.map((c) => el("option", { value: c, text: names[c] || c })));
}

/** Keep a range input's <output> in step with it. */
export function bindOutput(input, output, digits) {
  const show = () => {
    output.value = digits === undefined ? input.value : Number(input.value).toFixed(digits);
  };
  input.addEventListener("input", show);
  show();
  return show;
}

// --- saved progress ---------------------------------------------------------------------------

const KEY = "raglab.progress.v1";
export const EXHIBITS = ["chunking", "bm25", "lsa", "fusion", "rerank", "end-to-end"];

function blank(fingerprint) {
  return { fingerprint, explored: {}, settings: {}, runs: [], nextRun: 1 };
}

/** Progress kept in localStorage; a different corpus (fingerprint) starts afresh. */
export class Store {
  constructor(fingerprint) {
    this.listeners = [];
    let saved = null;
    try {
      saved = JSON.parse(localStorage.getItem(KEY) || "null");
    } catch {
      saved = null;
    }
    this.data = saved && saved.fingerprint === fingerprint ? { ...blank(fingerprint), ...saved } : blank(fingerprint);
    this.save();
  }

  save() {
    try {
      localStorage.setItem(KEY, JSON.stringify(this.data));
    } catch {
      // Storage full or disabled: the lab still works, it just forgets on reload.
    }
  }

  onChange(fn) {
    this.listeners.push(fn);
  }

  changed() {
    this.save();
    for (const fn of this.listeners) fn(this.data);
  }

  explored(name) {
    return Boolean(this.data.explored[name]);
  }

  markExplored(name) {
    if (this.data.explored[name]) return;
    this.data.explored[name] = true;
    this.changed();
  }

  settings(name) {
    return this.data.settings[name] || {};
  }

  setSettings(name, values) {
    this.data.settings[name] = { ...this.settings(name), ...values };
    this.save();
  }

  addRun(run) {
    const entry = { ...run, number: this.data.nextRun++ };
    this.data.runs.push(entry);
    this.changed();
    return entry;
  }

  clearRuns() {
    this.data.runs = [];
    this.changed();
  }

  reset() {
    this.data = blank(this.data.fingerprint);
    this.changed();
  }
}
