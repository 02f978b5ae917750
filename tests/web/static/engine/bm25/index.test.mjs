// BM25 in JavaScript equals Python's (src/raglab/bm25/): oracle, the parity fixture bm25.json,
// on both collections, stemming off and on, at the default (k1, b) and the sliders' corners:
// vocabulary and IDFs, rankings and ties exactly, scores and contributions within 1e-9, and
// the (k1, b) grid's top k and hits of every training question.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chunkPages } from "../../../../../src/raglab/web/static/engine/chunking/chunkers.js";
import { BM25Index } from "../../../../../src/raglab/web/static/engine/bm25/index.js";
import { gridTopK } from "../../../../../src/raglab/web/static/engine/bm25/grid.js";
import { tokenize } from "../../../../../src/raglab/web/static/engine/text/tokens.js";
import { allClose, close, fixture, same } from "../fixtures.mjs";

const built = new Map();

/** The JavaScript engine's index and query tokens for a run of the fixture. */
function build(run) {
  const key = `${run.collection}/${run.stem}`;
  if (!built.has(key)) {
    const { pages, questions } = fixture(`collection-${run.collection}`);
    const chunks = chunkPages(pages, run.chunking);
    const options = { stem: run.stem, analyzer: "raglab" };
    const { k1, b } = fixture("bm25").settings[0];
    const index = new BM25Index(chunks.map((c) => tokenize(c.text, options)), { k1, b });
    const queries = questions.map((q) => tokenize(q.question, options));
    built.set(key, { chunks, index, queries });
  }
  return built.get(key);
}

const runs = () => fixture("bm25").runs;
const name = (run) => `${run.collection}, stemming ${run.stem ? "on" : "off"}`;

for (const i of [0, 1, 2, 3]) {
  test(`vocabulary, IDFs and query tokens: run ${i}`, () => {
    const run = runs()[i];
    const { chunks, index, queries } = build(run);
    assert.equal(chunks.length, run.n_chunks, name(run));
    close(index.stats.avgdl, run.avgdl, `${name(run)}: avgdl`);
    same(index.stats.terms, run.terms, `${name(run)}: vocabulary`);
    allClose(index.stats.idf, run.idf, `${name(run)}: idf`);
    same(queries, run.queries, `${name(run)}: query tokens`);
  });

  test(`rankings, scores and contributions at each (k1, b): run ${i}`, () => {
    const run = runs()[i];
    const { index, queries } = build(run);
    fixture("bm25").settings.forEach((setting, s) => {
      const where = `${name(run)} at k1 ${setting.k1}, b ${setting.b}`;
      const cell = index.withParams(setting);
      const expected = run.rankings[s];
      queries.forEach((q, qi) => {
        const got = cell.search(q, { k: expected.indices[qi].length });
        same(got.indices, expected.indices[qi], `${where}, question ${qi}: ranking`);
        allClose(got.scores, expected.scores[qi], `${where}, question ${qi}: scores`);
      });
      expected.full.forEach((scores, qi) => allClose(cell.scores(queries[qi]), scores, `${where}: every score of question ${qi}`));
      expected.explained.forEach((docs, qi) => {
        const top = expected.indices[qi];
        docs.forEach((rows, r) => {
          const got = cell.explain(queries[qi], top[r]);
          assert.equal(got.length, rows.length, `${where}: terms explained`);
          rows.forEach(([term, tf, df, idf, lf, contribution, count], t) => {
            const at = `${where}, question ${qi}, chunk ${top[r]}, term ${term}`;
            assert.deepEqual([got[t].term, got[t].tf, got[t].df, got[t].queryCount], [term, tf, df, count], at);
            close(got[t].idf, idf, `${at}: idf`);
            close(got[t].lengthFactor, lf, `${at}: length factor`);
            close(got[t].contribution, contribution, `${at}: contribution`);
          });
        });
      });
    });
  });

  test(`the (k1, b) grid: run ${i}`, () => {
    const run = runs()[i];
    const { index, queries } = build(run);
    const { k1s, bs, k } = fixture("bm25").grid;
    const train = run.grid.questions.map((qi) => queries[qi]);
    const tops = gridTopK(index, train, { k1s, bs, k });
    same(tops, run.grid.tops, `${name(run)}: grid top ${k}`);
    // A cell finds a question when a chunk of its top k holds the answer and shares a term with
    // the question (src/raglab/pipeline/grid.py).
    const shares = train.map((q) => index.scores(q).map((s) => s > 0));
    const hits = tops.map((row) =>
      row.map((cell) =>
        cell.filter((top, q) => top.some((d) => run.grid.relevance[q].includes(d) && shares[q][d]))
          .length,
      ),
    );
    same(hits, run.grid.hits, `${name(run)}: grid hits`);
  });
}

test("a search's top k from the scores: best first, ties to the lower index, unmatched chunks last by index", () => {
  // Oracle: hand-worked, then a full sort by (-score, index) with the zero scores after the
  // positive ones, on seeded scores full of ties, at k on both sides of the insertion's limit.
  const index = new BM25Index([["a"], ["b"]], { k1: 1.2, b: 0.75 });
  assert.deepEqual(index.scoresSearch(Float64Array.from([0, 2, 1, 2, 0, 3]), { k: 4 }).indices, [5, 1, 3, 2]);
  assert.deepEqual(index.scoresSearch(Float64Array.from([0, 2, 1, 2, 0, 3]), { k: 9 }).indices, [5, 1, 3, 2, 0, 4]);
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (const n of [1, 10, 70, 300]) {
    const scores = Float64Array.from({ length: n }, () => (next() < 0.3 ? 0 : Math.floor(next() * 8) / 4));
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => {
      const [x, y] = [scores[a] > 0 ? scores[a] : -1, scores[b] > 0 ? scores[b] : -1];
      return x !== y ? y - x : a - b;
    });
    for (const k of [1, 5, 64, 65, n]) {
      const got = index.scoresSearch(scores, { k });
      assert.deepEqual(got.indices, order.slice(0, Math.min(k, n)), `n ${n}, k ${k}`);
      assert.deepEqual(got.scores, got.indices.map((i) => scores[i]));
    }
  }
});

test("termScores into a given array: that array, zeroed first, the same scores bit for bit", () => {
  // Oracle: termScores without an array (a fresh one), which the parity runs above check
  // against Python's scores. The grid passes one array through every query and cell.
  const { index, queries } = build(runs()[0]);
  const out = new Float64Array(index.nDocs).fill(7.5); // a previous query's scores, say
  for (const q of queries.slice(0, 20)) {
    const terms = index.stats.queryTerms(q);
    const fresh = index.termScores(terms);
    assert.equal(index.termScores(terms, out), out);
    const bits = (a) => Array.from(a, (x) => (Object.is(x, -0) ? "-0" : x));
    assert.deepEqual(bits(out), bits(fresh));
  }
});
