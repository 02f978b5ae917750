// Exhibit V: train the reranker, show its weights, compare orders, and watch MMR drop a stale copy.

import { $, fill, applyBounds, bindOutput, debounce, el, fillChoices, fixedOf, get, gridStep, num, post, sequence, settingOf, status } from "./lib.js";
import { hbars } from "./charts.js";

const COLUMNS = ["top1", "p@3", "recall@5", "mrr"];

export async function init({ meta, store }) {
  // The features' display names and λ's range come from /api/meta, never from here.
  const FEATURE_NAMES = meta.labels.features;
  const saved = store.settings("rerank");
  const firstSpec = settingOf(meta, "retriever");
  const state = { trained: Boolean(saved.trained), lam: saved.lam ?? null, question: saved.question || null, chosen: null, retriever: saved.retriever || firstSpec.default };
  // The first stage: any retriever, its choices and names from /api/meta.
  const firstSelect = $("#rerank-first");
  fillChoices(firstSelect, firstSpec);
  if (!firstSpec.choices.includes(state.retriever)) state.retriever = firstSpec.default;
  firstSelect.value = state.retriever;
  const lamInput = $("#rerank-lambda");
  applyBounds(lamInput, settingOf(meta, "mmr_lambda"), gridStep(fixedOf(meta, "mmr_lambdas")));
  const statusLine = $("#rerank-status");
  const showLam = bindOutput(lamInput, $("#rerank-lambda-out"), 2);
  const tableSeq = sequence();
  const demoSeq = sequence();
  const save = () => store.setSettings("rerank", { trained: state.trained, lam: state.lam, question: state.question, retriever: state.retriever });

  async function loadTable() {
    const token = tableSeq.next();
    try {
      const data = await get("rerank/table", { lam: state.lam, retriever: state.retriever });
      if (!tableSeq.is(token)) return;
      status(statusLine, "");
      $("#rerank-table tbody").replaceChildren(
        ...data.rows.map((r) =>
          el(
            "tr",
            { "data-split": r.split, "data-order": r.order },
            el("th", { scope: "row", text: r.split }),
            el("td", { text: r.order === "reranked + MMR" ? `reranked + MMR (λ = ${num(data.lambda, 2)})` : r.order }),
            ...COLUMNS.map((c) => el("td", { text: num(r[c]) })),
          ),
        ),
      );
    } catch (error) {
      if (tableSeq.is(token)) status(statusLine, error.message);
    }
  }

  function topList(title, rows, superseded) {
    return el(
      "div",
      { class: "ranked" },
      el("h4", { text: title }),
      el(
        "ol",
        { class: "mini-list" },
        ...rows.map((r) =>
          el(
            "li",
            { class: `${r.relevant ? "hit" : ""} ${r.superseded ? "stale" : ""}` },
            el("span", { class: "chunk-id", text: r.chunk }),
            ` ${r.heading || r.title} `,
            r.relevant ? el("span", { class: "badge good", text: "answer" }) : null,
            r.superseded ? el("span", { class: "badge bad", text: "superseded" }) : null,
          ),
        ),
      ),
      el("p", { class: "small", text: superseded.length ? `Outdated copies in the top 3: ${superseded.length}.` : "No outdated copy in the top 3." }),
    );
  }

  async function loadDemo() {
    const token = demoSeq.next();
    try {
      const data = await get("rerank/version", { lam: state.lam, question_id: state.question, retriever: state.retriever });
      if (!demoSeq.is(token)) return;
      const select = $("#version-question");
      const host = $("#version-demo");
      if (!data.question) {
        select.disabled = true;
        fill(host, el("p", { text: "No question here has a superseded page among its reranked top 3." }));
        return;
      }
      select.disabled = false;
      select.replaceChildren(
        ...data.candidates.map((c) =>
          el("option", { value: c.id, selected: c.id === data.question.id, text: `${c.id} (${c.split}): ${c.question}` }),
        ),
      );
      const leaves =
        data.leaves_at === null
          ? "On this question no λ on the grid clears every outdated copy from the top 3."
          : `The outdated copies leave the top 3 once λ is at or below ${num(data.leaves_at, 2)}.`;
      fill(
        host,
        el("p", { class: "wide", text: `${data.question.id}: ${data.question.question}` }),
        topList("Reranked, top 3", data.reranked, data.superseded_reranked),
        topList(`After MMR at λ = ${num(data.lambda, 2)}, top 3`, data.mmr, data.superseded_mmr),
        el("p", { class: "wide verdict", id: "version-verdict", text: leaves }),
      );
    } catch (error) {
      if (demoSeq.is(token)) status(statusLine, error.message);
    }
  }

  async function train() {
    try {
      const model = await post(`rerank/train?retriever=${encodeURIComponent(state.retriever)}`);
      state.trained = true;
      state.chosen = model.chosen_lambda;
      if (state.lam === null) state.lam = model.chosen_lambda;
      save();
      store.markExplored("rerank");
      $("#rerank-summary").textContent =
        `Logistic regression on ${model.rows.toLocaleString("en-GB")} candidate rows from the training questions (${model.positives} hold the answer), ` +
        `the first stage's top ${model.depth} for each. On the training questions MMR works best at λ = ${num(model.chosen_lambda, 2)}, marked on the slider.`;
      hbars($("#rerank-weights"), {
        label: `Learned weights: ${model.features.map((f) => `${FEATURE_NAMES[f] || f} ${num(model.weights[f], 2)}`).join(", ")}`,
        rows: model.features.map((f) => ({ label: FEATURE_NAMES[f] || f, value: model.weights[f], note: num(model.weights[f], 2) })),
      });
      lamInput.disabled = false;
      lamInput.value = state.lam;
      showLam();
      $("#rerank-lambda-marks").replaceChildren(el("option", { value: model.chosen_lambda, label: `trained ${num(model.chosen_lambda, 2)}` }));
      const button = $("#rerank-train");
      button.textContent = "Trained";
      button.disabled = true;
      await Promise.all([loadTable(), loadDemo()]);
    } catch (error) {
      status(statusLine, error.message);
    }
  }

  const reloadSoon = debounce(() => {
    loadTable();
    loadDemo();
  }, 50);
  firstSelect.addEventListener("change", async () => {
    state.retriever = firstSelect.value;
    // Another first stage is another model, with its own λ chosen on train.
    state.lam = null;
    state.question = null;
    save();
    if (state.trained) {
      $("#rerank-train").disabled = false;
      await train();
    }
  });
  lamInput.addEventListener("input", () => {
    state.lam = Number(lamInput.value);
    save();
    reloadSoon();
  });
  $("#version-question").addEventListener("change", (event) => {
    state.question = event.target.value;
    save();
    loadDemo();
  });
  $("#rerank-train").addEventListener("click", train);
  if (state.trained) await train();
}
