// Score fusion's weight chosen on train in JavaScript equals Python's (choose_weight of
// src/raglab/pipeline/retrieval.py): oracle, the parity fixture weight.json (the training
// questions' BM25 and LSA lists of the handbook and Cranfield at the default k1 and b and at two
// opposite corners of their sliders): every weight's measures within 1e-12, the weight exactly.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chooseWeight } from "../../../../../src/raglab/web/static/engine/pipeline/retrieval.js";
import { close, fixture } from "../fixtures.mjs";

test("score fusion's weight chosen on train", () => {
  const { weights, depth, cut, evaluate, cases } = fixture("weight");
  assert.equal(cases.length, 6);
  const chosen = new Set();
  cases.forEach((c, i) => {
    const name = `${c.collection} at k1 ${c.k1}, b ${c.b}`;
    const list = ([indices, scores]) => ({ indices, scores });
    const got = chooseWeight(
      c.heads.map((h) => list(h[0])),
      c.heads.map((h) => list(h[1])),
      c.labels.map((pairs) => new Map(pairs)),
      { weights, depth, cut, ks: evaluate.ks, ndcgK: evaluate.ndcg_k, precisionK: evaluate.precision_k },
    );
    got.measures.forEach((m, w) => {
      assert.deepEqual(Object.keys(m), Object.keys(c.measures[w]), `${name}: measure names`);
      for (const [key, value] of Object.entries(c.measures[w])) {
        close(m[key], value, `${name}, weight ${weights[w]}: ${key}`, 1e-12);
      }
    });
    assert.equal(got.weight, c.chosen, `${name} (case ${i}): the weight chosen`);
    chosen.add(c.chosen);
  });
  // The cases choose different weights, so the rule is tested away from one end of the grid.
  assert.ok(chosen.size > 1, `every case chose ${[...chosen]}`);
});
