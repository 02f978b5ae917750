// A chunk, and which chunks contain a span: the relevance of every chunk to every answer.
//
// Mirrors src/raglab/chunking/chunk.py: a chunk contains a span when chunk.start <= start and
// end <= chunk.end on the same page (docs/design.md#spans). Offsets are UTF-16 code units.

/** The chunks of a chunker's list, indexed by page: answers "which chunks contain this span?". */
export class ChunkIndex {
  constructor(chunks) {
    this.chunks = chunks;
    this.byPage = new Map();
    chunks.forEach((c, i) => {
      if (!this.byPage.has(c.pageId)) this.byPage.set(c.pageId, []);
      this.byPage.get(c.pageId).push(i);
    });
  }

  /** Positions (ascending) of the chunks of `pageId` whose span contains [start, end). */
  containing(pageId, start, end) {
    if (start < 0 || end < start) {
      throw new Error(`need 0 <= start <= end, got start=${start}, end=${end}`);
    }
    const rows = this.byPage.get(pageId) ?? [];
    return rows.filter((i) => this.chunks[i].start <= start && end <= this.chunks[i].end);
  }
}

/** Chunk index -> gain for the chunks that hold a question's answer, as the lab's chunk sets
 * give it (src/raglab/pipeline/indexes.py): 1 for every chunk that contains one of the answer's
 * spans; for a page-labelled question, every chunk of a relevant page with the page's grade. */
export function relevance(index, question) {
  const out = new Map();
  if (question.spans.length > 0) {
    for (const { page_id: pageId, start, end } of question.spans) {
      for (const i of index.containing(pageId, start, end)) out.set(i, 1.0);
    }
    return out;
  }
  if (question.pages) {
    index.chunks.forEach((c, i) => {
      if (c.pageId in question.pages) out.set(i, question.pages[c.pageId]);
    });
  }
  return out;
}
