"""``raglab rerank``: every value chosen on train is shown with how far to trust it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from raglab.cli.main import main
from raglab.pipeline.exhibits.rerank import fitted_reranker
from raglab.run_settings import RetrievalSettings
from tests.pipeline.small_corpus import write_small_lab


def test_values_chosen_on_few_questions_are_printed_with_their_count(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Issue #30. Oracle: the small lab's two answerable training questions (t1, t2, counted by
    hand in tests/pipeline/small_corpus.py), fewer than 30: with score fusion as first stage,
    both its weight and MMR's lambda were chosen on them, and each carries the warning with that
    count in ``--json`` and as a line of the plain output."""
    lab = write_small_lab(tmp_path)
    data = ("--corpus", str(tmp_path / "pages"), "--questions", str(tmp_path / "q.jsonl"))
    argv = ["rerank", *data, "--retriever", "score"]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    reranker, lam = fitted_reranker(lab, RetrievalSettings("score"))
    notes = {n["name"]: n for n in out["tuning"]}
    assert set(notes) == {"weight", "mmr_lambda"}
    assert notes["mmr_lambda"]["value"] == lam == out["train_chosen_lambda"]
    assert notes["weight"]["value"] == reranker.first_stage.weight
    for note in notes.values():
        assert note["questions"] == 2 and "few questions" in note["warnings"]
    assert notes["mmr_lambda"]["sentence"].startswith(
        f"MMR λ {lam:.2f} was chosen on 2 answerable training questions, fewer than 30"
    )
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    for note in notes.values():
        assert note["sentence"] in lines
