// Packing, the reader, the diagnosis and the run's figures in JavaScript equal Python's
// (src/raglab/reading/, pipeline/reading.py, pipeline/end_to_end.py): oracle, the parity fixture
// reading.json, the handbook's end-to-end run (Cranfield has no answer passages) at the
// defaults, both ends of the budget slider, the smallest fixed chunks, without the reranker and
// with each reader scoring (the cosine one over LSA vectors). From Python's final lists the
// JavaScript engine packs, reads and diagnoses every question of both splits: packed counts,
// ranks, quoted sentences, relations and outcomes exactly, coverages within 1e-12; then the
// threshold chosen on train, the run's counts and Wilson interval, the sweep, McNemar's tests.
import { test } from "node:test";
import assert from "node:assert/strict";
import { quotableSentences, prepareReading } from "../../../../../src/raglab/web/static/engine/pipeline/reading.js";
import { outcomesVector, runSummary, thresholdSweep } from "../../../../../src/raglab/web/static/engine/pipeline/end_to_end.js";
import { readPrepared } from "../../../../../src/raglab/web/static/engine/reading/readings.js";
import { documentFrequencies, isCorrect, quoteRelation, read, readCosine } from "../../../../../src/raglab/web/static/engine/reading/reader.js";
import { chooseThreshold, diagnose, OUTCOMES } from "../../../../../src/raglab/web/static/engine/reading/diagnosis.js";
import { mcnemarExact } from "../../../../../src/raglab/web/static/engine/metrics/stats.js";
import { tokenize } from "../../../../../src/raglab/web/static/engine/text/tokens.js";
import { allClose, close, fixture, same } from "../fixtures.mjs";

const pages = () => new Map(fixture("collection-handbook").pages.map((p) => [p.id, p]));

test("each page's quotable sentences and their stemmed terms", () => {
  const f = fixture("reading");
  for (const [id, page] of pages()) {
    const got = quotableSentences(page.text, { analyzer: f.analyzer }).map(([a, b, t]) => [a, b, [...t].sort()]);
    // Python sorts terms by code point; the stemmed terms here are ASCII, where the orders agree.
    same(got, f.sentences[id], `page ${id}: sentences`);
  }
});

/** Every reading of a run's split, from Python's final lists. */
function readSplit(f, run, split) {
  const questions = fixture("collection-handbook").questions;
  const chunks = run.chunks.map(([id, pageId, start, end, nWords]) => ({ id, pageId, start, end, nWords }));
  const sentences = new Map(Object.entries(f.sentences).map(([id, rows]) => [id, rows.map(([a, b, t]) => [a, b, new Set(t)])]));
  let df = new Map(Object.entries(run.df));
  if (run.scoring === "idf") {
    // The IDF scoring's document frequencies, over the chunks' stemmed terms, found here.
    const texts = new Map(fixture("collection-handbook").pages.map((p) => [p.id, p.text]));
    const docs = chunks.map((c) => tokenize(texts.get(c.pageId).slice(c.start, c.end), { stem: true, analyzer: f.analyzer }));
    const [n, found] = documentFrequencies(docs);
    assert.equal(n, run.n_chunks, "chunks counted");
    same([...df.keys()].map((t) => found.get(t) ?? 0), [...df.values()], "document frequencies of the questions' terms");
    df = found;
  }
  return run.splits[split].map((row) => {
    const q = questions[row.question];
    const question = {
      text: q.question,
      answerable: q.spans.length > 0 || q.pages !== null,
      spans: q.spans.map((s) => [s.page_id, s.start, s.end]),
    };
    const scoring = run.scoring === "cosine" ? "coverage" : run.scoring;
    const inp = prepareReading(question, row.ranking, {
      chunks, relevant: new Set(row.relevance), sentences, budget: run.budget, depth: run.depth,
      scoring, df, nChunks: run.n_chunks, analyzer: f.analyzer,
    });
    if (run.scoring === "cosine") {
      inp.questionVector = run.vectors[`question:${q.id}`];
      inp.sentenceVectors = ([page, a, b]) => run.vectors[`${page}:${a}:${b}`];
    }
    return readPrepared(inp);
  });
}

const runs = fixture("reading").runs;
runs.forEach((run, i) => {
  test(`the end-to-end run at ${JSON.stringify(run.settings)} (run ${i})`, () => {
    const f = fixture("reading");
    const readings = {};
    for (const split of ["train", "test"]) {
      readings[split] = readSplit(f, run, split);
      readings[split].forEach((r, j) => {
        const [rank, kBudget, depth, best, bestChunk, coverage, relation, cut] = run.splits[split][j].reading;
        const what = `${split} question ${j}`;
        same([r.rank, r.kBudget, r.depth, r.best, r.bestChunk, r.relation, r.cut], [rank, kBudget, depth, best, bestChunk, relation, cut], what);
        close(r.coverage, coverage, `${what}: coverage`, 1e-12);
      });
    }
    const threshold = chooseThreshold(readings.train, f.thresholds);
    assert.equal(threshold, run.threshold, "the threshold chosen on train");
    readings.test.forEach((r, j) => {
      same(f.thresholds.map((t) => diagnose(r, t)), run.diagnoses[j], `test question ${j}: diagnoses at every threshold`);
    });
    if (run.run) {
      const got = runSummary(readings.test, threshold, { z: f.z });
      same(got.outcomes, run.run.outcomes, "outcomes");
      for (const key of ["correct", "n", "answerable", "answerable_correct"]) assert.equal(got[key], run.run[key], key);
      close(got.accuracy, run.run.accuracy, "accuracy", 1e-12);
      close(got.bound, run.run.bound, "bound", 1e-12);
      allClose(got.interval, run.run.interval, "Wilson interval", 1e-12);
      same(Object.entries(got.funnel), Object.entries(run.run.funnel), "funnel");
      same(thresholdSweep(readings.test, f.thresholds), run.run.sweep, "threshold sweep");
    }
  });
});

test("every outcome occurs, and McNemar's test of each run against the default", () => {
  const f = fixture("reading");
  const seen = new Set(runs.flatMap((r) => r.diagnoses.flat()));
  same(OUTCOMES.filter((o) => seen.has(o)), OUTCOMES, "outcomes met");
  const plain = runs.filter((r) => r.run);
  const vector = (run) => outcomesVector(readSplit(f, run, "test"), run.threshold);
  const base = vector(plain[0]);
  assert.equal(f.mcnemar.length, plain.length - 1);
  plain.slice(1).forEach((run, i) => {
    const r = mcnemarExact(base, vector(run));
    same([r.n, r.bothRight, r.onlyA, r.onlyB, r.bothWrong, r.pValue], f.mcnemar[i], `McNemar, default against ${JSON.stringify(run.settings)}`);
  });
});

test("the reader's, the quote's and the diagnosis's rules at their edges", () => {
  const { edges } = fixture("reading");
  const answered = (a) => [a.found, a.sentence, a.coverages.length];
  edges.coverage.forEach(([q, s, threshold, w, want], i) => {
    const got = read(q, s.map((x) => new Set(x)), { threshold, weights: w === null ? null : new Map(Object.entries(w)) });
    same(answered(got), [want[0], want[1], want[3].length], `coverage case ${i}`);
    close(got.coverage, want[2], `coverage case ${i}: coverage`, 1e-12);
    allClose([...got.coverages], want[3], `coverage case ${i}: coverages`, 1e-12);
  });
  edges.cosine.forEach(([qv, sv, threshold, want], i) => {
    const got = readCosine(qv, sv, { threshold });
    same(answered(got), [want[0], want[1], want[3].length], `cosine case ${i}`);
    close(got.coverage, want[2], `cosine case ${i}: cosine`, 1e-12);
    allClose([...got.coverages], want[3], `cosine case ${i}: cosines`, 1e-12);
  });
  edges.quotes.forEach(([quote, spans, relation, correct], i) => {
    assert.equal(quoteRelation(quote, spans), relation, `quote case ${i}: relation`);
    assert.equal(isCorrect(quote, spans), correct, `quote case ${i}: correct`);
  });
  edges.diagnoses.forEach(([[rank, kBudget, depth, best, coverage, relation, cut, answerable], want], i) => {
    const r = { rank, kBudget, depth, best, coverage, relation, cut, answerable };
    same(edges.thresholds.map((t) => diagnose(r, t)), want, `diagnosis case ${i}`);
  });
});
