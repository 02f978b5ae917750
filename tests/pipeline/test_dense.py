"""The neural chunks' encoding for a lab (raglab.pipeline.dense): BLAS on the threads setting.

Oracle: threadpoolctl's own report of the BLAS libraries' thread counts, read while a batch is
being encoded (from the progress callback) and after; the test session runs BLAS on one thread
(tests/conftest.py), so a count of 2 inside can only come from the setting.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from threadpoolctl import threadpool_info

from raglab.pipeline import dense


def _blas_counts() -> set[int]:
    return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}


def test_chunks_are_encoded_with_blas_on_the_threads_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(dense, "THREADS", 2)
    during: list[set[int]] = []
    texts = ["The mount locks with a quarter turn.", "Level the legs before use."]
    index = dense.chunk_index(
        dense.load(None), texts, on_batch=lambda n: during.append(_blas_counts())
    )
    assert len(index) == 2
    assert during == [{2}]
    assert _blas_counts() == {1}
