// Every module of the in-tab engine in one list, so that a Worker starting it asks for them all
// in one round of requests.
//
// A module's imports are requested only once it has arrived and been parsed, so a Worker that
// imported routes.js alone waited on twelve rounds in turn (worker.js, warmup.js, routes.js,
// exhibits/end_to_end.js, ... bm25/formula.js): most of a cold load's wait for the Worker's
// data. worker.js imports this first: every module is then asked for by the third round, and
// each later import finds it loaded. Nothing here is used by name: the modules
// evaluate as their importers' imports would have them. tests/web/test_site.py checks that it
// lists every module of the engine but the Worker's own.

import "./base/bisect.js";
import "./base/exact.js";
import "./base/lru.js";
import "./base/topk.js";
import "./bm25/formula.js";
import "./bm25/grid.js";
import "./bm25/index.js";
import "./bm25/statistics.js";
import "./chunking/chunk.js";
import "./chunking/chunkers.js";
import "./chunking/closed_forms.js";
import "./embedding/lsa.js";
import "./embedding/neural/encoder.js";
import "./embedding/neural/kernel.js";
import "./embedding/neural/wasm.js";
import "./embedding/neural/weights.js";
import "./embedding/neural/wordpiece.js";
import "./embedding/sketch.js";
import "./embedding/svd.js";
import "./exhibits/bm25.js";
import "./exhibits/chunking.js";
import "./exhibits/end_to_end.js";
import "./exhibits/fusion.js";
import "./exhibits/lab.js";
import "./exhibits/lsa.js";
import "./exhibits/neural.js";
import "./exhibits/rerank.js";
import "./fusion/kernel.js";
import "./fusion/rrf.js";
import "./fusion/score.js";
import "./metrics/measures.js";
import "./metrics/stats.js";
import "./pipeline/end_to_end.js";
import "./pipeline/reading.js";
import "./pipeline/reranking.js";
import "./pipeline/retrieval.js";
import "./reading/diagnosis.js";
import "./reading/reader.js";
import "./reading/readings.js";
import "./rerank/features.js";
import "./rerank/logistic.js";
import "./rerank/mmr.js";
import "./routes.js";
import "./text/lucene.js";
import "./text/snowball.js";
import "./text/tokens.js";
import "./warmup.js";
