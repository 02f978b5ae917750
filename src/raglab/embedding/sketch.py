"""The randomised SVD's seeded test matrix, drawn bit for bit alike by the Python and the tab engine.

docs/design.md#the-seeded-test-matrix defines it. Entry (r, c) of Omega (n, l) is a sum of twelve
uniforms, minus 6 (Irwin and Hall: mean 0, variance 1, within 2^-64 of it, an approximation
of N(0, 1) bounded by 6)::

    key      = mix(seed mod 2^32  XOR  0x9E3779B9)
    word(k)  = mix(mix(k mod 2^32  XOR  key)  XOR  floor(k / 2^32))
    Omega[r, c] = (word(12 i) + word(12 i + 1) + ... + word(12 i + 11)) / 2^32 - 6,  i = r l + c

where ``mix`` is the 32-bit integer hash "lowbias32" (C. Wellons, "Prospecting for hash
functions", 2018): x ^= x >> 16; x *= 0x7FEB352D; x ^= x >> 15; x *= 0x846CA68B; x ^= x >> 16,
all modulo 2^32. The sum of twelve words is an integer below 2^36, exact in float64; dividing it
by 2^32 is exact and subtracting 6 is one correctly rounded operation, so any IEEE 754 engine
(numpy here, JavaScript's in the tab) computes every entry to the same bit, with no
transcendental function whose last bit could differ between libraries.
"""

from __future__ import annotations

import numpy as np

from raglab.base.ranking import FloatArray

__all__ = ["seeded_matrix"]

_GOLDEN = 0x9E3779B9
_M1 = np.uint32(0x7FEB352D)
_M2 = np.uint32(0x846CA68B)
#: Uniforms summed per entry.
TERMS = 12
# Words hashed at a time (a block of rows): the temporaries stay under a megabyte whatever the
# sketch's size, so drawing it never outweighs a solver that holds no copy of A.
_BLOCK_WORDS = 1 << 15


def _mix(x: np.ndarray) -> np.ndarray:
    """lowbias32 of every uint32 of ``x`` (wrapping arithmetic, as uint32 arrays multiply)."""
    x = x ^ (x >> np.uint32(16))
    x = x * _M1
    x = x ^ (x >> np.uint32(15))
    x = x * _M2
    out: np.ndarray = x ^ (x >> np.uint32(16))
    return out


def seeded_matrix(n: int, width: int, seed: int) -> FloatArray:
    """Omega (n, width), float64, as the module docstring defines it from ``seed``."""
    key = _mix(np.array([(seed % (1 << 32)) ^ _GOLDEN], dtype=np.uint32))[0]
    out = np.empty((n, width), dtype=np.float64)
    rows = max(1, _BLOCK_WORDS // max(1, width * TERMS))
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        k = np.arange(start * width * TERMS, stop * width * TERMS, dtype=np.uint64)
        lo = (k & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        hi = (k >> np.uint64(32)).astype(np.uint32)
        words = _mix(_mix(lo ^ key) ^ hi)
        sums = words.reshape(-1, TERMS).sum(axis=1, dtype=np.uint64)
        out[start:stop] = (sums.astype(np.float64) / 2.0**32 - 6.0).reshape(stop - start, width)
    return out
