"""LSA with the TF-IDF term x window matrix in row blocks on the workers: the single machine's
model, bit for bit.

Oracle: :func:`raglab.embedding.lsa.fit_lsa` on one machine (the lab's ``lsa``, same windows, rank and
seed), on the handbook and on Cranfield (stemmed, 904 windows, 15 power passes): every block's
rows of A, the idf, U, s, Vt and ||A||_F^2 compared as bytes, at several block counts (one
block, fewer blocks than workers, more), and each question's top 10 by LSA equal.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from raglab.distributed.lsa import (
    chain_transpose_times,
    fit_lsa_on_cluster,
    term_block,
    term_ranges,
    window_ids,
)
from raglab.distributed.pipeline import prime_lsa
from raglab.embedding.lsa import capped_windows, fit_lsa, term_window_matrix, unit_rows
from raglab.pipeline.lab import Lab
from raglab.run_settings import ChunkingKey
from raglab.settings import LSA_OVERSAMPLE, LSA_RANK, SEED
from tests.distributed.cluster_fixtures import WHOLE_PAGES


@pytest.mark.parametrize(("name", "blocks"), [("handbook", 5), ("handbook", 1), ("cranfield", 3)])
def test_blocked_lsa_matches_one_machine(
    client: Any, request: pytest.FixtureRequest, name: str, blocks: int
) -> None:
    """Oracle: the lab's own LSA model (see the module docstring)."""
    lab: Lab = request.getfixturevalue(name)
    key = WHOLE_PAGES if name == "cranfield" else ChunkingKey()
    ref = lab.indexes.lsa
    windows = lab.indexes.lsa_windows
    ours = fit_lsa_on_cluster(
        client, windows, rank=ref.rank, blocks=blocks, seed=SEED, oversample=26
    )

    A, vocabulary, _ = term_window_matrix(windows)
    ids, offsets = window_ids(windows, vocabulary)
    for a, b in term_ranges(A.shape[0], blocks)[::2]:
        block, _ = term_block(ids, offsets, a, vocabulary.terms[a:b])
        want = A.tocsr()[a:b]
        got = block.tocsr()
        assert np.array_equal(got.indptr, want.indptr)
        assert got.data.tobytes() == want.data.tobytes()
    assert ours.vocabulary == ref.vocabulary
    for name_ in ("idf", "U", "s", "Vt"):
        assert getattr(ours, name_).tobytes() == getattr(ref, name_).tobytes(), name_
    assert ours.frobenius_sq == ref.frobenius_sq

    cs = lab.indexes.chunk_set(key)
    projections = unit_rows(ours.project(cs.tokens))
    assert projections.tobytes() == cs.lsa_unit_projections.tobytes()
    compared = 0
    for q in lab.questions:
        tokens = lab.indexes.query_tokens(q)
        want_rank = ref.search(tokens, cs.lsa_unit_projections, k=10, normalised=True)
        got_rank = ours.search(tokens, projections, k=10, normalised=True)
        assert got_rank.indices.tolist() == want_rank.indices.tolist()
        assert got_rank.scores.tobytes() == want_rank.scores.tobytes()
        compared += 1
    assert compared == len(lab.questions) > 50


def test_the_chain_continues_the_single_product(handbook: Lab) -> None:
    """Oracle: ``A.T @ Y`` of scipy on the whole matrix. Three blocks chained give its bytes;
    the blocks' products added afterwards (each from zeros) are only equal to rounding, which is
    why the chain is needed (on the handbook at least one entry differs)."""
    windows = handbook.indexes.lsa_windows
    A, vocabulary, _ = term_window_matrix(windows)
    Y = np.random.default_rng(7).standard_normal((A.shape[0], 9))
    want = np.asarray(A.T @ Y)
    running = None
    summed = np.zeros_like(want)
    ids, offsets = window_ids(windows, vocabulary)
    for a, b in term_ranges(A.shape[0], 3):
        block = term_block(ids, offsets, a, vocabulary.terms[a:b])
        given = None if running is None else running.copy()
        out = chain_transpose_times(block, Y[a:b], running)
        if running is not None:  # the input is left as it was (a task may be run again)
            assert given is not None and running.tobytes() == given.tobytes()
        running = out
        summed += np.asarray(block[0].T @ Y[a:b])
    assert running is not None
    assert running.tobytes() == want.tobytes()
    assert summed.tobytes() != want.tobytes()
    np.testing.assert_allclose(summed, want, rtol=1e-12, atol=1e-12)


def test_a_capped_fit_on_the_cluster_is_the_single_machines(client: Any, handbook: Lab) -> None:
    """Oracle: fit_lsa on this machine on the handbook's windows that capped_windows(100, 40)
    keeps. A lab capped at 40 windows fits LSA on the workers (prime_lsa, as ``--workers``
    does) on those same windows, and gets that model bit for bit."""
    capped = Lab(handbook.corpus, handbook.questions)
    capped.indexes.max_windows = 40
    subset = [handbook.indexes.lsa_windows[i] for i in capped_windows(100, 40)]
    want = fit_lsa(subset, rank=40, seed=SEED, oversample=LSA_OVERSAMPLE)
    got = prime_lsa(client, capped, LSA_RANK)
    assert capped.indexes.lsa_windows == subset and got.rank == 40
    assert got.vocabulary == want.vocabulary
    for name in ("idf", "U", "s", "Vt"):
        assert getattr(got, name).tobytes() == getattr(want, name).tobytes(), name
    assert got.frobenius_sq == want.frobenius_sq


def test_the_windows_travel_as_their_token_columns(handbook: Lab) -> None:
    """Oracle: the handbook's windows themselves. window_ids gives every token's column in the
    sorted vocabulary as int32 (4 bytes a token) with each window's start, and reading each
    window back through the vocabulary gives its tokens; a block built from them over the
    middle third of the terms is that third of A's rows, bit for bit."""
    windows = handbook.indexes.lsa_windows
    A, vocabulary, _ = term_window_matrix(windows)
    ids, offsets = window_ids(windows, vocabulary)
    assert ids.dtype == np.int32 and ids.shape == (sum(len(w) for w in windows),)
    assert offsets.shape == (len(windows) + 1,)
    for w, (a, z) in enumerate(itertools.pairwise(offsets.tolist())):
        assert [vocabulary.terms[i] for i in ids[a:z].tolist()] == windows[w]
    lo, hi = A.shape[0] // 3, 2 * A.shape[0] // 3
    block, _ = term_block(ids, offsets, lo, vocabulary.terms[lo:hi])
    want = A.tocsr()[lo:hi]
    got = block.tocsr()
    assert np.array_equal(got.indptr, want.indptr) and np.array_equal(got.indices, want.indices)
    assert got.data.tobytes() == want.data.tobytes()
