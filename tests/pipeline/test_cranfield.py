"""Cranfield through ``raglab import``: our BM25 beside bm25s, scored by pytrec_eval.

Settings of the classic comparison: k1 = 1.2, b = 0.75, Snowball stemming on, relevance
5 - grade (grade -1 dropped), one chunk per page (a heading chunker with a cap no abstract reaches).
"""

from __future__ import annotations

from pathlib import Path

import bm25s
import numpy as np
import pytest
import pytrec_eval

from raglab.formats.glasgow import import_glasgow
from raglab.pipeline.external import page_run
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import rank
from raglab.run_settings import ChunkingKey, RetrievalSettings
from raglab.settings import SEED

CRANFIELD = Path(__file__).resolve().parents[1] / "fixtures" / "cranfield"
WHOLE_PAGES = ChunkingKey("heading", 100_000)
MEASURES = ("ndcg_cut_10", "recip_rank", "recall_100")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    out = tmp_path_factory.mktemp("cranfield")
    import_glasgow(
        CRANFIELD / "cran.all.1400",
        CRANFIELD / "cran.qry",
        CRANFIELD / "cranqrel",
        out,
        quiet=True,
        seed=SEED,
    )
    return Lab.load(out / "pages", out / "questions.jsonl", stem=True)


def mean_measures(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]
) -> dict[str, float]:
    per_query = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES)).evaluate(run)
    return {m: sum(v[m] for v in per_query.values()) / len(qrels) for m in MEASURES}


def test_bm25_on_cranfield_equals_bm25s_under_trec_eval(lab: Lab) -> None:
    """Oracles: bm25s (method="lucene") for the ranking, pytrec_eval for the measures."""
    cs = lab.indexes.chunk_set(WHOLE_PAGES)
    assert len(lab.corpus) == 1400 and len(cs) == 1400 and len(lab.questions) == 225
    qrels = {q.id: {p: int(g) for p, g in (q.pages or {}).items()} for q in lab.questions}
    settings = RetrievalSettings("bm25", k1=1.2, b=0.75, chunking=WHOLE_PAGES)
    ours = {
        qid: dict(entries)
        for qid, entries in page_run(
            lab, {q.id: rank(lab, q, settings) for q in lab.questions}, chunking=WHOLE_PAGES
        ).items()
    }
    peer = bm25s.BM25(method="lucene", k1=1.2, b=0.75, dtype="float64")
    peer.index(cs.tokens, show_progress=False)
    theirs: dict[str, dict[str, float]] = {}
    for q in lab.questions:
        scores = peer.get_scores(lab.indexes.query_tokens(q)) * 2.2
        top = np.lexsort((np.arange(len(scores)), -scores))[:100]
        theirs[q.id] = {cs.chunks[int(i)].page_id: float(scores[i]) for i in top if scores[i] > 0}
    a, b = mean_measures(qrels, ours), mean_measures(qrels, theirs)
    for m in MEASURES:
        assert a[m] == pytest.approx(b[m], abs=1e-9), m
    # The published ballpark for BM25 on Cranfield: nDCG@10 near 0.4 with stemming.
    assert 0.3 < a["ndcg_cut_10"] < 0.5
