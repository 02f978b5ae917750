// The API's routes answered in the tab: a request's URL to the JSON the server's route gives.
//
// Each handler mirrors one route of src/raglab/web/routes/ (its parameters checked as the
// server's schema checks them, its answer in the same shape), computed by the engine's modules
// from data/site.json (src/raglab/web/site.py) and, for the neural numbers, data/neural.bin
// (attached by the caller, exhibits/neural.js's attachNeural). A route whose stages are not in
// the tab answers 501 with a sentence saying so; a typed text with no neural vector throws
// NeedsEncoding (a chunk set other than the lab's own NeedsChunkVectors), and the caller encodes
// it and asks again. worker.js runs this in a Web Worker; Node's tests call answer() directly.

import { fixedOf, Lab } from "./exhibits/lab.js";
import { answerView, chunkingReport, intactCurve } from "./exhibits/chunking.js";
import { chooseWeight, questionGrid, rankerTable, threeLists } from "./exhibits/fusion.js";
import {
  identifierPairs,
  identifierTwins,
  lsaModel,
  lsaSearch,
  lsaSpectrum,
  nearestWords,
} from "./exhibits/lsa.js";
import { fittedReranker, rerankRows, rerankSummary, rerankTuning, versionDemo } from "./exhibits/rerank.js";
import { compareRuns, funnel, oneBase, plainRun, riskCoverage, runResult, runSlices } from "./exhibits/end_to_end.js";
import { bm25Recall, bm25Search, exampleQueries, gridView, stemmingEffect } from "./exhibits/bm25.js";
import { Lacking, neuralSearchRows, neuralView, shipsNeural } from "./exhibits/neural.js";
import { ranking } from "./exhibits/fusion.js";
import { termCosineOf } from "./exhibits/lsa.js";

/** An answer other than 200: its status and the sentence the page shows. */
export class Refusal extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// The labs of one data file by stemming (the served lab's, and its sibling), built on use.
const LABS = new WeakMap();

function labFor(data, stem) {
  const on = stem === null ? data.meta.stem : stem;
  if (!LABS.has(data)) LABS.set(data, new Map());
  const labs = LABS.get(data);
  if (!labs.has(on)) labs.set(on, new Lab(data, { stem: on }));
  return labs.get(on);
}

// --- parameters, checked as the server's schema checks them -------------------------------------

function number(params, name, fallback) {
  const text = params.get(name);
  if (text === null || text === "") return fallback;
  const value = Number(text);
  if (!Number.isFinite(value)) throw new Refusal(422, `${name}: ${JSON.stringify(text)} is not a number`);
  return value;
}

function whole(params, name, fallback) {
  const value = number(params, name, fallback);
  if (value !== null && !Number.isInteger(value)) throw new Refusal(422, `${name}: give a whole number`);
  return value;
}

/** A text parameter the user must type, trimmed; refused as the server refuses an empty one. */
function typed(params, name, hint) {
  const text = (params.get(name) ?? "").trim();
  if (!text) throw new Refusal(422, `${name}: ${hint}`);
  return text;
}

function flag(params, name) {
  const text = params.get(name);
  if (text === null || text === "" || text === "null") return null;
  if (text === "true") return true;
  if (text === "false") return false;
  throw new Refusal(422, `${name}: give true or false`);
}

function choice(params, name, choices, fallback) {
  const text = params.get(name) ?? fallback;
  if (!choices.includes(text)) throw new Refusal(422, `${name}: one of ${choices.join(", ")}`);
  return text;
}

function inRange(meta, name, value) {
  const row = meta.settings.find((s) => s.name === name);
  if (value === null || !row) return value;
  if ((row.min !== null && row.min !== undefined && value < row.min) || (row.max !== null && row.max !== undefined && value > row.max)) {
    throw new Refusal(422, `${name}: ${value} is outside ${row.min} to ${row.max}`);
  }
  return value;
}

function defaultOf(meta, name) {
  return meta.settings.find((s) => s.name === name).default;
}

function question(data, id) {
  const q = data.collection.questions.find((x) => x.id === id);
  if (!q) throw new Refusal(404, `no question with id '${id}'`);
  return q;
}

// --- the routes ------------------------------------------------------------------------------

const SPLITS = ["train", "test", "all"];
const CHUNKERS = ["fixed", "sentence", "heading"];

function chunkingKey(params, meta) {
  return {
    method: choice(params, "method", CHUNKERS, "fixed"),
    size: inRange(meta, "size", whole(params, "size", null)),
    overlap: inRange(meta, "overlap", whole(params, "overlap", null)),
  };
}

function bm25Params(params, meta) {
  return {
    k1: inRange(meta, "k1", number(params, "k1", defaultOf(meta, "k1"))),
    b: inRange(meta, "b", number(params, "b", defaultOf(meta, "b"))),
  };
}

/** A score-fusion weight in [0, 1] (absent: `chosen`). */
function fusionWeight(params, chosen) {
  const w = number(params, "weight", chosen);
  if (w !== null && (w < 0 || w > 1)) throw new Refusal(422, "weight: give a number from 0 to 1");
  return w;
}

/** MMR's λ in [0, 1] (absent: null, the one chosen on train). */
function mmrLambda(params) {
  const lam = number(params, "lam", null);
  if (lam !== null && (lam < 0 || lam > 1)) throw new Refusal(422, "lam: give a number from 0 to 1");
  return lam;
}

/** The reranker over the first stage `retriever` names (absent: the setting's default), fitted
 * on train; a neural first stage is refused as lacking. */
function reranker(data, params, progress) {
  const choices = data.meta.settings.find((s) => s.name === "retriever").choices;
  const retriever = choice(params, "retriever", choices, defaultOf(data.meta, "retriever"));
  if (!shipsNeural(data) && data.meta.fixed.find((f) => f.name === "neural_retrievers").value.includes(retriever)) {
    throw new Refusal(501, `the ${retriever} first stage is not yet computed in the tab: ${lacking(data)}`);
  }
  const lab = labFor(data, null);
  const fitted = fittedReranker(lab, { retriever }, {
    windowsSet: data.engine.lsa_windows,
    constants: data.engine.rerank,
    progress,
  });
  return { lab, retriever, fitted };
}

const lacking = (data) => `this static site lacks ${data.meta.site.lacks.join(", ")}; run raglab serve for it`;

/** The routes a POST reaches (the others answer GET only). */
const POSTED = new Set(["rerank/train", "run", "run/compare"]);

/** A run request's settings, the settings table's defaults filled in, and its split; 501 for
 * what the tab does not compute (a neural first stage, the cosine reader: the site lacks the
 * neural vectors), 422 for what the server refuses. */
function runRequest(data, body) {
  const { meta } = data;
  const names = data.engine.run_settings;
  const request = body ?? {};
  for (const key of Object.keys(request)) {
    if (key !== "split" && !names.includes(key)) throw new Refusal(422, `${key}: Extra inputs are not permitted`);
  }
  const given = {};
  for (const name of names) given[name] = request[name] ?? defaultOf(meta, name);
  const split = request.split ?? "test";
  if (!["train", "test"].includes(split)) throw new Refusal(422, "split: one of train, test");
  if (request.mmr === true && request.rerank === false) throw new Refusal(422, "mmr needs rerank");
  const echo = { ...given, split };
  if (given.overlap && given.chunker !== "fixed") throw new Refusal(422, "overlap: belongs to the fixed chunker");
  if (given.chunker === "fixed" && given.overlap) {
    const size = given.size ?? fixedOf(meta, "chunk_sizes").fixed;
    if (given.overlap >= size) throw new Refusal(422, `overlap: must be smaller than the size ${size}`);
  }
  // With rerank false and mmr left out, MMR is off too.
  if (!given.rerank && request.mmr === undefined) given.mmr = false;
  const neural = shipsNeural(data) ? [] : meta.fixed.find((f) => f.name === "neural_retrievers").value;
  const differs = [];
  if (neural.includes(given.retriever)) differs.push(`the ${given.retriever} retriever`);
  if (given.reader_scoring === "cosine" && !shipsNeural(data)) differs.push("the cosine reader");
  if (differs.length) {
    throw new Refusal(501, `a run with ${differs.join(" and ")} is not yet computed in the tab: ${lacking(data)}`);
  }
  return { given, split, echo };
}

function run(data, body, progress) {
  const { given, split, echo } = runRequest(data, body);
  const lab = labFor(data, null);
  const constants = { ...data.engine.rerank, wilson_z: data.engine.wilson_z };
  return { result: runResult(lab, given, split, { windowsSet: data.engine.lsa_windows, constants, progress }), echo, lab };
}

/** POST /api/run's `body` prepared ahead in slices (end_to_end.js's runSlices), each a
 * function to call in turn while the tab is idle; after the last, the run itself is left only
 * its readings. Refused as the run would be. */
export function runAhead(data, body, { batch }) {
  const { given } = runRequest(data, body);
  const lab = labFor(data, null);
  const constants = { ...data.engine.rerank, wilson_z: data.engine.wilson_z };
  return runSlices(lab, given, { windowsSet: data.engine.lsa_windows, constants, batch });
}

/** Each route the tab answers: (data, params, rest, progress) -> the server's JSON. */
const ROUTES = {
  run: (data, params, rest, progress, body) => {
    const { result, echo, lab } = run(data, body, progress);
    return {
      ...plainRun(result),
      request: echo,
      stages: funnel(data.meta, result),
      bases: oneBase(result),
      risk_coverage: riskCoverage(lab, result, { windowsSet: data.engine.lsa_windows }),
    };
  },
  "run/compare": (data, params, rest, progress, body) => {
    const a = run(data, body?.a, progress).result;
    const b = run(data, body?.b, progress).result;
    if (a.split !== b.split) throw new Refusal(422, "a and b must name the same split");
    return {
      a: { correct: a.correct, n: a.n, accuracy: a.accuracy },
      b: { correct: b.correct, n: b.n, accuracy: b.accuracy },
      ...compareRuns(a, b),
    };
  },
  "rerank/train": (data, params, rest, progress) => {
    const { lab, fitted } = reranker(data, params, progress);
    return rerankSummary(lab, fitted, data.engine.rerank);
  },
  "rerank/table": (data, params, rest, progress) => {
    const lam = mmrLambda(params);
    const { lab, retriever, fitted } = reranker(data, params, progress);
    const chosen = fitted.exhibit.chosenLambda;
    const value = lam ?? chosen;
    return { lambda: value, chosen_lambda: chosen, retriever, rows: rerankRows(lab, fitted, value), tuning: rerankTuning(lab, fitted) };
  },
  "rerank/version": (data, params, rest, progress) => {
    const lam = mmrLambda(params);
    const id = params.get("question_id");
    const q = id === null ? null : question(data, id);
    const { lab, fitted } = reranker(data, params, progress);
    const chosen = fitted.exhibit.chosenLambda;
    const answers = new Map(data.questions.map((x) => [x.id, x.answer]));
    const demo = versionDemo(lab, fitted, lam ?? chosen, q, {
      windowsSet: data.engine.lsa_windows,
      answer: (qid) => answers.get(qid),
    });
    return { chosen_lambda: chosen, ...demo };
  },
  "rerank/sweep": (data, params, rest, progress) => {
    const { retriever, fitted } = reranker(data, params, progress);
    return { retriever, ...fitted.exhibit.sweep };
  },
  "neural/view": (data, params) => {
    const split = choice(params, "split", ["train", "test"], "test");
    const lab = labFor(data, null);
    const windowsSet = data.engine.lsa_windows;
    return neuralView(lab, {
      split,
      twins: data.engine.neural_twins,
      rank: (q, retriever) => ranking(lab, q.question, { retriever, weight: null }, { windowsSet }),
      lsaTwin: (a, b) => termCosineOf(lab, a, b, { windowsSet }),
    });
  },
  "neural/search": (data, params) => {
    const q = typed(params, "q", "type a question");
    const top = whole(params, "top", 5);
    if (top < 1 || top > 50) throw new Refusal(422, "top: give 1 to 50");
    return neuralSearchRows(labFor(data, null), q, { top, snippetChars: data.engine.snippet_chars });
  },
  // Every vector the tab uses is shipped or encoded on demand: nothing waits on the server's.
  "neural/encoding": () => ({ ready: true, done: 0, total: 0, error: null }),
  meta: (data) => data.meta,
  questions: (data, params) => {
    const split = choice(params, "split", SPLITS, "all");
    return { split, questions: data.questions.filter((q) => split === "all" || q.split === split) };
  },
  page: (data, params, rest) => {
    const page = data.pages[rest];
    if (!page) throw new Refusal(404, `no page with id '${rest}' in the corpus`);
    return page;
  },
  chunking: (data, params) =>
    chunkingReport(labFor(data, null), chunkingKey(params, data.meta), { split: choice(params, "split", SPLITS, "test") }),
  "chunking/curve": (data, params) => {
    const overlap = whole(params, "overlap", data.meta.fixed.find((f) => f.name === "fixed_overlap").value);
    return intactCurve(labFor(data, null), {
      overlap,
      split: choice(params, "split", SPLITS, "test"),
      sizes: data.engine.curve_sizes,
      maxSize: data.engine.curve_max_size,
    });
  },
  "chunking/answer": (data, params, rest) => {
    const q = question(data, rest);
    const lab = labFor(data, null);
    const key = chunkingKey(params, data.meta);
    const view = answerView(lab, q, key, { context: data.engine.answer_context_chars });
    const resolved = lab.chunkSet(key).key;
    const labels = data.questions.find((x) => x.id === q.id).labels;
    return { id: q.id, question: q.question, labels, key: resolved, view };
  },
  "bm25/search": (data, params) => {
    const q = typed(params, "q", "type some words to search for");
    const { k1, b } = bm25Params(params, data.meta);
    const top = whole(params, "top", 5);
    return bm25Search(labFor(data, flag(params, "stem")), q, { k1, b, top, snippetChars: data.engine.snippet_chars });
  },
  "bm25/examples": (data) => ({ examples: exampleQueries(labFor(data, null), data.engine.example_queries) }),
  "bm25/recall": (data, params) => {
    const { k1, b } = bm25Params(params, data.meta);
    const lab = labFor(data, flag(params, "stem"));
    const found = bm25Recall(lab, { k1, b, split: "train" });
    // Both sides keep the served lab's analyzer, as Lab.with_stem does.
    const stemming = stemmingEffect(labFor(data, false), labFor(data, true), { k1, b });
    return { k1, b, stem: lab.stem, ...found, stemming };
  },
  "bm25/test": (data, params) => {
    const { k1, b } = bm25Params(params, data.meta);
    const lab = labFor(data, flag(params, "stem"));
    return { k1, b, stem: lab.stem, ...bm25Recall(lab, { k1, b, split: "test" }) };
  },
  lsa: (data, params, rest, progress) =>
    lsaSpectrum(labFor(data, null), {
      windowsSet: data.engine.lsa_windows,
      windowRule: data.engine.lsa_window_rule,
      sampleWords: data.engine.lsa_sample_words,
      progress,
    }),
  "lsa/search": (data, params, rest, progress) => {
    const q = typed(params, "q", "type a word");
    return lsaSearch(labFor(data, null), q, {
      top: whole(params, "top", 5),
      windowsSet: data.engine.lsa_windows,
      snippetChars: data.engine.snippet_chars,
      progress,
    });
  },
  "lsa/neighbours": (data, params, rest, progress) => {
    const word = typed(params, "word", "type a word");
    return nearestWords(labFor(data, null), word, {
      k: whole(params, "top", 10),
      windowsSet: data.engine.lsa_windows,
      tieDecimals: data.engine.lsa_tie_decimals,
      progress,
    });
  },
  "lsa/twins": (data, params, rest, progress) => {
    const side = (name) => {
      const text = params.get(name);
      if (text === null) return null;
      if (!text.trim()) throw new Refusal(422, `${name}: type a word`);
      return text.trim();
    };
    return identifierTwins(labFor(data, null), side("a"), side("b"), {
      windowsSet: data.engine.lsa_windows,
      tieDecimals: data.engine.lsa_tie_decimals,
      progress,
    });
  },
  "lsa/pairs": (data, params, rest, progress) =>
    identifierPairs(labFor(data, null), {
      windowsSet: data.engine.lsa_windows,
      examplePair: data.engine.lsa_example_pair,
      tieDecimals: data.engine.lsa_tie_decimals,
      progress,
    }),
  "fusion/table": (data, params, rest, progress) => {
    const split = choice(params, "split", ["train", "test"], "test");
    const lab = labFor(data, null);
    const windowsSet = data.engine.lsa_windows;
    lsaModel(lab, { windowsSet, progress });
    const chosen = chooseWeight(lab, { windowsSet });
    const weight = fusionWeight(params, chosen);
    const lacking = `not in this static site: ${data.meta.site.lacks.join(", ")}`;
    return rankerTable(lab, { split, weight, chosen, lacking, windowsSet });
  },
  "fusion/grid": (data, params, rest, progress) => {
    const method = choice(params, "method", ["rrf", "score"], "score");
    const split = choice(params, "split", ["train", "test"], "test");
    const lab = labFor(data, null);
    const windowsSet = data.engine.lsa_windows;
    lsaModel(lab, { windowsSet, progress });
    const chosen = chooseWeight(lab, { windowsSet });
    const weight = fusionWeight(params, chosen);
    const grid = questionGrid(lab, { retriever: method, weight }, { split, windowsSet });
    return { method, weight, chosen_weight: chosen, ...grid };
  },
  "fusion/lists": (data, params, rest, progress) => {
    const q = question(data, rest);
    const method = choice(params, "method", ["rrf", "score"], "score");
    const top = whole(params, "top", 5);
    if (top < 1 || top > 20) throw new Refusal(422, "top: give 1 to 20");
    const lab = labFor(data, null);
    const windowsSet = data.engine.lsa_windows;
    lsaModel(lab, { windowsSet, progress });
    const weight = fusionWeight(params, null) ?? chooseWeight(lab, { windowsSet });
    const answer = data.questions.find((x) => x.id === q.id).answer;
    return { method, weight, ...threeLists(lab, q, { retriever: method, weight }, { top, answer, windowsSet }) };
  },
  "bm25/grid": (data, params, rest, progress) =>
    gridView(labFor(data, flag(params, "stem")), {
      k1Step: data.engine.grid_k1_step,
      bStep: data.engine.grid_b_step,
      rule: data.engine.grid_rule,
      onProgress: (done, total) => progress(done, total, "the k1 × b grid"),
    }),
};

/** The route of a path ("bm25/search", or "chunking/answer" with rest "q01"). */
function route(path) {
  if (ROUTES[path]) return [ROUTES[path], ""];
  for (const prefix of ["page", "chunking/answer", "fusion/lists"]) {
    if (path.startsWith(`${prefix}/`)) return [ROUTES[prefix], decodeURIComponent(path.slice(prefix.length + 1))];
  }
  return [null, ""];
}

/** The answer to `url` ("/api/bm25/search?q=..."): the route's JSON, or a Refusal thrown.
 * `progress(done, total, what)` is called during long steps. */
export function answer(data, url, progress = () => {}, { method = "GET", body = null } = {}) {
  const parsed = new URL(url, "http://tab.invalid");
  const path = parsed.pathname.replace(/^\/api\//, "");
  const [handler, rest] = route(path);
  if (handler && (method === "POST") !== POSTED.has(path)) {
    throw new Refusal(405, `${method} /api/${path}: the route answers ${POSTED.has(path) ? "POST" : "GET"}`);
  }
  if (!handler) {
    throw new Refusal(
      501,
      `/api/${path} is not yet computed in the tab: this static site computes exhibits I to VI ` +
        "here; run raglab serve for the rest",
    );
  }
  try {
    return handler(data, parsed.searchParams, rest, progress, body);
  } catch (error) {
    if (error instanceof Lacking) throw new Refusal(501, error.message);
    throw error;
  }
}
