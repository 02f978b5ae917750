"""The web lab's warm-up, so the first requests hit the caches.

:func:`warm` builds what the first page shows, :func:`warm_later` the rest.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

from raglab.pipeline import dense
from raglab.pipeline.chunking_report import chunking_report
from raglab.pipeline.exhibits.bm25 import bm25_recall, stemming_effect
from raglab.pipeline.exhibits.chunking import CURVE_OVERLAPS, intact_curve
from raglab.pipeline.exhibits.fusion import fusion_settings, question_grid
from raglab.pipeline.exhibits.lsa import identifier_twins
from raglab.pipeline.exhibits.neural import neural_view
from raglab.pipeline.exhibits.rerank import rerank_rows, version_candidates
from raglab.pipeline.grid import bm25_grid
from raglab.pipeline.lab import Lab
from raglab.pipeline.reranking import choose_lambda, train_reranker
from raglab.pipeline.retrieval import choose_weight, ranker_table
from raglab.run_settings import ChunkingKey, RetrievalSettings
from raglab.settings import FIXED_OVERLAP, GRID_RECALL_K, MMR_LAMBDAS, default


def warm(lab: Lab, *, report: Callable[[str, float], None] | None = None) -> dict[str, float]:
    """Build what the web lab's first page shows, once; returns milliseconds per step.

    The first page asks each exhibit for its default view: the fixed chunker's report and
    intact-rate curve, BM25 (its recall and the k1 x b grid), the embedding (and the identifier
    twins), the fusion table and grid at the chosen weight, and the reranker with its table at
    the chosen lambda and the outdated-copy demo. These steps build exactly the lab's cached
    pieces those views read, so the page answers at once; everything a later interaction may ask
    for is left to :func:`warm_later`. A step the data cannot support (say, a reranker on
    questions that never find their answer) raises ValueError; it is skipped and reported as -1.

    The fusion table's neural rows are built here only when the chunks' vectors are in the
    on-disk cache already (reading them takes milliseconds, :func:`vectors_cached`); otherwise
    the server starts without them and encodes them in the background
    (:mod:`raglab.web.encoding`), never here.
    """
    timings: dict[str, float] = {}

    def step(name: str, work: Callable[[], object]) -> None:
        start = time.perf_counter()
        try:
            work()
            ms = (time.perf_counter() - start) * 1000
        except ValueError:
            ms = -1.0
        timings[name] = ms
        if report is not None:
            report(name, ms)

    def fusion() -> None:
        weight = choose_weight(lab)
        ranker_table(lab, weight=weight, neural=vectors_cached(lab))
        question_grid(lab, fusion_settings("score", weight))

    def reranker_table() -> None:
        reranker = train_reranker(lab, RetrievalSettings())
        lam = choose_lambda(lab, reranker)
        rerank_rows(lab, reranker, lam)
        version_candidates(lab, reranker)

    step("chunking", lambda: chunking_report(lab, ChunkingKey("fixed")))
    step("intact curve", lambda: intact_curve(lab, overlap=FIXED_OVERLAP))
    step("BM25", lambda: bm25_recall(lab, k1=default("k1"), b=default("b")))
    # The stemming switch's comparison at the defaults (it builds the lab's stemmed sibling).
    step("BM25 stemming", lambda: stemming_effect(lab, k1=default("k1"), b=default("b")))
    step("BM25 grid", lambda: bm25_grid(lab, k=GRID_RECALL_K))
    step("LSA", lambda: identifier_twins(lab))
    step("fusion weight", fusion)
    step("reranker", lambda: choose_lambda(lab, train_reranker(lab, RetrievalSettings())))
    step("reranker table", reranker_table)
    return timings


def _rerank_rows_at(lab: Lab, lam: float) -> object:
    """Exhibit V's table at ``lam`` for the default reranker (one background task per lambda)."""
    return rerank_rows(lab, train_reranker(lab, RetrievalSettings()), lam)


def vectors_cached(lab: Lab) -> bool:
    """Whether the neural rows can be built without encoding the chunks: every chunk of the
    default chunking has its vector in the on-disk cache (a question missing one is encoded
    alone, in milliseconds), or there is no model and the rows say how to install it. The
    same test as the server's background encoding's (:meth:`raglab.web.encoding.NeuralEncoding.start`)."""
    if dense.unavailable(lab.model) is not None:
        return True
    model = dense.load(lab.model)
    return not dense.uncached(model, [c.text for c in lab.indexes.chunk_set().chunks])


def warm_later(lab: Lab) -> list[Callable[[], object]]:
    """What :func:`warm` leaves for later, as small tasks to run once the lab is serving.

    The other chunkers' reports, the reranker's table at every lambda on the slider and the
    intact curves of the other overlaps on the slider. The tasks take tens of milliseconds at
    most, so a request that arrives while one runs waits little; a request needing a result
    before its task has run builds it itself, and the task then finds it cached. (The default
    end-to-end run is built on the runs' own lab, :func:`raglab.web.routes.end_to_end.warm_run`;
    what needs the neural vectors waits for them, :func:`warm_neural`.)
    """
    tasks: list[Callable[[], object]] = [
        partial(chunking_report, lab, ChunkingKey()),
        partial(chunking_report, lab, ChunkingKey("sentence")),
    ]
    tasks += [partial(_rerank_rows_at, lab, lam) for lam in MMR_LAMBDAS]
    tasks += [partial(intact_curve, lab, overlap=o) for o in CURVE_OVERLAPS if o != FIXED_OVERLAP]
    return tasks


def _neural_rows(lab: Lab) -> object:
    """Exhibit IV's table with its neural rows at the chosen weight, and the neural weight."""
    choose_weight(lab, RetrievalSettings("neural-score"))
    return ranker_table(lab, weight=choose_weight(lab))


def warm_neural(lab: Lab) -> list[Callable[[], object]]:
    """What needs the neural vectors, as tasks to run once they are ready: exhibit III's neural
    panel (whose encoding time is measured then, a few tenths of a second) and exhibit IV's
    neural rows."""
    return [partial(neural_view, lab), partial(_neural_rows, lab)]
