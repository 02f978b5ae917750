"""Bad input the later commands would refuse is refused (or warned about) by ``validate`` first,
and every command that needs what is missing says so in one message naming the file and what to
change, never with a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from raglab.cli.main import main

PAGE = (
    "# Pumps\n\nThe pump runs at 40 rpm. The valve opens at dawn.\n\n"
    "## Valves\n\nEvery valve is checked weekly by the night shift.\n"
)


def question(qid: str = "q1", split: str = "train", **kw: object) -> str:
    base: dict[str, object] = {
        "id": qid,
        "split": split,
        "kind": "keyword",
        "question": "How fast does the pump run?",
        "answer": "The pump runs at 40 rpm.",
    }
    base.update(kw)
    return json.dumps(base)


def data(
    tmp_path: Path, lines: list[str], pages: dict[str, bytes | str] | None = None
) -> list[str]:
    corpus = tmp_path / "pages"
    corpus.mkdir(exist_ok=True)
    for name, text in (pages or {"pumps.md": PAGE}).items():
        path = corpus / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ["--corpus", str(corpus), "--questions", str(questions)]


def call(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.mark.parametrize(
    ("pages", "expected"),
    [
        ({"a.md": "   \n", "b.txt": ""}, "every page is empty (no words to index)"),
        (
            {"pumps.md": "---\nid: my pumps\n---\n" + PAGE},
            "pumps.md:2, field 'id': page id 'my pumps' contains whitespace",
        ),
        ({"my pumps.md": PAGE}, "rename the file or add 'id: ...'"),
        (
            {"pumps.md": PAGE, "bin.txt": b"ok\nab\x00\x01 cd\n"},
            "bin.txt:2: holds control character U+0000 at column 3",
        ),
    ],
)
def test_validate_refuses_pages_later_commands_cannot_use(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    pages: dict[str, bytes | str],
    expected: str,
) -> None:
    code, _, err = call(capsys, "validate", *data(tmp_path, [question()], pages))
    assert code == 1
    assert expected in err


def test_a_page_id_with_a_space_never_reaches_an_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = data(tmp_path, [question(), question("q2", "test")], {"my pumps.md": PAGE})
    code, _, err = call(capsys, "trec", "export", *args, "--run", str(tmp_path / "x.run"))
    assert code == 1 and "contains whitespace" in err
    assert not (tmp_path / "x.run").exists()


def test_a_json_array_gets_one_message_asking_for_json_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    array = json.dumps([json.loads(question()), json.loads(question("q2", "test"))], indent=2)
    args = data(tmp_path, array.splitlines())
    code, _, err = call(capsys, "validate", *args)
    assert code == 1
    assert "questions.jsonl:1: is a JSON array; questions are JSON Lines" in err
    assert "The input has problems (1)" in err  # one message, not one per line of the array


def test_kinds_differing_only_in_case_are_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [question(), question("q2", "test", kind="Keyword "), question("q3", "test")]
    args = data(tmp_path, lines)
    code, _, err = call(capsys, "validate", *args)
    assert code == 0
    assert "questions.jsonl:2, id q2, field 'kind': kind 'Keyword ' differs from 'keyword'" in err
    code, _, _ = call(capsys, "validate", *args, "--strict")
    assert code == 1


def test_each_new_kind_is_a_warning_at_its_first_question(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        question(kind="pump lore"),
        question("q2", "test", kind="Valves"),
        question("q3", "test", kind="pump lore"),
        question("q4", "test"),
    ]
    args = data(tmp_path, lines)
    code, out, _ = call(capsys, "validate", *args, "--json")
    known = "keyword, paraphrase, identifier, version, multi-sentence, out-of-corpus"
    source = tmp_path / "questions.jsonl"
    assert code == 0 and json.loads(out)["warnings"] == [
        f"{source}:1, id q1, field 'kind': kind 'pump lore' is not one of RAG lab's kinds "
        f"({known}): counted as a new kind",
        f"{source}:2, id q2, field 'kind': kind 'Valves' is not one of RAG lab's kinds "
        f"({known}): counted as a new kind",
    ]


def test_no_training_questions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = data(tmp_path, [question("q1", "test"), question("q2", "test")])
    code, _, err = call(capsys, "validate", *args)
    assert code == 0 and "no training question with an answer in the corpus" in err
    for command, needs in (
        (["run"], "training the reranker (or run without it: --no-rerank)"),
        (["run", "--no-rerank"], "choosing the reader's threshold (or give one: --threshold)"),
        (["fuse"], "choosing the fusion weight (or give one: --weight)"),
        (["bm25", "grid"], "the BM25 grid"),
    ):
        code, _, err = call(capsys, *command, *args)
        assert code == 1, command
        assert "questions.jsonl, field 'split': no training question" in err, command
        assert needs in err and '"split": "train"' in err, command


def test_no_test_questions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = data(tmp_path, [question("q1"), question("q2")])
    code, _, err = call(capsys, "validate", *args)
    assert code == 0 and "no test question" in err
    code, out, err = call(capsys, "run", *args)
    assert code == 1 and "Accuracy" not in out
    assert "no test question, and the end-to-end run needs them" in err
    code, _, err = call(capsys, "fuse", *args)
    assert code == 1 and "measuring the rankings needs them" in err


def test_a_reranker_with_nothing_to_learn_says_which_setting_to_change(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Fixed windows of 10 words with no overlap cut every bundled answer.
    code, _, err = call(capsys, "run", "--chunker", "fixed", "--size", "10", "--overlap", "0")
    assert code == 2
    assert "the reranker has no example to learn from" in err
    assert "fixed chunker of 10 words (overlap 0)" in err and "--no-rerank" in err


@pytest.mark.parametrize("rank", ["0", "-3"])
def test_a_run_with_ranks_below_one_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rank: str
) -> None:
    args = data(tmp_path, [question(), question("q2", "test")])
    run = tmp_path / "bad.run"
    run.write_text(f"q2 Q0 pumps 1 2.0 x\nq2 Q0 pumps#1 {rank} 1.0 x\n", encoding="utf-8")
    code, _, err = call(capsys, "validate", *args, "--run", str(run))
    assert code == 1
    assert f"bad.run:2, id q2, field 'rank': rank must be 1 or more (1 = best), not {rank}" in err
    code, _, err = call(capsys, "trec", "eval", *args, str(run))
    assert code == 1 and "rank must be 1 or more" in err


def test_validate_accepts_a_good_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = data(tmp_path, [question(), question("q2", "test")])
    run = tmp_path / "good.run"
    run.write_text("q2 Q0 pumps 1 2.0 x\n", encoding="utf-8")
    code, out, _ = call(capsys, "validate", *args, "--run", str(run), "--json")
    assert code == 0
    assert json.loads(out)["runs"] == [{"file": str(run), "questions": 1, "entries": 1}]


def test_with_json_a_validate_problem_is_a_json_error_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = data(tmp_path, [question(split="dev")])
    code, out, _ = call(capsys, "validate", *args, "--json")
    assert code == 1
    (problem,) = json.loads(out)["error"]["problems"]
    assert problem["file"].endswith("questions.jsonl")
    assert (problem["line"], problem["field"]) == (1, "split")
