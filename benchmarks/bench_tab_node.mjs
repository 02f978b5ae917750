// The in-tab engine's route answers timed in Node: two engines (two checkouts' engine folders)
// on one site.json, CPU milliseconds of this process per answer, and their answers compared.
//
//   git archive REV src/raglab/web/static/engine | tar -x -C /tmp/old     # the engine before
//   OLD=/tmp/old/src/raglab/web/static/engine NEW=src/raglab/web/static/engine
//   DATA=SITE/data/site.json   # `raglab site --out SITE`, or the parity fixtures' site-handbook.json
//   node benchmarks/bench_tab_node.mjs answers DATA $OLD old.txt    # and $NEW new.txt; cmp the two
//   node benchmarks/bench_tab_node.mjs cold DATA $OLD $NEW 7        # the cold page, fresh processes
//   node benchmarks/bench_tab_node.mjs fresh DATA $OLD $NEW 10      # VI's new cuts, fresh processes
//   node benchmarks/bench_tab_node.mjs steady DATA $OLD $NEW 16     # VI's new cuts, one process
//   node benchmarks/bench_tab_node.mjs fit DATA $OLD $NEW 12        # the LSA fit, one process
//
// answers: every route answer to 249 fixed requests (the cold page's, V's at three λ for
// thirteen questions and four first stages, VI's chunker, size, retriever, overlap, weight and
// reader settings, a comparison), one file, after the Worker's whole idle warm-up (warmUp
// below: the engine's warmup.js where it has one, else the steps engines before it took) run
// once the default run is answered; the warm-up's own answers are not written: two engines'
// files equal byte for byte when their answers are. cold: the page's first 17 requests in its
// order, each process fresh (engine imported, data parsed), the two engines' processes
// alternated N times a side; the median CPU ms a request and of their sum. fresh: a fresh
// process each, alternated N times a side: the cold page's requests, then the Worker's whole
// idle warm-up, then VI's chunker changes (fixed, sentence, heading, fixed) and sizes (60, 120,
// 180, 240 words): p50 and p95 of the fixed and sentence changes, of the four chunker changes
// together and of the 60-word heading cut (which no warm-up step prepares), and the warm-up's
// step count, CPU sum and largest step (what a request arriving during it may wait). steady:
// both engines in one process, rounds interleaved (the order swapped each round, the first two
// dropped), each round a fresh copy of the data and its default run, then VI's fixed, sentence
// and 60-word heading cuts, no warm-up (a new cut's own cost). fit: the LSA fit (fitLsa:
// vocabulary, TF-IDF, sparse matrix, randomised SVD) on the page's windows, both engines in
// one process, fits interleaved (the order swapped each round, the first two dropped): p50 and
// p95, and the SHA-256 of each engine's U, s and Vt bytes; then each engine's first fit in
// fresh processes, alternated N times a side. CPU time includes V8's compiler and collector
// threads: on a shared machine, say the load (printed before and after).

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { cpuUsage } from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";

const [mode, dataFile, ...rest] = process.argv.slice(2);
const USAGE = "usage: node benchmarks/bench_tab_node.mjs answers|cold|fresh|steady|fit DATA ENGINE... [N|OUT]";
if (!mode || !dataFile) throw new Error(USAGE);
const engine = (root, path) => import(pathToFileURL(resolve(root, path)).href);
const ms = () => {
  const u = cpuUsage();
  return (u.user + u.system) / 1000;
};
const quantile = (values, p) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.round(p * (s.length - 1)))];
};
const load = () => loadavg()[0].toFixed(1);
const req = (o) => ({
  chunker: "heading", size: null, overlap: null, retriever: "rrf", weight: null, rerank: true, mmr: true,
  mmr_lambda: null, budget: 400, threshold: null, reader_scoring: "coverage", ...o,
});

const sizeSlider = (data) => data.meta.settings.find((s) => s.name === "size").slider;

/** The cold page's requests in its order (the exhibits' first renders and first clicks). */
function coldRequests(data) {
  const qid = data.collection.questions[0].id;
  return [
    ["GET", "/api/meta"], ["GET", "/api/questions"], ["GET", "/api/chunking?method=heading"], ["GET", "/api/chunking/curve"],
    ["GET", `/api/chunking/answer/${qid}`], ["GET", "/api/bm25/examples"], ["GET", "/api/bm25/search?q=reset%20password"],
    ["GET", "/api/bm25/recall"], ["GET", "/api/bm25/grid"], ["GET", "/api/lsa"], ["GET", "/api/lsa/pairs"], ["GET", "/api/fusion/table"],
    ["POST", "/api/rerank/train"], ["GET", "/api/rerank/sweep?retriever=rrf"], ["GET", "/api/rerank/table?retriever=rrf"],
    ["GET", "/api/rerank/version?retriever=rrf"], ["POST", "/api/run"],
  ];
}

/** Runs this script again in a fresh process per sample, the engines alternated `n` times. */
function alternate(child, roots, n) {
  const rows = roots.map(() => []);
  for (let i = 0; i < n; i++) {
    roots.forEach((root, side) => {
      const args = [fileURLToPath(import.meta.url), child, dataFile, root];
      rows[side].push(JSON.parse(execFileSync(process.execPath, args, { encoding: "utf8" })));
    });
  }
  return rows;
}

async function answers(root, outFile) {
  const { answer } = await engine(root, "routes.js");
  const data = JSON.parse(readFileSync(dataFile, "utf8"));
  const qids = data.collection.questions.map((q) => q.id);
  const retrievers = data.meta.settings.find((s) => s.name === "retriever").choices;
  const out = [];
  const ask = (method, url, body = null) => {
    let v;
    try {
      v = answer(data, url, () => {}, { method, body });
    } catch (e) {
      v = { error: String(e.status ?? ""), message: e.message };
    }
    out.push(`${method} ${url} ${JSON.stringify(body)}\n${JSON.stringify(v)}`);
  };
  const cold = ["meta", "questions", "chunking?method=heading", "chunking/curve", `chunking/answer/${qids[0]}`, "bm25/examples",
    "bm25/search?q=how%20to%20reset%20password", "bm25/recall", "bm25/grid", "lsa", "lsa/pairs", "fusion/table", `fusion/lists/${qids[1]}`, "fusion/grid"];
  for (const u of cold) ask("GET", `/api/${u}`);
  ask("POST", "/api/rerank/train", null);
  ask("POST", "/api/run", null);
  // As the Worker's warm-up does, where the engine has it: the later requests reuse what it
  // found (its answers are not written: only the requests' own are).
  await warmUp(root, data);
  ask("GET", `/api/bm25/grid?stem=${!data.meta.stem}`);
  for (const r of retrievers) ask("POST", `/api/rerank/train?retriever=${r}`, null);
  for (const u of ["rerank/sweep", "rerank/table", "rerank/version", "bm25/test", "lsa/search?q=token%20expiry", "lsa/neighbours?word=password", "lsa/twins", "fusion/grid?method=rrf"]) ask("GET", `/api/${u}`);
  for (let i = 0; i < 12; i++) ask("GET", `/api/bm25/search?q=account%20login%20error&k1=${(0.2 + i * 0.15).toFixed(2)}&b=${(i / 12).toFixed(3)}`);
  for (let i = 0; i < 10; i++) ask("GET", `/api/bm25/recall?k1=${(0.4 + i * 0.2).toFixed(1)}&b=0.5`);
  for (const c of ["fixed", "sentence", "heading", "fixed"]) ask("POST", "/api/run", req({ chunker: c }));
  for (const size of [60, 120, 180, 240, 300, 45]) ask("POST", "/api/run", req({ size }));
  for (const r of retrievers) ask("POST", "/api/run", req({ retriever: r }));
  for (const overlap of [0, 20, 40, 60]) ask("POST", "/api/run", req({ chunker: "fixed", overlap }));
  for (const w of [0.1, 0.5, 0.9]) ask("POST", "/api/run", req({ retriever: "score", weight: w, size: 60 }));
  ask("POST", "/api/run", req({ size: 60, reader_scoring: "idf", rerank: false }));
  ask("POST", "/api/run", req({ chunker: "sentence", retriever: "bm25", mmr_lambda: 0.3 }));
  ask("POST", "/api/run/compare", { a: req({ size: 60 }), b: req({}) });
  for (const q of qids.slice(0, 6)) ask("GET", `/api/fusion/lists/${q}?method=rrf`);
  for (const r of ["rrf", "bm25", "lsa", "score"]) {
    for (const lam of [null, 0.3, 0.8]) {
      for (const q of [null, ...qids.slice(0, 12)]) {
        const p = new URLSearchParams({ retriever: r });
        if (lam !== null) p.set("lam", String(lam));
        if (q !== null) p.set("question_id", q);
        ask("GET", `/api/rerank/version?${p}`);
      }
    }
  }
  for (const r of ["bm25", "lsa", "score"]) {
    ask("GET", `/api/rerank/sweep?retriever=${r}`);
    ask("GET", `/api/rerank/table?retriever=${r}&lam=0.4`);
  }
  writeFileSync(outFile, out.join("\n"));
  console.log(`${out.length} answers written to ${outFile}`);
}

/** One fresh process's cold requests: {url: CPU ms}. */
async function coldOnce(root) {
  const { answer } = await engine(root, "routes.js");
  const data = JSON.parse(readFileSync(dataFile, "utf8"));
  const out = {};
  for (const [method, url] of coldRequests(data)) {
    const a = ms();
    answer(data, url, () => {}, { method, body: method === "POST" ? {} : null });
    out[url.replace("/api/", "")] = ms() - a;
  }
  return out;
}

/** The Worker's idle warm-up on `data`, each step's parts in turn as worker.js runs them: the
 * engine's warmup.js where it has one, else the steps engines before it took (the default run,
 * prepareCuts where the engine has it, the other stemming's grid, each other first stage's
 * training and λ sweep). Returns the CPU ms of each step. */
async function warmUp(root, data) {
  const { answer } = await engine(root, "routes.js");
  const ask = (method, url, body = null) => answer(data, url, () => {}, { method, body });
  let list;
  try {
    list = (await engine(root, "warmup.js")).warmUps(data).map((s) => s.parts);
  } catch (error) {
    if (error.code !== "ERR_MODULE_NOT_FOUND") throw error;
    const { prepareCuts } = await engine(root, "chunking/chunkers.js");
    const retrievers = data.meta.settings.find((s) => s.name === "retriever");
    list = [
      [["POST", "/api/rerank/train"]],
      [["POST", "/api/run"], ...(prepareCuts ? [() => prepareCuts(data.collection.pages, { minSize: sizeSlider(data)[0] })] : [])],
      [["GET", `/api/bm25/grid?stem=${!data.meta.stem}`]],
      ...retrievers.choices
        .filter((c) => c !== retrievers.default)
        .map((r) => [["POST", `/api/rerank/train?retriever=${r}`], ["GET", `/api/rerank/sweep?retriever=${r}`]]),
    ];
  }
  return list.map((parts) => {
    const a = ms();
    for (const part of parts) {
      try {
        if (typeof part === "function") part();
        else ask(...part);
      } catch {
        break; // as the Worker does: a first stage this data lacks (the neural one without its vectors)
      }
    }
    return ms() - a;
  });
}

/** One fresh process: the cold page, the Worker's whole warm-up (warmUp), then VI's new cuts:
 * {name: [CPU ms], warmUp: [CPU ms a step]}. */
async function freshOnce(root) {
  const { answer } = await engine(root, "routes.js");
  const data = JSON.parse(readFileSync(dataFile, "utf8"));
  const ask = (method, url, body = null) => answer(data, url, () => {}, { method, body });
  for (const [method, url] of coldRequests(data)) ask(method, url);
  const out = { chunker: [], size: [], warmUp: await warmUp(root, data) };
  for (const chunker of ["fixed", "sentence", "heading", "fixed"]) {
    const a = ms();
    ask("POST", "/api/run", req({ chunker }));
    out.chunker.push(ms() - a);
  }
  for (const size of [60, 120, 180, 240]) {
    const a = ms();
    ask("POST", "/api/run", req({ size }));
    out.size.push(ms() - a);
  }
  return out;
}

async function steady(roots, rounds) {
  const answerOf = await Promise.all(roots.map(async (root) => (await engine(root, "routes.js")).answer));
  const base = JSON.parse(readFileSync(dataFile, "utf8"));
  const cuts = [["fixed", req({ chunker: "fixed" })], ["sentence", req({ chunker: "sentence" })], ["heading at 60", req({ size: 60 })]];
  const res = roots.map(() => Object.fromEntries(cuts.map(([name]) => [name, []])));
  for (let i = 0; i < rounds; i++) {
    for (const side of i % 2 ? [1, 0] : [0, 1]) {
      const data = structuredClone(base);
      const post = (body) => answerOf[side](data, "/api/run", () => {}, { method: "POST", body });
      post(null);
      for (const [name, body] of cuts) {
        const a = ms();
        post(body);
        if (i >= 2) res[side][name].push(ms() - a);
      }
    }
  }
  return res;
}

/** The page's LSA windows and fit settings, windows cut by the engine at `root`. */
async function fitInputs(root) {
  const data = JSON.parse(readFileSync(dataFile, "utf8"));
  const { Lab, fixedOf } = await engine(root, "exhibits/lab.js");
  const { lsaWindows, powerIterationsFor } = await engine(root, "embedding/lsa.js");
  const lab = new Lab(data, { stem: data.meta.stem });
  const fixed = (name) => fixedOf(data.meta, name);
  const tokens = (page, start, end) => lab.spanTokens(page.id, start, end, { stem: lab.stem, analyzer: lab.analyzer });
  const minimum = fixed("lsa_windows");
  const windows = lsaWindows(lab.pages, tokens, { minimum, size: fixed("lsa_window_words") });
  const settings = {
    rank: fixed("lsa_rank"), oversample: fixed("lsa_oversample"), seed: fixed("seed"),
    powerIterations: powerIterationsFor(windows.length, { base: fixed("lsa_power_iterations"), minimum }),
  };
  return { windows, settings };
}

/** One fresh process's first LSA fit: CPU ms. */
async function fitOnce(root) {
  const { windows, settings } = await fitInputs(root);
  const { fitLsa } = await engine(root, "embedding/lsa.js");
  const a = ms();
  fitLsa(windows, settings);
  return ms() - a;
}

async function fit(roots, rounds) {
  const { windows, settings } = await fitInputs(roots[0]);
  const fits = await Promise.all(roots.map(async (root) => (await engine(root, "embedding/lsa.js")).fitLsa));
  const times = roots.map(() => []);
  const digests = roots.map(() => new Set());
  for (let i = 0; i < rounds; i++) {
    for (const side of i % 2 ? [1, 0] : [0, 1]) {
      const a = ms();
      const model = fits[side](windows, settings);
      if (i >= 2) times[side].push(ms() - a);
      const hash = createHash("sha256");
      for (const x of [model.U, Float64Array.from(model.s), model.Vt]) hash.update(new Uint8Array(x.buffer));
      digests[side].add(hash.digest("hex"));
    }
  }
  console.log(`${shapeOf(windows)}; ${JSON.stringify(settings)}`);
  roots.forEach((root, side) => console.log(root, report("fit", times[side]), "sha256", [...digests[side]].join(" ")));
  const firsts = alternate("fit-once", roots, rounds - 2);
  firsts.forEach((values, side) => console.log(roots[side], report("first fit, fresh processes", values)));
}

const shapeOf = (windows) => `${new Set(windows.flat()).size} terms x ${windows.length} windows`;

const report = (label, values) => `${label} p50 ${quantile(values, 0.5).toFixed(1)} p95 ${quantile(values, 0.95).toFixed(1)}`;

if (mode === "answers") await answers(rest[0], rest[1]);
else if (mode === "cold-once") console.log(JSON.stringify(await coldOnce(rest[0])));
else if (mode === "fit-once") console.log(JSON.stringify(await fitOnce(rest[0])));
else if (mode === "fresh-once") console.log(JSON.stringify(await freshOnce(rest[0])));
else if (mode === "fit") {
  console.log(`fit, ${rest[2] ?? 12} a side; load before ${load()}`);
  await fit(rest.slice(0, 2), Number(rest[2] ?? 12) + 2);
  console.log(`load after ${load()}`);
} else if (["cold", "fresh", "steady"].includes(mode)) {
  const roots = rest.slice(0, 2);
  const n = Number(rest[2] ?? 10);
  console.log(`${mode}, ${n} a side; load before ${load()}`);
  if (mode === "steady") {
    (await steady(roots, n + 2)).forEach((res, side) =>
      console.log(roots[side], Object.entries(res).map(([k, v]) => report(k, v)).join("  ")),
    );
  } else {
    alternate(`${mode}-once`, roots, n).forEach((rows, side) => {
      if (mode === "cold") {
        const urls = Object.keys(rows[0]);
        const line = urls.map((u) => `${u} ${quantile(rows.map((r) => r[u]), 0.5).toFixed(0)}`);
        const sums = rows.map((r) => Object.values(r).reduce((a, b) => a + b, 0));
        console.log(roots[side], `sum p50 ${quantile(sums, 0.5).toFixed(0)};`, line.join(", "));
      } else {
        const fixed = rows.map((r) => r.chunker[0]);
        const sentence = rows.map((r) => r.chunker[1]);
        const size60 = rows.map((r) => r.size[0]);
        const chunker = rows.flatMap((r) => r.chunker);
        const step = rows.map((r) => Math.max(...r.warmUp));
        const steps = rows.map((r) => r.warmUp.reduce((a, b) => a + b, 0));
        console.log(
          roots[side],
          [report("fixed", fixed), report("sentence", sentence), report("chunker's four", chunker), report("heading at 60", size60)].join("  "),
          `\n  warm-up: ${rows[0].warmUp.length} steps, ${report("sum", steps)}, ${report("largest step", step)}`,
        );
      }
    });
  }
  console.log(`load after ${load()}`);
} else throw new Error(USAGE);
