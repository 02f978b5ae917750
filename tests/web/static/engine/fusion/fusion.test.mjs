// RRF and score fusion in JavaScript equal Python's (src/raglab/fusion/): oracle, the parity
// fixture fusion.json (BM25's and LSA's rankings of every question of both collections, fused
// at two depths and four weights): fused rankings and ties exactly, scores within 1e-12.
import { test } from "node:test";
import assert from "node:assert/strict";
import { rrf } from "../../../../../src/raglab/web/static/engine/fusion/rrf.js";
import { scoreFusion } from "../../../../../src/raglab/web/static/engine/fusion/score.js";
import { allClose, fixture, same } from "../fixtures.mjs";

test("RRF and score fusion of every question", () => {
  const { k, depths, weights, cases } = fixture("fusion");
  assert.ok(cases.length > 100);
  cases.forEach((c, i) => {
    const [bm25, lsa] = c.inputs.map(([indices, scores]) => ({ indices, scores }));
    depths.forEach((depth, d) => {
      const got = rrf([bm25.indices, lsa.indices], { k, depth });
      same(got.indices, c.rrf[d][0], `case ${i}, depth ${depth}: RRF ranking`);
      allClose(got.scores, c.rrf[d][1], `case ${i}, depth ${depth}: RRF scores`, 1e-12);
      weights.forEach((weight, w) => {
        const [indices, scores] = c.score[d * weights.length + w];
        const fused = scoreFusion(bm25, lsa, { weight, depth });
        same(fused.indices, indices, `case ${i}, depth ${depth}, weight ${weight}: ranking`);
        allClose(fused.scores, scores, `case ${i}, depth ${depth}, weight ${weight}: scores`, 1e-12);
      });
    });
  });
});
