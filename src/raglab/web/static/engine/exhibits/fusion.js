// Exhibit IV in the tab: each question's first answer rank under BM25, LSA and a fusion, one
// question's three lists, and the score-fusion weight chosen on the training split.
//
// Mirrors src/raglab/pipeline/exhibits/fusion.py and pipeline/retrieval.py (the fused rankings,
// first_rank_rows, choose_weight), answering with the shapes of /api/fusion/grid and
// /api/fusion/lists (src/raglab/web/routes/fusion.py), and /api/fusion/table with the neural
// rows from the shipped vectors (neural.js) when the site holds them.

import { rrf } from "../fusion/rrf.js";
import { scoreFusion } from "../fusion/score.js";
import { search } from "../embedding/lsa.js";
import { evaluate, firstRelevantRank } from "../metrics/measures.js";
import { bm25Ranking } from "./bm25.js";
import { chunkRow, defaultOf, fixedOf } from "./lab.js";
import { chunkFoldIn, lsaModel } from "./lsa.js";
import { neuralSearch, shipsNeural } from "./neural.js";

const cut = (cs, depth) => (depth === 0 ? cs.length : Math.min(depth, cs.length));

/** The first-stage settings with the library's defaults filled in: {retriever, weight,
 * chunking ({method, size, overlap}, null parts the chunker's own), k1, b, depth, fusionDepth}. */
export function stageOf(meta, settings) {
  return {
    retriever: settings.retriever,
    weight: settings.weight ?? null,
    chunking: settings.chunking ?? {},
    k1: settings.k1 ?? defaultOf(meta, "k1"),
    b: settings.b ?? defaultOf(meta, "b"),
    depth: settings.depth ?? defaultOf(meta, "depth"),
    fusionDepth: settings.fusionDepth ?? defaultOf(meta, "fusion_depth"),
  };
}

/** A question's (or a text's) ranking under `settings` ({retriever, weight}, and the chunking,
 * k1, b and depths of stageOf, the library's when absent): {indices, scores}. */
export function ranking(lab, text, settings, { windowsSet }) {
  const s = stageOf(lab.meta, settings);
  const cs = lab.chunkSet(s.chunking);
  const key = `${s.retriever}/${s.weight}/${s.k1}/${s.b}/${s.depth}/${s.fusionDepth}/${text}`;
  if (!cs._rankings) cs._rankings = new Map();
  if (cs._rankings.has(key)) return cs._rankings.get(key);
  const tokens = lab.queryTokens(text);
  let out;
  if (s.retriever === "bm25") {
    out = bm25Ranking(lab, cs, tokens, { k1: s.k1, b: s.b, depth: s.depth });
  } else if (s.retriever === "lsa") {
    const { model } = lsaModel(lab, { windowsSet });
    out = search(model, tokens, chunkFoldIn(model, cs), { k: cut(cs, s.depth) });
  } else if (s.retriever === "neural") {
    out = neuralSearch(lab, cs, text, { k: cut(cs, s.depth) });
  } else {
    // A fusion draws on BM25 and an embedding: the neural one for neural-rrf and neural-score.
    // It reads each one's first fusionDepth results (of the first `depth`) and no more, and a
    // ranking's first k are the same whatever k it is cut at: so each is asked for no more
    // than those, a short top-k selection where `depth` (100) would sort every chunk.
    const dense = s.retriever.startsWith("neural-") ? "neural" : "lsa";
    const fusionDepth = cut(cs, s.fusionDepth);
    const n = cut(cs, s.depth);
    const read = { ...s, weight: null, depth: Math.min(fusionDepth, n) };
    const bm25 = ranking(lab, text, { ...read, retriever: "bm25" }, { windowsSet });
    const lsa = ranking(lab, text, { ...read, retriever: dense }, { windowsSet });
    const fused =
      s.retriever === "rrf" || s.retriever === "neural-rrf"
        ? rrf([bm25.indices, lsa.indices], { k: fixedOf(lab.meta, "rrf_k"), depth: fusionDepth })
        : scoreFusion(bm25, lsa, { weight: s.weight, depth: fusionDepth });
    out = { indices: fused.indices.slice(0, n), scores: fused.scores.slice(0, n) };
  }
  cs._rankings.set(key, out);
  return out;
}

/** R@k, MRR, nDCG, P and top-1 over the answerable questions of `split` (metrics/measures.js). */
export function measure(lab, split, settings, { windowsSet }) {
  const cs = lab.chunkSet(stageOf(lab.meta, settings).chunking);
  const qs = lab.split(split, { answerable: true });
  const { meta } = lab;
  return evaluate(
    qs.map((q) => ranking(lab, q.question, settings, { windowsSet }).indices),
    qs.map((q) => cs.relevance(q)),
    { ks: fixedOf(meta, "recall_ks"), ndcgK: fixedOf(meta, "ndcg_k"), precisionK: fixedOf(meta, "precision_k") },
  );
}

/** The score-fusion weight maximising (R@5, MRR) on the training split, ties to the smaller,
 * at the first stage `settings` (absent: the library's defaults). */
export function chooseWeight(lab, { windowsSet, settings = null }) {
  const retriever = settings?.retriever === "neural-score" ? "neural-score" : "score";
  const base = stageOf(lab.meta, { ...(settings ?? {}), retriever, weight: null });
  const key = JSON.stringify({ ...base, chunking: lab.chunkSet(base.chunking).key });
  if (!lab._weights) lab._weights = new Map();
  if (lab._weights.has(key)) return lab._weights.get(key);
  let best = null;
  for (const w of fixedOf(lab.meta, "fusion_weights")) {
    const m = measure(lab, "train", { ...base, weight: w }, { windowsSet });
    const cand = [m["recall@5"], m.mrr, -w];
    const better = best === null || cand[0] > best[0] || (cand[0] === best[0] && (cand[1] > best[1] || (cand[1] === best[1] && cand[2] > best[2])));
    if (better) best = cand;
  }
  lab._weights.set(key, -best[2]);
  return -best[2];
}

/** /api/fusion/grid's rows: every question of `split` with its first answer rank per ranker. */
export function questionGrid(lab, fused, { split, windowsSet }) {
  const cs = lab.chunkSet();
  const rankers = { bm25: { retriever: "bm25", weight: null }, lsa: { retriever: "lsa", weight: null }, fusion: fused };
  const answerable = new Set(lab.split(split, { answerable: true }).map((q) => q.id));
  const questions = lab.split(split).map((q) => {
    const ok = answerable.has(q.id);
    const ranks = {};
    for (const [name, s] of Object.entries(rankers)) {
      ranks[name] = ok ? firstRelevantRank(ranking(lab, q.question, s, { windowsSet }).indices, cs.relevance(q)) : null;
    }
    return { id: q.id, kind: q.kind, question: q.question, answerable: ok, ranks };
  });
  return { split, questions };
}

/** /api/fusion/lists' lists: one question's first `top` chunks under BM25, LSA and `fused`. */
export function threeLists(lab, q, fused, { top, answer, windowsSet }) {
  const cs = lab.chunkSet();
  const rel = cs.relevance(q);
  const lists = {};
  for (const [name, s] of [
    ["bm25", { retriever: "bm25", weight: null }],
    ["lsa", { retriever: "lsa", weight: null }],
    ["fusion", fused],
  ]) {
    const r = ranking(lab, q.question, s, { windowsSet });
    const rows = r.indices.slice(0, top).map((i, n) => {
      const c = cs.chunks[i];
      return {
        ...chunkRow(c, i, n + 1, r.scores[n]),
        relevant: rel.has(i),
      };
    });
    lists[name] = { rows, first: rel.size ? firstRelevantRank(r.indices, rel) : null };
  }
  return { id: q.id, question: q.question, answer, answerable: q.answerable, lists };
}

/** run_settings.tuning_note: how far to trust `value` of setting `name`, chosen on `grid` by
 * `questions` answerable training questions (warned when fewer than the minimum, or at an edge). */
export function tuningNote(meta, name, value, grid, questions) {
  const lo = Math.min(...grid);
  const hi = Math.max(...grid);
  const minimum = fixedOf(meta, "min_tuning_questions");
  const warnings = [];
  if (questions < minimum) warnings.push("few questions");
  if (value <= lo + 1e-12) warnings.push("low edge");
  else if (value >= hi - 1e-12) warnings.push("high edge");
  let sentence = null;
  if (warnings.length) {
    const reasons = warnings.includes("few questions") ? [`fewer than ${minimum}`] : [];
    for (const edge of ["low", "high"]) {
      if (warnings.includes(`${edge} edge`)) reasons.push(`at the ${edge} edge of its grid ${lo.toFixed(2)}–${hi.toFixed(2)}`);
    }
    const label = meta.settings.find((s) => s.name === name).label;
    sentence = `${label} ${value.toFixed(2)} was chosen on ${questions} answerable training question${questions === 1 ? "" : "s"}, ${reasons.join(", ")}: treat it with caution.`;
  }
  return { name, value, grid: [lo, hi], questions, warnings, sentence };
}

/** /api/fusion/table: every ranker's measures on `split`, the neural ones from the shipped
 * vectors (neural-score at its weight chosen on train); a site without them lists each neural
 * ranker in `unavailable` with `lacking`. */
export function rankerTable(lab, { split, weight, chosen, lacking, windowsSet }) {
  const { meta } = lab;
  const rankers = {};
  const neural = fixedOf(meta, "neural_retrievers");
  const ships = shipsNeural(lab.data);
  const neuralWeight = ships ? chooseWeight(lab, { windowsSet, settings: { retriever: "neural-score" } }) : null;
  for (const name of meta.settings.find((s) => s.name === "retriever").choices) {
    if (neural.includes(name) && !ships) continue;
    const w = name === "score" ? weight : name === "neural-score" ? neuralWeight : null;
    rankers[name] = measure(lab, split, { retriever: name, weight: w }, { windowsSet });
  }
  const grid = fixedOf(meta, "fusion_weights");
  const train = lab.split("train", { answerable: true }).length;
  return {
    split,
    weight,
    chosen_weight: chosen,
    neural_weight: neuralWeight,
    tuning: [tuningNote(meta, "weight", chosen, grid, train)],
    neural_tuning: ships ? [tuningNote(meta, "weight", neuralWeight, grid, train)] : [],
    questions: lab.split(split, { answerable: true }).length,
    rankers,
    unavailable: ships ? {} : Object.fromEntries(neural.map((name) => [name, lacking])),
    encoding: { ready: true, done: 0, total: 0, error: null },
  };
}
