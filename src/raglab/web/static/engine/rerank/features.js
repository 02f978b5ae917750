// The reranker's six features of each of the first stage's top candidates.
//
// Mirrors src/raglab/rerank/features.py: per candidate, in the columns' order (the settings'
// RERANK_FEATURES): its BM25 score, its embedding cosine, the identifier match (+1: the chunk
// names every identifier asked about; -1: it names only others; 0 otherwise), the title match
// |T ∩ H| / |T|, the page's age in years, and its 1-based first-stage rank.

/** Days per year for page ages: the mean Gregorian year, so leap years do not bias ages. */
export const DAYS_PER_YEAR = 365.25;

function identifierMatch(question, ids) {
  if (question.size === 0) return 0.0;
  let all = true;
  let any = false;
  for (const id of question) {
    if (ids.has(id)) any = true;
    else all = false;
  }
  if (all) return 1.0;
  return ids.size > 0 && !any ? -1.0 : 0.0;
}

function termShare(question, field) {
  if (question.size === 0) return 0.0;
  let shared = 0;
  for (const t of question) if (field.has(t)) shared++;
  return shared / question.size;
}

/** The feature rows of one question's m candidates: an array of m rows of six numbers.
 * Every per-candidate input is an array in candidate order; identifiers and terms are iterables
 * of strings. */
export function candidateFeatures({
  bm25,
  cosine,
  questionIdentifiers,
  chunkIdentifiers,
  questionTerms,
  titleTerms,
  ageYears,
  rank,
}) {
  const m = bm25.length;
  for (const [name, values] of [["cosine", cosine], ["age_years", ageYears], ["rank", rank],
    ["chunk_identifiers", chunkIdentifiers], ["title_terms", titleTerms]]) {
    if (values.length !== m) throw new Error(`${name} has ${values.length} entries, expected ${m}`);
  }
  for (const [name, values] of [["bm25", bm25], ["cosine", cosine], ["age_years", ageYears]]) {
    if (!values.every(Number.isFinite)) throw new Error(`${name} must be finite`);
  }
  if (ageYears.some((a) => a < 0)) {
    throw new Error("age_years must be non-negative (years before the newest page)");
  }
  if (rank.some((r) => !Number.isInteger(r) || r < 1)) {
    throw new Error("rank is 1-based: every entry must be an integer of at least 1");
  }
  const qIds = new Set(questionIdentifiers);
  const qTerms = new Set(questionTerms);
  // A chunk's identifiers and title terms usually come as Sets, kept per chunk: read as they are.
  const asSet = (values) => (values instanceof Set ? values : new Set(values));
  return bm25.map((score, i) => [
    score,
    cosine[i],
    identifierMatch(qIds, asSet(chunkIdentifiers[i])),
    termShare(qTerms, asSet(titleTerms[i])),
    ageYears[i],
    rank[i],
  ]);
}

/** Days since 0001-01-01 of an ISO date "YYYY-MM-DD", plus one: Python's date.toordinal(). */
export function ordinal(iso) {
  const [y, m, d] = iso.split("-").map(Number);
  const utc = Date.UTC(2000, m - 1, d);
  const at = new Date(utc);
  at.setUTCFullYear(y); // Date.UTC reads years 0 to 99 as 1900 to 1999
  return Math.round((at.getTime() - Date.UTC(2000, 0, 1)) / 86400000) + 730120;
}

/** Each page's age in years before the newest dated page: (max_j d_j − d_i) / 365.25; an undated
 * page (null) gets the median age of the dated ones; none dated: every age 0. */
export function pageAgeYears(updated) {
  const days = updated.map((d) => (d === null ? null : ordinal(d)));
  const known = days.filter((d) => d !== null);
  if (known.length === 0) return days.map(() => 0.0);
  const newest = Math.max(...known);
  const ages = known.map((d) => (newest - d) / DAYS_PER_YEAR).sort((a, b) => a - b);
  const mid = ages.length >> 1;
  // np.median: the middle value, or the mean of the two middle values (a + b) / 2.
  const fill = ages.length % 2 ? ages[mid] : (ages[mid - 1] + ages[mid]) / 2;
  return days.map((d) => (d === null ? fill : (newest - d) / DAYS_PER_YEAR));
}
