// One question read: the packed context's sentences, the reader's best one, and where it lies.
//
// Mirrors src/raglab/reading/readings.py: the candidates are the page sentences lying whole
// inside a packed chunk, in context order (a sentence inside two packed chunks counts twice);
// the best one is kept whatever its score, so any threshold can be laid over the reading after.

import { tokenize } from "../text/tokens.js";
import { quoteRelation, read, readCosine } from "./reader.js";

/** The candidate sentences of the packed chunks ([chunk id, page id, start, end] each):
 * [chunk id, [page, start, end], terms] each; `sentences` a Map page -> [start, end, terms]. */
export function candidates(packed, sentences) {
  const out = [];
  for (const [chunkId, pageId, start, end] of packed) {
    for (const [a, b, words] of sentences.get(pageId)) {
      if (start <= a && b <= end) out.push([chunkId, [pageId, a, b], words]);
    }
  }
  return out;
}

/** Read one prepared question. `inp` holds `question` ({text, answerable, spans: [page, start,
 * end] each}), `rank`, `kBudget`, `depth`, `relevant`, `packed`, `sentences`, `weights` (a Map,
 * or null for plain coverage), `analyzer`, and for the cosine scoring `questionVector` and
 * `sentenceVectors` (a function [page, start, end] -> vector). Returns {rank, kBudget, depth,
 * best, bestChunk, coverage, relation, cut, answerable}. */
export function readPrepared(inp) {
  const found = candidates(inp.packed, inp.sentences);
  const spans = found.map(([, span]) => span);
  let answer;
  if (inp.questionVector != null) {
    if (inp.sentenceVectors == null) throw new Error("the cosine scoring needs the candidate sentences' vectors");
    answer = readCosine(inp.questionVector, spans.map(inp.sentenceVectors), { threshold: 0.0 });
  } else {
    const terms = tokenize(inp.question.text, { stem: true, analyzer: inp.analyzer });
    answer = read(terms, found.map(([, , words]) => words), { threshold: 0.0, weights: inp.weights });
  }
  const best = answer.sentence !== null ? spans[answer.sentence] : null;
  return {
    rank: inp.rank,
    kBudget: inp.kBudget,
    depth: inp.depth,
    best,
    bestChunk: answer.sentence !== null ? found[answer.sentence][0] : null,
    coverage: answer.sentence !== null ? answer.coverage : 0.0,
    relation: quoteRelation(best, inp.question.spans),
    cut: inp.question.answerable && !inp.relevant,
    answerable: inp.question.answerable,
  };
}
