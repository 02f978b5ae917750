"""Neural chunk vectors encoded on the workers, batch by batch, equal the single machine's.

Oracles: ``NeuralModel.encode`` on this machine, on the same texts (bit for bit: the workers run
the same batches through the same numpy code), and ``raglab fuse --json`` without ``--workers``
(byte for byte, every neural row included), each side with an empty vector cache of its own.

The reference vectors are computed here with BLAS on one thread, as Dask starts its workers
(``OPENBLAS_NUM_THREADS=1``): OpenBLAS may split a product differently on two threads, and on
some processors that moves a float32 vector by rounding (about 5e-7).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from raglab.cli.main import main
from raglab.distributed.neural import encode_on_cluster, prime_neural_cache
from raglab.embedding.neural.cache import encode_cached
from raglab.pipeline.lab import Lab
from tests.distributed.cluster_fixtures import WHOLE_PAGES


def test_batches_encoded_on_the_workers_are_the_single_machines(client: Any, handbook: Lab) -> None:
    """Oracle: model.encode(texts, normalize=False) here; 70 texts of mixed lengths make three
    batches of 32, 32 and 6 after the sort by length."""
    model = handbook.indexes.neural_model
    texts = [c.text for c in handbook.indexes.chunk_set().chunks[:70]]
    with threadpool_limits(1, user_api="blas"):
        here = model.encode(texts, normalize=False)
    there = encode_on_cluster(client, model, None, texts)
    assert there.dtype == np.float32 and there.shape == (70, model.dim)
    assert np.array_equal(there, here)


def test_a_task_runs_a_group_of_the_single_machines_batches(client: Any, handbook: Lab) -> None:
    """Oracle: model.encode(texts, normalize=False) here, batches of 32. 200 texts make 7
    batches (6 of 32 and one of 8); two batches a task make ceil(7 / 2) = 4 encoding tasks,
    counted in the scheduler's task stream, and the vectors are still the single machine's bit
    for bit (each batch runs on its own inside its task)."""
    from distributed import get_task_stream

    model = handbook.indexes.neural_model
    texts = [c.text for c in handbook.indexes.chunk_set().chunks[:200]]
    with threadpool_limits(1, user_api="blas"):
        here = model.encode(texts, normalize=False)
    with get_task_stream(client) as stream:
        there = encode_on_cluster(client, model, None, texts, batches_a_task=2)
    encoding = {t["key"] for t in stream.data if str(t["key"]).startswith("encode_batches-")}
    assert len(encoding) == 4
    assert np.array_equal(there, here)


def test_the_cluster_fills_the_vector_cache_with_the_single_machines_vectors(
    client: Any, handbook: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: encode_cached on this machine into an empty cache of its own. The cluster fills
    another empty cache; read back, both hold the same vectors, and a second priming encodes
    nothing."""
    model = handbook.indexes.neural_model
    texts = [c.text for c in handbook.indexes.chunk_set(WHOLE_PAGES).chunks]
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(tmp_path / "single"))
    with threadpool_limits(1, user_api="blas"):
        single = encode_cached(model, texts)
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(tmp_path / "cluster"))
    assert prime_neural_cache(client, handbook, WHOLE_PAGES) == len(set(texts))
    assert prime_neural_cache(client, handbook, WHOLE_PAGES) == 0

    def refuse(missing: list[str]) -> Any:
        raise AssertionError(f"{len(missing)} vectors were not in the cache")

    assert np.array_equal(encode_cached(model, texts, encoder=refuse), single)


def test_handbook_fuse_with_its_neural_rows_is_byte_identical(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fresh_neural_cache: Path,
) -> None:
    """Oracle: ``raglab fuse --json`` on one machine, its vectors encoded on this machine (a copy
    of the session's warm cache); the cluster's run starts from an empty cache, so its neural
    rows rest on the workers' vectors."""
    outputs = []
    for folder, extra in ((fresh_neural_cache, []), (tmp_path / "cluster", ["--workers", "2"])):
        monkeypatch.setenv("RAGLAB_CACHE_DIR", str(folder))
        assert main(["fuse", "--json", *extra]) == 0
        outputs.append(capsys.readouterr().out)
        assert any(folder.rglob("*.npy"))
    assert '"neural-rrf"' in outputs[0]
    assert outputs[1] == outputs[0]
