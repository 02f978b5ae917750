"""What Dask's scheduler weighs our values at (``dask.sizeof``, which falls back on
``sys.getsizeof`` and so on ``__sizeof__``): at least the bytes of their arrays and texts.

Oracles: numpy's own ``nbytes`` of each array and ``sys.getsizeof`` of each string, summed by
hand; and the pickled value's length (what a copy to another worker sends). Before, a BM25 shard
weighed 80 bytes, its counts 72 and an LSA term block 56, whatever they held, so the scheduler
saw a copy of 2 to 40 MB as free.
"""

from __future__ import annotations

import pickle
import sys

import numpy as np
from dask.sizeof import sizeof

from raglab.distributed.lsa_held import TermRows
from raglab.distributed.shard import ScoredShard, ShardCounts
from raglab.distributed.weight import held_bytes


def test_held_bytes_closed_forms() -> None:
    """Worked by hand: a view weighs its own elements (3 x 8 bytes of a 100-float array), a
    string its ``sys.getsizeof``, a container its own size plus its items', keys and values."""
    whole = np.zeros(100)
    assert held_bytes(whole[:3]) == 24
    assert held_bytes("ab") == sys.getsizeof("ab")
    pair = ("ab", whole)
    assert held_bytes(pair) == sys.getsizeof(pair) + sys.getsizeof("ab") + 800
    table = {"t": 7}
    assert held_bytes(table) == sys.getsizeof(table) + sys.getsizeof("t") + sys.getsizeof(7)
    assert held_bytes() == 0


def _counts() -> ShardCounts:
    tokens = [[f"w{(3 * j + i) % 700}" for i in range(150)] for j in range(2_000)]
    return ShardCounts.from_tokens(tokens)


def _arrays(counts: ShardCounts) -> int:
    return counts.indptr.nbytes + counts.docs.nbytes + counts.tf.nbytes + counts.lengths.nbytes


def _texts(terms: tuple[str, ...]) -> int:
    return sum(sys.getsizeof(t) for t in terms)


def test_a_shard_weighs_its_postings() -> None:
    """A shard's counts weigh their four arrays and terms; the scored shard those plus its
    idf and length ratios; the statistics their table of document frequencies. Each within a
    factor of two of its pickle, so the scheduler's price of a copy is the copy's."""
    counts = _counts()
    floor = _arrays(counts) + _texts(counts.terms)
    assert sizeof(counts) >= floor
    scored = ScoredShard(counts, counts.statistics(), 0)
    assert sizeof(scored) >= floor + scored.idf.nbytes + scored.ratio.nbytes
    stats = counts.statistics()
    assert sizeof(stats) >= _texts(tuple(stats.df))
    for value in (counts, scored):
        assert len(pickle.dumps(value)) / 2 <= sizeof(value) <= 2 * len(pickle.dumps(value))


def test_an_lsa_term_block_weighs_its_rows() -> None:
    """A block of 5,000 terms' rows of U (k = 100) weighs its 4,000,000 bytes of U, its idf and
    its terms."""
    terms = tuple(f"t{i}" for i in range(5_000))
    rows = TermRows(terms, np.ones(5_000), np.ones((5_000, 100)))
    assert sizeof(rows) >= 4_000_000 + 40_000 + _texts(terms)
    assert sizeof(rows) <= 2 * len(pickle.dumps(rows))
