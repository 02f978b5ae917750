// The lab in the tab: a collection's chunk sets, retrieval tokens and BM25 index, built on use.
//
// Mirrors src/raglab/pipeline/lab.py and indexes.py for what the in-tab exhibits need: chunk sets
// by resolved chunker setting (chunking/chunkers.js), each chunk's retrieval tokens, BM25 at the
// library's k1 and b, each question's relevant chunks. `data` is data/site.json as
// src/raglab/web/site.py writes it: {meta, questions, pages, collection: {pages, questions}}.

import { BM25Index } from "../bm25/index.js";
import { BM25Statistics, compareCodePoints } from "../bm25/statistics.js";
import { ChunkIndex, relevance } from "../chunking/chunk.js";
import { chunkPages } from "../chunking/chunkers.js";
import { chunkRange, chunkTokens, stemmedStream, tokenize, tokenStream } from "../text/tokens.js";

/** One ranked chunk as every exhibit lists it (pipeline/retrieval.py's rows): 1-based ``rank``,
 * the chunk's id, ``index`` in its chunk set, page, title, heading path joined by " > ", status
 * and ``score``; an exhibit adds its own fields after these. */
export function chunkRow(c, index, rank, score) {
  return {
    rank,
    chunk: c.id,
    index,
    page: c.pageId,
    title: c.title,
    heading: c.headingPath.join(" > "),
    status: c.status,
    score,
  };
}

/** A setting's default from the settings table /api/meta sends (settings.py's SETTINGS). */
export function defaultOf(meta, name) {
  const row = meta.settings.find((s) => s.name === name);
  if (!row) throw new Error(`no setting ${name}`);
  return row.default;
}

/** A fixed value from /api/meta's table (settings.py's FIXED). */
export function fixedOf(meta, name) {
  const row = meta.fixed.find((f) => f.name === name);
  if (!row) throw new Error(`no fixed value ${name}`);
  return row.value;
}

/** The chunker setting with the chunker's own sizes filled in (run_settings.ChunkingKey.resolved). */
export function resolveChunking(meta, { method = null, size = null, overlap = null } = {}) {
  const m = method ?? defaultOf(meta, "chunker");
  const sizes = fixedOf(meta, "chunk_sizes");
  if (!(m in sizes)) throw new Error(`chunker must be one of fixed, sentence, heading; not '${m}'`);
  if (m !== "fixed" && overlap) throw new Error(`overlap applies only to the fixed chunker, not to '${m}'`);
  if (m === "fixed") {
    return { method: m, size: size ?? sizes.fixed, overlap: overlap ?? fixedOf(meta, "fixed_overlap") };
  }
  return { method: m, size: size ?? sizes[m], overlap: null };
}

// Each page's token streams by stemming, per pages array: a data's two labs (stemmed or not)
// share one collection and so one page tokenisation.
const PAGE_STREAMS = new WeakMap();

export class Lab {
  /** `stem`: whether retrieval tokens are stemmed (the served lab's, or its sibling's). */
  constructor(data, { stem }) {
    this.data = data;
    this.meta = data.meta;
    this.pages = data.collection.pages;
    this.questions = data.collection.questions;
    this.stem = stem;
    this.analyzer = data.meta.analyzer;
    this.chunkSets = new Map();
    this.cuts = new Map();
    this.queryTokenCache = new Map();
    this.pageById = new Map(this.pages.map((p) => [p.id, p]));
    // What the exhibits keep on a lab, each made on first use: declared here, as ChunkSet's, so
    // that both labs of a site have one shape whichever exhibit asked first.
    this._lsa = null;
    this._grids = null;
    this._weights = null;
    this._rerankers = null;
    this._readings = null;
    this._sentences = null;
    this._titleTerms = null;
    this._lsaQuestions = null;
    this._questionIdentifiers = null;
  }

  /** A chunk's tokens under `stem` and `analyzer`, equal to tokenize(c.text, …). */
  chunkTokens(c, { stem, analyzer }) {
    return this.spanTokens(c.pageId, c.start, c.end, { stem, analyzer });
  }

  /** The tokens of page `pageId`'s text from `start` to `end` under `stem` and `analyzer`, equal
   * to tokenize(text.slice(start, end), …): for RAG lab's analyzer read off the page's tokens
   * (tokens.js's chunkTokens says why that is exact), which every cut of the page and the LSA
   * windows share; else, or where that does not hold, the slice tokenised. */
  spanTokens(pageId, start, end, { stem, analyzer }) {
    const text = this.pageById.get(pageId).text;
    if (analyzer === "raglab") {
      const stream = this.pageStream(pageId, stem);
      const own = stream === null ? null : chunkTokens(stream, text, start, end);
      if (own !== null) return own;
    }
    TOKENISED.chunkTexts += 1;
    return tokenize(text.slice(start, end), { stem, analyzer });
  }

  /** A page's token stream (tokens.js's tokenStream), kept for every lab of the same pages
   * (the stemmed lab's too): the stemmed stream is the unstemmed one's words stemmed. */
  pageStream(pageId, stem) {
    let streams = PAGE_STREAMS.get(this.pages);
    if (streams === undefined) {
      streams = { false: new Map(), true: new Map() };
      PAGE_STREAMS.set(this.pages, streams);
    }
    let stream = streams[stem].get(pageId);
    if (stream === undefined) {
      if (stem) {
        const plain = this.pageStream(pageId, false);
        stream = plain === null ? null : stemmedStream(plain);
      } else {
        stream = tokenStream(this.pageById.get(pageId).text, { stem: false });
        TOKENISED.pages += 1;
      }
      streams[stem].set(pageId, stream);
    }
    return stream;
  }

  /** Every page's token stream under `stem` as indices into one vocabulary, the streams' terms
   * sorted by code point: {terms, ids: Map pageId -> Int32Array}, made once for every lab of
   * the same pages; null where some page has no stream. A cut's BM25 postings count these. */
  pageIds(stem) {
    const streams = PAGE_STREAMS.get(this.pages);
    let made = streams?.ids?.[stem];
    if (made === undefined) {
      const all = this.pages.map((p) => this.pageStream(p.id, stem));
      made = null;
      if (all.every((stream) => stream !== null)) {
        const seen = new Set();
        for (const { tokens } of all) for (const t of tokens) seen.add(t);
        const terms = [...seen].sort(compareCodePoints);
        const column = new Map(terms.map((t, i) => [t, i]));
        const ids = new Map(this.pages.map((p, i) => [p.id, Int32Array.from(all[i].tokens, (t) => column.get(t))]));
        made = { terms, ids };
        TOKENISED.interned += 1;
      }
      const kept = PAGE_STREAMS.get(this.pages);
      kept.ids ??= {};
      kept.ids[stem] = made;
    }
    return made;
  }

  tokens(text) {
    return tokenize(text, { stem: this.stem, analyzer: this.analyzer });
  }

  queryTokens(text) {
    let t = this.queryTokenCache.get(text);
    if (t === undefined) {
      t = this.tokens(text);
      this.queryTokenCache.set(text, t);
    }
    return t;
  }

  /** Questions of a split ("all": every one), answerable ones only when `answerable`. */
  split(name, { answerable = null } = {}) {
    return this.questions.filter(
      (q) => (name === "all" || q.split === name) && (answerable === null || q.answerable === answerable),
    );
  }

  /** The chunk set of a chunker setting (default: the lab's chunker at its own size). */
  chunkSet(key = {}) {
    const k = resolveChunking(this.meta, key);
    const name = `${k.method}/${k.size}/${k.overlap}`;
    let cs = this.chunkSets.get(name);
    if (cs === undefined) {
      cs = new ChunkSet(this, k, this.cuts.size);
      // Settings that cut the same chunks (the heading chunker at any size above the longest
      // section, say) share one set, its tokens, index and every cache kept on it; only the
      // key differs. `id` names the cut.
      const same = this.cuts.get(cs.cut);
      if (same === undefined) this.cuts.set(cs.cut, cs);
      else cs = new Proxy(same, { get: (set, name) => (name === "key" ? k : Reflect.get(set, name)) });
      this.chunkSets.set(name, cs);
    }
    return cs;
  }
}

/** How many times a chunk set's tokens were found, by analysis: "retrieval" (the lab's
 * tokens, which BM25, LSA's fold-in and the reranker's features share) and "reader" (the
 * reader's stemmed terms when they differ); each chunk set does each at most once. And what
 * was tokenised for them: "pages" (a page's whole text, once per collection, which every cut,
 * the LSA windows and the stemmed lab slice) and "chunkTexts" (a chunk's own text, where no
 * slice is exact); "interned", the pages' streams turned to term indices (pageIds), once per
 * collection and stemming. */
export const TOKENISED = { retrieval: 0, reader: 0, pages: 0, chunkTexts: 0, interned: 0 };

export class ChunkSet {
  /** `id`: the cut's number in its lab (chunkSet's). */
  constructor(lab, key, id) {
    this.lab = lab;
    this.key = key;
    this.id = id;
    this.chunks = chunkPages(lab.pages, key);
    // A chunk is its page's text from start to end, its id and fields follow from those.
    this.cut = JSON.stringify(this.chunks.map((c) => [c.pageId, c.start, c.end]));
    const status = new Map(lab.pages.map((p) => [p.id, p.status]));
    for (const c of this.chunks) c.status = status.get(c.pageId);
    this.index = new ChunkIndex(this.chunks);
    this.relevanceCache = new Map();
    this._tokens = null;
    this._readerTokens = new Map();
    this._bm25 = null;
    this._termIds = undefined;
    this._bm25At = new Map();
    this._bm25Last = null;
    // What the exhibits keep on a chunk set, each made on first use (fusion.js's rankings,
    // lsa.js's fold-ins, rerank.js's inputs, end_to_end.js's reader inputs): declared here so
    // that every chunk set has one shape whichever it made first, and the hot loops reading
    // them see one kind of object (a set prepared ahead of a run would be another otherwise,
    // and each later cut's loops the slower for it).
    this._rankings = null;
    this._lsa = null;
    this._lsaSquares = null;
    this._rerank = null;
    this._questionInputs = null;
    this._reader = null;
  }

  get length() {
    return this.chunks.length;
  }

  /** Chunk index -> gain for the chunks holding a question's answer (a Map). */
  relevance(q) {
    let r = this.relevanceCache.get(q.id);
    if (r === undefined) {
      r = relevance(this.index, q);
      this.relevanceCache.set(q.id, r);
    }
    return r;
  }

  get tokens() {
    if (this._tokens === null) {
      const { stem, analyzer } = this.lab;
      this._tokens = this.chunks.map((c) => this.lab.chunkTokens(c, { stem, analyzer }));
      TOKENISED.retrieval += 1;
    }
    return this._tokens;
  }

  /** Each chunk's stemmed terms under `analyzer` (the reader's): the retrieval tokens when the
   * lab's own analysis is that one, else tokenised once here. */
  readerTokens(analyzer) {
    if (this.lab.stem && this.lab.analyzer === analyzer) return this.tokens;
    let t = this._readerTokens.get(analyzer);
    if (t === undefined) {
      t = this.chunks.map((c) => this.lab.chunkTokens(c, { stem: true, analyzer }));
      this._readerTokens.set(analyzer, t);
      TOKENISED.reader += 1;
    }
    return t;
  }

  /** Each chunk's retrieval tokens as indices into the lab's page vocabulary (pageIds: views
   * of its page's indices, nothing copied), {terms, lists}; null where some chunk's tokens are
   * not a slice of its page's (Lab.spanTokens). */
  get termIds() {
    if (this._termIds === undefined) {
      this._termIds = null;
      const { lab } = this;
      const pages = lab.analyzer === "raglab" ? lab.pageIds(lab.stem) : null;
      if (pages !== null) {
        const lists = [];
        for (const c of this.chunks) {
          const range = chunkRange(lab.pageStream(c.pageId, lab.stem), lab.pageById.get(c.pageId).text, c.start, c.end);
          if (range === null) return this._termIds;
          lists.push(pages.ids.get(c.pageId).subarray(range[0], range[1]));
        }
        this._termIds = { terms: pages.terms, lists };
      }
    }
    return this._termIds;
  }

  /** BM25 at the library's k1 and b, its statistics counted off termIds where it has them. */
  get bm25() {
    if (this._bm25 === null) {
      const { meta } = this.lab;
      const ids = this.termIds;
      const stats = ids === null ? null : BM25Statistics.fromIds(ids);
      this._bm25 = new BM25Index(stats === null ? this.tokens : null, { k1: defaultOf(meta, "k1"), b: defaultOf(meta, "b"), stats });
    }
    return this._bm25;
  }

  /** BM25 at (k1, b) over this chunk set, its statistics shared, and `scores(tokens)`: a
   * query's score of every chunk, summed once for a query's token array (lab.queryTokens
   * keeps one array a text) and `kept` by it, so a first stage's ranking and the reranker's
   * BM25 feature read the same sums. The last BM25_AT_KEPT (k1, b) are kept: a slider asks
   * for many. */
  bm25At(k1, b) {
    // The last one asked for is asked again question after question: found without a key.
    const last = this._bm25Last;
    if (last !== null && last.k1 === k1 && last.b === b) return last.at;
    const key = `${k1}/${b}`;
    let at = this._bm25At.get(key);
    if (at === undefined) {
      const index = this.bm25.withParams({ k1, b });
      const kept = new Map();
      at = {
        index,
        kept,
        scores(tokens) {
          let s = kept.get(tokens);
          if (s === undefined) {
            s = index.scores(tokens);
            kept.set(tokens, s);
          }
          return s;
        },
      };
      if (this._bm25At.size >= BM25_AT_KEPT) this._bm25At.delete(this._bm25At.keys().next().value);
      this._bm25At.set(key, at);
    }
    this._bm25Last = { k1, b, at };
    return at;
  }
}

const BM25_AT_KEPT = 8;
