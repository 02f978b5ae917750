"""An on-disk cache of sentence vectors, so no process encodes a chunk twice.

One file per (model, text), named ``.npy``: the ``.npy`` header of a float32 (dim,) array, the
vector before normalisation (little-endian float32), then a checksum: the 16-byte blake2b digest
of the header and numbers (numpy's own ``np.load`` reads such a file, ignoring the digest). The
folder is ``$RAGLAB_CACHE_DIR/neural/<hash>/`` when ``RAGLAB_CACHE_DIR`` is set, else
``~/.cache/raglab/neural/<hash>/``, where ``<hash>`` is the first 16 hex digits of the weights'
sha256 (:attr:`NeuralModel.model_hash`), so one folder holds one checkpoint's vectors. A file's
name is the sha256 of the model's :attr:`~raglab.embedding.neural.model.NeuralModel.cache_key` and the text:
another tokenizer, pooling, truncation or version of the forward pass never reads them back.

Writes are atomic: each entry goes to a temporary sibling (:func:`raglab.base.files.temp_path`) that
replaces it only once written, so a reader sees a whole file or none; temporary files left by a
killed process are swept by the next call that writes (:func:`raglab.base.files.remove_stale_temps`).
Entries are not fsynced: a cache entry lost in a crash costs one recomputation, while an fsync per
chunk would cost more than encoding it. An entry is used only when it is exactly this layout,
its digest matches and its numbers are finite: one with a flipped bit, a damaged header, another
length, or written before entries carried a checksum is recomputed and rewritten, never an error
and never used, with one :class:`~raglab.errors.RaglabWarning` a call counting them. A cache
folder that cannot be written gives a warning and the vectors, uncached.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from raglab.base.files import remove_stale_temps, temp_path
from raglab.embedding.neural.encoder import Float32Array, Progress, check_texts, unit_rows32
from raglab.embedding.neural.model import NeuralModel
from raglab.errors import RaglabWarning

__all__ = ["CACHE_ENV", "cache_folder", "encode_cached", "entry_path", "read_entry", "write_entry"]

CACHE_ENV = "RAGLAB_CACHE_DIR"
_HASH_PREFIX = 16
# Every temporary file of a folder is named after this one sibling, so that one glob per call
# finds the stale ones of all entries (rather than one glob per entry written).
_TEMP_STEM = "entry"
# Entries are little-endian whatever the machine, so a cache folder can be shared.
_FLOAT = np.dtype("<f4")
# blake2b's digest length: 16 bytes make an undetected flip as likely as 1 in 2**128.
_DIGEST = 16


def cache_folder(model: NeuralModel, cache_dir: str | Path | None = None) -> Path:
    """Where ``model``'s vectors live: ``cache_dir`` itself when given, else
    ``$RAGLAB_CACHE_DIR/neural/<hash>`` or ``~/.cache/raglab/neural/<hash>`` (module docstring)."""
    if cache_dir is not None:
        return Path(cache_dir)
    base = os.environ.get(CACHE_ENV)
    root = Path(base) if base else Path.home() / ".cache" / "raglab"
    return root / "neural" / model.model_hash[:_HASH_PREFIX]


def entry_path(model: NeuralModel, text: str, folder: Path) -> Path:
    """The file holding ``text``'s vector: sha256(cache_key NUL text).npy in ``folder``."""
    digest = hashlib.sha256(f"{model.cache_key}\0{text}".encode("utf-8", "surrogatepass"))
    return folder / f"{digest.hexdigest()}.npy"


@functools.cache
def _header(dim: int) -> bytes:
    """The bytes :func:`numpy.save` writes before the numbers of a (dim,) little-endian float32
    array."""
    buffer = io.BytesIO()
    np.save(buffer, np.zeros(dim, dtype=_FLOAT), allow_pickle=False)
    return buffer.getvalue()[: -4 * dim]


def _digest(data: bytes | memoryview) -> bytes:
    return hashlib.blake2b(data, digest_size=_DIGEST).digest()


def read_entry(path: Path, dim: int) -> Float32Array | Literal[False] | None:
    """The vector in ``path``; None when there is no entry; False when there is one that is not
    a whole, checksummed, finite (dim,) float32 entry of this layout (module docstring)."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):  # no entry, or no folder
        return None
    except OSError:  # unreadable, a folder
        return False
    head = _header(dim)
    size = len(head) + 4 * dim
    body = memoryview(data)[:size]
    # Compared as bytes, never parsed: a damaged header is a mismatch, not a parse of its text
    # (np.load would evaluate it, and a flipped bit there raised SyntaxError).
    if len(data) != size + _DIGEST or not data.startswith(head) or _digest(body) != data[size:]:
        return False
    value = np.frombuffer(data, dtype=_FLOAT, count=dim, offset=len(head))
    if not np.isfinite(value).all():
        return False
    out: Float32Array = value.astype(np.float32, copy=False)
    return out


def write_entry(path: Path, vector: Float32Array) -> None:
    """Store ``vector`` (dim,) in ``path`` in the layout above, its checksum included, atomically
    (through a temporary sibling); OSError when the folder cannot be written."""
    body = _header(len(vector)) + np.ascontiguousarray(vector, dtype=_FLOAT).tobytes()
    tmp = temp_path(path.with_name(_TEMP_STEM), "npy")
    try:
        with open(tmp, "xb") as handle:
            handle.write(body + _digest(body))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def encode_cached(
    model: NeuralModel,
    texts: Sequence[str],
    *,
    normalize: bool = True,
    batch_size: int = 32,
    cache_dir: str | Path | None = None,
    progress: Progress | None = None,
    encoder: Callable[[list[str]], Float32Array] | None = None,
) -> Float32Array:
    """``model.encode(texts, ...)`` (n, dim) float32, encoding only the texts not yet cached.

    Repeated texts are encoded once. The cache holds pooled vectors; ``normalize`` divides the
    rows by their norms after reading, exactly as :meth:`NeuralModel.encode` does. A vector read
    back is bitwise the one written; vectors encoded in another batch differ by float rounding
    only (about 1e-7). ``progress`` wraps the batches of the texts that are encoded.
    ``encoder`` encodes the missing texts instead of ``model.encode(..., normalize=False)``: the
    pooled vectors (n, dim) of exactly those batches (a Dask cluster's, in
    :mod:`raglab.distributed.neural`).
    """
    check_texts(texts)
    folder = cache_folder(model, cache_dir)
    out = np.zeros((len(texts), model.dim), dtype=np.float32)
    where: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        where.setdefault(text, []).append(i)
    paths = {text: entry_path(model, text, folder) for text in where}
    missing: list[str] = []
    damaged = 0
    for text, rows in where.items():
        vector = read_entry(paths[text], model.dim)
        if vector is None or vector is False:
            missing.append(text)
            damaged += vector is False
        else:
            out[rows] = vector
    if missing:
        if encoder is None:
            fresh = model.encode(missing, batch_size=batch_size, normalize=False, progress=progress)
        else:
            fresh = encoder(missing)
        for text, vector in zip(missing, fresh, strict=True):
            out[where[text]] = vector
        _store(folder, [(paths[t], v) for t, v in zip(missing, fresh, strict=True)])
    warn_damaged(damaged, folder)
    return unit_rows32(out) if normalize else out


def warn_damaged(damaged: int, folder: str | Path, *, stacklevel: int = 2) -> None:
    """Warn (:class:`~raglab.errors.RaglabWarning`) that ``damaged`` entries of ``folder`` failed
    their checksum and were recomputed; nothing when ``damaged`` is 0. ``stacklevel`` as
    :func:`warnings.warn` would take it in the caller (2: the caller's caller is named)."""
    if damaged:
        vectors = "cached vector" if damaged == 1 else "cached vectors"
        warnings.warn(
            f"{damaged} {vectors} in {folder} failed their checksum (damaged, or written before "
            "entries carried one); recomputed",
            RaglabWarning,
            stacklevel=stacklevel + 1,
        )


def _store(folder: Path, entries: list[tuple[Path, Float32Array]]) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(folder / _TEMP_STEM)
        for path, vector in entries:
            write_entry(path, vector)
    except OSError as exc:
        warnings.warn(
            f"{folder}: sentence vectors not cached ({exc.strerror or exc}); they will be "
            "encoded again next time",
            RaglabWarning,
            stacklevel=3,
        )
