// Lucene's English analyzer in JavaScript equals Python's (src/raglab/text/lucene.py, itself
// checked against Lucene 9.9.1): oracle, the parity fixture text.json, on the Lucene samples,
// the edge cases and every page and question of both collections, and Porter's stem of every
// distinct token.
import { test } from "node:test";
import assert from "node:assert/strict";
import { STOP_WORDS, analyze, porterStem } from "../../../../../src/raglab/web/static/engine/text/lucene.js";
import { fixture, same } from "../fixtures.mjs";

test("the 33 stop words are Lucene's", () => {
  assert.deepEqual([...STOP_WORDS].sort(), fixture("text").lucene_stop_words);
});

test("Porter's stem of every distinct token", () => {
  const stems = Object.entries(fixture("text").porter);
  assert.ok(stems.length > 1000, `only ${stems.length} words`);
  const wrong = stems.filter(([word, s]) => porterStem(word) !== s);
  const shown = wrong.slice(0, 20).map(([w, s]) => `${w}: ${porterStem(w)} != ${s}`);
  assert.equal(wrong.length, 0, `${wrong.length} of ${stems.length} differ:\n${shown.join("\n")}`);
});

for (const name of ["lucene-samples", "edge", "handbook", "cranfield"]) {
  test(`the analyzer's tokens: ${name}`, () => {
    const items = fixture("text").collections[name];
    assert.ok(items.length > 0);
    items.forEach((item, i) => same(analyze(item.text), item.lucene, `${name} text ${i}`));
  });
}
