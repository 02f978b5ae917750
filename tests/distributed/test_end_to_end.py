"""The end-to-end run's questions read and diagnosed on the workers: the single machine's
readings, outcomes, accuracy and interval.

Oracle: :func:`raglab.pipeline.end_to_end.run_pipeline` on a fresh lab on one machine, under
several settings (the defaults, no reranker, IDF-weighted reading, MMR at a given lambda, a
given threshold, the neural cosine reader), compared reading by reading and as the whole result.
"""

from __future__ import annotations

from typing import Any

import pytest

from raglab.base.sentinels import TUNED
from raglab.distributed.end_to_end import prime_readings, read_on_cluster
from raglab.pipeline.end_to_end import run_pipeline
from raglab.pipeline.lab import Lab
from raglab.pipeline.reading import READINGS, prepared_questions, read_question
from raglab.pipeline.resolve import resolve_run
from raglab.run_settings import RunSettings

SETTINGS = [
    RunSettings(),
    RunSettings(rerank=False, mmr=False),
    RunSettings(reader_scoring="idf"),
    RunSettings(mmr_lambda=0.5, threshold=0.3),
    RunSettings(rerank=False, mmr=False, reader_scoring="cosine"),
]


@pytest.mark.parametrize(
    "settings", SETTINGS, ids=["defaults", "no-rerank", "idf", "given", "cosine"]
)
def test_readings_on_the_workers_equal_one_machine(
    client: Any, handbook: Lab, settings: RunSettings
) -> None:
    primed = Lab(handbook.corpus, handbook.questions)
    read = prime_readings(client, primed, settings, "test")
    run, reranker = resolve_run(handbook, settings)
    resolved = run.read
    tests = handbook.split("test")
    trains = handbook.split("train") if settings.threshold is TUNED else ()
    assert read == len(tests) + len(trains)
    stored = primed.caches.of(READINGS).find(("test", resolved))
    assert stored is not None
    assert stored == [read_question(handbook, q, resolved, reranker) for q in tests]
    assert run_pipeline(primed, settings) == run_pipeline(handbook, settings)


def test_slices_come_back_in_question_order(client: Any, handbook: Lab) -> None:
    run, reranker = resolve_run(handbook, RunSettings())
    s = run.read
    inputs = prepared_questions(handbook, s, handbook.questions, reranker)
    want = [read_question(handbook, q, s, reranker) for q in handbook.questions]
    for partitions in (1, 3, 7, 200):
        assert read_on_cluster(client, inputs, partitions=partitions) == want
    assert read_on_cluster(client, []) == []


def test_pages_labelled_questions_are_left_to_the_run(client: Any, cranfield: Lab) -> None:
    """Cranfield's questions are labelled by pages: nothing is read on the workers, and the
    run itself refuses, as on one machine."""
    assert prime_readings(client, cranfield, RunSettings(), "test") == 0
    with pytest.raises(ValueError, match="answer passages"):
        run_pipeline(cranfield, RunSettings())
