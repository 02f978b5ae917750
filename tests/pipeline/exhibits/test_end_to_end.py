"""Exhibit VI's funnel split by question kind.

Oracle: the outcomes of the small corpus (tests/pipeline/small_corpus.py), worked by hand
(two answerable "keyword" questions and one "out-of-corpus" one on the test split), and on the
handbook the run's own outcomes counted one by one.
"""

from __future__ import annotations

from collections import Counter

from raglab.pipeline.end_to_end import run_pipeline
from raglab.pipeline.exhibits.end_to_end import funnel
from raglab.pipeline.lab import Lab
from raglab.reading.diagnosis import DIAGNOSES
from raglab.run_settings import RunSettings


def plain(**kw: object) -> RunSettings:
    base: dict[str, object] = {"retriever": "bm25", "rerank": False, "mmr": False}
    return RunSettings(**{**base, **kw})  # type: ignore[arg-type]


def test_the_funnel_splits_the_outcomes_by_kind_by_hand(small_lab: Lab) -> None:
    """At threshold 0.5 every test question is right (s1, s2 keyword; s3 out of corpus); at 0
    the out-of-corpus s3 is answered anyway, a false answer of its kind; at 1, s2's best
    sentence covers 3/4 of its stems and is declined, a loss at the reader."""
    none = dict.fromkeys(DIAGNOSES, 0)
    right = funnel(run_pipeline(small_lab, plain(threshold=0.5)))["kinds"]
    assert right == [
        {"kind": "keyword", "n": 2, "correct": 2, "lost": none},
        {"kind": "out-of-corpus", "n": 1, "correct": 1, "lost": none},
    ]
    eager = funnel(run_pipeline(small_lab, plain(threshold=0.0)))["kinds"]
    assert eager[1] == {
        "kind": "out-of-corpus",
        "n": 1,
        "correct": 0,
        "lost": none | {"false answer": 1},
    }
    strict = funnel(run_pipeline(small_lab, plain(threshold=1.0)))["kinds"]
    assert strict[0]["correct"] == 1 and strict[0]["lost"]["reader"] == 1


def test_the_kinds_add_up_to_the_run(handbook_lab: Lab) -> None:
    """Oracle: the handbook run's outcomes counted by kind here; the kinds' correct answers and
    losses add up to the run's funnel."""
    result = run_pipeline(handbook_lab, plain())
    kinds = funnel(result)["kinds"]
    want = Counter((o.kind, o.outcome) for o in result.outcomes)
    assert [k["kind"] for k in kinds] == list(dict.fromkeys(o.kind for o in result.outcomes))
    for k in kinds:
        assert k["n"] == sum(c for (kind, _), c in want.items() if kind == k["kind"])
        assert k["correct"] == want[(k["kind"], "correct")]
        assert k["lost"] == {d: want[(k["kind"], d)] for d in DIAGNOSES}
    assert sum(k["correct"] for k in kinds) == result.correct
    for d in DIAGNOSES:
        assert sum(k["lost"][d] for k in kinds) == result.funnel[d]
    assert {"paraphrase", "identifier"} <= {k["kind"] for k in kinds}
