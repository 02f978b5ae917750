// What a BM25 index knows of its collection: postings, lengths and IDFs, whatever k1 and b.
//
// Mirrors src/raglab/bm25/statistics.py and postings.py: terms sorted by code point (Python's
// string order), each term's postings in ascending document order, |d| / avgdl per document,
// each term's Lucene IDF, and a query's distinct known terms in ascending column with their
// weights idf × query count (the order every score is summed in).

import { luceneIdf } from "./formula.js";

/** Python's string order (by code point), which JavaScript's default sort (UTF-16 units) is
 * not past U+FFFF. */
export function compareCodePoints(a, b) {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i);
    const y = b.codePointAt(i);
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/** The statistics of a collection of token lists (`docs`: arrays of strings). */
export class BM25Statistics {
  constructor(docs) {
    if (docs.length === 0) throw new Error("BM25Index needs at least one document");
    const counts = new Map(); // term -> [doc, tf, doc, tf, ...], documents ascending
    const docLen = new Float64Array(docs.length);
    docs.forEach((tokens, d) => {
      docLen[d] = tokens.length;
      const tf = new Map();
      for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const [t, f] of tf) {
        let list = counts.get(t);
        if (list === undefined) counts.set(t, (list = []));
        list.push(d, f);
      }
    });
    this.terms = [...counts.keys()].sort(compareCodePoints);
    this.vocabulary = new Map(this.terms.map((t, i) => [t, i]));
    const nnz = this.terms.reduce((n, t) => n + counts.get(t).length / 2, 0);
    this.indptr = new Int32Array(this.terms.length + 1);
    this.docs = new Int32Array(nnz);
    this.tf = new Float64Array(nnz);
    let at = 0;
    this.terms.forEach((t, col) => {
      const list = counts.get(t);
      for (let i = 0; i < list.length; i += 2) {
        this.docs[at] = list[i];
        this.tf[at] = list[i + 1];
        at++;
      }
      this.indptr[col + 1] = at;
    });
    this.finish(docLen);
  }

  /** The statistics of the token lists `lists` stand for, equal to new BM25Statistics(those
   * lists): `terms` a vocabulary sorted by code point, each list its document's tokens as
   * indices into it (Int32Arrays). A term's column is its rank among the terms the documents
   * hold, so the order by index is the order by code point; the postings are counted with
   * typed arrays, no string hashed or sorted. */
  static fromIds({ terms, lists }) {
    if (lists.length === 0) throw new Error("BM25Index needs at least one document");
    const stats = Object.create(BM25Statistics.prototype);
    stats.countIds(terms, lists);
    return stats;
  }

  countIds(all, lists) {
    const df = new Int32Array(all.length);
    const last = new Int32Array(all.length).fill(-1);
    const docLen = new Float64Array(lists.length);
    let nnz = 0;
    for (let d = 0; d < lists.length; d++) {
      const list = lists[d];
      docLen[d] = list.length;
      for (let i = 0; i < list.length; i++) {
        const t = list[i];
        if (last[t] !== d) {
          last[t] = d;
          df[t] += 1;
          nnz += 1;
        }
      }
    }
    const colOf = new Int32Array(all.length).fill(-1);
    this.terms = [];
    for (let t = 0; t < all.length; t++) {
      if (df[t] > 0) {
        colOf[t] = this.terms.length;
        this.terms.push(all[t]);
      }
    }
    this.vocabulary = new Map(this.terms.map((t, i) => [t, i]));
    this.indptr = new Int32Array(this.terms.length + 1);
    for (let t = 0; t < all.length; t++) if (colOf[t] >= 0) this.indptr[colOf[t] + 1] = df[t];
    for (let c = 0; c < this.terms.length; c++) this.indptr[c + 1] += this.indptr[c];
    this.docs = new Int32Array(nnz);
    this.tf = new Float64Array(nnz);
    const next = this.indptr.slice(0, this.terms.length);
    const count = new Int32Array(all.length);
    for (let d = 0; d < lists.length; d++) {
      const list = lists[d];
      for (let i = 0; i < list.length; i++) count[list[i]] += 1;
      // Documents in ascending order: each term's postings come out ascending.
      for (let i = 0; i < list.length; i++) {
        const t = list[i];
        if (count[t] === 0) continue;
        const at = next[colOf[t]]++;
        this.docs[at] = d;
        this.tf[at] = count[t];
        count[t] = 0;
      }
    }
    this.finish(docLen);
  }

  /** Lengths, |d| / avgdl and the IDFs, once the postings are in. */
  finish(docLen) {
    const nDocs = docLen.length;
    this.docLen = docLen;
    let total = 0;
    for (const n of docLen) total += n; // integers: exact, as numpy's sum of them is
    this.avgdl = total / nDocs;
    this.ratio = this.avgdl > 0 ? docLen.map((n) => n / this.avgdl) : docLen.map(() => 1.0);
    this.idf = new Float64Array(this.terms.length);
    for (let col = 0; col < this.terms.length; col++) {
      this.idf[col] = luceneIdf(this.indptr[col + 1] - this.indptr[col], nDocs);
    }
  }

  get nDocs() {
    return this.docLen.length;
  }

  /** A query's distinct known terms (ascending columns) and their weights idf × query count. */
  queryTerms(query) {
    const counts = new Map();
    for (const t of query) {
      const col = this.vocabulary.get(t);
      if (col !== undefined) counts.set(col, (counts.get(col) ?? 0) + 1);
    }
    const terms = [...counts.keys()].sort((a, b) => a - b);
    return { terms, weights: terms.map((col) => this.idf[col] * counts.get(col)) };
  }

  /** The frequency of term `col` in document `doc` (0 when absent). */
  tfOf(doc, col) {
    let lo = this.indptr[col];
    let hi = this.indptr[col + 1];
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.docs[mid] < doc) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.indptr[col + 1] && this.docs[lo] === doc ? this.tf[lo] : 0;
  }
}
