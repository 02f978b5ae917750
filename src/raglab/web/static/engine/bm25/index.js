// BM25 search over token lists (Robertson and Zaragoza 2009, Lucene's variant) at one (k1, b).
//
// Mirrors src/raglab/bm25/index.py: scores of every document (each document's score summed
// term by term in ascending column, from 0), the exact top k with ties to the lower document
// index, and a score explained term by term. A term repeated in the query counts once per
// occurrence; tokens outside the collection contribute nothing.

import { topK } from "../base/topk.js";
import { checkK, checkParams, impact, lengthFactor, lengthTerm, luceneIdf } from "./formula.js";
import { BM25Statistics } from "./statistics.js";

/** How many queries were scored against every document (termScores), for tests: a chunk set
 * sums a question's scores at one (k1, b) once (exhibits/lab.js's ChunkSet.bm25At). */
export const SCORED = { queries: 0 };

// Up to this k a search keeps the best k seen (base/topk.js's INSERTION_MAX_K).
const TOP_BY_INSERTION = 64;

export class BM25Index {
  /** `docs`: token lists; `stats`: statistics to share instead (with_params's clone). */
  constructor(docs, { k1, b, stats = null }) {
    checkParams(k1, b);
    this.stats = stats ?? new BM25Statistics(docs);
    this.k1 = k1;
    this.b = b;
    this.lengthTerms = this.stats.ratio.map((r) => lengthTerm(r, k1, b));
  }

  /** The same index at other k1 and/or b, its statistics shared. */
  withParams({ k1 = this.k1, b = this.b }) {
    return new BM25Index(null, { k1, b, stats: this.stats });
  }

  get nDocs() {
    return this.stats.nDocs;
  }

  /** BM25 score of every document for one query (a Float64Array of nDocs). */
  scores(queryTokens) {
    return this.termScores(this.stats.queryTerms(queryTokens));
  }

  /** scores() from the query's terms and weights (statistics.js's queryTerms), which do not
   * depend on k1 or b: the grid works them out once a query, not once a cell. `out`, when
   * given (nDocs long), is zeroed and filled instead of a new array: the grid's thousands of
   * queries and cells each allocated one (off the heap, every scavenge sweeping them). */
  termScores({ terms, weights }, out = null) {
    SCORED.queries += 1;
    const { stats, k1, lengthTerms } = this;
    const { indptr, docs, tf } = stats;
    if (out === null) out = new Float64Array(stats.nDocs);
    else out.fill(0);
    for (let i = 0; i < terms.length; i++) {
      const col = terms[i];
      const w = weights[i];
      for (let p = indptr[col]; p < indptr[col + 1]; p++) {
        const d = docs[p];
        out[d] += w * impact(tf[p], lengthTerms[d], k1);
      }
    }
    return out;
  }

  /** The min(k, nDocs) best documents, best first, ties by ascending index:
   * {indices, scores}. */
  search(queryTokens, { k }) {
    return this.termSearch(this.stats.queryTerms(queryTokens), { k });
  }

  /** search() from the query's terms and weights (termScores). */
  termSearch(queryTerms, { k }) {
    return this.scoresSearch(this.termScores(queryTerms), { k });
  }

  /** search() from every document's scores (scores()'s array), which a caller that also
   * reads the scores themselves keeps rather than summing them twice. */
  scoresSearch(scores, { k }) {
    checkK(k);
    const n = scores.length;
    const m = Math.min(k, n);
    // Every score is >= 0 and the documents matching no term score 0: the positive ones in
    // (-score, index) order, then the others by index, is topK's order without a full sort.
    let indices;
    if (m <= TOP_BY_INSERTION) {
      // topK's own insertion (base/topk.js) over the positive scores, in one pass and with no
      // array of them: a later document never goes before an equal earlier one.
      indices = [];
      for (let d = 0; d < n; d++) {
        const s = scores[d];
        if (!(s > 0)) continue;
        if (indices.length === m && !(s > scores[indices[m - 1]])) continue;
        let at = indices.length === m ? m - 1 : indices.length;
        while (at > 0 && s > scores[indices[at - 1]]) {
          indices[at] = indices[at - 1];
          at--;
        }
        indices[at] = d;
      }
    } else {
      const positive = [];
      for (let d = 0; d < n; d++) if (scores[d] > 0) positive.push(d);
      indices = topK(Float64Array.from(positive, (d) => scores[d]), k).map((i) => positive[i]);
    }
    for (let d = 0; indices.length < m; d++) {
      if (!(scores[d] > 0)) indices.push(d);
    }
    return { indices, scores: indices.map((i) => scores[i]) };
  }

  /** Term-by-term breakdown of scores(queryTokens)[doc]: one entry per distinct query token in
   * order of first appearance, {term, tf, df, idf, lengthFactor, contribution, queryCount}. */
  explain(queryTokens, doc) {
    if (!Number.isInteger(doc) || doc < 0 || doc >= this.nDocs) {
      throw new Error(`doc ${doc} is out of range for ${this.nDocs} documents`);
    }
    const { stats } = this;
    const factor = lengthFactor(stats.ratio[doc], this.b);
    const klf = this.lengthTerms[doc];
    const counts = new Map();
    for (const t of queryTokens) counts.set(t, (counts.get(t) ?? 0) + 1);
    return [...counts].map(([term, count]) => {
      const col = stats.vocabulary.get(term);
      let tf = 0;
      let df = 0;
      let idf = luceneIdf(0, this.nDocs);
      if (col !== undefined) {
        tf = stats.tfOf(doc, col);
        df = stats.indptr[col + 1] - stats.indptr[col];
        idf = stats.idf[col];
      }
      const contribution = tf ? idf * count * impact(tf, klf, this.k1) : 0.0;
      return { term, tf, df, idf, lengthFactor: factor, contribution, queryCount: count };
    });
  }
}
