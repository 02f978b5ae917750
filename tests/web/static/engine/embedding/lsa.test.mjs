// LSA in JavaScript equals Python's (src/raglab/embedding/lsa.py, svd.py): oracle, the parity
// fixture embedding.json. Windows, vocabulary and idf exactly; the singular values, the fold-ins
// of the chunks and the cosine rankings to rounding (the two engines' LU, QR and eigensolvers
// differ in their last bits; their subspaces do not).
import { test } from "node:test";
import assert from "node:assert/strict";
import * as L from "../../../../../src/raglab/web/static/engine/embedding/lsa.js";
import { chunkPages } from "../../../../../src/raglab/web/static/engine/chunking/chunkers.js";
import { tokenize } from "../../../../../src/raglab/web/static/engine/text/tokens.js";
import { allClose, close, fixture, same } from "../fixtures.mjs";

const tokens = (text) => tokenize(text, { stem: false, analyzer: "raglab" });
const windowTokens = (page, start, end) => tokens(page.text.slice(start, end));

for (const expected of fixture("embedding").lsa) {
  test(`LSA: ${expected.collection}`, () => {
    const { pages, questions } = fixture(`collection-${expected.collection}`);
    const st = expected.settings;
    const windows = L.lsaWindows(pages, windowTokens, { minimum: st.minimum, size: st.size });
    same(windows, expected.windows, "windows");
    assert.equal(L.powerIterationsFor(windows.length, st), st.power_iterations);
    const model = L.fitLsa(windows, {
      rank: st.rank,
      oversample: st.oversample,
      powerIterations: st.power_iterations,
      seed: st.seed,
    });
    same(model.terms, expected.terms, "vocabulary");
    allClose(model.idf, expected.idf, "idf", 1e-12);
    allClose(model.s, expected.s, "singular values", 1e-9);
    const chunks = chunkPages(pages, expected.chunking);
    const projections = L.project(model, chunks.map((c) => tokens(c.text)));
    if (expected.projections) allClose(projections, expected.projections.flat(), "fold-ins", 1e-9);
    questions.forEach((q, i) => {
      const got = L.search(model, tokens(q.question), projections, { k: 10 });
      allClose(got.scores, expected.scores[i], `question ${i}: cosines`, 1e-9);
      same(got.indices, expected.indices[i], `question ${i}: ranking`);
    });
  });
}
