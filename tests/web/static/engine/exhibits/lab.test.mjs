// The lab's chunk sets tokenise their texts once across requests (exhibits/lab.js's TOKENISED).
//
// Oracle: counting. A run at a chunking tokenises that chunk set for retrieval (BM25, LSA's
// fold-in and the reranker's features share the tokens) and, the handbook's lab being
// unstemmed, once more for the reader's stemmed terms; a second run at the same chunking with
// other settings tokenises nothing, and gives the same numbers its settings share.
import { test } from "node:test";
import assert from "node:assert/strict";

import { answer } from "../../../../../src/raglab/web/static/engine/routes.js";
import { TOKENISED } from "../../../../../src/raglab/web/static/engine/exhibits/lab.js";
import { fixture } from "../fixtures.mjs";

const post = (data, url, body) => answer(data, url, () => {}, { method: "POST", body });

test("a second run at the same chunking tokenises no chunk again", () => {
  // A fresh copy: the labs are kept per data object.
  const data = structuredClone(fixture("site-handbook"));
  assert.equal(data.meta.stem, false, "the fixture's lab is the unstemmed one");
  const before = { ...TOKENISED };
  const first = post(data, "/api/run", { chunker: "sentence", retriever: "bm25" });
  // The LSA fit tokenises its own windows, not a chunk set: one chunk set, the sentence one.
  assert.equal(TOKENISED.retrieval - before.retrieval, 1, "the sentence chunks' retrieval tokens, once");
  assert.equal(TOKENISED.reader - before.reader, 1, "the reader's terms, once for the sentence chunks");
  const after = { ...TOKENISED };
  const second = post(data, "/api/run", { chunker: "sentence", retriever: "bm25", budget: first.settings.budget * 2 });
  assert.deepEqual({ ...TOKENISED }, after, "nothing tokenised again");
  assert.equal(second.settings.size, first.settings.size);
  post(data, "/api/rerank/train", null);
  assert.equal(TOKENISED.reader, after.reader, "training the reranker tokenises no reader terms");
});
