"""Exhibit IV's weight chosen on train says how far to trust it (issue #30).

Oracle: questions counted by hand: the handbook's questions file holds 45 answerable training
questions (tests/pipeline/test_resolve.py counts them by split); the small corpus of
tests/pipeline/small_corpus.py holds 2 (t1, t2), fewer than MIN_TUNING_QUESTIONS (30).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from raglab.settings import FUSION_WEIGHTS
from raglab.web.app import create_app
from tests.pipeline.small_corpus import write_small_lab


def test_the_handbooks_chosen_weight_carries_its_count_and_no_warning(api: Any) -> None:
    table = api.get("/api/fusion/table").json()
    chosen = table["chosen_weight"]
    assert min(FUSION_WEIGHTS) < chosen < max(FUSION_WEIGHTS)  # off the grid's edges
    assert table["tuning"] == [
        {
            "name": "weight",
            "value": chosen,
            "grid": [0.0, 1.0],
            "questions": 45,
            "warnings": [],
            "sentence": None,
        }
    ]


def test_a_weight_chosen_on_two_questions_is_warned_naming_the_count(
    tmp_path: Path, api_for: Any
) -> None:
    small = api_for(create_app(write_small_lab(tmp_path)))
    table = small.get("/api/fusion/table").json()
    (note,) = table["tuning"]
    assert (note["name"], note["value"], note["questions"]) == ("weight", table["chosen_weight"], 2)
    assert "few questions" in note["warnings"]
    assert "chosen on 2 answerable training questions, fewer than 30" in note["sentence"]
