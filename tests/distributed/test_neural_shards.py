"""Neural rankings searched per shard on the workers equal the single machine's, vectors never here.

Oracles: :class:`~raglab.embedding.neural.index.NeuralIndex` over every chunk on this machine
(bit for bit: each cosine depends on its own row alone, and the shards' lists merge by
(-score, index) as ``top_k`` orders one row), and ``raglab run --json`` without ``--workers``
(byte for byte), its vectors read from a copy of the session's warm cache while the cluster's
run starts from an empty cache of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import raglab.cli.report as report_module
import raglab.distributed.chunk_table as chunk_table_module
from raglab.cli.main import main
from raglab.distributed.chunking import submit_files
from raglab.distributed.neural_shards import ShardedNeural, load_neural_shard
from raglab.embedding.neural.model import NeuralModel
from raglab.pipeline import dense
from raglab.pipeline.lab import Lab
from raglab.run_settings import ChunkingKey


def test_five_shards_rank_every_question_as_the_whole_index(
    client: Any, handbook: Lab, fresh_neural_cache: Path
) -> None:
    """Oracle: the handbook's NeuralIndex over all its chunks, search_vector of each labelled
    question at depth 100 and at every chunk (ties and the tail included); the shards' lists,
    merged from five partitions, hold the same chunks in the same order with the same score
    bits, and the candidates' rows fetched from the shards are the index's rows."""
    cs = handbook.indexes.chunk_set()
    whole = cs.neural
    sharded = ShardedNeural.build(client, handbook, ChunkingKey(), model_path=None, partitions=5)
    assert len(sharded.sizes) == 5 and sharded.n_docs == len(cs)
    for depth in (100, len(cs)):
        for q in handbook.questions:
            expected = whole.search_vector(handbook.indexes.query_vector(q), k=depth)
            got = sharded.ranking(q, depth)
            assert np.array_equal(got.indices, expected.indices)
            assert np.array_equal(got.scores, expected.scores)
    picked = np.array([len(cs) - 1, 0, 17, 17, 120], dtype=np.int64)
    assert np.array_equal(sharded.rows(picked), whole.vectors[picked])


def test_a_worker_without_the_cache_folder_says_so(
    client: Any, handbook: Lab, tmp_path: Path
) -> None:
    """Oracle: the contract: a shard whose vectors are not in the folder it is given (a worker
    that does not share the client's cache folder) fails with a sentence naming the folder,
    instead of encoding them in batches of its own."""
    files = [Path(page.source).absolute() for page in handbook.corpus]
    part = submit_files(client, files, ChunkingKey().resolved(), partitions=1)[0]
    empty = tmp_path / "not-shared"
    shard = client.submit(load_neural_shard, None, str(empty), part, 0, pure=False)
    with pytest.raises(ValueError, match=r"not in the vector cache .*not-shared"):
        client.gather(shard)


def _spies(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[str]]:
    """Pass-through spies on this process: the sizes of every whole neural index built here
    (``dense.chunk_index``, which reads or encodes every chunk's vector), and every text
    tokenised here (``NeuralModel.token_ids``)."""
    built: list[int] = []
    tokenised: list[str] = []
    chunk_index, token_ids = dense.chunk_index, NeuralModel.token_ids

    def index_spy(model: Any, texts: Any, **kwargs: Any) -> Any:
        built.append(len(texts))
        return chunk_index(model, texts, **kwargs)

    def token_spy(self: NeuralModel, texts: Any) -> list[list[int]]:
        tokenised.extend(texts)
        return token_ids(self, texts)

    monkeypatch.setattr(dense, "chunk_index", index_spy)
    monkeypatch.setattr(NeuralModel, "token_ids", token_spy)
    return built, tokenised


def test_handbook_run_on_the_shards_is_byte_identical_without_the_vectors_here(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fresh_neural_cache: Path,
    handbook: Lab,
) -> None:
    """Oracle: ``raglab run --retriever neural-rrf --json`` on one machine (its first stage
    ranks by neural cosine and fuses that list with BM25's; reranker and MMR on, so the
    reranker's neural cosine feature is read too). With ``--workers 2`` from an empty cache the
    output is the same bytes, and this process never builds a chunking's whole neural index
    (``dense.chunk_index``, which reads or encodes every chunk's vector here): the rankings and
    the candidates' rows come from the shards. Nor does it tokenise a chunk's text: the workers
    count the word pieces of the texts the cache lacks, and the batches are planned here from
    the counts alone (the questions, encoded here one by one, are all it tokenises)."""
    retriever = "neural-rrf"
    chunks = {c.text for c in handbook.indexes.chunk_set().chunks}
    outputs = []
    for folder, extra in ((fresh_neural_cache, []), (tmp_path / "cluster", ["--workers", "2"])):
        monkeypatch.setenv("RAGLAB_CACHE_DIR", str(folder))
        if extra:
            built, tokenised = _spies(monkeypatch)
        assert main(["run", "--retriever", retriever, "--json", *extra]) == 0
        outputs.append(capsys.readouterr().out)
    assert built == []
    assert tokenised and not chunks & set(tokenised)
    assert any((tmp_path / "cluster").rglob("*.npy"))  # the workers filled the empty cache
    assert f'"{retriever}"' in outputs[0]
    assert outputs[1] == outputs[0]


def test_a_neural_report_chunks_each_partition_once_and_gathers_no_vector(
    capsys: pytest.CaptureFixture[str],
    client: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fresh_neural_cache: Path,
) -> None:
    """Oracle: the report file ``raglab report --retriever neural-rrf`` writes on one machine
    (SOURCE_DATE_EPOCH set), and the scheduler's record of every task run (Dask's task stream,
    by the task's function name). On the session's cluster of 2 workers, 4 partitions, from an
    empty cache: the same bytes; each partition chunked once (4 ``chunk_partition`` tasks: the
    BM25 shards and the neural shards share them); no whole neural index built here and no
    encoder left on the lab to gather every vector here (the report's neural rows come from the
    shards' rankings)."""
    from dask.utils import key_split

    from distributed import get_task_stream

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    argv = ["report", "--retriever", "neural-rrf", "--quiet"]
    single = tmp_path / "single.json"
    assert main([*argv, "--out", str(single)]) == 0
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(tmp_path / "cluster"))
    built, _ = _spies(monkeypatch)
    encoders: list[Any] = []
    build_report = report_module.build_report

    def report_spy(lab: Lab, *args: Any, **kwargs: Any) -> Any:
        encoders.append(lab.indexes.encoder)
        return build_report(lab, *args, **kwargs)

    monkeypatch.setattr(report_module, "build_report", report_spy)
    clustered = tmp_path / "cluster.json"
    address = ["--scheduler", str(client.scheduler.address)]
    tables: list[Any] = []
    chunk_table = chunk_table_module.remote_chunk_table

    def table_spy(client: Any, pages: Any, reads: Any, parts: Any, key: Any, **kw: Any) -> Any:
        tables.append(parts)
        return chunk_table(client, pages, reads, parts, key, **kw)

    monkeypatch.setattr(chunk_table_module, "remote_chunk_table", table_spy)
    with get_task_stream(client) as stream:
        assert main([*argv, "--out", str(clustered), *address]) == 0
    capsys.readouterr()
    chunking = {t["key"] for t in stream.data if key_split(t["key"]) == "chunk_partition"}
    # Each chunking the lab asks for is cut on the workers (its chunk table's offsets), once
    # for its table, its BM25 shards and its neural shards.
    assert len(tables) >= 1
    assert len(chunking) == 4 * len(tables)
    assert built == [] and encoders == [None]
    assert any((tmp_path / "cluster").rglob("*.npy"))
    assert b'"neural-rrf"' in single.read_bytes()
    assert clustered.read_bytes() == single.read_bytes()
