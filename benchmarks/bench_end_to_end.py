"""The whole pipeline on the bundled handbook, and first-stage retrieval on a generated corpus.

Handbook (``raglab.pipeline.end_to_end.run`` with the default ``RunSettings`` on the test split):

- cold: ``Lab.load()`` then ``run_pipeline(lab, RunSettings())``, on a fresh Lab each repeat: chunking, BM25, the LSA fit,
  the reranker's training, the choice of MMR's lambda and of the reader's threshold on the
  training split, then the test questions. Per question = total / number of test questions.
- warm: on the same Lab, ``run`` again with the lambda and threshold the cold run chose written
  into the settings: every index and the reranker are built, so this is the per-question work
  (ranking, reranking, MMR, packing, reading) of the test questions. The outcomes must equal the
  cold run's.
- a cold start in a new Python process (imports included), once.
- peak memory (tracemalloc) of one cold run.

Generated corpus (the BM25 benchmark's chunks): BM25 top 100 (zero scores dropped), LSA fitted
on 100 evenly spaced windows of 256 tokens with every chunk folded in and the fold-ins normalised
to unit rows once (``raglab.embedding.lsa.unit_rows``), cosine top 100 (``LSAModel.search`` with
``normalised=True``), then RRF of the two lists' first 20, as ``raglab.pipeline.retrieval`` does
for the default retriever. Timed per question, with each stage's share; tracemalloc's peak while
answering every question, and the memory the fold-ins hold (the BM25 index's is in section 1).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
from common import (
    ROOT,
    SHARED,
    Config,
    Disagreement,
    Row,
    Section,
    Timing,
    generated,
    mb,
    timed,
    traced_peak,
)

from raglab.base.ranking import Ranking
from raglab.bm25.index import BM25Index
from raglab.embedding.lsa import even_windows, fit_lsa, unit_rows
from raglab.fusion.rrf import rrf
from raglab.settings import LSA_RANK, LSA_WINDOWS, RRF_K, SEED, default

COLD_PROCESS = textwrap.dedent(
    """
    import time
    start = time.perf_counter()
    from raglab.pipeline.end_to_end import run_pipeline
    from raglab.pipeline.lab import Lab
    result = run_pipeline(Lab.load(), RunSettings())
    print(time.perf_counter() - start, result.n, result.correct)
    """
)


def _handbook(cfg: Config, section: Section) -> None:
    from raglab.pipeline.end_to_end import run_pipeline
    from raglab.pipeline.lab import Lab
    from raglab.run_settings import RunSettings

    def cold() -> tuple[Lab, Any]:
        lab = Lab.load()
        return lab, run_pipeline(lab, RunSettings())

    def outcomes(result: Any) -> list[tuple[str, str]]:
        return [(o.id, o.outcome) for o in result.outcomes]

    cold_samples, warm_samples = [], []
    reference = None
    for _ in range(cfg.e2e_repeats):
        (lab, result), seconds = timed(cold)
        cold_samples.append(seconds)
        fixed = dataclasses.replace(
            RunSettings(), threshold=result.threshold, mmr_lambda=result.mmr_lambda
        )
        warm_result, warm_seconds = timed(lambda lab=lab, s=fixed: run_pipeline(lab, s))  # type: ignore[misc]
        warm_samples.append(warm_seconds)
        if outcomes(warm_result) != outcomes(result):
            raise Disagreement("the warm run's outcomes differ from the cold run's")
        if reference is None:
            reference = outcomes(result)
        elif outcomes(result) != reference:
            raise Disagreement("two cold runs on fresh labs gave different outcomes")
    assert reference is not None
    n = len(reference)
    cold_t, warm_t = Timing(tuple(cold_samples)), Timing(tuple(warm_samples))
    (_, result), peak, _ = traced_peak(cold)
    proc = subprocess.run(
        [sys.executable, "-c", COLD_PROCESS],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    process_seconds = float(proc.stdout.split()[0])
    case = f"handbook, {n} test questions"
    check = f"{result.correct}/{result.n} correct, same outcomes every run"
    section.rows += [
        Row(
            case,
            f"cold run: Lab.load() + run_pipeline(), total (median of {cfg.e2e_repeats})",
            "s",
            cold_t.median,
            check=check,
        ),
        Row(case, "cold, per question", "s", cold_t.median / n),
        Row(case, f"warm, per question (median of {cfg.e2e_repeats})", "s", warm_t.median / n),
        Row(case, "cold start in a new process, imports included (once)", "s", process_seconds),
        Row(case, "peak memory of a cold run (tracemalloc)", "MB", mb(peak)),
    ]


def _generated(cfg: Config, section: Section) -> None:
    coll, index = SHARED.get("generated_bm25", (None, None))
    if coll is None:
        coll = generated(cfg.gen_chunks, cfg.gen_queries)
        index = BM25Index(coll.docs, k1=default("k1"), b=default("b"))
    assert isinstance(index, BM25Index)
    docs = coll.docs
    windows = even_windows([t for d in docs for t in d], count=LSA_WINDOWS, size=256)
    model, fit_seconds = timed(lambda: fit_lsa(windows, rank=LSA_RANK, seed=SEED, oversample=26))
    projections, project_seconds = timed(lambda: model.project(docs))
    # Normalised once, as the lab keeps them (ChunkSet.lsa_unit_projections); the rankings are
    # bitwise those of the raw projections.
    unit, unit_seconds = timed(lambda: unit_rows(projections))
    depth = min(default("depth"), len(docs))
    questions = coll.queries[: cfg.retrieval_questions]

    def bm25_list(q: list[str]) -> Ranking:
        r = index.search(q, k=depth)
        keep = r.scores > 0
        return Ranking(r.indices[keep], r.scores[keep])

    stages: dict[str, list[float]] = {"bm25": [], "lsa": [], "rrf": [], "total": []}
    for q in questions:
        bm, t_bm = timed(lambda q=q: bm25_list(q))  # type: ignore[misc]
        cos, t_lsa = timed(
            lambda q=q: model.search(q, unit, k=depth, normalised=True)  # type: ignore[misc]
        )
        fused, t_rrf = timed(
            lambda bm=bm, cos=cos: rrf([bm, cos], k=RRF_K, depth=default("fusion_depth"))  # type: ignore[misc]
        )
        if len(fused) == 0:
            raise Disagreement("a generated question matched no chunk")
        stages["bm25"].append(t_bm)
        stages["lsa"].append(t_lsa)
        stages["rrf"].append(t_rrf)
        stages["total"].append(t_bm + t_lsa + t_rrf)
    case = f"generated, {len(docs):,} chunks, {len(questions)} questions"
    total = Timing(tuple(stages["total"]))

    def answer_all() -> int:
        return sum(
            len(
                rrf(
                    [bm25_list(q), model.search(q, unit, k=depth, normalised=True)],
                    k=RRF_K,
                    depth=default("fusion_depth"),
                )
            )
            for q in questions
        )

    _, answer_peak, _ = traced_peak(answer_all)
    held = unit.nbytes + projections.nbytes
    section.rows += [
        Row(case, "BM25 + LSA + RRF, per question (median)", "s", total.median),
        Row(case, "BM25 + LSA + RRF, per question (p95)", "s", total.p95),
        Row(case, "of which BM25 top 100 (median)", "s", float(np.median(stages["bm25"]))),
        Row(case, "of which LSA cosine top 100 (median)", "s", float(np.median(stages["lsa"]))),
        Row(case, "of which RRF (median)", "s", float(np.median(stages["rrf"]))),
        Row(case, "LSA fit on 100 windows of 256 tokens (once)", "s", fit_seconds),
        Row(case, f"fold-in of all {len(docs):,} chunks (once)", "s", project_seconds),
        Row(case, "fold-ins normalised to unit rows (once)", "s", unit_seconds),
        Row(case, f"peak memory answering all {len(questions)} questions", "MB", mb(answer_peak)),
        Row(case, "LSA fold-ins held (raw and unit rows)", "MB", mb(held)),
    ]


def run(cfg: Config) -> Section:
    section = Section(
        "e2e",
        "4. End to end: the pipeline on the handbook, retrieval on a generated corpus",
        "No peer: these are our own times. The handbook run is checked for determinism (the "
        "same outcome for every question in every run, cold or warm).",
    )
    _handbook(cfg, section)
    _generated(cfg, section)
    section.notes += [
        "Cold per question divides the whole cold run (index building and training included) by "
        "the test questions; warm is what each further question costs once the lab is built.",
        "The process cold start is one run of `python -c` that imports raglab, loads the "
        "handbook and runs the pipeline; interpreter start-up itself is not included.",
    ]
    return section
