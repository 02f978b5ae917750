// The in-tab encoder's two paths timed in Node on a written site: WebAssembly SIMD against plain JS.
//
//   raglab site --out SITE && node benchmarks/bench_tab_encoder.mjs SITE [ROUNDS] [METHOD:SIZE]
//
// Reads the site's engine (static/engine), its float16 (or float32) weights and tokenizer, and
// the handbook's chunks at METHOD:SIZE (default fixed:128, the lab's 135 chunks of 128 words).
// Times, in CPU seconds of this process (process.cpuUsage), the encoding of one 128-piece text
// ROUNDS times (default 5) on each path, the two paths interleaved, each round's order swapped,
// then the whole chunking once on each path (SIMD first), and prints the medians, the ratio, the
// largest difference between the two paths' unit vectors, and the load average before and after.

import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { cpuUsage } from "node:process";
import { pathToFileURL } from "node:url";

const [dir, rounds = "5", cut = "fixed:128"] = process.argv.slice(2);
if (!dir) throw new Error("usage: node benchmarks/bench_tab_encoder.mjs SITE_DIR [ROUNDS] [METHOD:SIZE]");
const site = resolve(dir);
const engine = (path) => import(pathToFileURL(join(site, "static/engine", path)).href);
const { encodeIds } = await engine("embedding/neural/encoder.js");
const { loadWeights } = await engine("embedding/neural/weights.js");
const { wordPieceTokenizer } = await engine("embedding/neural/wordpiece.js");
const { Lab } = await engine("exhibits/lab.js");

const data = JSON.parse(readFileSync(join(site, "data/site.json"), "utf-8"));
const w = data.neural.weights;
const file = readFileSync(join(site, w.file));
const weights = loadWeights(file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength));
const tokenizer = wordPieceTokenizer(JSON.parse(readFileSync(join(site, w.tokenizer), "utf-8")), w.max_seq_length);
const [method, size] = cut.split(":");
const lab = new Lab(data, { stem: data.meta.stem });
const texts = [...new Set(lab.chunkSet({ method, size: Number(size) }).chunks.map((c) => c.text))];
const ids = texts.map((t) => tokenizer.ids(t));
const piece128 = ids.find((row) => row.length >= 128).slice(0, 127).concat([ids[0].at(-1)]);

const cpu = (f) => {
  const before = cpuUsage();
  const value = f();
  const used = cpuUsage(before);
  return [(used.user + used.system) / 1e6, value];
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const PATHS = ["wasm-simd", "js"];
const load = [loadavg()[0]];

// Warm both paths (the SIMD one lays its weights out in the kernel's memory on first use).
const [layout] = cpu(() => encodeIds(weights, piece128, { path: "wasm-simd" }));
encodeIds(weights, piece128, { path: "js" });
const times = { "wasm-simd": [], js: [] };
for (let r = 0; r < Number(rounds); r++) {
  for (const path of r % 2 ? [...PATHS].reverse() : PATHS) {
    times[path].push(cpu(() => encodeIds(weights, piece128, { path }))[0]);
  }
}
const whole = {};
const vectors = {};
for (const path of PATHS) {
  [whole[path], vectors[path]] = cpu(() => ids.map((row) => encodeIds(weights, row, { path })));
}
let worst = 0;
vectors.js.forEach((v, i) => v.forEach((x, j) => (worst = Math.max(worst, Math.abs(x - vectors["wasm-simd"][i][j])))));
load.push(loadavg()[0]);
const one = Object.fromEntries(PATHS.map((p) => [p, median(times[p])]));
const out = {
  node: process.version,
  dtype: weights.manifest.dtype,
  chunking: cut,
  texts: texts.length,
  pieces: ids.reduce((a, row) => a + row.length, 0),
  rounds: Number(rounds),
  first_simd_pass_with_layout_s: layout,
  one_128_piece_text_cpu_s: one,
  one_ratio: one.js / one["wasm-simd"],
  whole_chunking_cpu_s: whole,
  whole_ratio: whole.js / whole["wasm-simd"],
  max_vector_difference_js_vs_simd: worst,
  load_average: load,
};
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
