// The lab's chunk sets tokenise their texts once across requests (exhibits/lab.js's TOKENISED),
// their LSA fold-in is read off their BM25 postings, and a fusion reads its rankers to its depth.
//
// Oracle: counting. A run at a chunking tokenises that chunk set for retrieval (BM25, LSA's
// fold-in and the reranker's features share the tokens) and, the handbook's lab being
// unstemmed, once more for the reader's stemmed terms when its IDF scoring first needs their
// document frequencies (the coverage scoring never does); a second run at the same chunking with
// other settings tokenises nothing, and gives the same numbers its settings share. Two
// settings that cut the same chunks (by the chunker's own spans) share one set.
import { test } from "node:test";
import assert from "node:assert/strict";

import { answer } from "../../../../../src/raglab/web/static/engine/routes.js";
import { Lab, TOKENISED, defaultOf, fixedOf } from "../../../../../src/raglab/web/static/engine/exhibits/lab.js";
import { fittedReranker } from "../../../../../src/raglab/web/static/engine/exhibits/rerank.js";
import { chunkPages } from "../../../../../src/raglab/web/static/engine/chunking/chunkers.js";
import { chunkFoldIn, lsaModel } from "../../../../../src/raglab/web/static/engine/exhibits/lsa.js";
import { project } from "../../../../../src/raglab/web/static/engine/embedding/lsa.js";
import { ranking } from "../../../../../src/raglab/web/static/engine/exhibits/fusion.js";
import { rrf } from "../../../../../src/raglab/web/static/engine/fusion/rrf.js";
import { scoreFusion } from "../../../../../src/raglab/web/static/engine/fusion/score.js";
import { CALLS } from "../../../../../src/raglab/web/static/engine/text/tokens.js";
import { COSINES } from "../../../../../src/raglab/web/static/engine/pipeline/reranking.js";
import { SCORED } from "../../../../../src/raglab/web/static/engine/bm25/index.js";
import { BM25Statistics } from "../../../../../src/raglab/web/static/engine/bm25/statistics.js";
import { COLLECTIONS, fixture } from "../fixtures.mjs";

const post = (data, url, body) => answer(data, url, () => {}, { method: "POST", body });

test("a second run at the same chunking tokenises no chunk again", () => {
  // A fresh copy: the labs are kept per data object.
  const data = structuredClone(fixture("site-handbook"));
  assert.equal(data.meta.stem, false, "the fixture's lab is the unstemmed one");
  const before = { ...TOKENISED };
  const first = post(data, "/api/run", { chunker: "sentence", retriever: "bm25" });
  // The LSA fit tokenises its own windows, not a chunk set: one chunk set, the sentence one.
  assert.equal(TOKENISED.retrieval - before.retrieval, 1, "the sentence chunks' retrieval tokens, once");
  assert.equal(TOKENISED.reader - before.reader, 0, "the coverage reader reads no document frequencies");
  post(data, "/api/run", { chunker: "sentence", retriever: "bm25", reader_scoring: "idf" });
  assert.equal(TOKENISED.reader - before.reader, 1, "the IDF reader's terms, once for the sentence chunks");
  const after = { ...TOKENISED };
  const second = post(data, "/api/run", { chunker: "sentence", retriever: "bm25", budget: first.settings.budget * 2 });
  assert.deepEqual({ ...TOKENISED }, after, "nothing tokenised again");
  assert.equal(second.settings.size, first.settings.size);
  post(data, "/api/rerank/train", null);
  assert.equal(TOKENISED.reader, after.reader, "training the reranker tokenises no reader terms");
});

test("a second cut tokenises no page again and no chunk's text", () => {
  // Oracle: counting. The first cut tokenises each page once (its retrieval tokens); every
  // other cut, of any chunker, slices those pages' tokens: no page and no chunk text again.
  const data = structuredClone(fixture("site-handbook"));
  const lab = new Lab(data, { stem: data.meta.stem });
  const before = { ...TOKENISED };
  lab.chunkSet({ method: "fixed", size: 120, overlap: 0 }).tokens;
  assert.equal(TOKENISED.pages - before.pages, lab.pages.length, "each page once");
  for (const key of [{ method: "fixed", size: 60, overlap: 15 }, { method: "sentence" }, { method: "heading", size: 80 }]) {
    lab.chunkSet(key).tokens;
  }
  assert.equal(TOKENISED.retrieval - before.retrieval, 4, "four cuts' tokens");
  assert.equal(TOKENISED.pages - before.pages, lab.pages.length, "no page tokenised again");
  assert.equal(TOKENISED.chunkTexts - before.chunkTexts, 0, "no chunk's text tokenised");
  // The LSA windows and the other stemming's lab (the stemming exhibit's) slice the same pages:
  // the tokenizer is asked for no text at all.
  const calls = CALLS.tokenize;
  lsaModel(lab, { windowsSet: data.engine.lsa_windows });
  new Lab(data, { stem: !data.meta.stem }).chunkSet({ method: "sentence" }).tokens;
  assert.equal(CALLS.tokenize - calls, 0, "no window's or chunk's text tokenised");
  assert.equal(TOKENISED.pages - before.pages, lab.pages.length, "no page tokenised again");
});

test("settings that cut the same chunks share one chunk set, its tokens and its reranker", () => {
  const data = structuredClone(fixture("site-handbook"));
  const lab = new Lab(data, { stem: data.meta.stem });
  // Oracle: the chunker itself, asked for the spans of each heading size.
  const spans = (size) => JSON.stringify(chunkPages(lab.pages, { method: "heading", size, overlap: null }).map((c) => [c.pageId, c.start, c.end]));
  const sizes = [60, 90, 120, 160, 200, 240, 280, 320, 360, 400, 500, 600];
  const pair = sizes.flatMap((a, i) => sizes.slice(i + 1).map((b) => [a, b])).find(([a, b]) => spans(a) === spans(b));
  assert.ok(pair, "two heading sizes cut the same chunks on the handbook");
  const other = sizes.find((s) => spans(s) !== spans(pair[0]));
  assert.ok(other !== undefined, "and some size cuts others");
  const before = TOKENISED.retrieval;
  const a = lab.chunkSet({ method: "heading", size: pair[0] });
  const b = lab.chunkSet({ method: "heading", size: pair[1] });
  assert.equal(a.key.size, pair[0]);
  assert.equal(b.key.size, pair[1], "each keeps its own setting");
  assert.equal(a.id, b.id);
  assert.equal(b.tokens, a.tokens, "one token list for both");
  assert.equal(TOKENISED.retrieval - before, 1, "tokenised once");
  const c = lab.chunkSet({ method: "heading", size: other });
  assert.notEqual(c.id, a.id);
  assert.notEqual(c.tokens, a.tokens);
  // Through the routes: the second size's run trains no reranker of its own and answers as
  // the first, its own size echoed.
  const first = post(data, "/api/run", { chunker: "heading", size: pair[0] });
  const second = post(data, "/api/run", { chunker: "heading", size: pair[1] });
  assert.equal(second.settings.size, pair[1]);
  assert.equal(second.request.size, pair[1]);
  const strip = (r) => JSON.stringify({ ...r, settings: { ...r.settings, size: null }, request: { ...r.request, size: null } });
  assert.equal(strip(second), strip(first));
  const options = { windowsSet: data.engine.lsa_windows, constants: data.engine.rerank };
  const fitted = (size) => fittedReranker(lab, { retriever: "rrf", chunking: { method: "heading", size } }, options);
  assert.equal(fitted(pair[1]), fitted(pair[0]), "one reranker for both");
});

test("a chunk set's LSA fold-in read off its BM25 postings equals the fold-in of its tokens, bit for bit", () => {
  // Oracle: embedding/lsa.js's project() of each chunk's tokens (checked against Python's
  // fold-in in lsa.test.mjs), on the default cut and three others.
  const data = structuredClone(fixture("site-handbook"));
  const lab = new Lab(data, { stem: data.meta.stem });
  const { model } = lsaModel(lab, { windowsSet: data.engine.lsa_windows });
  for (const key of [{}, { method: "sentence", size: 60 }, { method: "fixed", overlap: 20 }, { method: "heading", size: 100 }]) {
    const cs = lab.chunkSet(key);
    const want = project(model, cs.tokens);
    const got = chunkFoldIn(model, cs);
    assert.equal(got.length, want.length, JSON.stringify(key));
    const differ = want.findIndex((v, i) => !Object.is(v, got[i]));
    assert.equal(differ, -1, `${JSON.stringify(key)}: entry ${differ}`);
    assert.ok(want.some((v) => v !== 0), "a fold-in that is not all zeros");
    assert.equal(chunkFoldIn(model, cs), got, "kept on the chunk set");
  }
});

test("a fusion reads its two rankers to the fusion depth only, and fuses the same lists as at full depth", () => {
  // Oracle: the fusions of the rankers' lists at the first stage's full depth (100), which
  // they read the first fusion-depth (20) of.
  const data = structuredClone(fixture("site-handbook"));
  const lab = new Lab(data, { stem: data.meta.stem });
  const windowsSet = data.engine.lsa_windows;
  const { meta } = lab;
  const fusionDepth = defaultOf(meta, "fusion_depth");
  assert.ok(fusionDepth < defaultOf(meta, "depth"));
  for (const q of lab.split("test").slice(0, 12)) {
    for (const settings of [{ retriever: "rrf" }, { retriever: "score", weight: 0.3 }]) {
      const got = ranking(lab, q.question, settings, { windowsSet });
      const bm25 = ranking(lab, q.question, { retriever: "bm25", weight: null }, { windowsSet });
      const lsa = ranking(lab, q.question, { retriever: "lsa", weight: null }, { windowsSet });
      const want =
        settings.retriever === "rrf"
          ? rrf([bm25.indices, lsa.indices], { k: fixedOf(meta, "rrf_k"), depth: fusionDepth })
          : scoreFusion(bm25, lsa, { weight: 0.3, depth: fusionDepth });
      assert.deepEqual([...got.indices], [...want.indices], `${q.id}, ${settings.retriever}`);
      assert.deepEqual([...got.scores], [...want.scores], `${q.id}, ${settings.retriever}`);
    }
  }
  const cs = lab.chunkSet();
  const depths = new Set([...cs._rankings.keys()].map((key) => key.split("/")[4]));
  assert.ok(depths.has(String(fusionDepth)), "the rankers were asked for the fusion depth");
});

test("rerankers over one chunk set share each question's BM25 scores and LSA fold-in", () => {
  // Oracle: counting. Two first stages (RRF, score fusion at 0.3) over the default cut train two
  // rerankers on the same questions: each question's BM25 scores at the library's k1 and b, and
  // its fold-in, are worked out once, by the first.
  const data = structuredClone(fixture("site-handbook"));
  const lab = new Lab(data, { stem: data.meta.stem });
  const options = { windowsSet: data.engine.lsa_windows, constants: data.engine.rerank };
  const a = fittedReranker(lab, { retriever: "rrf" }, options);
  const cs = lab.chunkSet();
  const [bm25] = cs._bm25At.values();
  const scores = new Map(bm25.kept);
  const folded = new Map(lab._lsaQuestions);
  const texts = new Set(a.questions.map((q) => lab.questions.find((x) => x.id === q.id).question));
  assert.equal(scores.size, texts.size, "one BM25 score list a question");
  assert.equal(folded.size, texts.size, "one fold-in a question");
  const b = fittedReranker(lab, { retriever: "score", weight: 0.3 }, options);
  assert.notEqual(b, a, "a second reranker");
  assert.equal(cs._bm25At.size, 1);
  for (const [tokens, list] of bm25.kept) assert.equal(list, scores.get(tokens), "the same scores, not worked out again");
  for (const [text, q] of lab._lsaQuestions) assert.equal(q, folded.get(text), "the same fold-in, not worked out again");
});

for (const name of COLLECTIONS) {
  test(`a cut's BM25 statistics counted off the pages' term indices equal its token lists' own: ${name}`, () => {
    // Oracle: BM25Statistics of the chunks' token lists (strings hashed and sorted), field by
    // field, on every chunker of both stemmings; the pages are interned once a stemming. The
    // handbook's site data, or the Cranfield parity collection under the same settings.
    const site = fixture("site-handbook");
    const data = structuredClone(name === "handbook" ? site : { meta: site.meta, collection: fixture(`collection-${name}`) });
    const before = TOKENISED.interned;
    for (const stem of [false, true]) {
      const lab = new Lab(data, { stem });
      for (const key of [{ method: "fixed", size: 37, overlap: 5 }, { method: "sentence" }, { method: "heading", size: 60 }, { method: "heading" }]) {
        const cs = lab.chunkSet(key);
        assert.ok(cs.termIds !== null, "every chunk a slice of its page");
        const got = cs.bm25.stats;
        const want = new BM25Statistics(cs.tokens);
        for (const field of ["terms", "indptr", "docs", "tf", "docLen", "ratio", "idf"]) {
          assert.deepEqual(Array.from(got[field]), Array.from(want[field]), `${JSON.stringify(key)}, stem ${stem}: ${field}`);
        }
        assert.deepEqual([...got.vocabulary], [...want.vocabulary]);
        assert.equal(got.avgdl, want.avgdl);
      }
    }
    assert.equal(TOKENISED.interned - before, 2, "the pages interned once a stemming");
  });
}

test("a new cut's first stage and reranker sum each question's BM25 scores once", () => {
  // Oracle: counting. Training the reranker over RRF on a new cut ranks each answerable
  // question with BM25 and reads its BM25 feature at the same k1 and b: one scoring a question.
  const data = structuredClone(fixture("site-handbook"));
  const lab = new Lab(data, { stem: data.meta.stem });
  const options = { windowsSet: data.engine.lsa_windows, constants: data.engine.rerank };
  lsaModel(lab, { windowsSet: data.engine.lsa_windows });
  const before = SCORED.queries;
  const fitted = fittedReranker(lab, { retriever: "rrf", chunking: { method: "heading", size: 60 } }, options);
  const texts = new Set(fitted.questions.map((q) => lab.questions.find((x) => x.id === q.id).question));
  assert.equal(SCORED.queries - before, texts.size, "one BM25 scoring a question");
});

test("the outdated-copy demo reorders each question at every λ with the cosines its sweep used", () => {
  // Oracle: counting. Once the reranker's λ sweep is measured, the demo (every candidate
  // question reordered by MMR at each λ of the grid) works out no cosine matrix, and a column
  // only where MMR picks a candidate the sweep never picked; its answer is the same asked twice.
  const data = structuredClone(fixture("site-handbook"));
  const get = (url) => answer(data, url, () => {}, {});
  post(data, "/api/rerank/train", null);
  get("/api/rerank/sweep");
  const before = { ...COSINES };
  const demo = get("/api/rerank/version");
  assert.ok(demo.candidates.length > 0, "the handbook has outdated-copy questions");
  assert.equal(COSINES.matrices - before.matrices, 0, "no cosine matrix");
  assert.equal(COSINES.columns - before.columns, 0, "every column the sweep's");
});

test("a new cut's reranker tokenises no section title again", () => {
  // Oracle: counting. The heading chunker at 60 words splits sections the default cut keeps
  // whole; every chunk still carries its section's title and heading path, whose terms the
  // default cut's reranker already tokenised: training over the new cut asks the tokenizer
  // for no text at all (its tokens sliced from the pages, the questions' kept by the lab).
  const data = structuredClone(fixture("site-handbook"));
  const lab = new Lab(data, { stem: data.meta.stem });
  const options = { windowsSet: data.engine.lsa_windows, constants: data.engine.rerank };
  fittedReranker(lab, { retriever: "rrf" }, options);
  const calls = CALLS.tokenize;
  const fitted = fittedReranker(lab, { retriever: "rrf", chunking: { method: "heading", size: 60 } }, options);
  assert.ok(fitted.cs.length > lab.chunkSet().length, "a cut of more chunks");
  assert.equal(CALLS.tokenize - calls, 0, "no text tokenised");
});

test("every chunk set and lab has one shape, whichever exhibit made its caches first", () => {
  // Oracle: the objects' own property names in order, which follow the order V8 gave an
  // object its properties (and so its hidden class): a run's caches made in the order a run
  // makes them, and a cut prepared ahead (routes.js's runAhead: its chunks' inputs and fold-in
  // before any ranking) must leave objects of one shape, else the loops that read both slow
  // down for every later cut.
  const data = structuredClone(fixture("site-handbook"));
  const lab = new Lab(data, { stem: true });
  const windowsSet = data.engine.lsa_windows;
  const ahead = lab.chunkSet({ method: "sentence" });
  chunkFoldIn(lsaModel(lab, { windowsSet }).model, ahead);
  fittedReranker(lab, { retriever: "rrf", chunking: { method: "sentence" } }, { windowsSet, constants: data.engine.rerank });
  const inOrder = lab.chunkSet({ method: "heading", size: 60 });
  ranking(lab, data.collection.questions[0].question, { retriever: "bm25", chunking: { method: "heading", size: 60 } }, { windowsSet });
  fittedReranker(lab, { retriever: "rrf", chunking: { method: "heading", size: 60 } }, { windowsSet, constants: data.engine.rerank });
  assert.ok(ahead._lsa && ahead._rerank && inOrder._rankings && inOrder._lsa, "both sets made their caches");
  assert.deepEqual(Object.keys(ahead), Object.keys(inOrder));
  // A lab whose caches those made, and a new one asked nothing yet.
  assert.deepEqual(Object.keys(lab), Object.keys(new Lab(data, { stem: false })));
});
