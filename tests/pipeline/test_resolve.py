"""Resolving a run: each value chosen on the training split says how many questions chose it."""

from __future__ import annotations

from raglab.pipeline.end_to_end import run_pipeline
from raglab.pipeline.lab import Lab
from raglab.pipeline.resolve import resolve_run
from raglab.run_settings import RunSettings, tuning_note
from raglab.settings import MIN_TUNING_QUESTIONS, READER_THRESHOLDS


def test_values_chosen_on_few_training_questions_say_so(small_lab: Lab) -> None:
    """Oracle: counted by hand in tests/pipeline/small_corpus.py: three training questions (t1,
    t2 answerable, t3 out of corpus). The threshold's chooser reads all three, the weight's and
    lambda's measure rankings, which only the two answerable ones have; 3 and 2 are fewer than
    30. Ties go to the smallest threshold, so the run's threshold is the grid's first, 0.00."""
    run, _ = resolve_run(small_lab, RunSettings(retriever="score"))
    notes = {note.name: note for note in run.tuning}
    assert tuple(notes) == run.chosen_on_train == ("weight", "mmr_lambda", "threshold")
    assert (notes["weight"].questions, notes["mmr_lambda"].questions) == (2, 2)
    threshold = notes["threshold"]
    assert threshold.questions == 3
    assert run.threshold == threshold.value == READER_THRESHOLDS[0] == 0.0
    assert threshold.grid == (0.0, 1.0)
    assert threshold.warnings == ("few questions", "low edge")
    assert threshold.sentence == (
        "Reader threshold 0.00 was chosen on 3 training questions, fewer than 30, at the low "
        "edge of its grid 0.00–1.00: treat it with caution."
    )
    assert all("few questions" in note.warnings for note in run.tuning)
    assert "2 answerable training questions, fewer than 30" in str(notes["weight"].sentence)
    # The run's result carries the same notes, as its JSON does.
    result = run_pipeline(small_lab, RunSettings(retriever="score"))
    assert result.tuning == run.tuning
    assert result.to_dict()["tuning"][2] == {
        "name": "threshold",
        "value": 0.0,
        "grid": [0.0, 1.0],
        "questions": 3,
        "warnings": ["few questions", "low edge"],
        "sentence": threshold.sentence,
    }


def test_a_given_value_has_no_note(small_lab: Lab) -> None:
    """Only a value chosen on train is noted: one given was not decided by any question."""
    run, _ = resolve_run(small_lab, RunSettings(threshold=0.5, mmr_lambda=0.4))
    assert run.chosen_on_train == () and run.tuning == ()


def test_the_handbook_default_run_has_no_warning(lab: Lab) -> None:
    """Oracle: the handbook's questions file holds 50 training questions, 45 of them
    answerable (counted by the split here); the default run chooses lambda 0.30 and threshold
    0.45, neither on an edge of its 0 to 1 grid, so nothing is warned."""
    run, _ = resolve_run(lab, RunSettings())
    train = lab.split("train")
    assert (len(train), sum(q.answerable for q in train)) == (50, 45)
    notes = {note.name: note for note in run.tuning}
    assert set(notes) == {"mmr_lambda", "threshold"}
    assert (notes["mmr_lambda"].questions, notes["threshold"].questions) == (45, 50)
    assert (notes["mmr_lambda"].value, notes["threshold"].value) == (0.3, 0.45)
    assert all(note.warnings == () and note.sentence is None for note in run.tuning)


def test_the_warnings_start_below_the_named_minimum_and_at_either_edge() -> None:
    """Oracle: the rule as stated: fewer than MIN_TUNING_QUESTIONS (30) questions, or the grid's
    smallest or largest value."""
    grid = (0.0, 0.5, 1.0)
    assert MIN_TUNING_QUESTIONS == 30
    inside = tuning_note("threshold", 0.5, grid, 30, answerable=False)
    assert inside.warnings == () and inside.sentence is None
    assert tuning_note("threshold", 0.5, grid, 29, answerable=False).warnings == ("few questions",)
    high = tuning_note("mmr_lambda", 1.0, grid, 40, answerable=True)
    assert high.warnings == ("high edge",)
    assert high.sentence == (
        "MMR λ 1.00 was chosen on 40 answerable training questions, at the high edge of its "
        "grid 0.00–1.00: treat it with caution."
    )
    one = tuning_note("weight", 0.0, grid, 1, answerable=True)
    assert one.warnings == ("few questions", "low edge")
    assert "on 1 answerable training question, fewer than 30" in str(one.sentence)
