"""Tests for raglab.embedding.neural.cache: vectors computed once, read back from disk, corrupt entries
recomputed.

The spy wraps the real ``NeuralModel.encode`` (every call still runs the forward pass) and records
which texts it was asked to encode; nothing about the results is mocked.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from raglab.embedding.neural.cache import cache_folder, encode_cached, entry_path, read_entry
from raglab.embedding.neural.model import NeuralModel
from raglab.errors import RaglabWarning

from .conftest import Reference

TOL = 1e-6


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The texts of every call of NeuralModel.encode during the test."""
    calls: list[list[str]] = []
    real = NeuralModel.encode

    def spy(self: NeuralModel, texts: list[str], **options: object) -> np.ndarray:
        calls.append(list(texts))
        return real(self, texts, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(NeuralModel, "encode", spy)
    return calls


@pytest.fixture(scope="module")
def texts(reference: Reference) -> list[str]:
    """Eight short handbook-like texts, one repeated."""
    return [*reference.texts[2:9], reference.texts[4]]


def test_the_second_call_reads_every_vector_from_disk(
    model: NeuralModel, texts: list[str], tmp_path: Path, asked: list[list[str]]
) -> None:
    """oracle: the spy's count (7 distinct texts encoded once, then none), and model.encode of
    the same texts for the values; the second result is bitwise the first."""
    first = encode_cached(model, texts, cache_dir=tmp_path)
    assert [len(c) for c in asked] == [7]
    second = encode_cached(model, texts, cache_dir=tmp_path)
    assert [len(c) for c in asked] == [7]
    assert np.array_equal(first, second)
    assert first.dtype == np.float32 and first.shape == (8, 384)
    assert np.abs(first - model.encode(texts)).max() <= TOL
    assert len(list(tmp_path.glob("*.npy"))) == 7
    assert not list(tmp_path.glob(".*"))  # no temporary file left behind


def test_only_new_texts_are_encoded(
    model: NeuralModel, texts: list[str], tmp_path: Path, asked: list[list[str]]
) -> None:
    """oracle: the spy; after caching texts[:4], a call with all of them encodes the other four
    distinct ones only."""
    encode_cached(model, texts[:4], cache_dir=tmp_path)
    encode_cached(model, texts, cache_dir=tmp_path)
    assert asked == [texts[:4], texts[4:7]]


def test_unnormalised_vectors_are_the_cached_ones(
    model: NeuralModel, texts: list[str], tmp_path: Path
) -> None:
    """oracle: model.encode(normalize=False); the normalised result is those rows over their
    norms (numpy.linalg.norm)."""
    raw = encode_cached(model, texts, cache_dir=tmp_path, normalize=False)
    assert np.abs(raw - model.encode(texts, normalize=False)).max() <= 1e-5
    unit = encode_cached(model, texts, cache_dir=tmp_path)
    assert np.abs(unit - raw / np.linalg.norm(raw, axis=1, keepdims=True)).max() <= TOL


def _corrupt(path: Path, how: str) -> None:
    if how == "truncated":
        path.write_bytes(path.read_bytes()[:100])
    elif how == "garbage":
        path.write_bytes(b"\x93NUMPY garbage" * 10)
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "wrong shape":
        np.save(path, np.zeros(3, dtype=np.float32))
    elif how == "wrong dtype":
        np.save(path, np.zeros(384, dtype=np.float64))
    elif how == "not finite":
        np.save(path, np.full(384, np.nan, dtype=np.float32))
    elif how == "a folder":
        path.unlink()
        path.mkdir()


CORRUPTIONS = ["truncated", "garbage", "empty", "wrong shape", "wrong dtype", "not finite"]


@pytest.mark.parametrize("how", [*CORRUPTIONS, "a folder"])
def test_a_corrupt_entry_is_recomputed(
    model: NeuralModel, texts: list[str], tmp_path: Path, asked: list[list[str]], how: str
) -> None:
    """oracle: the spy (only the corrupt text is encoded again) and the first, intact result."""
    first = encode_cached(model, texts, cache_dir=tmp_path)
    victim = entry_path(model, texts[1], tmp_path)
    _corrupt(victim, how)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = encode_cached(model, texts, cache_dir=tmp_path)
    # The damaged entry is counted; a folder in the entry's place cannot be replaced by a file,
    # so the vector is not stored either.
    assert [w.category for w in caught] == [RaglabWarning] * (2 if how == "a folder" else 1)
    assert str(caught[-1].message).startswith(
        f"1 cached vector in {tmp_path} failed their checksum"
    )
    assert asked[1:] == [[texts[1]]]
    assert np.abs(again - first).max() <= TOL
    if how != "a folder":  # the entry was rewritten: the next call encodes nothing
        assert np.array_equal(encode_cached(model, texts, cache_dir=tmp_path), again)
        assert len(asked) == 2


def _flip(path: Path, offset: int, bit: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 1 << bit
    path.write_bytes(bytes(data))


#: Where a bit is flipped: (byte offset from the start, bit). In the header, the '<' of
#: "{'descr': '<f4'" becomes ',' (np.load's parse of the header text raised SyntaxError), and the
#: header's length byte changes (tokenize.TokenError); in the numbers, a mantissa bit of the 11th
#: float (little-endian byte 2 of 4), which keeps the number finite and moved it silently.
FLIPS = {"header text": (21, 4), "header length": (8, 6), "numbers": (128 + 4 * 10 + 2, 6)}


@pytest.mark.parametrize("where", FLIPS)
def test_a_flipped_bit_is_recomputed_with_one_warning(
    model: NeuralModel, texts: list[str], tmp_path: Path, asked: list[list[str]], where: str
) -> None:
    """Oracle: the same texts encoded with no cache (model.encode of exactly the damaged texts,
    the batch the cache encodes again), bit for bit; the intact rows are the first call's."""
    first = encode_cached(model, texts, cache_dir=tmp_path, normalize=False)
    damaged = texts[1:3]
    offset, bit = FLIPS[where]
    for text in damaged:
        path = entry_path(model, text, tmp_path)
        assert path.read_bytes()[:17] == b"\x93NUMPY\x01\x00v\x00{'descr"  # the layout assumed
        _flip(path, offset, bit)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = encode_cached(model, texts, cache_dir=tmp_path, normalize=False)
    assert asked[1:] == [damaged]
    fresh = model.encode(damaged, normalize=False)
    for i, text in enumerate(texts):  # texts[7] repeats texts[2], one of the damaged
        expected = fresh[damaged.index(text)] if text in damaged else first[i]
        assert np.array_equal(again[i], expected), i
    assert [(w.category, str(w.message)) for w in caught] == [
        (
            RaglabWarning,
            f"2 cached vectors in {tmp_path} failed their checksum (damaged, or written before "
            "entries carried one); recomputed",
        )
    ]
    # Rewritten whole: the next call encodes nothing, warns of nothing, and reads them back.
    calls = len(asked)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert np.array_equal(
            encode_cached(model, texts, cache_dir=tmp_path, normalize=False), again
        )
    assert caught == [] and len(asked) == calls


def test_every_single_bit_flip_is_caught(
    model: NeuralModel, texts: list[str], tmp_path: Path
) -> None:
    """Each of the entry's bits flipped in turn (header, numbers and digest: 8 x 1680 cases):
    never an exception, never a vector, always "damaged". Oracle: the count of cases."""
    encode_cached(model, texts[:1], cache_dir=tmp_path)
    intact = entry_path(model, texts[0], tmp_path).read_bytes()
    assert len(intact) == 128 + 4 * 384 + 16
    victim = tmp_path / "victim.npy"
    outcomes = []
    for offset in range(len(intact)):
        for bit in range(8):
            data = bytearray(intact)
            data[offset] ^= 1 << bit
            victim.write_bytes(bytes(data))
            outcomes.append(read_entry(victim, 384))
    assert len(outcomes) == 13_440 and all(o is False for o in outcomes)
    victim.write_bytes(intact)
    read = read_entry(victim, 384)
    assert read is not False and read is not None  # the intact bytes read back


@pytest.mark.parametrize("how", ["no checksum", "format 2.0", "big-endian"])
def test_an_entry_of_another_layout_is_recomputed(
    model: NeuralModel, texts: list[str], tmp_path: Path, asked: list[list[str]], how: str
) -> None:
    """An entry without this layout's checksum (as written before entries carried one, or by
    np.save in another version or byte order) is recomputed, never trusted. Oracle: the spy, and
    the vector written (within float rounding: encoded alone rather than in the first batch)."""
    first = encode_cached(model, texts, cache_dir=tmp_path, normalize=False)
    victim = entry_path(model, texts[1], tmp_path)
    vector = first[1]
    if how == "no checksum":
        np.save(victim, vector)
    elif how == "format 2.0":
        with open(victim, "wb") as handle:
            np.lib.format.write_array(handle, vector, version=(2, 0))
    else:
        np.save(victim, vector.astype(">f4"))
    with pytest.warns(RaglabWarning, match="^1 cached vector in .* failed their checksum"):
        again = encode_cached(model, texts, cache_dir=tmp_path, normalize=False)
    assert asked[1:] == [[texts[1]]] and np.abs(again - first).max() <= TOL
    assert np.array_equal(np.load(victim), again[1])  # still a file np.load reads


def test_an_unwritable_folder_warns_and_still_answers(
    model: NeuralModel, texts: list[str], tmp_path: Path
) -> None:
    """oracle: model.encode of the same texts; the cache folder is a file, so nothing is stored."""
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.warns(RaglabWarning, match="not cached"):
        vectors = encode_cached(model, texts[:3], cache_dir=blocker)
    assert np.abs(vectors - model.encode(texts[:3])).max() <= TOL


def test_the_folder_follows_the_environment(
    model: NeuralModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """oracle: the documented locations, with the first 16 hex digits of the weights' sha256."""
    prefix = model.model_hash[:16]
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(tmp_path / "env"))
    assert cache_folder(model) == tmp_path / "env" / "neural" / prefix
    monkeypatch.delenv("RAGLAB_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_folder(model) == tmp_path / "home" / ".cache" / "raglab" / "neural" / prefix
    assert cache_folder(model, tmp_path / "given") == tmp_path / "given"


def test_the_default_folder_is_used_without_cache_dir(
    model: NeuralModel, texts: list[str], private_cache: Path
) -> None:
    """oracle: the file listing of $RAGLAB_CACHE_DIR/neural/<hash16> (set by the conftest)."""
    encode_cached(model, texts[:2])
    folder = private_cache / "neural" / model.model_hash[:16]
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        entry_path(model, t, folder).name for t in texts[:2]
    )


def test_another_pooling_never_reads_these_vectors(
    model: NeuralModel, cls_model: NeuralModel, texts: list[str], tmp_path: Path
) -> None:
    """oracle: cls_model.encode directly; same weights (one folder) but another cache key."""
    assert cls_model.model_hash == model.model_hash
    assert cls_model.cache_key != model.cache_key
    encode_cached(model, texts[:3], cache_dir=tmp_path)
    cls = encode_cached(cls_model, texts[:3], cache_dir=tmp_path)
    assert np.abs(cls - cls_model.encode(texts[:3])).max() <= TOL
    assert len(list(tmp_path.glob("*.npy"))) == 6


def test_a_stale_temporary_file_is_swept(
    model: NeuralModel, texts: list[str], tmp_path: Path
) -> None:
    """oracle: the file listing; a temporary file of a process that has ended goes at the next
    write, one of this process stays."""
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    stale = tmp_path / f".entry.raglab-{int(ended.stdout)}-abcd1234.npy"
    live = tmp_path / f".entry.raglab-{os.getpid()}-abcd1234.npy"
    for path in (stale, live):
        path.write_bytes(b"partial")
    encode_cached(model, texts[:1], cache_dir=tmp_path)
    assert not stale.exists() and live.exists()


def test_a_second_process_encodes_nothing(
    model: NeuralModel, texts: list[str], tmp_path: Path
) -> None:
    """oracle: the spy, in a fresh interpreter: after this process cached the texts, another
    process asks its encoder for no text at all and gets the same vectors (bitwise)."""
    first = encode_cached(model, texts, cache_dir=tmp_path)
    np.save(tmp_path.parent / "expected.npy", first)
    script = textwrap.dedent(
        f"""
        import sys
        import numpy as np
        from raglab.embedding.neural.cache import encode_cached
        from raglab.embedding.neural.model import NeuralModel, load_model
        asked = []
        real = NeuralModel.encode
        def spy(self, texts, **options):
            asked.extend(texts)
            return real(self, texts, **options)
        NeuralModel.encode = spy
        texts = {texts!r}
        got = encode_cached(load_model(), texts, cache_dir={str(tmp_path)!r})
        same = np.array_equal(got, np.load({str(tmp_path.parent / "expected.npy")!r}))
        print(len(asked), same)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "True"]
