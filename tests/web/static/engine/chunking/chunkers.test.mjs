// The three JavaScript chunkers and the answer-intact check equal Python's
// (src/raglab/chunking/, the lab's chunk sets): oracle, the parity fixture chunking.json, at each
// chunker's default and the corners of the size and overlap sliders, on both collections.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SPANS_FOUND, chunkPages, prepareCuts } from "../../../../../src/raglab/web/static/engine/chunking/chunkers.js";
import { ChunkIndex, relevance } from "../../../../../src/raglab/web/static/engine/chunking/chunk.js";
import {
  cutProbability,
  expectedChunkCount,
} from "../../../../../src/raglab/web/static/engine/chunking/closed_forms.js";
import { countWords } from "../../../../../src/raglab/web/static/engine/text/tokens.js";
import { COLLECTIONS, close, fixture, same } from "../fixtures.mjs";

const settings = () => fixture("chunking").settings;

for (const name of COLLECTIONS) {
  test(`chunks and the answers they hold whole: ${name}`, () => {
    const { pages, questions } = fixture(`collection-${name}`);
    const runs = fixture("chunking").collections[name];
    assert.equal(runs.length, settings().length);
    assert.ok(runs.filter((run) => run !== null).length >= settings().length - 1);
    settings().forEach((setting, s) => {
      const where = `${name} ${JSON.stringify(setting)}`;
      const run = runs[s];
      if (run === null) return; // a corner the fixture covers on the handbook only
      const chunks = chunkPages(pages, setting);
      assert.ok(chunks.length > 0, where);
      const rows = chunks.map((c) => [c.id, c.pageId, c.start, c.end, c.position, c.nWords, c.headingPath]);
      same(rows, run.chunks, `${where}: chunks`);
      chunks.forEach((c, i) => assert.equal(c.index, i));
      if (run.texts) same(chunks.map((c) => c.text), run.texts, `${where}: texts`);
      const index = new ChunkIndex(chunks);
      const got = questions.map((q) => [...relevance(index, q)].sort((a, b) => a[0] - b[0]));
      same(got, run.relevance, `${where}: relevant chunks`);
      if (setting.method === "fixed") {
        const { size, overlap } = setting;
        const expected = pages.map((p) => expectedChunkCount(countWords(p.text), { size, overlap }));
        same(expected, run.expected_chunks, `${where}: expected chunks`);
        run.cut_probability.forEach((p, i) =>
          close(cutProbability(i + 1, { size, overlap }), p, `${where}: cut probability at ${i + 1}`),
        );
      }
    });
  });
}

test("a second cut finds no page's words or sentences again", () => {
  // Oracle: counting. The first fixed cut finds each page's words once, the first sentence cut
  // each page's sentences once; other sizes and overlaps, and the heading chunker's blocks that
  // fit, find nothing again. The chunks are the same as a fresh copy's (the first test checks
  // those against Python's).
  const pages = structuredClone(fixture("collection-handbook").pages);
  const before = { ...SPANS_FOUND };
  const found = () => ({ words: SPANS_FOUND.words - before.words, sentences: SPANS_FOUND.sentences - before.sentences });
  chunkPages(pages, { method: "fixed", size: 120, overlap: 0 });
  assert.deepEqual(found(), { words: pages.length, sentences: 0 });
  chunkPages(pages, { method: "fixed", size: 60, overlap: 15 });
  chunkPages(pages, { method: "sentence", size: 120 });
  assert.deepEqual(found(), { words: pages.length, sentences: pages.length });
  const again = chunkPages(pages, { method: "sentence", size: 80 });
  chunkPages(pages, { method: "heading", size: 1000000 });
  assert.deepEqual(found(), { words: pages.length, sentences: pages.length }, "nothing found again");
  const fresh = chunkPages(structuredClone(pages), { method: "sentence", size: 80 });
  same(again, fresh, "the sentence chunks at 80 words");
});

for (const name of COLLECTIONS) {
  test(`cuts after prepareCuts find no sentences and equal a fresh copy's: ${name}`, () => {
    // Oracle: the same cut of a fresh copy of the pages (its own words and sentences found on
    // the way), chunk by chunk, and counting: once the pages are prepared for cuts of 20 words
    // or more, no sentence or heading cut of at least 20 words finds any text's sentences.
    const pages = structuredClone(fixture(`collection-${name}`).pages);
    const before = SPANS_FOUND.sentences;
    prepareCuts(pages, { minSize: 20 });
    const prepared = SPANS_FOUND.sentences - before;
    assert.ok(prepared > pages.length, `${name}: the pages' sentences and some long sections'`);
    for (const method of ["sentence", "heading"]) {
      for (const size of [20, 21, 37, 60, 120, 300, 1000]) {
        const found = SPANS_FOUND.sentences;
        const got = chunkPages(pages, { method, size });
        assert.equal(SPANS_FOUND.sentences, found, `${name}, ${method} at ${size}: no sentences found again`);
        same(got, chunkPages(structuredClone(pages), { method, size }), `${name}, ${method} at ${size}`);
      }
    }
    // Below the prepared size a cut still finds what it lacks, and the same chunks.
    same(chunkPages(pages, { method: "heading", size: 8 }), chunkPages(structuredClone(pages), { method: "heading", size: 8 }), `${name}, heading at 8`);
  });
}
