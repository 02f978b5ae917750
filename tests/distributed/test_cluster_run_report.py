"""``raglab run`` and ``raglab report`` print and write the same bytes with ``--scheduler`` (the
module's 2-process LocalCluster) as without it; each stage on the cluster prints one line on
stderr, and the dashboard's line comes first, except under ``--json`` and ``--quiet``.

Oracle: the same command without the option (the single machine), on the handbook (and
Cranfield's refusal of a run; Cranfield's stages on the cluster: test_cluster_cli.py,
test_bm25.py, test_lsa.py, test_lsa_search.py); for the dashboard, the client's own ``dashboard_link`` and whether bokeh (which
Dask's dashboard pages need) can be imported.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import raglab.cli._cluster as cluster_module
import raglab.corpus.questions as questions_module
import raglab.pipeline.indexes as indexes_module
import raglab.pipeline.reading as reading_module
import raglab.pipeline.retrieval as retrieval_module
from distributed import get_task_stream
from raglab.cli.main import main
from raglab.corpus.pages import Page
from raglab.distributed.cluster import dashboard_line, shards
from raglab.settings import LSA_RANK
from tests.distributed.cluster_fixtures import Output, SingleMachine, recorded_labs


def _cli(capsys: pytest.CaptureFixture[str], argv: list[str], status: int = 0) -> tuple[str, str]:
    assert main(argv) == status
    captured = capsys.readouterr()
    return captured.out, captured.err


def _address(client: Any) -> list[str]:
    return ["--scheduler", str(client.scheduler.address)]


def _refuse(what: str) -> Any:
    """A stand-in that fails the test, naming what the client should not have done."""

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"the client {what}")

    return refused


def _cranfield_options(folder: Path) -> list[str]:
    return [
        "--corpus", str(folder / "pages"), "--questions", str(folder / "questions.jsonl"),
        "--stem", "--chunker", "heading", "--size", "100000",
    ]  # fmt: skip


def test_handbook_run_is_byte_identical_and_prints_its_stages(
    capsys: pytest.CaptureFixture[str],
    client: Any,
    monkeypatch: pytest.MonkeyPatch,
    single_machine: SingleMachine,
) -> None:
    """Oracle: ``raglab run --json`` and ``raglab run`` (its table) on one machine. Under
    ``--json`` stderr stays empty; without it the dashboard line comes first, then one line per
    stage: the LSA fit and every question ranked by LSA on the shards, reading and chunking,
    counting and the reduction, ranking every question, and the reranker's candidates scored
    by BM25 (the neural vectors, cached by the single machine's run, are not encoded again).

    None of the heavy work is the client's: the answer passages' places in the pages, the first
    stage's rankings, the reranker's BM25 feature (every candidate's score), the LSA model (its
    cosine feature, the fusion's LSA list), the reading and diagnosis of every question (train
    and test) and every measure of the rankings (the weights and lambdas chosen on train) come
    from the workers: the client's passage finder, BM25 index, LSA fit, reading of a question
    and measuring are made impossible (one machine's run then fails)."""
    single_json = _single(single_machine, "run", "--json").out
    assert '"outcomes"' in single_json
    single_table = _single(single_machine, "run").out
    monkeypatch.setattr(indexes_module, "BM25Index", _refuse("built a BM25 index"))
    monkeypatch.setattr(indexes_module, "fit_lsa", _refuse("fitted LSA"))
    monkeypatch.setattr(reading_module, "read_prepared", _refuse("read a question"))
    monkeypatch.setattr(questions_module, "WholeCorpusFinder", _refuse("located a passage"))
    monkeypatch.setattr(cluster_module, "WholeCorpusFinder", _refuse("located a passage"))
    monkeypatch.setattr(retrieval_module, "evaluate", _refuse("measured rankings"))
    with pytest.raises(AssertionError, match=r"the client (located|built|fitted|read|measured) "):
        _cli(capsys, ["run", "--json"])
    with get_task_stream(client) as stream:
        cluster_json, err = _cli(capsys, ["run", "--json", *_address(client)])
    assert cluster_json == single_json
    assert err == ""
    # What the reranker and MMR read of the candidates' terms is fetched ahead, once: their
    # columns and df in one task (it was one a question, 80), their LSA rows a task a block
    # in a few batches (it was 587 tasks, about 7 a question).
    assert _tasks(stream, "term_columns") == 1
    assert _tasks(stream, "_rows_of") < 80
    cluster_table, err = _cli(capsys, ["run", *_address(client)])
    assert cluster_table == single_table
    lines = err.splitlines()
    assert lines[0].startswith("Dask dashboard: ")
    stages = [line for line in lines if line.startswith("cluster: ")]
    # No encoding stage: the single machine's run cached every vector this run reads.
    assert len(stages) == 9, err
    assert "answer passages in 58 page files on the workers" in stages[0]
    assert "fit LSA on" in stages[1] and "in row blocks" in stages[1]
    assert "rank 80 questions by LSA cosine (depth 100) on the shards" in stages[2]
    assert "read and chunk 58 page files" in stages[3]
    assert "reduce N, avgdl, n_t" in stages[4]
    assert "rank 80 questions by BM25" in stages[5] and stages[5].endswith(" s)")
    assert "score the reranker's candidates of 80 questions by BM25" in stages[6]
    assert "term statistics and LSA rows of the reranker's candidates of 80" in stages[7]
    assert "read and diagnose the end-to-end run's questions on the workers" in stages[8]
    _, quiet_err = _cli(capsys, ["run", "--quiet", *_address(client)])
    assert "cluster: " not in quiet_err and "Dask dashboard" not in quiet_err


def _single(single_machine: SingleMachine, *argv: str) -> Output:
    """The command's output on one machine (run once for the session), which succeeded."""
    output = single_machine(*argv)
    assert output.status == 0, output.err
    return output


def _held_text(page: Page) -> str | None:
    """The text a page object itself holds (its ``text`` slot), None when it holds none."""
    slot = Page.__dict__["text"]
    try:
        text: str = slot.__get__(page, Page)
    except AttributeError:
        return None
    return text


def test_a_clustered_bm25_run_holds_no_page_text_on_the_client(
    capsys: pytest.CaptureFixture[str], client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: ``raglab run --retriever bm25 --rerank --mmr --json`` on one machine. With the
    cluster the same bytes, while the client's lab holds no page's text once the run is done
    (each page object carries none: the workers hold them) and the texts its reranker, MMR and
    reader read were fetched from the workers, each page at most once, in two batches: the
    handbook's texts fit the client's budget of characters (CLIENT_PAGE_TEXT_BUDGET), kept
    within it."""
    argv = ["run", "--retriever", "bm25", "--rerank", "--mmr", "--json"]
    single_json, _ = _cli(capsys, argv)
    labs = recorded_labs(monkeypatch)
    with get_task_stream(client) as stream:
        cluster_json, _ = _cli(capsys, [*argv, *_address(client)])
    assert cluster_json == single_json
    (lab,) = labs
    assert len(lab.corpus) == 58
    assert [page.id for page in lab.corpus if _held_text(page) is not None] == []
    texts = {getattr(page, "_texts", None) for page in lab.corpus}
    assert len(texts) == 1
    (held,) = texts
    assert 0 < held.fetched == len(held._kept) <= len(lab.corpus)
    assert held.kept_chars == sum(map(len, held._kept.values())) <= held.budget
    # Two batches, each of at most one task per partition (it was one round trip, and one
    # task, a page): the pages holding a labelled answer when the chunking is first used
    # (their chunks' rows are cut from their texts: HeldChunkTable), then the other pages the
    # stages read, each page once.
    assert held.round_trips == 2
    assert 0 < _tasks(stream, "page_texts") <= 2 * shards(client)


def _tasks(stream: Any, name: str) -> int:
    """How many tasks of function ``name`` the cluster ran while ``stream`` recorded."""
    return sum(1 for task in stream.data if str(task["key"]).startswith(f"{name}-"))


def test_handbook_report_is_byte_identical_with_the_heavy_work_on_the_workers(
    capsys: pytest.CaptureFixture[str],
    client: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    single_machine: SingleMachine,
) -> None:
    """Oracle: the report file ``raglab report`` writes on one machine (SOURCE_DATE_EPOCH set,
    so its ``created`` time is fixed) and its ``--json`` summary. With the cluster, every BM25
    ranking (the run, the rankers' table, exhibit II's k1 x b grid and its best and default
    cells, the reranker's BM25 feature), the LSA model and every measure of the rankers come
    from the workers: the same bytes, with the client's BM25 index, LSA fit and measuring made
    impossible. (The Markdown report's tables hold the JSON's numbers:
    tests/report/test_markdown.py.)

    Exhibit III reads the model held on the workers: no term's row or window comes to the
    client. The pages' texts the client reads come in batches of at most one task per partition,
    each page once (they came one round trip a page): the labelled pages, then the planned
    reranking candidates' pages and those of the four other first stages whose rerankers the
    report trains."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    single = _single(single_machine, "report", "--out", "OUT.json", "--json")
    monkeypatch.setattr(indexes_module, "BM25Index", _refuse("built a BM25 index"))
    monkeypatch.setattr(indexes_module, "fit_lsa", _refuse("fitted LSA"))
    monkeypatch.setattr(retrieval_module, "evaluate", _refuse("measured rankings"))
    labs = recorded_labs(monkeypatch)
    out = tmp_path / "cluster.json"
    with get_task_stream(client) as stream:
        text, err = _cli(capsys, ["report", "--out", str(out), "--json", *_address(client)])
    assert single.file is not None and len(single.file) > 10_000
    assert out.read_bytes() == single.file
    assert text.replace(str(out), "OUT") == single.out
    assert err == ""
    (lab,) = labs
    held = next(iter({getattr(page, "_texts", None) for page in lab.corpus}))
    assert 0 < held.round_trips <= 5 and 0 < held.fetched == len(held._kept) <= len(lab.corpus)
    assert _tasks(stream, "page_texts") <= shards(client) * held.round_trips
    # Exhibit III's spectrum (the windows' and terms' counts, the words to try first) comes from
    # the model held on the workers: the client's model was never gathered, holds no array
    # longer than questions + k, and the client never cut the LSA windows (before, the report
    # gathered U, the idf, the vocabulary and Vt, and cut and tokenised every window here).
    model = lab.indexes.lsa
    assert not model.gathered
    arrays = _arrays(model)
    bound = len(lab.questions) + LSA_RANK
    assert arrays and all(max(a.shape) <= bound for a in arrays), [a.shape for a in arrays]
    assert "lsa_windows" not in vars(lab.indexes)


def _arrays(value: Any) -> list[np.ndarray]:
    """The numpy arrays an object holds in its slots (one level down)."""
    names = [n for cls in type(value).__mro__ for n in getattr(cls, "__slots__", ())]
    held = [getattr(value, n, None) for n in names]
    return [a for a in held if isinstance(a, np.ndarray)]


def test_cranfield_run_refusal_is_byte_identical(
    capsys: pytest.CaptureFixture[str], client: Any, cranfield_dir: Path
) -> None:
    """Oracle: ``raglab run --json`` on one machine, Cranfield: exit 2 and the JSON error saying
    that an end-to-end run needs answer passages (Cranfield's qrels name pages only), on
    stdout, and the same line on stderr."""
    data = _cranfield_options(cranfield_dir)
    single = _cli(capsys, ["run", "--json", *data], status=2)
    assert "answer passages" in single[0]
    assert _cli(capsys, ["run", "--json", *data, *_address(client)], status=2) == single


def test_dashboard_line_names_a_dashboard_only_when_one_is_served(client: Any) -> None:
    """Oracle: the client's ``dashboard_link``, and bokeh's importability (without bokeh the
    scheduler's HTTP service answers, but its pages only say bokeh is missing)."""
    want = (
        f"Dask dashboard: {client.dashboard_link}"
        if importlib.util.find_spec("bokeh") is not None
        else "Dask dashboard: none (the scheduler lacks bokeh: pip install bokeh for one)"
    )
    assert dashboard_line(client) == want
    link = "http://10.0.0.5:8787/status"
    served = SimpleNamespace(dashboard_link=link, run_on_scheduler=lambda f: True)
    assert dashboard_line(served) == f"Dask dashboard: {link}"
    assert dashboard_line(SimpleNamespace(dashboard_link=None)) is None
