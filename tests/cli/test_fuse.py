"""``raglab fuse``: the score-fusion weight chosen on train is shown with how far to trust it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from raglab.cli.main import main
from raglab.pipeline.retrieval import choose_weight
from tests.pipeline.small_corpus import write_small_lab


def test_a_weight_chosen_on_few_questions_is_printed_with_its_count(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Issue #30. Oracle: the small lab's two answerable training questions (t1, t2, counted by
    hand in tests/pipeline/small_corpus.py), fewer than 30: the weight chosen on them carries
    the warning with that count in ``--json`` and as a line of the table's output; a weight
    given with ``--weight`` was not chosen, so it carries none."""
    lab = write_small_lab(tmp_path)
    data = ("--corpus", str(tmp_path / "pages"), "--questions", str(tmp_path / "q.jsonl"))
    assert main(["fuse", *data, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    chosen = choose_weight(lab)
    [note] = out["tuning"]
    assert (note["name"], note["value"], note["questions"]) == ("weight", chosen, 2)
    assert "few questions" in note["warnings"]
    assert note["sentence"].startswith(
        f"Fusion weight w {chosen:.2f} was chosen on 2 answerable training questions, fewer than 30"
    )
    if out["neural_weight"] is not None:
        assert [n["questions"] for n in out["neural_tuning"]] == [2]
    assert main(["fuse", *data]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert note["sentence"] in lines
    assert main(["fuse", *data, "--weight", "0.5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tuning"] == []
