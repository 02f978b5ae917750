// The Snowball English stemmer equals PyStemmer's (the stemmer behind Python's stem=True) on
// every distinct word of the handbook and of Cranfield: oracle, PyStemmer, in text.json.
import { test } from "node:test";
import assert from "node:assert/strict";
import { stem } from "../../../../../src/raglab/web/static/engine/text/snowball.js";
import { fixture } from "../fixtures.mjs";

test("every word's stem is PyStemmer's", () => {
  const stems = Object.entries(fixture("text").stems);
  assert.ok(stems.length > 1000, `only ${stems.length} words`);
  const wrong = stems.filter(([word, s]) => stem(word) !== s);
  const shown = wrong.slice(0, 20).map(([w, s]) => `${w}: ${stem(w)} != ${s}`);
  assert.equal(wrong.length, 0, `${wrong.length} of ${stems.length} differ:\n${shown.join("\n")}`);
});
