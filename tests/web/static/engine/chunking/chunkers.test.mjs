// The three JavaScript chunkers and the answer-intact check equal Python's
// (src/raglab/chunking/, the lab's chunk sets): oracle, the parity fixture chunking.json, at each
// chunker's default and the corners of the size and overlap sliders, on both collections.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chunkPages } from "../../../../../src/raglab/web/static/engine/chunking/chunkers.js";
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
