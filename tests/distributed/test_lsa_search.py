"""``raglab lsa search`` on a cluster: a free text folded in on the client from its terms' rows
alone, each shard ranking its own chunks' fold-ins on its worker, merged on the client.

Oracle: the same command on one machine (the same bytes, JSON and table); Dask's task stream
for where the ranking ran (the shards' scoring tasks); the ties read off the one machine's
output (equal cosines, chunk indices ascending) and the pages' partitions
(:func:`raglab.distributed.chunking.file_partitions`) for where the tied chunks lie.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

from distributed import get_task_stream
from raglab.cli.main import main
from raglab.corpus.pages import load_corpus
from raglab.distributed.chunking import file_partitions
from raglab.distributed.lsa_held import text_search
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import rank
from raglab.run_settings import ChunkingKey, RetrievalSettings
from tests.distributed.cluster_fixtures import recorded_labs

#: A handbook query whose top three are the three returns policies' identical "Inspection and
#: credit" sections: one cosine, bit for bit.
TIED = "repair centre inspects each return and notes its condition"


def _address(client: Any) -> list[str]:
    return ["--scheduler", str(client.scheduler.address)]


def _tasks(stream: Any, name: str) -> int:
    return sum(str(task["key"]).startswith(f"{name}-") for task in stream.data)


def _single_and_cluster(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    client: Any,
    argv: list[str],
    *cluster: str,
) -> tuple[str, str, Any, Lab]:
    """The command's stdout on one machine, then with ``--scheduler`` (and ``cluster``), the
    task stream of the second run and the lab its client built."""
    assert main(argv) == 0
    single = capsys.readouterr().out
    labs = recorded_labs(monkeypatch)
    with get_task_stream(client) as stream:
        assert main([*argv, *_address(client), *cluster]) == 0
    (lab,) = labs
    return single, capsys.readouterr().out, stream, lab


def _ranked_on_the_shards(stream: Any, lab: Lab) -> None:
    """The ranking ran on the workers (one scoring task a shard, at least two shards) and the
    client neither folded a chunk in nor gathered the model."""
    assert _tasks(stream, "_shard_top") >= 2
    assert _tasks(stream, "_unit_projections") == _tasks(stream, "_shard_top")
    assert not lab.indexes.lsa.gathered
    assert "lsa_unit_projections" not in vars(lab.indexes.chunk_set(ChunkingKey()))


@pytest.mark.parametrize(
    ("query", "top"),
    [
        ("warranty", 5),
        ("sensor calibration drift after shipping", 12),
        ("xyzzy plugh", 7),  # no word the model knows: every chunk scores 0, by index
        ("the of and", 3),  # no retrieval token at all
    ],
)
def test_handbook_lsa_search_json_is_the_single_machines_bytes(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    client: Any,
    query: str,
    top: int,
) -> None:
    """Oracle: ``raglab lsa search --json`` on one machine (before, ``--scheduler`` was refused
    with exit 2)."""
    argv = ["lsa", "search", query, "--top", str(top), "--json"]
    single, cluster, stream, lab = _single_and_cluster(capsys, monkeypatch, client, argv)
    assert cluster == single
    results = json.loads(single)["results"]
    assert len(results) == top
    if query in ("xyzzy plugh", "the of and"):
        assert [r["score"] for r in results] == [0.0] * top
        assert [r["index"] for r in results] == list(range(top))
    else:
        assert results[0]["score"] > 0.5
    _ranked_on_the_shards(stream, lab)


def test_tied_chunks_in_different_shards_keep_the_single_machines_order(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, client: Any
) -> None:
    """Oracle: the one machine's JSON, whose first three chunks tie (the same cosine, bit for
    bit, indices ascending); on a cluster of 8 shards they lie in two, and the merge gives
    them in the same order with the same bits."""
    spw = 4  # 8 shards on the 2 workers: the three returns policies' pages fall in two
    argv = ["lsa", "search", TIED, "--top", "6", "--json"]
    more = ("--shards-per-worker", str(spw))
    single, cluster, stream, lab = _single_and_cluster(capsys, monkeypatch, client, argv, *more)
    assert cluster == single
    results = json.loads(single)["results"]
    tied = results[:3]
    assert len({r["score"] for r in tied}) == 1 and results[3]["score"] < tied[0]["score"]
    assert [r["index"] for r in tied] == sorted(r["index"] for r in tied)
    # The cluster's pages went with it: the same folder read here names their files.
    files = {page.id: str(Path(page.source).absolute()) for page in load_corpus(lab.corpus.root)}
    groups = file_partitions([Path(f) for f in files.values()], 2 * spw)
    where = {g for r in tied for g, group in enumerate(groups) if files[r["page"]] in group}
    assert len(where) == 2, "the tied chunks should lie in two shards"
    assert _tasks(stream, "_shard_top") == len(groups) == 2 * spw
    _ranked_on_the_shards(stream, lab)


def test_the_table_is_the_single_machines_bytes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, client: Any
) -> None:
    """Oracle: ``raglab lsa search``'s table on one machine, the tied query's."""
    argv = ["lsa", "search", TIED, "--top", "4"]
    single, cluster, stream, lab = _single_and_cluster(capsys, monkeypatch, client, argv)
    assert cluster == single and "returns-policy-2021#5" in single
    _ranked_on_the_shards(stream, lab)


def test_cranfield_lsa_search_json_is_the_single_machines_bytes(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    client: Any,
    cranfield_dir: Path,
) -> None:
    """Oracle: ``raglab lsa search --json`` on one machine, Cranfield's 1,400 abstracts with
    Snowball stemming, its first question, top 20. (A text of no known word: the handbook's
    case above.)"""
    query = (
        "what similarity laws must be obeyed when constructing aeroelastic models of heated "
        "high speed aircraft"
    )
    data = ["--corpus", str(cranfield_dir / "pages"), "--stem"]
    argv = ["lsa", "search", query, "--top", "20", "--json", *data]
    single, cluster, stream, lab = _single_and_cluster(capsys, monkeypatch, client, argv)
    assert cluster == single
    scores = [r["score"] for r in json.loads(single)["results"]]
    assert len(scores) == 20
    assert scores[0] > 0.3
    _ranked_on_the_shards(stream, lab)


def test_a_model_whole_on_the_client_ranks_the_text_here(
    client: Any, handbook: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: the lab's own ranking without the hook. Where the model is whole on the client
    (an ``LSAModel``, not held on the workers), the cluster's hook declines (None, no shard
    asked for) and ``lsa_ranking`` ranks the text here: the same indices and score bits."""
    settings = RetrievalSettings("lsa")
    want = rank(handbook, TIED, settings)
    asked: list[ChunkingKey] = []

    def parts(chunking: ChunkingKey) -> list[Any]:
        asked.append(chunking)
        return []

    hook = text_search(
        client,
        lambda: handbook.indexes.lsa,
        parts,
        analyzer=handbook.analyzer,
        stem=handbook.stem,
        stage=contextlib.nullcontext,
    )
    monkeypatch.setattr(handbook.indexes, "lsa_search", hook)
    got = rank(handbook, TIED, settings)
    assert asked == [] and hook(ChunkingKey(), ["repair"], 5) is None
    assert got.indices.tolist() == want.indices.tolist() and len(want.indices) == 100
    assert got.scores.tobytes() == want.scores.tobytes()
