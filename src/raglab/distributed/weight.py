"""What a value of ours weighs when Dask's scheduler asks: the bytes of its arrays and texts.

Dask's scheduler weighs every task result (``dask.sizeof``) to decide where the tasks reading it
run and whether copying it to another worker is cheap. ``dask.sizeof`` knows numpy arrays and
the builtin containers, and falls back on ``sys.getsizeof`` for anything else: for a dataclass
with slots, the bare object's 50 to 80 bytes. A BM25 shard of 2 MB or an LSA term block of
40 MB then looks free to move. So each of our values that travels between tasks and holds arrays
or texts defines ``__sizeof__`` as :func:`held_bytes` of its fields, which that fallback reads.

This module never imports Dask: the values it weighs are built and checked on one machine too.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

import numpy as np

__all__ = ["held_bytes"]


def held_bytes(*values: object) -> int:
    """Bytes held by ``values``: an array's ``nbytes`` (its data, even as a view), a string's
    ``sys.getsizeof``, a tuple's, list's, set's or mapping's own size plus its items' (keys and
    values), recursively; anything else ``sys.getsizeof`` (its ``__sizeof__``)."""
    total = 0
    for v in values:
        if isinstance(v, np.ndarray):
            total += v.nbytes
        elif isinstance(v, tuple | list | set | frozenset):
            total += sys.getsizeof(v) + held_bytes(*v)
        elif isinstance(v, Mapping):
            total += sys.getsizeof(v) + held_bytes(*v.keys()) + held_bytes(*v.values())
        else:
            total += sys.getsizeof(v)
    return total
