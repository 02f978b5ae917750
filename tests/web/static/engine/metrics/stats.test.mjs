// Wilson intervals and the exact McNemar test in JavaScript equal Python's
// (src/raglab/metrics/stats.py): oracle, the parity fixture metrics.json.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mcnemarExact, wilsonInterval } from "../../../../../src/raglab/web/static/engine/metrics/stats.js";
import { close, fixture } from "../fixtures.mjs";

test("Wilson's interval of every count", () => {
  const { z, rows } = fixture("metrics").wilson;
  assert.ok(rows.length > 1000);
  for (const [s, n, low, high] of rows) {
    const [a, b] = wilsonInterval(s, n, { z });
    close(a, low, `Wilson low of ${s}/${n}`);
    close(b, high, `Wilson high of ${s}/${n}`);
  }
});

test("McNemar's table and exact p-value", () => {
  const cases = fixture("metrics").mcnemar;
  assert.ok(cases.length > 10);
  for (const [a, b, [n, bothRight, onlyA, onlyB, bothWrong, p]] of cases) {
    const got = mcnemarExact(a, b);
    const where = `McNemar of ${n} questions`;
    assert.deepEqual([got.n, got.bothRight, got.onlyA, got.onlyB, got.bothWrong], [n, bothRight, onlyA, onlyB, bothWrong], where);
    // Exact integer sums rounded once: equal to the last bit, however small p is.
    assert.equal(got.pValue, p, `${where}: p-value`);
  }
});
