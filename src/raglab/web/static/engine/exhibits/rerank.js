// Exhibit V in the tab: the reranker trained on train over a first stage, every order measured,
// MMR's λ swept and chosen on train.
//
// Mirrors src/raglab/pipeline/exhibits/rerank.py (fitted_reranker, reranker_summary,
// rerank_rows, lambda_sweep) and the features of pipeline/reranking.py: a candidate's BM25 score
// at the library's k1 and b, its LSA cosine with the question, identifier match, title-term
// share, page age and first-stage rank. The six starting weights come from data/site.json
// (site.py's rerank_constants), the draw of numpy's generator the engine does not reproduce.
// A neural first stage's cosine feature is the neural one, from the shipped vectors (neural.js).

import { project } from "../embedding/lsa.js";
import { pageAgeYears } from "../rerank/features.js";
import {
  chunkFeatureInputs,
  cosineColumns,
  mmrOrdered,
  postingsTfidf,
  questionFeatures,
  rerankCandidates,
  rerankExhibit,
  trainReranker,
} from "../pipeline/reranking.js";
import { identifiers } from "../text/tokens.js";
import { chooseWeight, ranking, stageOf, tuningNote } from "./fusion.js";
import { chunkRow, fixedOf } from "./lab.js";
import { chunkFoldIn, lsaModel } from "./lsa.js";
import { neuralCosines } from "./neural.js";

/** The chunk set's reranker inputs: each chunk's identifiers and title terms, its page's age
 * in years, its TF-IDF row (built once per chunk set). */
function chunkInputs(lab, cs) {
  if (!cs._rerank) {
    // Each title's terms kept on the lab: every cut's chunks of a section share its title.
    lab._titleTerms ??= new Map();
    const inputs = chunkFeatureInputs(cs.chunks, { stem: lab.stem, analyzer: lab.analyzer, tokens: cs.tokens, titles: lab._titleTerms });
    const updated = new Map(lab.pages.map((p) => [p.id, p.updated ?? null]));
    cs._rerank = {
      inputs,
      // chunkTfidf of the chunks' tokens, from the postings of their BM25 index.
      tfidf: postingsTfidf(cs.bm25.stats),
      ages: pageAgeYears(cs.chunks.map((c) => updated.get(c.pageId))),
    };
  }
  return cs._rerank;
}

/** The LSA cosine of a question with each candidate: dot / (|d| |q|), 0 where either is zero
 * (pipeline/reranking.py's _cosines for a first stage without neural vectors). The question's
 * fold-in and its norm are kept per text (no chunk set changes them), each chunk's squared norm
 * per chunk set: every first stage over a chunk set, every cut, asks for them again. */
function lsaCosines(lab, cs, text, tokens, candidates, windowsSet) {
  const { model } = lsaModel(lab, { windowsSet });
  chunkFoldIn(model, cs);
  const { rank } = model;
  if (!cs._lsaSquares) {
    const squares = new Float64Array(cs.length);
    for (let i = 0; i < cs.length; i++) {
      let dd = 0.0;
      for (let c = 0; c < rank; c++) {
        const v = cs._lsa[i * rank + c];
        dd += v * v;
      }
      squares[i] = dd;
    }
    cs._lsaSquares = squares;
  }
  lab._lsaQuestions ??= new Map();
  let question = lab._lsaQuestions.get(text);
  if (question === undefined) {
    const q = project(model, [tokens]);
    let qq = 0.0;
    for (let c = 0; c < rank; c++) qq += q[c] * q[c];
    question = { q, norm: Math.sqrt(qq) };
    lab._lsaQuestions.set(text, question);
  }
  const { q, norm: qNorm } = question;
  return candidates.map((i) => {
    let dot = 0.0;
    for (let c = 0; c < rank; c++) dot += cs._lsa[i * rank + c] * q[c];
    const norms = Math.sqrt(cs._lsaSquares[i]) * qNorm;
    return norms > 0 ? dot / norms : 0.0;
  });
}

/** The first stage `settings` stand for (fusion.js's stageOf), a score fusion's weight chosen
 * on train when not given (pipeline/retrieval.py's resolve). */
export function firstStage(lab, settings, windowsSet) {
  const stage = stageOf(lab.meta, settings);
  const weighted = fixedOf(lab.meta, "score_fusions").includes(stage.retriever);
  stage.weight = weighted ? (stage.weight ?? chooseWeight(lab, { windowsSet, settings: stage })) : null;
  return stage;
}

/** A labelled question's candidates, their features, and its answer chunks (kept per chunk
 * set: a run reads the questions its reranker was trained and measured on). */
export function questionInputs(lab, cs, q, stage, windowsSet) {
  // Kept on the chunk set, whichever chunker setting cut it.
  const key = JSON.stringify([{ ...stage, chunking: null }, q.id, q.question]);
  cs._questionInputs ??= new Map();
  let out = cs._questionInputs.get(key);
  if (out === undefined) {
    out = computeInputs(lab, cs, q, stage, windowsSet);
    cs._questionInputs.set(key, out);
  }
  return out;
}

function computeInputs(lab, cs, q, stage, windowsSet) {
  const { meta } = lab;
  const depth = fixedOf(meta, "rerank_depth");
  const candidates = Array.from(ranking(lab, q.question, stage, { windowsSet }).indices.slice(0, depth));
  const tokens = lab.queryTokens(q.question);
  const chunks = chunkInputs(lab, cs);
  // The question's BM25 scores at the stage's k1 and b, summed once on the chunk set (its
  // first stage's ranking read the same ones): every first stage over it reads them.
  const all = cs.bm25At(stage.k1, stage.b).scores(tokens);
  lab._questionIdentifiers ??= new Map();
  if (!lab._questionIdentifiers.has(q.question)) lab._questionIdentifiers.set(q.question, identifiers(q.question));
  const features = questionFeatures({
    bm25: candidates.map((i) => all[i]),
    cosine: fixedOf(meta, "neural_retrievers").includes(stage.retriever)
      ? neuralCosines(lab, cs, q.question, candidates)
      : lsaCosines(lab, cs, q.question, tokens, candidates, windowsSet),
    questionIdentifiers: lab._questionIdentifiers.get(q.question),
    chunkIdentifiers: candidates.map((i) => chunks.inputs[i].identifiers),
    questionTerms: tokens,
    titleTerms: candidates.map((i) => chunks.inputs[i].titleTerms),
    ageYears: candidates.map((i) => chunks.ages[i]),
  });
  return { id: q.id, split: q.split, candidates, features, relevant: cs.relevance(q) };
}

/** The reranker's inputs over the first stage `stage()` returns (firstStage's), worked out
 * ahead in slices for runSlices: the cut, its BM25 index at the stage's k1 and b, each chunk's
 * reranker inputs and LSA fold-in (where no neural stage gives the cosine); then the answerable
 * questions (train, then test, as fittedReranker asks for them), `batch` a slice. `stage` is
 * called in each slice, so that nothing is computed before the first is. */
export function rerankerSlices(lab, stage, { windowsSet, batch }) {
  const questions = [...lab.split("train", { answerable: true }), ...lab.split("test", { answerable: true })];
  const slices = [
    () => {
      const s = stage();
      const cs = lab.chunkSet(s.chunking);
      cs.bm25At(s.k1, s.b);
      chunkInputs(lab, cs);
      if (!fixedOf(lab.meta, "neural_retrievers").includes(s.retriever)) chunkFoldIn(lsaModel(lab, { windowsSet }).model, cs);
    },
  ];
  for (let from = 0; from < questions.length; from += batch) {
    slices.push(() => {
      const s = stage();
      const cs = lab.chunkSet(s.chunking);
      for (const q of questions.slice(from, from + batch)) questionInputs(lab, cs, q, s, windowsSet);
    });
  }
  return slices;
}

/** The reranker fitted on train over `retriever`, every answerable question reranked, the
 * exhibit's rows and sweep: {stage, cs, tfidf, model, rows, positives, exhibit} (cached per
 * first stage; `settings` as firstStage's). */
export function fittedReranker(lab, settings, { windowsSet, constants, progress = () => {} }) {
  if (!lab._rerankers) lab._rerankers = new Map();
  const { meta } = lab;
  lsaModel(lab, { windowsSet, progress });
  const stage = firstStage(lab, settings, windowsSet);
  // By the cut, not the setting: settings that cut the same chunks train the same reranker.
  const key = JSON.stringify({ ...stage, chunking: lab.chunkSet(stage.chunking).id });
  if (lab._rerankers.has(key)) return lab._rerankers.get(key);
  progress(0, 1, "training the reranker");
  const cs = lab.chunkSet(stage.chunking);
  const questions = [...lab.split("train", { answerable: true }), ...lab.split("test", { answerable: true })].map((q) =>
    questionInputs(lab, cs, q, stage, windowsSet),
  );
  const train = questions.filter((q) => q.split === "train").map((q) => ({ ...q, relevant: [...q.relevant.keys()] }));
  const { model, rows, positives } = trainReranker(train, {
    l2: fixedOf(meta, "rerank_l2"),
    learningRate: constants.learning_rate,
    iterations: constants.iterations,
    tolerance: constants.tolerance,
    init: constants.init,
    featureNames: constants.features,
  });
  const tfidf = chunkInputs(lab, cs).tfidf;
  const reranked = questions.map((q) => {
    const r = rerankCandidates(model, q.candidates, q.features);
    // The cosines between its candidates, each column computed when MMR first picks its chunk.
    let similarity = null;
    return {
      ...q,
      reranked: r,
      get similarity() {
        similarity ??= cosineColumns(r.indices.map((i) => tfidf[i]));
        return similarity;
      },
    };
  });
  // Python's split order: the exhibit measures each split's answerable questions in file order.
  const ordered = ["train", "test"].flatMap((s) => reranked.filter((q) => q.split === s));
  const exhibit = rerankExhibit(ordered, {
    lambdas: fixedOf(meta, "mmr_lambdas"),
    depth: fixedOf(meta, "mmr_depth"),
    ks: fixedOf(meta, "recall_ks"),
    ndcgK: fixedOf(meta, "ndcg_k"),
    precisionK: fixedOf(meta, "precision_k"),
  });
  progress(1, 1, "training the reranker");
  const byId = new Map(ordered.map((q) => [q.id, q]));
  const out = { stage, cs, tfidf, model, rows, positives, questions: ordered, byId, exhibit };
  lab._rerankers.set(key, out);
  return out;
}

/** How far to trust each value chosen on train: a score fusion's weight, then MMR's λ. */
export function rerankTuning(lab, fitted) {
  const answerable = lab.split("train", { answerable: true }).length;
  const notes = [];
  if (fitted.stage.weight !== null) {
    notes.push(tuningNote(lab.meta, "weight", fitted.stage.weight, fixedOf(lab.meta, "fusion_weights"), answerable));
  }
  const lam = fitted.exhibit.chosenLambda;
  notes.push(tuningNote(lab.meta, "mmr_lambda", lam, fixedOf(lab.meta, "mmr_lambdas"), answerable));
  return notes;
}

/** /api/rerank/train's summary (reranker_summary) with its tuning notes. */
export function rerankSummary(lab, fitted, constants) {
  const weights = Object.fromEntries(constants.features.map((name, j) => [name, fitted.model.weights[j]]));
  return {
    features: [...constants.features],
    weights,
    bias: fitted.model.bias,
    rows: fitted.rows,
    positives: fitted.positives,
    depth: fixedOf(lab.meta, "rerank_depth"),
    chosen_lambda: fitted.exhibit.chosenLambda,
    lambdas: [...fixedOf(lab.meta, "mmr_lambdas")],
    tuning: rerankTuning(lab, fitted),
  };
}

/** Exhibit V's table at MMR `lam` (rerank_rows): every split and order measured. */
export function rerankRows(lab, fitted, lam) {
  const { meta } = lab;
  const exhibit = rerankExhibit(fitted.questions, {
    lambdas: [lam],
    depth: fixedOf(meta, "mmr_depth"),
    ks: fixedOf(meta, "recall_ks"),
    ndcgK: fixedOf(meta, "ndcg_k"),
    precisionK: fixedOf(meta, "precision_k"),
  });
  // rerankExhibit measures the rows at the λ it chose from `lambdas`; at a λ that keeps no
  // training recall it falls back to 1.0, so the MMR rows are taken from its sweep at `lam`.
  const at = (split) => exhibit.sweep.points.find((p) => p.split === split);
  return exhibit.rows.map((row) => {
    if (row.order !== "reranked + MMR") return row;
    const { lambda: _, split: __, ...measures } = at(row.split);
    return { split: row.split, order: row.order, ...measures };
  });
}

/** A question's reranked list (rerank in pipeline/reranking.py) and the TF-IDF cosines between
 * its candidates: an answerable question's as the reranker was fitted (fitted.byId), its
 * cosines shared with λ's sweep; another's worked out here. */
function rerankedOf(lab, fitted, q, windowsSet) {
  const known = fitted.byId.get(q.id);
  if (known !== undefined) return known;
  const qi = questionInputs(lab, fitted.cs, q, fitted.stage, windowsSet);
  const reranked = rerankCandidates(fitted.model, qi.candidates, qi.features);
  let similarity = null;
  return {
    reranked,
    get similarity() {
      similarity ??= cosineColumns(reranked.indices.map((i) => fitted.tfidf[i]));
      return similarity;
    },
  };
}

/** A reranked list (rerankedOf's) after MMR at `lam`. */
function withMmr(lab, fitted, { reranked, similarity }, lam) {
  if (reranked.indices.length === 0) return reranked;
  return mmrOrdered(reranked, similarity, { lam, depth: fixedOf(lab.meta, "mmr_depth") });
}

/** Ids of superseded chunks in the first 3 of a list. */
function supersededInTop(fitted, list) {
  const { chunks } = fitted.cs;
  return Array.from(list.indices.slice(0, 3))
    .filter((i) => chunks[i].status === "superseded")
    .map((i) => chunks[i].id);
}

/** The largest λ of the grid at which no superseded chunk is left in the top 3 (null: none). */
function leavesAt(lab, fitted, q, windowsSet) {
  const lists = rerankedOf(lab, fitted, q, windowsSet);
  for (const lam of [...fixedOf(lab.meta, "mmr_lambdas")].sort((a, b) => b - a)) {
    if (supersededInTop(fitted, withMmr(lab, fitted, lists, lam)).length === 0) return lam;
  }
  return null;
}

/** Answerable questions whose reranked top 3 holds a superseded chunk, best demo first
 * (exhibits/rerank.py's version_candidates). */
function versionCandidates(lab, fitted, windowsSet) {
  if (fitted._candidates) return fitted._candidates;
  const found = [];
  lab.questions.forEach((q, order) => {
    if (!q.answerable || q.spans.length === 0) return;
    if (supersededInTop(fitted, rerankedOf(lab, fitted, q, windowsSet).reranked).length === 0) return;
    const leaves = leavesAt(lab, fitted, q, windowsSet);
    found.push({
      key: [q.kind !== "version" ? 1 : 0, -(leaves ?? -1.0), q.split !== "test" ? 1 : 0, order],
      row: { id: q.id, split: q.split, kind: q.kind, question: q.question, leaves_at: leaves },
    });
  });
  found.sort((a, b) => {
    for (let i = 0; i < 4; i++) if (a.key[i] !== b.key[i]) return a.key[i] - b.key[i];
    return 0;
  });
  fitted._candidates = found.map((f) => f.row);
  return fitted._candidates;
}

function topRows(fitted, list, q) {
  const { cs } = fitted;
  const rel = cs.relevance(q);
  return Array.from(list.indices.slice(0, 3)).map((i, n) => {
    const c = cs.chunks[i];
    return {
      ...chunkRow(c, i, n + 1, list.scores[n]),
      relevant: rel.has(i),
      superseded: c.status === "superseded",
    };
  });
}

/** /api/rerank/version less chosen_lambda (version_demo): a question's reranked top 3 beside
 * its top 3 after MMR at `lam`, superseded chunks marked; `q` null: the best candidate. */
export function versionDemo(lab, fitted, lam, q, { windowsSet, answer }) {
  const candidates = versionCandidates(lab, fitted, windowsSet);
  if (q === null) {
    if (!candidates.length) return { candidates: [], question: null };
    q = lab.questions.find((x) => x.id === candidates[0].id);
  }
  const lists = rerankedOf(lab, fitted, q, windowsSet);
  const { reranked } = lists;
  const diversified = withMmr(lab, fitted, lists, lam);
  return {
    candidates,
    question: { id: q.id, split: q.split, question: q.question, answer: answer(q.id) },
    lambda: lam,
    leaves_at: q.answerable ? leavesAt(lab, fitted, q, windowsSet) : null,
    reranked: topRows(fitted, reranked, q),
    mmr: topRows(fitted, diversified, q),
    superseded_reranked: supersededInTop(fitted, reranked),
    superseded_mmr: supersededInTop(fitted, diversified),
  };
}
