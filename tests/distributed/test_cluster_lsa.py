"""LSA with the TF-IDF term x window matrix in row blocks on the workers: the single machine's
model to rounding.

Oracle: :func:`raglab.lsa.fit_lsa` on one machine (the lab's ``lsa``, same windows, rank and
seed), on the handbook and on Cranfield (stemmed, 904 windows, 15 power passes): every block's
rows of A and the idf bit for bit, the singular values within 1e-6 relative, and each
question's top 10 by LSA equal wherever the single machine's scores are not tied within 1e-6.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from cluster_fixtures import WHOLE_PAGES, client, cranfield, cranfield_dir, handbook

from raglab.distributed.lsa import fit_lsa_on_cluster, term_block, term_ranges
from raglab.lsa import term_window_matrix, unit_rows
from raglab.pipeline.lab import ChunkingKey, Lab

__all__ = ["client", "cranfield", "cranfield_dir", "handbook"]  # fixtures, used by name

TOLERANCE = 1e-6


@pytest.mark.parametrize("name", ["handbook", "cranfield"])
def test_blocked_lsa_matches_one_machine(
    client: Any, request: pytest.FixtureRequest, name: str
) -> None:
    """Oracle: the lab's own LSA model (see the module docstring)."""
    lab: Lab = request.getfixturevalue(name)
    key = WHOLE_PAGES if name == "cranfield" else ChunkingKey()
    ref = lab.lsa
    windows = lab.lsa_windows
    ours = fit_lsa_on_cluster(client, windows, rank=ref.rank, blocks=5)

    A, vocabulary, _ = term_window_matrix(windows)
    for a, b in term_ranges(A.shape[0], 5)[::2]:
        block, _ = term_block(windows, vocabulary.terms[a:b])
        want = A.tocsr()[a:b]
        got = block.tocsr()
        assert np.array_equal(got.indptr, want.indptr)
        assert got.data.tobytes() == want.data.tobytes()
    assert ours.vocabulary == ref.vocabulary
    assert ours.idf.tobytes() == ref.idf.tobytes()
    np.testing.assert_allclose(ours.s, ref.s, rtol=TOLERANCE, atol=0)
    assert ours.frobenius_sq == pytest.approx(ref.frobenius_sq, rel=1e-12)

    cs = lab.chunk_set(key)
    projections = unit_rows(ours.project(cs.tokens))
    compared = 0
    for q in lab.questions:
        tokens = lab.query_tokens(q)
        want_rank = ref.search(tokens, cs.lsa_unit_projections, k=10, normalised=True)
        got_rank = ours.search(tokens, projections, k=10, normalised=True)
        np.testing.assert_allclose(got_rank.scores, want_rank.scores, rtol=0, atol=TOLERANCE)
        query = unit_rows(ref.project([tokens]))[0]
        ref_scores = cs.lsa_unit_projections @ query
        for got_i, want_i in zip(got_rank.indices, want_rank.indices, strict=True):
            if got_i != want_i:  # only a tie within the tolerance may fall the other way
                assert abs(ref_scores[got_i] - ref_scores[want_i]) <= TOLERANCE
        compared += 1
    assert compared == len(lab.questions) > 50
