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

test("a chunk's three or more contributions are added smallest first", async () => {
  // Hand-worked: 0.3 + 0.2 + 0.1 in that order is 0.6, smallest first (0.1 + 0.2) + 0.3 is
  // 0.6000000000000001 (kernel.py adds them sorted); two contributions add either way round.
  const { fuse } = await import("../../../../../src/raglab/web/static/engine/fusion/kernel.js");
  const got = fuse([
    [7, 0.3],
    [4, 0.5],
    [7, 0.2],
    [2, 0.1],
    [4, 0.1],
    [7, 0.1],
    [9, 0.6],
  ]);
  assert.equal(0.3 + 0.2 + 0.1, 0.6);
  same(got.indices, [7, 4, 9, 2], "ranked by fused score, ties to the lower chunk");
  same(got.scores, [0.1 + 0.2 + 0.3, 0.5 + 0.1, 0.6, 0.1], "scores");
  assert.equal(got.scores[0], 0.6000000000000001);
});
