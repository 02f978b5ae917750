// Exhibit III: fit the LSA embedding, show its spectrum, nearest words, search and twin codes.

// A word all of whose windows overlap was seen in one stretch of text only: the route flags it
// (one_passage) and the page marks it, since its cosine to the other words of that stretch is
// near 1.00 whatever the words mean.
const ONE_PASSAGE = "one passage";

import { $, $$, fill, debounce, el, get, num, sequence, status } from "./lib.js";
import { pageLink } from "./page_view.js";
import { plot } from "./charts.js";

export async function init({ store }) {
  const saved = store.settings("lsa");
  const state = {
    built: Boolean(saved.built),
    word: saved.word || "",
    query: saved.query || "",
    twinA: saved.twinA || "",
    twinB: saved.twinB || "",
  };
  const statusLine = $("#lsa-status");
  const wordInput = $("#lsa-word");
  const queryInput = $("#lsa-query");
  const wordSeq = sequence();
  const searchSeq = sequence();
  const save = () => store.setSettings("lsa", { ...state });

  function drawSpectrum(s) {
    const n = s.singular_values.length;
    const xTicks = [1, ...Array.from({ length: Math.floor(n / 8) }, (_, i) => (i + 1) * 8).filter((t) => t <= n)];
    const top = Math.max(...s.singular_values);
    plot($("#lsa-chart"), {
      label: `The ${n} singular values of the embedding, from ${num(top, 1)} down to ${num(s.singular_values[n - 1], 1)}`,
      height: 260,
      x: { min: 0, max: n + 1, label: "dimension i", ticks: xTicks },
      y: { min: 0, max: Math.ceil(top / 10) * 10, label: "singular value", format: (v) => v.toFixed(0) },
      series: [{ type: "bars", className: "spectrum", points: s.singular_values.map((v, i) => [i + 1, v]) }],
    });
    const shareTop = Math.ceil(Math.max(...s.variance_share) * 50) / 50 || 0.02;
    plot($("#lsa-share-chart"), {
      label: `Share of the squared norm of A kept by each dimension, and the running total: ${num(100 * s.kept_share, 1)} percent over ${n} dimensions`,
      height: 260,
      x: { min: 0, max: n + 1, label: "dimension i", ticks: xTicks },
      y: { min: 0, max: shareTop, label: "share of ‖A‖²", ticks: [0, shareTop / 2, shareTop], format: (v) => `${(v * 100).toFixed(1)}%` },
      y2: { min: 0, max: 1, label: "running total", ticks: [0, 0.25, 0.5, 0.75, 1], format: (v) => `${Math.round(v * 100)}%` },
      series: [
        { type: "bars", className: "share", points: s.variance_share.map((v, i) => [i + 1, v]) },
        { type: "line", className: "cumulative", axis: "y2", points: s.cumulative_share.map((v, i) => [i + 1, v]) },
      ],
    });
    $("#lsa-summary").textContent =
      `${s.rank} dimensions fitted on ${s.windows} windows of ${s.window_words} words, with a vocabulary of ${s.vocabulary.toLocaleString("en-GB")} terms. ` +
      `The largest singular value is ${num(s.singular_values[0], 2)}; together the ${s.rank} dimensions keep ${num(100 * s.kept_share, 1)}% of ‖A‖².`;
    // The windows and the solver's rounds actually used, in place of the defaults the page opened with.
    $("#lsa-window-rule").textContent = s.windows_rule;
    for (const node of $$('#lsa [data-meta="lsa_window_words"]')) node.textContent = String(s.window_words);
    for (const node of $$('#lsa [data-meta="lsa_power_iterations"]')) node.textContent = String(s.power_iterations);
    $("#lsa-suggestions").replaceChildren(
      ...s.sample_words.map((w) =>
        el("button", {
          type: "button",
          class: "chip",
          text: w,
          onclick: () => {
            wordInput.value = w;
            state.word = w;
            save();
            lookUp();
          },
        }),
      ),
    );
  }

  function chunkList(rows, scoreLabel) {
    return el(
      "ol",
      { class: "mini-list" },
      ...rows.map((r) => el("li", {}, pageLink(r.page, r.chunk), ` ${r.heading || r.title} `, el("span", { class: "score", text: `${scoreLabel} ${num(r.score)}` }))),
    );
  }

  async function lookUp() {
    const word = state.word.trim();
    const token = wordSeq.next();
    if (!word) {
      $("#lsa-neighbours").replaceChildren();
      return;
    }
    try {
      const data = await get("lsa/neighbours", { word, top: 10 });
      if (!wordSeq.is(token)) return;
      status(statusLine, "");
      const host = $("#lsa-neighbours");
      if (!data.in_vocabulary || !data.neighbours.length) {
        fill(host, el("p", { text: `“${data.term}” has no direction in the embedding: it never occurs in the windows, or occurs in every one of them.` }));
        return;
      }
      const marked = data.neighbours.filter((n) => n.one_passage);
      const wordCell = (n) =>
        el("th", { scope: "row" }, n.word, n.one_passage ? el("span", { class: "badge thin", title: `in ${n.windows} overlapping windows, ${n.shared_windows} shared with “${data.term}”`, text: ONE_PASSAGE }) : null);
      fill(
        host,
        el(
          "table",
          { class: "data numeric compact" },
          el("caption", { text: `Nearest to “${data.term}”` }),
          el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "word" }), el("th", { scope: "col", text: "cosine" }))),
          el("tbody", {}, ...data.neighbours.map((n) => el("tr", { class: n.one_passage ? "one-passage" : null }, wordCell(n), el("td", { text: num(n.cosine) })))),
        ),
        data.one_passage
          ? el("p", { class: "small", id: "lsa-word-thin", text: `“${data.term}” itself was seen in one passage only (${data.windows} overlapping windows): every other word of that passage gets its vector, so its list says little.` })
          : null,
        marked.length
          ? el("p", { class: "small", id: "lsa-thin-note", text: `Marked “${ONE_PASSAGE}”: ${marked.length} of these ${data.neighbours.length} words were seen in one stretch of text only (a window, or windows that overlap). Such a word takes the vector of that stretch, so it ties near 1.00 with every word of it; the closeness says nothing about meaning.` })
          : null,
      );
      store.markExplored("lsa");
    } catch (error) {
      if (wordSeq.is(token)) status(statusLine, error.message);
    }
  }
  const lookUpSoon = debounce(lookUp, 50);

  async function search() {
    const q = state.query.trim();
    const token = searchSeq.next();
    if (!q) {
      $("#lsa-results").replaceChildren();
      return;
    }
    try {
      const data = await get("lsa/search", { q, top: 5 });
      if (!searchSeq.is(token)) return;
      status(statusLine, "");
      const unknown = data.tokens.filter((t) => !data.known_tokens.includes(t));
      $("#lsa-results").replaceChildren(
        el("p", { class: "small", text: unknown.length ? `Not in the embedding's vocabulary, so ignored: ${unknown.join(", ")}.` : `Folded in from: ${data.known_tokens.join(", ") || "nothing"}.` }),
        el(
          "ol",
          { class: "result-list" },
          ...data.results.map((r) =>
            el("li", {}, el("p", { class: "result-head" }, el("strong", { text: r.heading || r.title }), " ", pageLink(r.page, r.chunk), el("span", { class: "score", text: `cosine ${num(r.score)}` })), el("p", { class: "snippet", text: r.snippet })),
          ),
        ),
      );
      store.markExplored("lsa");
    } catch (error) {
      if (searchSeq.is(token)) status(statusLine, error.message);
    }
  }
  const searchSoon = debounce(search, 50);

  const askTwins = (a, b) => get("lsa/twins", a && b ? { a, b } : {});
  async function twins(a, b, asked = askTwins(a, b)) {
    try {
      const data = await asked;
      status(statusLine, "");
      const host = $("#twins-out");
      if (!data.a) {
        fill(host, el("p", { text: "No pair of identifiers a digit apart was found in these documents; type two to compare them." }));
        return;
      }
      $("#twin-a").value = data.a;
      $("#twin-b").value = data.b;
      const verdict =
        data.cosine === null
          ? "One of the two has no vector in the embedding."
          : `The cosine between their word vectors is ${num(data.cosine)}${data.cosine > 0.8 ? ": to the embedding they are nearly the same word." : "."}`;
      fill(
        host,
        el("p", { class: "twin-verdict", id: "twins-cosine", text: `${data.a} and ${data.b}. ${verdict}` }),
        el(
          "div",
          { class: "twin-grid" },
          ...data.sides.map((side) =>
            el(
              "div",
              { class: "twin" },
              el("h4", { text: side.term }),
              el("p", { class: "small", text: side.neighbours.length ? `Nearest words: ${side.neighbours.map((n) => `${n.word} (${num(n.cosine, 2)}${n.one_passage ? `, ${ONE_PASSAGE}` : ""})`).join(", ")}` : "No vector in the embedding." }),
              el("p", { class: "small", text: "Embedding, the code alone as the query:" }),
              chunkList(side.lsa, "cos"),
              el("p", { class: "small", text: "BM25, the same query:" }),
              side.bm25.length ? chunkList(side.bm25, "score") : el("p", { class: "small", text: "no chunk contains it" }),
            ),
          ),
        ),
      );
    } catch (error) {
      status(statusLine, error.message);
    }
  }

  // The example pair and the clearest pair, each with its cosine and why (from /api/lsa/pairs).
  async function pairs(asked = get("lsa/pairs")) {
    let host = $("#lsa-pairs");
    if (!host) {
      host = el("div", { id: "lsa-pairs", "aria-live": "polite" });
      $("#twins-form").before(host);
    }
    const data = await asked;
    const title = { example: "The example pair", clearest: "The clearest pair in these documents" };
    fill(
      host,
      ...data.pairs.map((p) =>
        el(
          "div",
          { class: "pair", id: `lsa-pair-${p.role}`, "data-a": p.a, "data-b": p.b },
          el("h4", {}, `${title[p.role]}: ${p.a} and ${p.b}, `, el("span", { class: "pair-cosine", text: `cosine ${num(p.cosine)}` })),
          el("p", { class: "small", text: p.why }),
        ),
      ),
    );
  }

  async function build() {
    try {
      // The fit, the pairs and the twins asked at once (each route fits the same embedding,
      // cached), drawn in that order once the fit is in.
      const spectrumAsked = get("lsa");
      const pairsAsked = get("lsa/pairs");
      const twinsAsked = askTwins(state.twinA, state.twinB);
      for (const asked of [pairsAsked, twinsAsked]) asked.catch(() => {});
      const spectrum = await spectrumAsked;
      state.built = true;
      save();
      store.markExplored("lsa");
      drawSpectrum(spectrum);
      $("#lsa-tools").hidden = false;
      $("#lsa-build").textContent = "Fitted";
      $("#lsa-build").disabled = true;
      await pairs(pairsAsked);
      await twins(state.twinA, state.twinB, twinsAsked);
      if (state.word) lookUp();
      if (state.query) search();
    } catch (error) {
      status(statusLine, error.message);
    }
  }

  wordInput.value = state.word;
  queryInput.value = state.query;
  wordInput.addEventListener("input", () => {
    state.word = wordInput.value;
    save();
    lookUpSoon();
  });
  $("#lsa-word-form").addEventListener("submit", (event) => {
    event.preventDefault();
    lookUp();
  });
  queryInput.addEventListener("input", () => {
    state.query = queryInput.value;
    save();
    searchSoon();
  });
  $("#lsa-search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    search();
  });
  $("#twins-form").addEventListener("submit", (event) => {
    event.preventDefault();
    state.twinA = $("#twin-a").value.trim();
    state.twinB = $("#twin-b").value.trim();
    save();
    twins(state.twinA, state.twinB);
  });
  $("#lsa-build").addEventListener("click", build);
  if (state.built) await build();
}
