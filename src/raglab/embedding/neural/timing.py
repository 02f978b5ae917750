"""How long the neural model takes to encode a chunk on this machine, measured once.

The neural panel of the web lab says what encoding costs: milliseconds a chunk, timed on a few of
the corpus's chunks. Timing them takes a few tenths of a second of one core, which a fresh server
would otherwise spend on its first view every time it starts. So the measurement is kept beside
the model's cached vectors (:func:`raglab.embedding.neural.cache.cache_folder`), in a small JSON file named
after what was measured: sha256 of the model's :attr:`~raglab.embedding.neural.model.NeuralModel.cache_key`,
this machine's name and processor count, and the texts. Another model, machine or sample is
measured afresh; the figure carries the time it was taken, so the page can say so.

The file carries a checksum, ``blake2b``: the hex blake2b digest (16 bytes) of the measurement's
fields as canonical JSON (sorted keys, no spaces). A file that is absent, cannot be read or parsed,
or whose digest does not match (a flipped bit, or written before the file carried one) is measured
again and rewritten, never an error; a damaged one also gives one
:class:`~raglab.errors.RaglabWarning`. A folder that cannot be written keeps the measurement for
this process only (the vectors' cache warns).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import platform
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from raglab.base.files import remove_stale_temps, temp_path
from raglab.embedding.neural.cache import cache_folder
from raglab.embedding.neural.encoder import check_texts, load_kernels
from raglab.embedding.neural.model import NeuralModel
from raglab.errors import RaglabWarning

__all__ = ["EncodeTiming", "encode_timing", "timing_path"]

_PREFIX = "timing-"
_FIELDS = {"ms_per_text", "texts", "measured_at"}


@dataclass(frozen=True, slots=True)
class EncodeTiming:
    """``ms_per_text``: wall-clock milliseconds of :meth:`NeuralModel.encode` over ``texts``
    texts, divided by their number; ``measured_at``: when (UTC, ISO 8601, to the second);
    ``cached``: read back from disk rather than measured by this call."""

    ms_per_text: float
    texts: int
    measured_at: str
    cached: bool


def timing_path(model: NeuralModel, texts: Sequence[str], folder: Path) -> Path:
    """The file holding the measurement of ``texts``: ``timing-<sha256>.json`` in ``folder``,
    the hash over the model's cache key, this machine's name and processor count, and the texts
    (each followed by a NUL)."""
    digest = hashlib.sha256()
    for part in (model.cache_key, platform.node(), str(os.cpu_count()), *texts):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return folder / f"{_PREFIX}{digest.hexdigest()}.json"


def _checksum(fields: dict[str, object]) -> str:
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def _read(path: Path, n: int) -> EncodeTiming | Literal[False] | None:
    """The measurement in ``path``; None when there is no file; False when there is one that is
    not a whole measurement of ``n`` texts with a matching checksum."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):  # no entry, or no folder
        return None
    except (OSError, ValueError):  # unreadable, a folder, not UTF-8, not JSON
        return False
    if not isinstance(data, dict):
        return False
    fields = {k: v for k, v in data.items() if k != "blake2b"}
    if data.get("blake2b") != _checksum(fields) or set(fields) != _FIELDS:
        return False
    ms, count, at = data["ms_per_text"], data["texts"], data["measured_at"]
    if not (isinstance(ms, float) and math.isfinite(ms) and ms > 0):
        return False
    if count != n or not isinstance(at, str):
        return False
    return EncodeTiming(ms, n, at, cached=True)


def _write(path: Path, timing: EncodeTiming) -> None:
    fields: dict[str, object] = {
        "ms_per_text": timing.ms_per_text,
        "texts": timing.texts,
        "measured_at": timing.measured_at,
    }
    text = json.dumps({**fields, "blake2b": _checksum(fields)})
    with contextlib.suppress(OSError):  # an unwritable cache costs one measurement next time
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(path)
        tmp = temp_path(path, "json")
        try:
            with open(tmp, "x", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)


def encode_timing(
    model: NeuralModel, texts: Sequence[str], *, cache_dir: str | Path | None = None
) -> EncodeTiming:
    """Milliseconds a text for ``model.encode(texts)`` on this machine: read from the cache
    folder when this model, machine and sample were timed before, else measured now (one call,
    after the encoder's kernels are loaded, so a first call's imports are not counted) and kept.
    ``texts`` must be non-empty."""
    check_texts(texts)
    if not texts:
        raise ValueError("no texts to time")
    path = timing_path(model, texts, cache_folder(model, cache_dir))
    known = _read(path, len(texts))
    if known:
        return known
    if known is False:
        warnings.warn(
            f"the encoding time cached in {path} failed its checksum (damaged, or written "
            "before the file carried one); measured again",
            RaglabWarning,
            stacklevel=2,
        )
    load_kernels()
    start = time.perf_counter()
    model.encode(list(texts))
    ms = (time.perf_counter() - start) * 1000 / len(texts)
    at = datetime.now(UTC).replace(microsecond=0).isoformat()
    timing = EncodeTiming(ms, len(texts), at, cached=False)
    _write(path, timing)
    return timing
