// Exhibit I in the tab: a chunker's report (chunks, answers intact, the closed form's
// prediction), the fixed chunker's intact-rate curve and an answer among its chunks.
//
// Mirrors src/raglab/pipeline/chunking_report.py and pipeline/exhibits/chunking.py, each
// function answering with the JSON shape the server's /api/chunking route gives.

import { fixedWindowSpans } from "../chunking/chunkers.js";
import { cutProbability, expectedChunkCount } from "../chunking/closed_forms.js";
import { countWords, wordSpans } from "../text/tokens.js";
import { fixedOf, resolveChunking } from "./lab.js";

/** /api/chunking: chunk the corpus with `key` and check each passage answer of `split`. */
export function chunkingReport(lab, key, { split }) {
  const k = resolveChunking(lab.meta, key);
  const cs = lab.chunkSet(k);
  const fixed = k.method === "fixed";
  const size = k.size ?? fixedOf(lab.meta, "chunk_sizes").fixed;
  const overlap = k.overlap ?? 0;
  const answers = lab.questions
    .filter((q) => q.spans.length > 0)
    .map((q) => ({
      id: q.id,
      split: q.split,
      kind: q.kind,
      words: q.answer_words,
      intact: cs.relevance(q).size > 0,
      predicted_cut: fixed ? cutProbability(q.answer_words, { size, overlap }) : null,
    }));
  const chosen = answers.filter((a) => split === "all" || a.split === split);
  let expected = null;
  if (fixed) {
    expected = 0;
    for (const p of lab.pages) expected += expectedChunkCount(countWords(p.text), { size, overlap });
  }
  let predicted = null;
  if (fixed && chosen.length) {
    let cut = 0;
    for (const a of chosen) cut += a.predicted_cut || 0.0;
    predicted = 1.0 - cut / chosen.length;
  }
  let words = 0;
  for (const c of cs.chunks) words += c.nWords;
  const intact = chosen.filter((a) => a.intact).length;
  return {
    key: k,
    n_chunks: cs.length,
    expected_chunks: expected,
    mean_words: cs.length ? words / cs.length : 0.0,
    answers,
    split,
    intact,
    total: chosen.length,
    predicted_intact: predicted,
    intact_rate: chosen.length ? intact / chosen.length : 1.0,
  };
}

/** /api/chunking/curve: the fixed chunker's measured answer-intact rate at every size of
 * `sizes` above `overlap`, beside the closed form at every whole size up to `maxSize`. */
export function intactCurve(lab, { overlap, split, sizes: allSizes, maxSize }) {
  const qs = lab.questions.filter((q) => q.spans.length > 0 && (split === "all" || q.split === split));
  const sizes = allSizes.filter((s) => s > overlap);
  const byId = new Map(lab.pages.map((p) => [p.id, p]));
  const words = new Map();
  for (const q of qs) {
    for (const sp of q.spans) if (!words.has(sp.page_id)) words.set(sp.page_id, wordSpans(byId.get(sp.page_id).text));
  }
  const intact = sizes.map((size) => {
    const windows = new Map();
    for (const [page, spans] of words) windows.set(page, spans.length ? fixedWindowSpans(spans, { size, overlap }) : []);
    return qs.filter((q) =>
      q.spans.some((sp) => windows.get(sp.page_id).some(([a, b]) => a <= sp.start && b >= sp.end)),
    ).length;
  });
  const total = qs.length;
  const predictedSizes = [];
  for (let s = Math.max(overlap + 1, 2); s <= maxSize; s++) predictedSizes.push(s);
  const predicted = predictedSizes.map((s) => {
    if (!total) return 1.0;
    let cut = 0;
    for (const q of qs) cut += cutProbability(q.answer_words, { size: s, overlap });
    return 1.0 - cut / total;
  });
  return {
    overlap,
    split,
    total,
    sizes,
    measured: intact.map((n) => (total ? n / total : 1.0)),
    intact,
    predicted_sizes: predictedSizes,
    predicted,
  };
}

/** /api/chunking/answer/{id}'s view: the first span of a question's answer with the chunk
 * boundaries of `key` around it (null for a question without an answer passage). */
export function answerView(lab, q, key, { context }) {
  if (!q.spans.length) return null;
  const cs = lab.chunkSet(key);
  const span = q.spans[0];
  const page = lab.pages.find((p) => p.id === span.page_id);
  const { text } = page;
  let lo = Math.max(0, span.start - context);
  let hi = Math.min(text.length, span.end + context);
  // Snap the excerpt to whitespace so it opens and closes on whole words.
  if (lo > 0) {
    const gap = text.slice(0, span.start).indexOf(" ", lo);
    lo = gap !== -1 ? gap + 1 : lo;
  }
  if (hi < text.length) {
    const gap = text.slice(0, hi).lastIndexOf(" ");
    hi = gap !== -1 && gap >= span.end ? gap : hi;
  }
  const boundaries = [];
  const touching = [];
  for (const c of cs.chunks) {
    if (c.pageId !== page.id || c.end <= lo || c.start >= hi) continue;
    if (lo <= c.start && c.start <= hi) boundaries.push({ offset: c.start - lo, kind: "start", chunk: c.id });
    if (lo <= c.end && c.end <= hi) boundaries.push({ offset: c.end - lo, kind: "end", chunk: c.id });
    if (c.start < span.end && c.end > span.start) touching.push(c.id);
  }
  // Stable, by offset and then the chunk ends before the chunk starts (Python's sort key).
  boundaries.sort((x, y) => x.offset - y.offset || (x.kind !== "end") - (y.kind !== "end"));
  const containing = [...cs.relevance(q).keys()].sort((x, y) => x - y).map((i) => cs.chunks[i].id);
  return {
    id: q.id,
    page: page.id,
    title: page.title,
    excerpt: text.slice(lo, hi),
    answer_start: span.start - lo,
    answer_end: span.end - lo,
    boundaries,
    intact: containing.length > 0,
    containing,
    touching,
  };
}
