// The parity fixtures the Python engine wrote (tests/web/static/engine/parity.py), read once.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import assert from "node:assert/strict";

const cache = new Map();

/** The fixture `name` (e.g. "text", "collection-handbook"), parsed from the folder that
 * RAGLAB_PARITY_DIR names; a clear error when it is not set. */
export function fixture(name) {
  const dir = process.env.RAGLAB_PARITY_DIR;
  if (!dir) {
    throw new Error(
      "RAGLAB_PARITY_DIR is not set: write the fixtures first " +
        "(python -m tests.web.static.engine.parity DIR), or run `make parity`",
    );
  }
  if (!cache.has(name)) {
    cache.set(name, JSON.parse(readFileSync(join(dir, `${name}.json`), "utf8")));
  }
  return cache.get(name);
}

/** The collections the fixtures cover, by name. */
export const COLLECTIONS = ["handbook", "cranfield"];

/** Real numbers agree within `tol` (absolute, and relative past 1), with a message naming `what`. */
export function close(actual, expected, what, tol = 1e-9) {
  const scale = Math.max(1, Math.abs(expected));
  if (!(Math.abs(actual - expected) <= tol * scale)) {
    assert.fail(`${what}: ${actual} != ${expected} (tolerance ${tol})`);
  }
}

/** Arrays of real numbers agree element by element within `tol`. */
export function allClose(actual, expected, what, tol = 1e-9) {
  assert.equal(actual.length, expected.length, `${what}: lengths differ`);
  for (let i = 0; i < expected.length; i++) close(actual[i], expected[i], `${what}[${i}]`, tol);
}

/** Lists (or nested lists) are equal; on failure the message names the first difference only. */
export function same(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a === e) return;
  let i = 0;
  while (i < a.length && a[i] === e[i]) i++;
  const from = Math.max(0, i - 60);
  assert.fail(`${what}: differs at character ${i}\n  got:      …${a.slice(from, i + 60)}\n  expected: …${e.slice(from, i + 60)}`);
}
