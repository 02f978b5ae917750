"""The fixed chunker's closed forms: how many chunks a page gives, and how often a span is cut.

One job: the arithmetic the tests hold :func:`raglab.chunking.chunkers.chunk_fixed` to, with the checks of
a window's size and overlap that both share. Re-exported by :mod:`raglab.chunking.chunkers`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["cut_probabilities", "cut_probability", "expected_chunk_count"]


def _check_int(name: str, value: object, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer, not {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return int(value)


def _check_window(size: object, overlap: object) -> tuple[int, int]:
    s = _check_int("size", size, minimum=1)
    o = _check_int("overlap", overlap, minimum=0)
    if o >= s:
        raise ValueError(f"overlap must be smaller than size, got size={s}, overlap={o}")
    return s, o


# --- building chunks ------------------------------------------------------------------------


def expected_chunk_count(n_words: int, *, size: int, overlap: int) -> int:
    """Chunks the fixed chunker makes from a page of N words: ⌈(N−o)/(s−o)⌉.

    Chunks start every s−o words and the last must reach the end, so there are
    ⌈(N−s)/(s−o)⌉ + 1 = ⌈(N−o)/(s−o)⌉ starts when N > s; one chunk when 0 < N ≤ s; none when
    N = 0. Computed in integers.
    """
    n = _check_int("n_words", n_words, minimum=0)
    s, o = _check_window(size, overlap)
    if n == 0:
        return 0
    if n <= s:
        return 1
    return -(-(n - o) // (s - o))


def cut_probability(length: int, *, size: int, overlap: int) -> float:
    """The seed's approximation of P(a span of L words is cut by the fixed chunker).

    P = (L−1−o)/(s−o) when o < L−1, 0 when o ≥ L−1, and 1 when L > s; clipped to [0, 1]. The span's
    offset r from the last chunk start before it is uniform over the stride s−o, and the span
    survives when r + L ≤ s. It is exact for spans away from the page end (a span inside the last,
    shorter chunk is always safe).
    """
    n = _check_int("length", length, minimum=1)
    s, o = _check_window(size, overlap)
    return _cut(n, s, o)


def cut_probabilities(lengths: Sequence[int], *, size: int, overlap: int) -> list[float]:
    """:func:`cut_probability` of each length, for one size and overlap (checked once)."""
    s, o = _check_window(size, overlap)
    return [_cut(_check_int("length", n, minimum=1), s, o) for n in lengths]


def _cut(n: int, s: int, o: int) -> float:
    if n > s:
        return 1.0
    if o >= n - 1:
        return 0.0
    return min(1.0, max(0.0, (n - 1 - o) / (s - o)))
