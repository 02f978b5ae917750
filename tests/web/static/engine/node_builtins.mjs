// Node's built-in modules as far as the parity tests use them (node:test, node:assert/strict,
// node:fs, node:path), so the same *.test.mjs files run unchanged in Chromium:
// test_chromium_parity.py maps each of those specifiers to this file with an import map.

const declared = [];

/** node:test's `test(name, fn)`: the test is kept and runs when `run()` is called. */
export function test(name, fn) {
  declared.push({ name, fn });
}

/** Runs every test declared so far, in order, awaiting each; one row per test:
 * `{name, ok, message, ms}` (message: the error's stack when it failed, else ""). */
export async function run() {
  const rows = [];
  for (const { name, fn } of declared.splice(0)) {
    const start = performance.now();
    let message = "";
    try {
      await fn();
    } catch (error) {
      message = String((error && error.stack) || error);
    }
    rows.push({ name, ok: message === "", message, ms: performance.now() - start });
  }
  return rows;
}

export class AssertionError extends Error {
  constructor(message) {
    super(message);
    this.name = "AssertionError";
  }
}

const show = (value) => {
  try {
    return JSON.stringify(value)?.slice(0, 200) ?? String(value);
  } catch {
    return String(value);
  }
};

const said = (message, detail) => (message ? `${message} (${detail})` : detail);

/** Node's strict deep equality for what the tests compare: primitives by Object.is, arrays and
 * typed arrays element by element, Maps, Sets and plain objects by their entries and prototype. */
function deepStrict(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (a instanceof Map || a instanceof Set) return deepStrict([...a], [...b]);
  if (Array.isArray(a) || ArrayBuffer.isView(a)) {
    return a.length === b.length && Array.prototype.every.call(a, (x, i) => deepStrict(x, b[i]));
  }
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length &&
    keys.every((k) => Object.hasOwn(b, k) && deepStrict(a[k], b[k]))
  );
}

export function fail(message) {
  throw new AssertionError(message ?? "Failed");
}

export function ok(value, message) {
  if (!value) fail(said(message, `${show(value)} is not truthy`));
}

export function equal(actual, expected, message) {
  if (!Object.is(actual, expected)) fail(said(message, `${show(actual)} !== ${show(expected)}`));
}

export function deepEqual(actual, expected, message) {
  if (!deepStrict(actual, expected)) {
    fail(said(message, `${show(actual)} is not deeply equal to ${show(expected)}`));
  }
}

/** node:assert/strict's default export: callable as `assert(value)`, with the methods above. */
const assert = Object.assign((value, message) => ok(value, message), {
  AssertionError,
  deepEqual,
  deepStrictEqual: deepEqual,
  equal,
  fail,
  ok,
  strictEqual: equal,
});
export default assert;

/** node:fs's `readFileSync(path, "utf8")`, by a synchronous request to the serving host (the
 * tests read their fixtures at import); text only. */
export function readFileSync(path, encoding) {
  if (encoding !== "utf8" && encoding !== "utf-8") {
    throw new Error(`readFileSync(${path}): only text ("utf8") is served to Chromium`);
  }
  const request = new XMLHttpRequest();
  request.open("GET", path, false);
  request.send();
  if (request.status !== 200) throw new Error(`readFileSync(${path}): HTTP ${request.status}`);
  return request.responseText;
}

/** node:path's `join` for the URL paths served here: parts joined by one "/". */
export function join(...parts) {
  return parts.join("/").replace(/\/{2,}/g, "/");
}
