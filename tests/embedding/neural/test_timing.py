"""Tests for raglab.embedding.neural.timing: the encoding time measured once per model, machine and
sample, kept beside the vectors, measured again when the file is unusable.

The spy wraps the real ``NeuralModel.encode`` (every call still runs the forward pass) and counts
the calls; nothing about the measurement is mocked.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from raglab.embedding.neural.model import NeuralModel
from raglab.embedding.neural.timing import EncodeTiming, encode_timing, timing_path
from raglab.errors import RaglabWarning

TEXTS = ["The pump's seal is replaced every 2,000 hours.", "Error E-4107 means the valve stuck."]


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many texts each call of NeuralModel.encode was given during the test."""
    seen: list[int] = []
    real = NeuralModel.encode

    def spy(self: NeuralModel, texts: list[str], **options: object) -> np.ndarray:
        seen.append(len(texts))
        return real(self, texts, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(NeuralModel, "encode", spy)
    return seen


def test_measured_once_then_read_back(model: NeuralModel, tmp_path: Path, calls: list[int]) -> None:
    first = encode_timing(model, TEXTS, cache_dir=tmp_path)
    assert calls == [len(TEXTS)] and not first.cached
    assert first.texts == 2 and first.ms_per_text > 0
    path = timing_path(model, TEXTS, tmp_path)
    fields = {"ms_per_text": first.ms_per_text, "texts": 2, "measured_at": first.measured_at}
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()
    assert json.loads(path.read_text()) == {
        **fields,
        "blake2b": hashlib.blake2b(canonical, digest_size=16).hexdigest(),
    }
    again = encode_timing(model, TEXTS, cache_dir=tmp_path)
    assert calls == [len(TEXTS)], "the second call encodes nothing"
    assert again == EncodeTiming(first.ms_per_text, 2, first.measured_at, cached=True)


def test_another_sample_is_measured_afresh(
    model: NeuralModel, tmp_path: Path, calls: list[int]
) -> None:
    encode_timing(model, TEXTS, cache_dir=tmp_path)
    encode_timing(model, TEXTS[:1], cache_dir=tmp_path)
    encode_timing(model, TEXTS[::-1], cache_dir=tmp_path)
    assert calls == [2, 1, 2]
    assert len(list(tmp_path.glob("timing-*.json"))) == 3


def test_the_key_names_machine_and_model(model: NeuralModel, tmp_path: Path) -> None:
    digest = hashlib.sha256()
    for part in (model.cache_key, platform.node(), str(os.cpu_count()), *TEXTS):
        digest.update(part.encode() + b"\0")
    assert timing_path(model, TEXTS, tmp_path).name == f"timing-{digest.hexdigest()}.json"


@pytest.mark.parametrize(
    "content",
    [
        "",
        "{not json",
        '{"ms_per_text": -1.0, "texts": 2, "measured_at": "x"}',
        '{"ms_per_text": NaN, "texts": 2, "measured_at": "x"}',
        '{"ms_per_text": 3.0, "texts": 5, "measured_at": "x"}',
        '{"ms_per_text": 3.0, "texts": 2}',
        "[1, 2]",
    ],
)
def test_an_unusable_file_is_measured_again(
    model: NeuralModel, tmp_path: Path, calls: list[int], content: str
) -> None:
    path = timing_path(model, TEXTS, tmp_path)
    path.write_text(content)
    with pytest.warns(RaglabWarning, match="failed its checksum"):
        timing = encode_timing(model, TEXTS, cache_dir=tmp_path)
    assert calls == [2] and not timing.cached
    assert json.loads(path.read_text())["ms_per_text"] == timing.ms_per_text


@pytest.mark.parametrize("field", ["ms_per_text", "measured_at"])
def test_a_flipped_bit_is_measured_again_with_one_warning(
    model: NeuralModel, tmp_path: Path, calls: list[int], field: str
) -> None:
    """One bit of the figure's first decimal (or the date's last digit) flipped: still valid
    JSON with a plausible value, once read back as if measured. Oracle: the spy (measured again) and the
    file rewritten whole (read back with no warning)."""
    encode_timing(model, TEXTS, cache_dir=tmp_path)
    path = timing_path(model, TEXTS, tmp_path)
    text = path.read_text()
    data = json.loads(text)
    value = json.dumps(data[field])
    # A number's first decimal (its last may lie past a float's precision, so that the flipped
    # text parses to the same float); a date's last digit.
    point = value.find(".")
    digit = (
        point + 1
        if point >= 0 and not value.startswith('"')
        else max(i for i, c in enumerate(value) if c in "0123456789")
    )
    flipped = value[:digit] + chr(ord(value[digit]) ^ 1) + value[digit + 1 :]
    assert json.loads(flipped) != data[field]
    path.write_text(text.replace(value, flipped, 1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        timing = encode_timing(model, TEXTS, cache_dir=tmp_path)
    assert calls == [2, 2] and not timing.cached
    assert [(w.category, str(w.message)) for w in caught] == [
        (
            RaglabWarning,
            f"the encoding time cached in {path} failed its checksum (damaged, or written "
            "before the file carried one); measured again",
        )
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert encode_timing(model, TEXTS, cache_dir=tmp_path).cached
    assert caught == [] and calls == [2, 2]


def test_a_file_without_a_checksum_is_measured_again(
    model: NeuralModel, tmp_path: Path, calls: list[int]
) -> None:
    """As written before the file carried a checksum: a valid measurement, not trusted."""
    path = timing_path(model, TEXTS, tmp_path)
    path.write_text('{"ms_per_text": 3.0, "texts": 2, "measured_at": "2026-01-01T00:00:00+00:00"}')
    with pytest.warns(RaglabWarning, match="failed its checksum"):
        timing = encode_timing(model, TEXTS, cache_dir=tmp_path)
    assert calls == [2] and not timing.cached and "blake2b" in json.loads(path.read_text())


def test_a_folder_in_the_way_still_gives_the_figure(model: NeuralModel, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    timing = encode_timing(model, TEXTS, cache_dir=blocker / "sub")
    assert timing.ms_per_text > 0 and not timing.cached


def test_bad_texts_are_refused(model: NeuralModel, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no texts"):
        encode_timing(model, [], cache_dir=tmp_path)
    with pytest.raises(ValueError, match="not one string"):
        encode_timing(model, "one string", cache_dir=tmp_path)


def test_reading_vectors_does_not_import_numba(model: NeuralModel, tmp_path: Path) -> None:
    """A process whose vectors are all cached never pays for numba's import (about half a second
    of a server's start); the first real encoding imports it for its compiled kernels (numba is
    in the test extra), and scipy.special not at all (GELU's erf is the pass's own)."""
    from raglab.embedding.neural.cache import encode_cached

    encode_cached(model, TEXTS, cache_dir=tmp_path)
    script = textwrap.dedent(
        f"""
        import sys
        from raglab.embedding.neural.cache import encode_cached
        from raglab.embedding.neural.model import load_model
        model = load_model({str(model.path)!r})
        encode_cached(model, {TEXTS!r}, cache_dir={str(tmp_path)!r})
        before = "numba" in sys.modules
        model.encode(["something new"])
        print(before, "numba" in sys.modules, "scipy.special" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "True", "False"]
