"""The weights file for the in-tab encoder: its layout read back with numpy.

Oracle: the loaded model's own arrays (float32 bytes equal; float16 equal to numpy's rounding of
them) and the layout stated in :mod:`raglab.embedding.neural.export`. That the JavaScript loader
and forward pass read it right is checked in tests/web/static/engine/embedding/neural/.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from raglab.embedding.neural.export import FORMAT, export_weights, tensors
from raglab.embedding.neural.model import NeuralModel


def read(path: Path) -> tuple[dict[str, object], bytes]:
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8 : 8 + length]), data[8 + length :]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_every_tensor_is_written_where_the_manifest_says(
    model: NeuralModel, tmp_path: Path, dtype: str
) -> None:
    path = tmp_path / "weights.bin"
    written = export_weights(model, path, dtype)
    manifest, data = read(path)
    assert manifest == written
    assert manifest["format"] == FORMAT and manifest["dtype"] == dtype
    assert manifest["model_hash"] == model.model_hash
    assert (path.stat().st_size - len(data)) % 8 == 0  # the data starts 8-aligned
    entries = manifest["tensors"]
    assert isinstance(entries, list)
    names = [name for name, _ in tensors(model.weights)]
    assert [e["name"] for e in entries] == names
    assert len(names) == 5 + 12 * model.config.num_hidden_layers
    for entry, (_, array) in zip(entries, tensors(model.weights), strict=True):
        stored = np.frombuffer(
            data, dtype=np.dtype(dtype).newbyteorder("<"), count=array.size, offset=entry["offset"]
        )
        assert entry["shape"] == list(array.shape)
        np.testing.assert_array_equal(stored.reshape(array.shape), array.astype(dtype))
    assert sum(e["bytes"] for e in entries) == len(data)


def test_another_dtype_is_refused(model: NeuralModel, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="dtype must be one of float32, float16"):
        export_weights(model, tmp_path / "weights.bin", "bfloat16")
    assert not (tmp_path / "weights.bin").exists()
