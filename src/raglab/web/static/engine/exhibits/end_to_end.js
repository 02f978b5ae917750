// Exhibit VI in the tab: the whole pipeline run on a split, every miss diagnosed, the funnel, one
// base, the threshold swept, and two runs compared by McNemar's exact test.
//
// Mirrors src/raglab/pipeline/end_to_end.py (run_pipeline, threshold_sweep), pipeline/resolve.py
// (the weight, MMR's λ and the threshold chosen on train, each with the ones before it fixed,
// and their tuning notes) and pipeline/exhibits/end_to_end.py (funnel, one_base, risk_coverage,
// compare_runs), answering with the shapes of POST /api/run and /api/run/compare. A neural
// first stage and the cosine reader use the shipped vectors (neural.js); a site without them,
// or a chunk set it holds none for, answers 501.

import { mcnemarExact } from "../metrics/stats.js";
import { mmrOrdered, rerankCandidates, cosineColumns } from "../pipeline/reranking.js";
import { outcomesVector, runSummary, thresholdSweep } from "../pipeline/end_to_end.js";
import { prepareReading, quotableSentences } from "../pipeline/reading.js";
import { documentFrequencies } from "../reading/reader.js";
import { chooseThreshold, DIAGNOSES, found, quoteCorrect } from "../reading/diagnosis.js";
import { readPrepared } from "../reading/readings.js";
import { ranking, tuningNote } from "./fusion.js";
import { defaultOf, fixedOf } from "./lab.js";
import { textVector } from "./neural.js";
import { fittedReranker, firstStage, questionInputs, rerankerSlices } from "./rerank.js";

const EPS = 1e-9;

/** The reader's inputs over a chunk set: quotable sentences (the pages', built once per lab),
 * and `frequencies()`, the chunk count and document frequencies of its stemmed terms (built
 * once per chunk set, when the IDF scoring first asks: the other scorings never read them). */
function readerInputs(lab, cs) {
  if (!cs._reader) {
    const analyzer = fixedOf(lab.meta, "reader_analyzer");
    lab._sentences ??= new Map(lab.pages.map((p) => [p.id, quotableSentences(p.text, { analyzer })]));
    const sentences = lab._sentences;
    let counted = null;
    const frequencies = () => (counted ??= documentFrequencies(cs.readerTokens(analyzer)));
    cs._reader = { analyzer, sentences, frequencies };
  }
  return cs._reader;
}

/** Each question of `split` read under `read` ({stage, rerank, lam, budget, scoring}), with
 * the run's reranker `fitted` (null without one): the readings, in file order (cached). */
function readSplit(lab, read, split, fitted, windowsSet) {
  const { meta } = lab;
  const cs = lab.chunkSet(read.stage.chunking);
  // By the cut, not the setting (as the reranker).
  const key = JSON.stringify([split, { ...read, stage: { ...read.stage, chunking: cs.id } }]);
  if (!lab._readings) lab._readings = new Map();
  if (lab._readings.has(key)) return lab._readings.get(key);
  const inputs = readerInputs(lab, cs);
  // The final list's depth (ReadSettings.final_depth): the reranker's, else the first stage's.
  const deep = read.rerank ? fixedOf(meta, "rerank_depth") : read.stage.depth;
  const depth = deep === 0 ? cs.length : Math.min(deep, cs.length);
  const texts = new Map(lab.pages.map((p) => [p.id, p.text]));
  const [nChunks, df] = read.scoring === "idf" ? inputs.frequencies() : [null, null];
  const readings = lab.split(split).map((q) => {
    let list = Array.from(ranking(lab, q.question, read.stage, { windowsSet }).indices);
    if (fitted !== null) {
      // An answerable question was reranked (and its cosines taken) when the reranker was fitted.
      const known = fitted.byId.get(q.id);
      const qi = known ?? questionInputs(lab, cs, q, read.stage, windowsSet);
      let r = known ? known.reranked : rerankCandidates(fitted.model, qi.candidates, qi.features);
      if (read.lam !== null) {
        const sim = known ? known.similarity : cosineColumns(Array.from(r.indices, (i) => fitted.tfidf[i]));
        r = mmrOrdered(r, sim, { lam: read.lam, depth: fixedOf(meta, "mmr_depth") });
      }
      list = r.indices;
    }
    const question = {
      text: q.question,
      answerable: q.answerable,
      spans: q.spans.map((s) => [s.page_id, s.start, s.end]),
    };
    const inp = prepareReading(question, list, {
      chunks: cs.chunks,
      relevant: cs.relevance(q),
      sentences: inputs.sentences,
      budget: read.budget,
      depth,
      scoring: read.scoring,
      df,
      nChunks,
      analyzer: inputs.analyzer,
    });
    if (read.scoring === "cosine") {
      // The question's and each candidate sentence's vectors, each encoded alone by the server.
      inp.questionVector = textVector(lab.data, q.question);
      inp.sentenceVectors = ([page, start, end]) => textVector(lab.data, texts.get(page).slice(start, end));
    }
    const r = readPrepared(inp);
    r.q = q;
    r.bestText = r.best === null ? null : texts.get(r.best[0]).slice(r.best[1], r.best[2]);
    return r;
  });
  lab._readings.set(key, readings);
  return readings;
}

/** A tuning note on the reader's threshold, counted on every training question. */
function thresholdNote(meta, value, questions) {
  const note = tuningNote(meta, "threshold", value, fixedOf(meta, "reader_thresholds"), questions);
  if (note.sentence) note.sentence = note.sentence.replace("answerable training", "training");
  return note;
}

/** A run's first-stage settings (firstStage's) from its request's `given`. */
function stageSettings(given) {
  return {
    retriever: given.retriever,
    weight: given.weight,
    chunking: { method: given.chunker, size: given.size, overlap: given.overlap },
    k1: given.k1,
    b: given.b,
    depth: given.depth,
    fusionDepth: given.fusion_depth,
  };
}

/** The run `given` asks for, prepared ahead in slices, each a function to call in turn while
 * the tab is idle: its cut and what the reranker reads of every chunk, then its answerable
 * questions' candidates and features `batch` questions a slice, then the reranker's training
 * (rerankerSlices, and fittedReranker). Each leaves its values in the caches runResult reads
 * (the chunk set's, the lab's), so the run itself is left its readings; every value is the
 * one runResult would compute, as the same functions compute it. */
export function runSlices(lab, given, { windowsSet, constants, batch }) {
  if (!given.rerank) return [];
  const stage = () => firstStage(lab, stageSettings(given), windowsSet);
  return [
    ...rerankerSlices(lab, stage, { windowsSet, batch }),
    () => fittedReranker(lab, stage(), { windowsSet, constants }),
  ];
}

/** The settings a request gives, resolved, run on its split: POST /api/run's answer less the
 * request echo. `given` holds the request's settings (defaults filled, nulls left). */
export function runResult(lab, given, split, { windowsSet, constants }) {
  const { meta } = lab;
  const weightGiven = given.weight;
  const stage = firstStage(lab, stageSettings(given), windowsSet);
  const cs = lab.chunkSet(stage.chunking);
  const mmr = given.rerank && given.mmr;
  const fitted = given.rerank ? fittedReranker(lab, stage, { windowsSet, constants }) : null;
  let lam = null;
  if (mmr) lam = given.mmr_lambda ?? fitted.exhibit.chosenLambda;
  const read = { stage, rerank: given.rerank, lam, budget: given.budget, scoring: given.reader_scoring };
  const thresholds = fixedOf(meta, "reader_thresholds");
  const threshold = given.threshold ?? chooseThreshold(readSplit(lab, read, "train", fitted, windowsSet), thresholds);
  const readings = readSplit(lab, read, split, fitted, windowsSet);
  const summary = runSummary(readings, threshold, { z: constants.wilson_z });
  const chosen = [];
  if (stage.weight !== null && weightGiven === null) chosen.push("weight");
  if (lam !== null && given.mmr_lambda === null) chosen.push("mmr_lambda");
  if (given.threshold === null) chosen.push("threshold");
  const answerableTrain = lab.split("train", { answerable: true }).length;
  const tuning = chosen.map((name) => {
    if (name === "threshold") return thresholdNote(meta, threshold, lab.split("train").length);
    const value = name === "weight" ? stage.weight : lam;
    const grid = fixedOf(meta, name === "weight" ? "fusion_weights" : "mmr_lambdas");
    return tuningNote(meta, name, value, grid, answerableTrain);
  });
  const answers = new Map(lab.data.questions.map((q) => [q.id, q.answer]));
  const outcomes = readings.map((r, i) => {
    const quoted = found(r, threshold);
    return {
      id: r.q.id,
      question: r.q.question,
      kind: r.q.kind,
      answerable: r.q.answerable,
      outcome: summary.outcomes[i],
      rank: r.rank,
      k_budget: r.kBudget,
      quote: quoted ? r.bestText : null,
      quote_chunk: quoted ? r.bestChunk : null,
      coverage: r.coverage,
      answer: r.q.answerable ? answers.get(r.q.id) : null,
      quote_relation: quoted ? r.relation : "not found",
      false_answer: quoted && !quoteCorrect(r),
    };
  });
  const settings = {
    ...given,
    size: cs.key.size,
    overlap: cs.key.overlap,
    weight: stage.weight,
    mmr,
    mmr_lambda: mmr ? lam : given.mmr_lambda,
    threshold,
  };
  return {
    settings,
    chosen_on_train: chosen,
    split,
    threshold,
    mmr_lambda: lam,
    outcomes,
    correct: summary.correct,
    n: summary.n,
    accuracy: summary.accuracy,
    interval: summary.interval,
    answerable: summary.answerable,
    answerable_correct: summary.answerable_correct,
    bound: summary.bound,
    funnel: summary.funnel,
    tuning,
    _readings: readings,
    _read: read,
    _fitted: fitted,
  };
}

/** exhibits/end_to_end.py's funnel: where answerable questions drop out, stage by stage. */
export function funnel(meta, result) {
  const counts = result.funnel;
  let left = result.answerable;
  const stages = [{ stage: "answerable", count: left, lost: 0, loss: null, answered: 0 }];
  for (const [stage, loss] of [
    ["whole in one chunk", "cut"],
    [`in the first ${defaultOf(meta, "fusion_depth")}`, "not retrieved"],
    ["inside the budget", "past budget"],
    ["quoted correctly", "reader"],
  ]) {
    const lost = counts[loss] ?? 0;
    left -= lost;
    const answered = result.outcomes.filter((o) => o.outcome === loss && o.false_answer).length;
    stages.push({ stage, count: left, lost, loss, answered });
  }
  const kinds = new Map();
  for (const o of result.outcomes) {
    if (!kinds.has(o.kind)) kinds.set(o.kind, { kind: o.kind, n: 0, correct: 0, lost: Object.fromEntries(DIAGNOSES.map((d) => [d, 0])) });
    const row = kinds.get(o.kind);
    row.n += 1;
    if (o.outcome === "correct") row.correct += 1;
    else row.lost[o.outcome] += 1;
  }
  const unanswerable = result.n - result.answerable;
  return {
    stages,
    kinds: [...kinds.values()],
    unanswerable,
    declined: unanswerable - (counts["false answer"] ?? 0),
    false_answers: counts["false answer"] ?? 0,
  };
}

/** exhibits/end_to_end.py's one_base: accuracy and bound counted on the same questions. */
export function oneBase(result) {
  const answerable = result.outcomes.filter((o) => o.answerable);
  const fits = answerable.filter((o) => o.rank !== null && o.rank <= o.k_budget).length;
  const unanswerable = result.n - answerable.length;
  return {
    answerable: { n: answerable.length, correct: result.answerable_correct, bound: fits },
    all: { n: result.n, correct: result.correct, bound: fits + unanswerable },
  };
}

/** exhibits/end_to_end.py's risk_coverage: the run's reader at every threshold of the grid. */
export function riskCoverage(lab, result, { windowsSet }) {
  const thresholds = fixedOf(lab.meta, "reader_thresholds");
  const points = thresholdSweep(result._readings, thresholds);
  const given = !result.chosen_on_train.includes("threshold");
  const chosen = given
    ? chooseThreshold(readSplit(lab, result._read, "train", result._fitted, windowsSet), thresholds)
    : result.threshold;
  const at = (t) => points.find((p) => Math.abs(p.threshold - t) < EPS) ?? thresholdSweep(result._readings, [t])[0];
  return { points, threshold: result.threshold, chosen_on_train: chosen, given, at_run: at(result.threshold), at_chosen: at(chosen) };
}

/** Strip the run's working parts, leaving RunResult.to_dict's fields. */
export function plainRun(result) {
  const { _readings, _read, _fitted, ...rest } = result;
  return rest;
}

/** exhibits/end_to_end.py's compare_runs: McNemar's exact test and the questions that changed. */
export function compareRuns(a, b) {
  const t = mcnemarExact(outcomesVector(a._readings, a.threshold), outcomesVector(b._readings, b.threshold));
  const changed = [];
  a.outcomes.forEach((x, i) => {
    const y = b.outcomes[i];
    if ((x.outcome === "correct") !== (y.outcome === "correct")) {
      changed.push({ id: x.id, question: x.question, a: x.outcome, b: y.outcome, better: y.outcome === "correct" ? "b" : "a" });
    }
  });
  return { n: t.n, both_right: t.bothRight, only_a: t.onlyA, only_b: t.onlyB, both_wrong: t.bothWrong, p_value: t.pValue, changed };
}
