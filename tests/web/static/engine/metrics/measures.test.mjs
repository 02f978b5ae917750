// The JavaScript metrics equal Python's (src/raglab/metrics/measures.py): oracle, the parity
// fixture metrics.json, per question and averaged within 1e-9, on synthetic judgements of every
// kind and on BM25's rankings of both collections' splits (the exhibits' metric table).
import { test } from "node:test";
import assert from "node:assert/strict";
import * as M from "../../../../../src/raglab/web/static/engine/metrics/measures.js";
import { allClose, close, fixture } from "../fixtures.mjs";

const labelsOf = (c) => c.labels.map((x, i) => (c.graded[i] ? new Map(x) : x));

test("every measure of every case", () => {
  const { ks, cases, evaluate } = fixture("metrics");
  assert.ok(Object.keys(cases).length >= 5);
  for (const [name, c] of Object.entries(cases)) {
    const labels = labelsOf(c);
    const r = c.rankings;
    const per = {};
    for (const k of ks) {
      per[`hit@${k}`] = M.hitRateAtKPerQuery(r, labels, { k });
      per[`recall@${k}`] = M.fractionalRecallAtKPerQuery(r, labels, { k });
      per[`p@${k}`] = M.precisionAtKPerQuery(r, labels, { k });
      per[`ndcg@${k}`] = M.ndcgAtKPerQuery(r, labels, { k });
    }
    per.rr = M.reciprocalRankPerQuery(r, labels);
    assert.deepEqual(Object.keys(per).sort(), Object.keys(c.per_query).sort(), name);
    for (const [measure, values] of Object.entries(c.per_query)) {
      allClose(per[measure], values, `${name}: ${measure} per question`);
      close(M.meanOf(per[measure]), c.means[measure], `${name}: mean ${measure}`);
    }
    close(M.mrr(r, labels), c.means.mrr, `${name}: MRR`);
    close(M.top1Accuracy(r, labels), c.means.top1, `${name}: top-1`);
    assert.deepEqual(r.map((x, q) => M.firstRelevantRank(x, labels[q])), c.first, `${name}: first relevant rank`);
    const got = M.evaluate(r, labels, { ks: evaluate.ks, ndcgK: evaluate.ndcg_k, precisionK: evaluate.precision_k });
    assert.deepEqual(Object.keys(got), Object.keys(c.evaluate), `${name}: evaluate's keys, in order`);
    for (const key of Object.keys(c.evaluate)) close(got[key], c.evaluate[key], `${name}: evaluate ${key}`);
    if (c.measure) {
      assert.deepEqual(Object.keys(got), Object.keys(c.measure), `${name}: the metric table's keys`);
      for (const key of Object.keys(c.measure)) close(got[key], c.measure[key], `${name}: metric table ${key}`);
    }
  }
});
