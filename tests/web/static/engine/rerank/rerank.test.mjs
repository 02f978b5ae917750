// The reranker in JavaScript equals Python's (src/raglab/rerank/, pipeline/reranking.py):
// oracle, the parity fixture rerank.json (the default first stage on the handbook, stemming off
// and on, and on Cranfield; BM25 at the k1 and b sliders' lowest corner on the handbook). From
// the chunks' texts the engine finds each candidate's identifiers and title terms and the TF-IDF
// cosines (within 1e-12); then the feature matrices (within 1e-12), the logistic regression's
// weights (within 1e-9 relative, its step count exactly), the reranked and MMR orders exactly,
// the exhibit's rows, its λ sweep and the λ chosen on train.
import { test } from "node:test";
import assert from "node:assert/strict";
import { pageAgeYears } from "../../../../../src/raglab/web/static/engine/rerank/features.js";
import { fitStandardiser, sigmoid, standardise } from "../../../../../src/raglab/web/static/engine/rerank/logistic.js";
import { BM25Statistics, compareCodePoints } from "../../../../../src/raglab/web/static/engine/bm25/statistics.js";
import {
  chunkFeatureInputs,
  chunkTfidf,
  cosineColumns,
  cosineMatrix,
  mmrOrdered,
  postingsTfidf,
  questionFeatures,
  rerankCandidates,
  rerankExhibit,
  trainReranker,
} from "../../../../../src/raglab/web/static/engine/pipeline/reranking.js";
import { identifiers, identifiersAmong, tokenize } from "../../../../../src/raglab/web/static/engine/text/tokens.js";
import { allClose, close, fixture, same } from "../fixtures.mjs";

const options = (f) => ({
  l2: f.l2,
  learningRate: f.learning_rate,
  iterations: f.iterations,
  tolerance: f.tolerance,
  init: f.init,
  featureNames: f.features,
});

const chunkSets = new Map();

/** The steps plain full-batch gradient descent, θ ← θ − η ∇L(θ), takes from the fit's start to a
 * gradient norm below the tolerance: the reranker's fit before momentum, written out here. */
function plainDescentSteps(X, y, { l2, learningRate, iterations, tolerance, init }) {
  const Z = standardise(fitStandardiser(X), X);
  const m = Z.length;
  const d = init.length;
  const w = Float64Array.from(init);
  const positives = y.reduce((s, v) => s + v, 0);
  let b = Math.log(positives / (m - positives));
  for (let steps = 0; steps < iterations; steps++) {
    const gw = new Float64Array(d);
    let gb = 0.0;
    Z.forEach((row, i) => {
      const r = sigmoid(row.reduce((s, x, j) => s + x * w[j], 0.0) + b) - y[i];
      row.forEach((x, j) => (gw[j] += x * r));
      gb += r;
    });
    let norm2 = (gb / m) ** 2;
    for (let j = 0; j < d; j++) {
      gw[j] = gw[j] / m + l2 * w[j];
      norm2 += gw[j] ** 2;
    }
    if (Math.sqrt(norm2) < tolerance) return steps;
    for (let j = 0; j < d; j++) w[j] -= learningRate * gw[j];
    b -= (learningRate * gb) / m;
  }
  return iterations;
}

/** A collection's chunks as the reranker reads them (tokens, identifiers, title terms, TF-IDF
 * rows), computed here from the pages' texts and the chunks' spans and heading paths. */
function chunkSet(collection, stem) {
  const key = `${collection}, stemming ${stem}`;
  if (!chunkSets.has(key)) {
    const f = fixture("rerank");
    const pages = new Map(fixture(`collection-${collection}`).pages.map((p) => [p.id, p]));
    const chunks = f.chunk_sets[collection].map(([pageId, start, end, headingPath]) => {
      const page = pages.get(pageId);
      return { text: page.text.slice(start, end), title: page.title, headingPath };
    });
    const inputs = chunkFeatureInputs(chunks, { stem, analyzer: f.analyzer });
    chunkSets.set(key, { inputs, tfidf: chunkTfidf(inputs.map((c) => c.tokens)) });
  }
  return chunkSets.get(key);
}

const sorted = (values) => [...values].sort(compareCodePoints);

/** A question's feature inputs: its scores and question terms from the fixture, each
 * candidate's identifiers and title terms from the chunks (checked against Python's). */
function inputs(q, chunks, what) {
  const chunkIdentifiers = q.candidates.map((i) => chunks.inputs[i].identifiers);
  const titleTerms = q.candidates.map((i) => chunks.inputs[i].titleTerms);
  same(chunkIdentifiers.map(sorted), q.chunk_identifiers, `${what}: candidates' identifiers`);
  same(titleTerms.map(sorted), q.title_terms, `${what}: candidates' title terms`);
  return {
    bm25: q.bm25,
    cosine: q.cosine,
    questionIdentifiers: q.question_identifiers,
    chunkIdentifiers,
    questionTerms: q.question_terms,
    titleTerms,
    ageYears: q.age_years,
  };
}

test("a chunk's identifiers read off its tokens equal those found in its text", () => {
  // Oracle: identifiers(text), which tokenises the text itself (checked against Python's in
  // tokens.test.mjs), on every page and title of both collections, tokens stemmed or not.
  let found = 0;
  for (const name of ["handbook", "cranfield"]) {
    for (const page of fixture(`collection-${name}`).pages) {
      for (const text of [page.text, page.title]) {
        const want = [...identifiers(text)];
        found += want.length;
        for (const stem of [false, true]) {
          same([...identifiersAmong(tokenize(text, { stem, analyzer: "raglab" }))], want, `${page.id}, stemming ${stem}`);
        }
      }
    }
  }
  assert.ok(found > 100, `only ${found} identifiers: the oracle would check little`);
});

test("page ages: the newest dated chunk's page is 0, undated ones the median", () => {
  const { ages, undated } = fixture("rerank");
  allClose(pageAgeYears(ages.updated), ages.age_years, "page ages", 1e-12);
  assert.equal(undated.updated.filter((d) => d !== null).length % 2, 0);
  allClose(pageAgeYears(undated.updated), undated.age_years, "undated pages' ages", 1e-12);
});

for (const [c, name] of fixture("rerank").cases.map((c, i) => [c, `${c.collection}, ${c.first_stage}, stemming ${c.stem ? "on" : "off"} (case ${i})`])) {
  test(`the reranker, ${name}`, () => {
    const f = fixture("rerank");
    const chunks = chunkSet(c.collection, c.stem);
    const questions = c.questions.map((q, i) => {
      // The TF-IDF cosines between the reranked list's chunks, computed here.
      const similarity = cosineMatrix(q.reranked[0].map((chunk) => chunks.tfidf[chunk]));
      if (q.similarity !== null) {
        similarity.forEach((row, r) => allClose(row, q.similarity[r], `question ${i}: TF-IDF cosines, row ${r}`, 1e-12));
      }
      // The same cosines a column at a time, as the exhibits' MMR reads them: bit for bit.
      const columns = cosineColumns(q.reranked[0].map((chunk) => chunks.tfidf[chunk]));
      for (let j = 0; j < similarity.length; j++) {
        const column = columns.column(j);
        const differ = similarity.findIndex((row, r) => !Object.is(row[j], column[r]));
        assert.equal(differ, -1, `question ${i}: cosine column ${j}, row ${differ}`);
      }
      return { ...q, relevant: new Map(q.relevance), similarity, columns, features: questionFeatures(inputs(q, chunks, `question ${i}`)) };
    });
    assert.equal(c.questions.some((q) => q.similarity !== null), name.endsWith("(case 0)"));
    questions.forEach((q, i) => {
      assert.equal(q.features.length, q.candidates.length);
      q.features.forEach((row, r) => allClose(row, c.questions[i].features[r], `question ${i}, row ${r}`, 1e-12));
    });
    const train = questions
      .filter((q) => q.split === "train")
      .map((q) => ({ ...q, relevant: [...q.relevant.keys()] }));
    const { model, rows, positives } = trainReranker(train, options(f));
    const want = c.model;
    assert.equal(rows, want.rows, "training rows");
    assert.equal(positives, want.positives, "positive rows");
    assert.equal(model.iterations, want.iterations, "gradient steps");
    assert.equal(model.converged, want.converged, "converged");
    allClose(model.standardiser.mean, want.mean, "standardiser mean", 1e-12);
    allClose(model.standardiser.std, want.std, "standardiser std", 1e-12);
    model.weights.forEach((w, j) => {
      const e = want.weights[j];
      assert.ok(Math.abs(w - e) <= 1e-9 * Math.abs(e), `weight ${f.features[j]}: ${w} != ${e} (1e-9 relative)`);
    });
    assert.ok(Math.abs(model.bias - want.bias) <= 1e-9 * Math.abs(want.bias), `bias ${model.bias} != ${want.bias}`);
    close(model.loss, want.loss, "training loss", 1e-12);
    close(model.gradientNorm, want.gradient_norm, "final gradient norm", 1e-6);
    // Momentum with restarts: the same optimum in at most a third of plain descent's steps (on
    // the handbook's default run 269 against 2,867). Oracle: plain descent, written out above.
    const X = train.flatMap((q) => q.features);
    const y = train.flatMap((q) => q.candidates.map((i) => (q.relevant.includes(i) ? 1 : 0)));
    const plain = plainDescentSteps(X, y, options(f));
    assert.ok(model.converged && 3 * model.iterations <= plain, `${model.iterations} steps, plain descent ${plain}`);

    const doubled = questions[0].features.flatMap((row) => [row, row]);
    const ties = rerankCandidates(model, doubled.map((_, i) => i), doubled);
    same(ties.indices, c.ties, "equal probabilities in first-stage order");
    questions.forEach((q, i) => {
      const got = rerankCandidates(model, q.candidates, q.features);
      same(got.indices, q.reranked[0], `question ${i}: reranked order`);
      allClose(got.scores, q.reranked[1], `question ${i}: probabilities`, 1e-9);
      // MMR on Python's reranked list, so a near-tie above cannot hide a difference here.
      const reranked = { indices: q.reranked[0], scores: q.reranked[1] };
      [0.0, c.chosen_lambda, 1.0].forEach((lam, l) => {
        const order = mmrOrdered(reranked, q.similarity, { lam, depth: f.mmr_depth });
        same(order.indices, q.mmr[l], `question ${i}: MMR order at λ ${lam}`);
        const byColumn = mmrOrdered({ ...reranked }, cosineColumns(q.reranked[0].map((chunk) => chunks.tfidf[chunk])), { lam, depth: f.mmr_depth });
        same(byColumn.indices, q.mmr[l], `question ${i}: MMR order at λ ${lam}, cosines by column`);
      });
    });
    const exhibit = rerankExhibit(
      questions.map((q) => ({ ...q, reranked: { indices: q.reranked[0], scores: q.reranked[1] } })),
      { lambdas: f.lambdas, depth: f.mmr_depth, ks: f.evaluate.ks, ndcgK: f.evaluate.ndcg_k, precisionK: f.evaluate.precision_k },
    );
    assert.equal(exhibit.chosenLambda, c.chosen_lambda, "λ chosen on train");
    const flat = (rows) => rows.map((r) => Object.entries(r));
    assert.equal(exhibit.rows.length, c.rows.length);
    exhibit.rows.forEach((row, r) => {
      for (const [key, value] of Object.entries(c.rows[r])) {
        if (typeof value === "number") close(row[key], value, `row ${r} ${key}`, 1e-12);
        else assert.equal(row[key], value, `row ${r} ${key}`);
      }
    });
    same(Object.keys(exhibit.sweep), Object.keys(c.sweep), "sweep keys");
    assert.equal(exhibit.sweep.chosen_lambda, c.sweep.chosen_lambda);
    assert.equal(exhibit.sweep.rule_metric, c.sweep.rule_metric);
    same(flat(exhibit.sweep.points).map((r) => r.map(([k]) => k)), flat(c.sweep.points).map((r) => r.map(([k]) => k)), "sweep columns");
    exhibit.sweep.points.forEach((p, r) => {
      for (const [key, value] of Object.entries(c.sweep.points[r])) {
        if (typeof value === "number") close(p[key], value, `sweep point ${r} ${key}`, 1e-12);
        else assert.equal(p[key], value);
      }
    });
    for (const split of ["train", "test"]) {
      for (const [key, value] of Object.entries(c.sweep.reference[split])) {
        close(exhibit.sweep.reference[split][key], value, `reference ${split} ${key}`, 1e-12);
      }
    }
  });
}

test("the TF-IDF rows read off a BM25 index's postings are those counted from the tokens", () => {
  // Oracle: chunkTfidf, which counts each chunk's tokens (and is checked against Python's
  // cosines above); every row, column and weight equal, to the last bit.
  for (const collection of Object.keys(fixture("rerank").chunk_sets)) {
    for (const stem of [false, true]) {
      const tokens = chunkSet(collection, stem).inputs.map((c) => c.tokens);
      const counted = chunkTfidf(tokens);
      assert.ok(counted.some((row) => row.length > 1), `${collection}: rows with several terms`);
      assert.deepEqual(postingsTfidf(new BM25Statistics(tokens)), counted, `${collection}, stemming ${stem}`);
    }
  }
});
