"""Regression: "not retrieved" is judged at the run's own depth, never at the constant 20.

``raglab run --no-rerank --fusion-depth 100`` once diagnosed answers ranked 26, 51, 58 and 65
"not retrieved", against FUSION_DEPTH (20) instead of the depth the run's final list was cut at.
Oracle: the ranking itself (:func:`raglab.pipeline.retrieval.rank` under the run's resolved first
stage, :func:`raglab.metrics.measures.first_relevant_rank` of the question's answer chunks),
checked question by question against the command's own JSON.
"""

from __future__ import annotations

import json

import pytest

from raglab.cli.main import main
from raglab.metrics.measures import first_relevant_rank
from raglab.pipeline.end_to_end import run_pipeline
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import rank
from raglab.run_settings import RunSettings

ARGS = ["run", "--no-rerank", "--fusion-depth", "100", "--split", "train", "--json"]


def test_not_retrieved_means_no_answer_chunk_within_the_runs_depth(
    capsys: pytest.CaptureFixture[str], lab: Lab
) -> None:
    capsys.readouterr()
    assert main(ARGS) == 0
    data = json.loads(capsys.readouterr().out)
    settings = RunSettings(rerank=False, mmr=False, fusion_depth=100)
    result = run_pipeline(lab, settings, split="train")
    assert data["settings"]["fusion_depth"] == 100 and data["settings"]["rerank"] is False
    depth = result.resolved.depth
    assert depth == 100
    outcomes = {o["id"]: o for o in data["outcomes"]}
    assert [o["outcome"] for o in data["outcomes"]] == [o.outcome for o in result.outcomes]
    first_stage = result.resolved.retrieval
    cs = lab.indexes.chunk_set(first_stage.chunking)
    deep = 0
    for q in lab.split("train", answerable=True):
        ranking = rank(lab, q, first_stage)
        rel = cs.relevance(q)
        first = first_relevant_rank(ranking, rel) if rel else None
        o = outcomes[q.id]
        assert o["rank"] == first
        if o["outcome"] == "not retrieved":
            assert first is None or first > depth
        if first is not None and 20 < first <= depth:
            deep += 1
            assert o["outcome"] != "not retrieved"
            assert o["outcome"] in ("correct", "past budget", "reader")
    # The case the bug hid happens on the handbook: answers ranked past 20 yet within the run.
    assert deep >= 3
