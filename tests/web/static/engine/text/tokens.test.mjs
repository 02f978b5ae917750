// The JavaScript tokenizer equals the Python one (src/raglab/text/tokens.py): oracle, the parity
// fixture text.json, written by that module on every page and question of both collections.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  STOP_WORDS,
  chunkTokens,
  countWords,
  identifiers,
  sentenceSpans,
  stemmedStream,
  tokenStream,
  tokenize,
} from "../../../../../src/raglab/web/static/engine/text/tokens.js";
import { chunkPages } from "../../../../../src/raglab/web/static/engine/chunking/chunkers.js";
import { COLLECTIONS, fixture, same } from "../fixtures.mjs";

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

// A chunk's tokens read off its page's token stream (the stemmed stream made from the unstemmed
// one, as the lab makes it) are its text's own: oracle, the tokenizer itself on each chunk's text, on every chunk of both collections' pages, every chunker at its
// own size and at the size slider's ends (20 and 400 words, the fixed windows with and without
// overlap), stemmed and not. Each slice must apply (no chunk falls back to its text).
const CUTS = [
  { method: "fixed", size: 200, overlap: 0 },
  { method: "fixed", size: 20, overlap: 15 },
  { method: "fixed", size: 400, overlap: 100 },
  { method: "sentence", size: 120, overlap: null },
  { method: "sentence", size: 20, overlap: null },
  { method: "heading", size: 300, overlap: null },
  { method: "heading", size: 20, overlap: null },
];

for (const name of COLLECTIONS) {
  test(`a chunk's tokens sliced from its page's equal its text's, on every chunk: ${name}`, () => {
    const pages = fixture(`collection-${name}`).pages;
    for (const stem of [false, true]) {
      // The stemmed streams as the lab makes them: the unstemmed ones' words stemmed.
      const streamOf = (p) => (stem ? stemmedStream(tokenStream(p.text, { stem: false })) : tokenStream(p.text, { stem }));
      const streams = new Map(pages.map((p) => [p.id, streamOf(p)]));
      const texts = new Map(pages.map((p) => [p.id, p.text]));
      let checked = 0;
      for (const cut of CUTS) {
        for (const c of chunkPages(pages, cut)) {
          const where = `${name} ${cut.method}/${cut.size}/${cut.overlap} stem=${stem} chunk ${c.id}`;
          const stream = streams.get(c.pageId);
          assert.ok(stream !== null, `${where}: the page's offsets hold`);
          const sliced = chunkTokens(stream, texts.get(c.pageId), c.start, c.end);
          assert.ok(sliced !== null, `${where}: the chunk is bounded by whitespace`);
          assert.deepEqual(sliced, tokenize(c.text, { stem, analyzer: "raglab" }), where);
          checked += 1;
        }
      }
      assert.ok(checked > pages.length * CUTS.length, `${name}: every cut's chunks checked`);
    }
  });
}

test("a span that opens or closes inside a word is not sliced, and a lengthening lower case is not streamed", () => {
  // Oracle: hand-worked. "abc def": [1, 7) opens inside "abc", [0, 2) closes inside it.
  const text = "abc def";
  const stream = tokenStream(text, { stem: false });
  assert.equal(chunkTokens(stream, text, 1, 7), null);
  assert.equal(chunkTokens(stream, text, 0, 2), null);
  assert.deepEqual(chunkTokens(stream, text, 4, 7), ["def"]);
  assert.deepEqual(chunkTokens(stream, text, 3, 7), ["def"], "a span may open on whitespace");
  // U+0130 lower-cases to two code units ("i" and a combining dot): offsets would shift.
  assert.equal(tokenStream("\u0130stanbul abc", { stem: false }), null);
});

test("a token stream's words stemmed are the stemmed tokens, with the same offsets", () => {
  // Oracle: the tokenizer itself, stemming, on every text of text.json (the edge cases, Lucene's
  // samples, every page and question of both collections).
  let checked = 0;
  for (const [name, items] of Object.entries(text().collections)) {
    items.forEach((item, i) => {
      const plain = tokenStream(item.text, { stem: false });
      if (plain === null) return;
      const derived = stemmedStream(plain);
      same(derived, tokenStream(item.text, { stem: true }), `${name} text ${i}`);
      same(derived.tokens, tokenize(item.text, { stem: true, analyzer: "raglab" }), `${name} text ${i}`);
      checked += 1;
    });
  }
  assert.ok(checked > 700, `${checked} texts`);
});
