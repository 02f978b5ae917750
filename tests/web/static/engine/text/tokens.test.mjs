// The JavaScript tokenizer equals the Python one (src/raglab/text/tokens.py): oracle, the parity
// fixture text.json, written by that module on every page and question of both collections.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  STOP_WORDS,
  countWords,
  identifiers,
  sentenceSpans,
  tokenize,
} from "../../../../../src/raglab/web/static/engine/text/tokens.js";
import { fixture, same } from "../fixtures.mjs";

const text = () => fixture("text");

test("the stop words are Python's", () => {
  assert.deepEqual([...STOP_WORDS].sort(), text().stop_words);
});

for (const name of ["edge", "lucene-samples", "handbook", "cranfield"]) {
  test(`tokens, stemmed tokens, identifiers, words and sentences: ${name}`, () => {
    const items = text().collections[name];
    assert.ok(items.length > 0);
    items.forEach((item, i) => {
      const where = `${name} text ${i}`;
      same(tokenize(item.text, { stem: false, analyzer: "raglab" }), item.tokens, where);
      same(tokenize(item.text, { stem: true, analyzer: "raglab" }), item.stemmed, where);
      same(tokenize(item.text, { stem: false, analyzer: "lucene" }), item.lucene, where);
      same([...identifiers(item.text)].sort(), item.identifiers, where);
      assert.equal(countWords(item.text), item.n_words, where);
      same(sentenceSpans(item.text), item.sentences, where);
    });
  });
}
