// BERT's word pieces in JavaScript equal the tokenizers library's (src/raglab/embedding/neural/
// model.py): oracle, the ids of minilm-reference/reference.json (sentence-transformers' own, 30
// texts: accents, CJK, emoji, control characters, a text truncated at 256) and the Python
// encoder's ids of handbook chunks (parity fixture neural.json).
import { test } from "node:test";
import assert from "node:assert/strict";
import { neural, reference, tokenizer } from "./neural.mjs";
import { normalize, words } from "../../../../../../src/raglab/web/static/engine/embedding/neural/wordpiece.js";

test("the reference's word-piece ids, for every text", () => {
  const { texts, input_ids: ids } = reference();
  assert.equal(texts.length, 30);
  texts.forEach((text, i) => assert.deepEqual(tokenizer().ids(text), ids[i], `text ${i}: ${text.slice(0, 40)}`));
});

test("the Python encoder's word-piece ids of handbook chunks", () => {
  const { chunks } = neural();
  assert.ok(chunks.length >= 20);
  for (const { id, text, ids } of chunks) assert.deepEqual(tokenizer().ids(text), ids, id);
});

test("the normaliser and word splitter, hand-worked", () => {
  // Accents stripped (NFD, marks dropped), lower-cased, a control character dropped, \u00a0 a
  // space, CJK ideographs and each punctuation mark (ASCII symbols included) their own word.
  assert.equal(normalize("Café\u0007 NAÏVE\u00a0東京"), "cafe naive  東  京 ");
  assert.deepEqual(words("e-4107 costs $5+tax."), ["e", "-", "4107", "costs", "$", "5", "+", "tax", "."]);
});
