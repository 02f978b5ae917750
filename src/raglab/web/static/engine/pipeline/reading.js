// The reading stage of a run: each question's final list packed into the context, then read.
//
// Mirrors src/raglab/pipeline/reading.py (prepare_reading) and the quotable sentences of
// src/raglab/pipeline/lab.py: a page's sentences, headings left out, each with its stemmed terms.

import { firstRelevantRank } from "../metrics/measures.js";
import { idfWeights, pack } from "../reading/reader.js";
import { sentenceSpans, tokenize } from "../text/tokens.js";

/** The quotable sentences of a page's text: [start, end, Set of stemmed terms] each, a sentence
 * on a "#" heading line left out. */
export function quotableSentences(text, { analyzer }) {
  const out = [];
  for (const [a, b] of sentenceSpans(text)) {
    const lineStart = a > 0 ? text.lastIndexOf("\n", a - 1) + 1 : 0;
    if (text.slice(lineStart, a).trimStart().startsWith("#")) continue;
    out.push([a, b, new Set(tokenize(text.slice(a, b), { stem: true, analyzer }))]);
  }
  return out;
}

/** What reading one question needs, from its final ranking (chunk indices): the context packed
 * into `budget` words, the first answer chunk's rank, the reader's IDF weights (scoring "idf",
 * from `df` over `nChunks`). `chunks[i]` is {id, pageId, start, end, nWords}; `relevant` the
 * question's answer chunks (a Set or Map; empty: the chunking cut its answer). */
export function prepareReading(question, ranking, { chunks, relevant, sentences, budget, depth, scoring, df, nChunks, analyzer }) {
  const kBudget = pack(ranking.map((i) => chunks[i].nWords), { budget });
  const size = relevant.size;
  const rank = size ? firstRelevantRank(ranking, relevant) : null;
  const packed = ranking.slice(0, kBudget).map((i) => [chunks[i].id, chunks[i].pageId, chunks[i].start, chunks[i].end]);
  let weights = null;
  if (scoring === "idf") {
    weights = idfWeights(tokenize(question.text, { stem: true, analyzer }), df, nChunks);
  }
  return { question, rank, kBudget, depth, relevant: size > 0, packed, sentences, weights, analyzer };
}
