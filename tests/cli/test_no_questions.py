"""A corpus read without questions: search and chunking work, what needs labels says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from raglab.cli.main import main
from raglab.pipeline.lab import Lab

PAGES = {
    "alpha.md": "# Alpha pump\n\nThe alpha pump moves water from the lower tank to the upper "
    "tank. It runs on a twelve volt supply.\n\n## Cleaning\n\nRinse the filter every week with "
    "clean water and let it dry.\n",
    "beta.md": "# Beta valve\n\nThe beta valve closes when the pressure rises above two bar. A "
    "spring holds it open otherwise.\n",
    "gamma.txt": "Gamma sensor notes. The gamma sensor reads the temperature every second.\n",
}
NEEDS_LABELS = "needs labelled questions: give --questions FILE"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Three pages in a folder with no questions file."""
    folder = tmp_path_factory.mktemp("alone") / "pages"
    folder.mkdir()
    for name, text in PAGES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return str(folder)


@pytest.fixture(scope="module")
def baseline(corpus: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A JSON report on the same pages with two training and two test questions."""
    folder = tmp_path_factory.mktemp("labelled")
    rows = [
        ("a1", "train", "What moves water?", "The alpha pump moves water"),
        ("a2", "train", "When does the valve close?", "closes when the pressure rises above"),
        ("a3", "test", "How often is the filter rinsed?", "Rinse the filter every week"),
        ("a4", "test", "What does the gamma sensor read?", "The gamma sensor reads"),
    ]
    lines = [
        json.dumps({"id": i, "split": s, "kind": "k", "question": q, "answer": a})
        for i, s, q, a in rows
    ]
    (folder / "q.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = folder / "baseline.json"
    argv = ["report", "--format", "json", "--out", str(out), "--quiet"]
    assert main([*argv, "--corpus", corpus, "--questions", str(folder / "q.jsonl")]) == 0
    return str(out)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_summarises_the_pages_and_says_there_are_no_questions(
    corpus: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "validate", "--corpus", corpus)
    assert code == 0 and "Questions none" in out and NEEDS_LABELS in out
    assert err == ""  # no split warnings: nothing is wrong with a corpus read alone
    code, out, _ = run(capsys, "validate", "--corpus", corpus, "--json", "--strict")
    summary = json.loads(out)
    assert code == 0 and (summary["pages"], summary["questions"], summary["warnings"]) == (3, 0, [])


def test_chunk_counts_the_chunks_and_checks_no_answer(
    corpus: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "chunk", "--corpus", corpus, "--size", "10", "--json")
    data = json.loads(out)
    # Oracle: the closed form ceil(N / s) per page (no overlap), from the pages' word counts.
    pages = Lab.load(corpus).corpus
    assert data["n_chunks"] == sum(-(-p.n_words // 10) for p in pages)
    assert code == 0 and (data["total"], data["intact_rate"]) == (0, None)
    code, out, _ = run(capsys, "chunk", "--corpus", corpus)
    assert code == 0 and "answers intact: no questions" in out


def test_bm25_and_lsa_search_the_corpus(corpus: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "bm25", "search", "valve", "--corpus", corpus, "--json")
    assert code == 0
    assert json.loads(out)["results"][0]["page"] == "beta"  # the one page saying "valve"
    for argv in (("lsa", "info"), ("lsa", "search", "pump")):
        code, out, err = run(capsys, *argv, "--corpus", corpus)
        assert code == 0 and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "what"),
    [
        (("bm25", "grid"), "the BM25 grid"),
        (("fuse",), "choosing the fusion weight"),
        (("fuse", "--weight", "0.5"), "choosing the fusion weight"),
        (("rerank",), "training the reranker"),
        (("run",), "the end-to-end run"),
        (("run", "--no-rerank", "--threshold", "0.1"), "the end-to-end run"),
        (("report", "--out", "OUT"), "the BM25 grid"),
        (("check", "--baseline", "BASELINE"), "the BM25 grid"),
        (("trec", "export", "--run", "OUT"), "exporting a TREC run"),
        (("trec", "eval", "RUN"), "measuring a TREC run"),
        (("validate", "--run", "RUN"), "checking a TREC run"),
    ],
)
def test_what_needs_labels_says_so_in_one_line(
    corpus: str,
    baseline: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: tuple[str, ...],
    what: str,
) -> None:
    (tmp_path / "ours.run").write_text("a1 Q0 alpha#0 1 1.0 ours\n", encoding="utf-8")
    paths = {
        "OUT": str(tmp_path / "out.json"),
        "BASELINE": baseline,
        "RUN": str(tmp_path / "ours.run"),
    }
    argv = tuple(paths.get(a, a) for a in argv)
    quiet = () if argv[0] == "validate" else ("--quiet",)  # validate shows no progress
    code, out, err = run(capsys, *argv, "--corpus", corpus, *quiet)
    assert code == 2
    assert err.splitlines() == [f"raglab {argv[0]}: {what} {NEEDS_LABELS}"]
    code, out, _ = run(capsys, *argv, "--corpus", corpus, "--json")
    assert code == 2 and json.loads(out)["error"]["message"] == f"{what} {NEEDS_LABELS}"
