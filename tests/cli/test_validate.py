"""``raglab validate``: the summary on good data, and every problem named on bad data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from raglab.cli.main import main

PAGE = "---\nid: levels\ntitle: Levels\nupdated: 2024-01-01\n---\n# Levels\n\nThe AL-32 has 32x magnification. Short. Short.\n"


def good_question(**kw: object) -> dict[str, object]:
    base: dict[str, object] = {
        "id": "q1",
        "split": "test",
        "kind": "keyword",
        "question": "What magnification has the AL-32?",
        "answer": "The AL-32 has 32x magnification.",
    }
    base.update(kw)
    return base


def write_data(tmp_path: Path, question_lines: list[str], page: bytes | str = PAGE) -> list[str]:
    corpus = tmp_path / "pages"
    corpus.mkdir(exist_ok=True)
    path = corpus / "levels.md"
    if isinstance(page, bytes):
        path.write_bytes(page)
    else:
        path.write_text(page, encoding="utf-8")
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(question_lines) + "\n", encoding="utf-8")
    return ["--corpus", str(corpus), "--questions", str(questions)]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["validate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_summary_of_good_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = write_data(tmp_path, [json.dumps(good_question())])
    code, out, _ = run(capsys, *args, "--json")
    summary = json.loads(out)
    assert code == 0
    assert (summary["pages"], summary["words"], summary["questions"]) == (1, 9, 1)
    assert summary["splits"] == {"train": 0, "test": 1}
    assert summary["kinds"] == {"keyword": {"train": 0, "test": 1}}
    assert summary["answer_words"] == {"min": 5, "median": 5, "max": 5}


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["{broken"], ["questions.jsonl:1", "not valid JSON"]),
        (
            [json.dumps(good_question(extra=1))],
            ["questions.jsonl:1", "id q1", "field 'extra'", "unknown field"],
        ),
        (
            [json.dumps({"id": "q1", "split": "test", "kind": "k", "answer": None})],
            ["field 'question'", "missing field"],
        ),
        ([json.dumps(good_question(split="dev"))], ["field 'split'", "unknown split"]),
        (
            [json.dumps(good_question(answer="Not there at all."))],
            ["id q1", "field 'answer'", "not found"],
        ),
        (
            [json.dumps(good_question()), json.dumps(good_question())],
            ["questions.jsonl:2", "duplicate id"],
        ),
    ],
)
def test_each_bad_question_file_is_named_with_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[str], expected: list[str]
) -> None:
    code, _, err = run(capsys, *write_data(tmp_path, lines))
    assert code == 1
    for text in expected:
        assert text in err
    assert "Traceback" not in err


def test_answer_found_twice_is_a_warning_unless_strict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = write_data(tmp_path, [json.dumps(good_question(answer="Short."))])
    code, _, err = run(capsys, *args)
    assert code == 0 and "occurs 2 times" in err
    code, _, err = run(capsys, *args, "--strict")
    assert code == 1 and "occurs 2 times" in err


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        (
            "---\nupdated: yesterday\n---\n# L\n",
            "levels.md:2, id levels, field 'updated': not an ISO date",
        ),
        ("---\nid: levels\n# L\n", "never closed"),
    ],
)
def test_bad_pages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], page: bytes | str, expected: str
) -> None:
    code, _, err = run(capsys, *write_data(tmp_path, [json.dumps(good_question())], page=page))
    assert code == 1 and expected in err and "Traceback" not in err


def test_empty_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps(good_question()), encoding="utf-8")
    code, _, err = run(capsys, "--corpus", str(tmp_path / "empty"), "--questions", str(questions))
    assert code == 1 and "no *.md or *.txt pages" in err


def test_questions_need_their_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Questions alone would be checked against the bundled handbook; a corpus alone is read
    without questions (tests/cli/test_no_questions.py)."""
    args = write_data(tmp_path, [json.dumps(good_question())])
    code, _, err = run(capsys, args[2], args[3])
    assert code == 1 and "--questions needs --corpus" in err
    code, out, _ = run(capsys, args[0], args[1])
    assert code == 0 and "Questions none" in out


def test_console_script_shows_no_traceback(tmp_path: Path) -> None:
    """The real entry point, in a subprocess, on bad input."""
    args = write_data(tmp_path, ["{broken"])
    proc = subprocess.run(
        [sys.executable, "-m", "raglab", "validate", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert "not valid JSON" in proc.stderr and "Traceback" not in proc.stderr


def test_an_untidy_folder_reads_with_one_warning_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pages in other encodings, a binary file, an empty page and a site generator's front matter
    are read (or skipped) with a warning each; the answer on the UTF-8 page is still found."""
    args = write_data(
        tmp_path,
        [
            json.dumps(good_question()),
            json.dumps(good_question(id="q2", split="train", kind="howto")),
        ],
    )
    pages = tmp_path / "pages"
    french = "# Café\n\nLe café est très chaud. La réparation coûte cher à Genève.\n"
    (pages / "cafe.md").write_bytes(french.encode("latin-1"))
    (pages / "ete.md").write_bytes(french.encode("utf-16"))
    (pages / "blob.txt").write_bytes(bytes(range(256)) * 2)
    (pages / "blank.md").write_text("\n\n", encoding="utf-8")
    (pages / "site.md").write_text(
        "---\nlayout: post\nhide-toc: true\n---\n# Site\n\nWords.\n", encoding="utf-8"
    )
    code, out, err = run(capsys, *args, "--json")
    summary = json.loads(out)
    assert code == 0 and summary["pages"] == 5 and "Traceback" not in err
    assert summary["metadata"] == {"site": {"layout": "post", "hide-toc": "true"}}
    assert summary["warnings"] == [
        f"{pages / 'blob.txt'}:2: is not UTF-8 (byte 0x80 at offset 128) and no encoding fits "
        "(a binary file?): skipped; --encoding forces one",
        f"{pages / 'cafe.md'}:1: is not UTF-8 (byte 0xe9 at offset 5): read as cp1252 (detected; "
        "--encoding forces one)",
        f"{pages / 'ete.md'}:1: is not UTF-8 (byte 0xff at offset 0): read as utf_16 (detected; "
        "--encoding forces one)",
        f"{pages / 'blank.md'}, id blank: page is empty (no words to index): nothing in it can "
        "be found",
        f"{pages}: 1 page carries front-matter keys RAG lab does not use (hide-toc, layout): "
        "kept as metadata (--strict refuses them)",
        f"{tmp_path / 'questions.jsonl'}:2, id q2, field 'kind': kind 'howto' is not one of RAG "
        "lab's kinds (keyword, paraphrase, identifier, version, multi-sentence, out-of-corpus): "
        "counted as a new kind",
    ]
    from raglab.corpus.pages import load_corpus

    corpus = load_corpus(pages)
    assert corpus.page("cafe").text == french.encode("latin-1").decode("latin-1")
    assert corpus.page("ete").text == french.encode("utf-16").decode("utf-16")
    code, out, err = run(capsys, *args)
    assert code == 0 and "Warnings (6)" in err
    assert "page site keeps layout: post, hide-toc: true" in out
    # --strict: the unknown keys are refused as before, naming file, line and key.
    code, _, err = run(capsys, *args, "--strict")
    assert code == 1
    assert f"{pages / 'site.md'}:2, field 'layout': unknown front-matter field" in err
    assert f"{pages / 'site.md'}:3, field 'hide-toc': unknown front-matter field" in err
    # --encoding forces one codec for every page: what it cannot decode is skipped.
    code, out, _ = run(capsys, *args, "--encoding", "ascii", "--json")
    summary = json.loads(out)
    assert code == 0 and summary["pages"] == 3
    assert summary["warnings"][:3] == [
        f"{pages / 'blob.txt'}:2: cannot be decoded as ascii (byte 0x80 at offset 128): skipped",
        f"{pages / 'cafe.md'}:1: cannot be decoded as ascii (byte 0xe9 at offset 5): skipped",
        f"{pages / 'ete.md'}:1: cannot be decoded as ascii (byte 0xff at offset 0): skipped",
    ]
    code, _, err = run(capsys, *args, "--encoding", "klingon")
    assert code == 2 and "unknown encoding 'klingon'" in err
