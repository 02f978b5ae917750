"""Neural chunk vectors encoded on the workers, batch by batch, equal the single machine's.

Oracles: the single machine's batch plan (``plan_batches``, from the texts' word pieces) and
``encode_cached`` on this machine into an empty cache of its own (bit for bit: the workers run
the same batches through the same numpy code), and ``raglab fuse --json`` without ``--workers``
(byte for byte, every neural row included), each side with an empty vector cache of its own.

The reference vectors are computed here with BLAS on one thread, as Dask starts its workers
(``OPENBLAS_NUM_THREADS=1``): OpenBLAS may split a product differently on two threads, and on
some processors that moves a float32 vector by rounding (about 5e-7).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from raglab.cli.main import main
from raglab.distributed.chunking import submit_files
from raglab.distributed.neural import count_missing, plan_groups, store_missing
from raglab.embedding.neural.cache import cache_folder, encode_cached
from raglab.embedding.neural.encoder import plan_batches
from raglab.embedding.neural.model import NeuralModel
from raglab.pipeline.lab import Lab
from tests.distributed.cluster_fixtures import WHOLE_PAGES


def test_the_plan_from_word_piece_counts_is_the_single_machines(handbook: Lab) -> None:
    """Oracle: plan_batches on the texts themselves (their word pieces, sorted by count, ties in
    input order, cut every 32). From the counts alone, plan_groups cuts the same batches, in the
    same order, into groups of 2: 200 texts make 7 batches, so ceil(7 / 2) = 4 groups."""
    model = handbook.indexes.neural_model
    texts = [c.text for c in handbook.indexes.chunk_set().chunks[:200]]
    ids, batches = plan_batches(model, texts, 32)
    groups = plan_groups([len(row) for row in ids], 32, 2)
    assert [len(group) for group in groups] == [2, 2, 2, 1]
    planned = [batch for group in groups for batch in group]
    assert len(planned) == len(batches) == 7
    for got, want in zip(planned, batches, strict=True):
        assert np.array_equal(got, want)


def test_the_workers_fill_the_cache_with_the_single_machines_vectors_the_client_tokenising_none(
    client: Any,
    handbook: Lab,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Oracle: encode_cached on this machine into an empty cache of its own. The cluster fills
    another empty cache from three partitions of the chunks (the first given twice: its texts
    are encoded once, where first seen), two batches a task: ceil(ceil(n / 32) / 2) encoding
    tasks in the scheduler's task stream; read back, both caches hold the same vectors bit for
    bit, a second look finds nothing missing, and this process tokenised no chunk text (only the
    names and word-piece counts came here)."""
    from dask.utils import key_split

    from distributed import get_task_stream

    model = handbook.indexes.neural_model
    texts = [c.text for c in handbook.indexes.chunk_set(WHOLE_PAGES).chunks]
    distinct = len(set(texts))
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(tmp_path / "single"))
    with threadpool_limits(1, user_api="blas"):
        single = encode_cached(model, texts)
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(tmp_path / "cluster"))
    folder = str(cache_folder(model).absolute())
    tokenised: list[str] = []
    real = NeuralModel.token_ids

    def spy(self: NeuralModel, some: Any) -> list[list[int]]:
        tokenised.extend(some)
        return real(self, some)

    monkeypatch.setattr(NeuralModel, "token_ids", spy)
    files = [Path(page.source).absolute() for page in handbook.corpus]
    three = submit_files(client, files, WHOLE_PAGES.resolved(), partitions=3)
    parts = [*three, three[0]]
    counts = count_missing(client, None, folder, parts)
    assert len(counts) == distinct
    with get_task_stream(client) as stream:
        stored = store_missing(client, None, folder, parts, counts, batches_a_task=2)
    assert stored == distinct
    encoding = {t["key"] for t in stream.data if key_split(t["key"]) == "store_pieces"}
    assert len(encoding) == math.ceil(math.ceil(distinct / 32) / 2)
    assert tokenised == []
    assert len(count_missing(client, None, folder, three)) == 0
    monkeypatch.setattr(NeuralModel, "token_ids", real)

    def refuse(texts: list[str]) -> Any:
        raise AssertionError(f"{len(texts)} vectors were not in the cache")

    assert np.array_equal(encode_cached(model, texts, encoder=refuse), single)


def test_handbook_fuse_with_its_neural_rows_is_byte_identical(
    capsys: pytest.CaptureFixture[str],
    client: Any,
    monkeypatch: pytest.MonkeyPatch,
    fresh_neural_cache: Path,
) -> None:
    """Oracle: ``raglab fuse --json`` on one machine, its vectors encoded on this machine (a copy
    of the session's warm cache). On the session's cluster (``--scheduler``) the neural rows
    rest on the shards' rankings of the cached vectors. (The workers encoding an empty cache:
    test_neural_shards.py, and the vectors they write, above.)"""
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(fresh_neural_cache))
    outputs = []
    for extra in ([], ["--scheduler", str(client.scheduler.address)]):
        assert main(["fuse", "--json", *extra]) == 0
        outputs.append(capsys.readouterr().out)
    assert '"neural-rrf"' in outputs[0]
    assert outputs[1] == outputs[0]
