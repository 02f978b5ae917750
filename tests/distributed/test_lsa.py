"""LSA with the TF-IDF term x window matrix in row blocks on the workers: the single machine's
model, bit for bit.

Oracle: :func:`raglab.embedding.lsa.fit_lsa` on one machine (the lab's ``lsa``, same windows, rank and
seed), on the handbook and on Cranfield (stemmed, 904 windows, 15 power passes): every block's
rows of A, the idf, U, s, Vt and ||A||_F^2 compared as bytes, at several block counts (one
block, fewer blocks than workers, more), and each question's top 10 by LSA equal.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from raglab.distributed.chunking import file_partitions
from raglab.distributed.lsa import (
    chain_transpose_times,
    cut_windows,
    fit_lsa_on_cluster,
    term_block,
    term_ranges,
    window_ids,
)
from raglab.distributed.pipeline import prime_lsa
from raglab.embedding.lsa import capped_windows, fit_lsa, term_window_matrix, unit_rows
from raglab.pipeline.indexes import Indexes
from raglab.pipeline.lab import Lab
from raglab.run_settings import ChunkingKey
from raglab.settings import LSA_OVERSAMPLE, LSA_RANK, SEED
from raglab.text.tokens import count_words
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


def _refuse_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, any lab building its LSA windows on this machine fails the test."""

    def refused(self: Indexes) -> list[list[str]]:
        raise AssertionError("the client built Indexes.lsa_windows")

    monkeypatch.setattr(Indexes, "lsa_windows", property(refused))


def _spanning(lab: Lab, windows: list[range], partitions: int) -> int:
    """How many windows hold words of pages in two or more of the file partitions."""
    files = [Path(p.source).absolute() for p in lab.corpus]
    groups = file_partitions(files, partitions)
    counts = [count_words(p.text) for p in lab.corpus]
    bounds, at = [0], 0
    for group in groups:
        at += len(group)
        bounds.append(sum(counts[:at]))
    return sum(
        1
        for r in windows
        if len({i for i in range(len(groups)) if r.start < bounds[i + 1] and r.stop > bounds[i]})
        > 1
    )


@pytest.mark.parametrize(
    ("name", "partitions"), [("handbook", 2), ("handbook", 5), ("cranfield", 3)]
)
def test_the_workers_cut_the_windows_and_fit_the_single_machines_model(
    client: Any,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    partitions: int,
) -> None:
    """Oracle: the lab's own windows and LSA model on this machine. A fresh lab of the same
    corpus fits LSA on the workers (prime_lsa), which read the page files in ``partitions``
    parts and cut the windows there, some of them across two parts' pages: the windows'
    columns are window_ids of the lab's windows and the model is the lab's, bit for bit,
    while any use of Indexes.lsa_windows on this machine fails the test."""
    lab: Lab = request.getfixturevalue(name)
    ref = lab.indexes.lsa
    windows = lab.indexes.lsa_windows
    vocabulary = ref.vocabulary
    want_ids, want_offsets = window_ids(windows, vocabulary)
    n_words = sum(count_words(p.text) for p in lab.corpus)
    assert _spanning(lab, lab.indexes.lsa_ranges(n_words), partitions) > 0
    fresh = Lab(lab.corpus, lab.questions, stem=lab.stem, analyzer=lab.analyzer)
    _refuse_windows(monkeypatch)
    files = [Path(p.source).absolute() for p in lab.corpus]
    columns = cut_windows(
        client,
        files,
        [p.id for p in lab.corpus],
        fresh.indexes.lsa_ranges,
        analyzer=fresh.indexes.analyzer,
        stem=fresh.indexes.stem,
        partitions=partitions,
    )
    assert columns.n == len(windows) and columns.n_terms == len(vocabulary)
    assert client.gather(columns.terms) == vocabulary.terms
    ids, offsets = client.gather([columns.ids, columns.offsets])
    assert ids.dtype == np.int32 and ids.tobytes() == want_ids.tobytes()
    assert offsets.tobytes() == want_offsets.tobytes()
    got = prime_lsa(client, fresh, LSA_RANK, partitions=partitions)
    assert got.vocabulary == ref.vocabulary
    for name_ in ("idf", "U", "s", "Vt"):
        assert getattr(got, name_).tobytes() == getattr(ref, name_).tobytes(), name_
    assert got.frobenius_sq == ref.frobenius_sq


def test_a_cluster_fit_never_builds_the_windows_on_the_client(
    client: Any, handbook: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: the handbook lab's own model. prime_lsa, as ``--workers`` calls it, fits a
    fresh lab's model while Indexes.lsa_windows refuses to run here, and gets that model."""
    ref = handbook.indexes.lsa
    fresh = Lab(handbook.corpus, handbook.questions)
    _refuse_windows(monkeypatch)
    got = prime_lsa(client, fresh, LSA_RANK)
    assert got.s.tobytes() == ref.s.tobytes() and got.U.tobytes() == ref.U.tobytes()


#: The tasks that read the page files and cut the LSA windows (raglab.distributed.lsa.cut_windows),
#: as Dask's key_split names them (without a leading underscore).
CUTTING = {"read_partition", "page_words", "cut_window_pieces", "piece_terms", "window_piece_ids"}


def test_a_cached_model_cuts_no_window(client: Any, handbook: Lab) -> None:
    """Oracle: the handbook lab's own model, and the scheduler's record of every task run
    (Dask's task stream, by the task's function name). A fresh lab fits LSA on the workers;
    asked again with the model in its cache, prime_lsa cuts no window (no task reads a page
    or cuts a window: none runs at all) and gives the same model. A lab whose own fit is
    cached (the handbook's) likewise cuts nothing on the cluster."""
    from dask.utils import key_split

    from distributed import get_task_stream

    ref = handbook.indexes.lsa
    fresh = Lab(handbook.corpus, handbook.questions)
    with get_task_stream(client) as first:
        model = prime_lsa(client, fresh, LSA_RANK)
    assert {key_split(t["key"]) for t in first.data} >= CUTTING  # the first fit cut them
    for lab, want in ((fresh, model), (handbook, ref)):
        with get_task_stream(client) as again:
            got = prime_lsa(client, lab, LSA_RANK)
        assert got is want
        assert not {key_split(t["key"]) for t in again.data}
    for name in ("idf", "U", "s", "Vt"):
        assert getattr(model, name).tobytes() == getattr(ref, name).tobytes(), name


def test_a_capped_fit_on_the_cluster_is_the_single_machines(
    client: Any, handbook: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: fit_lsa on this machine on the handbook's windows that capped_windows(100, 40)
    keeps. A lab capped at 40 windows fits LSA on the workers (prime_lsa, as ``--workers``
    does; the windows cut there, never here) on those same windows, and gets that model bit
    for bit."""
    capped = Lab(handbook.corpus, handbook.questions)
    capped.indexes.max_windows = 40
    subset = [handbook.indexes.lsa_windows[i] for i in capped_windows(100, 40)]
    want = fit_lsa(subset, rank=40, seed=SEED, oversample=LSA_OVERSAMPLE)
    with monkeypatch.context() as patched:
        _refuse_windows(patched)
        got = prime_lsa(client, capped, LSA_RANK, partitions=3)
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


def test_the_sketches_stay_on_the_workers(client: Any) -> None:
    """Oracle: fit_lsa on this machine, and the sizes of the arrays themselves. 1,000 seeded
    random windows of 256 tokens over 40,000 terms (nearly all of them drawn: m > n), rank 10
    and l = 74 columns: the fit's peak of Python allocations in this process (tracemalloc,
    which also sees the LocalCluster's scheduler here), counted once the windows' columns are
    on the workers, stays below the model's own arrays (U, s, Vt: 3.3 MB) plus one (m, l)
    sketch (23.7 MB). The fit that gathered every sketch here held several (m, l) sketches at
    once (its peak was 83 MB at 2,000 windows); only U, s and Vt come back now (16.5 MB at
    2,000 windows, measured on this machine, Dask's buffers included). The model is the single
    machine's bit for bit."""
    import tracemalloc

    from raglab.distributed.lsa import WindowColumns

    rng = np.random.default_rng(SEED)
    windows = [[f"t{i}" for i in rng.integers(0, 40_000, 256).tolist()] for _ in range(1_000)]
    rank, oversample = 10, 64  # the sketches wide (l = 74, as at the defaults), the model thin
    want = fit_lsa(windows, rank=rank, seed=SEED, oversample=oversample)
    columns = WindowColumns.of(client, windows)
    m, n, width = columns.n_terms, columns.n, rank + oversample
    tracemalloc.start()
    try:
        got = fit_lsa_on_cluster(client, columns, rank=rank, seed=SEED, oversample=oversample)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    model = got.U.nbytes + got.s.nbytes + got.Vt.nbytes
    assert m > n and got.U.shape == (m, rank) and got.Vt.shape == (rank, n)
    assert peak < model + m * width * 8, (peak, model, m * width * 8)
    for name in ("idf", "U", "s", "Vt"):
        assert getattr(got, name).tobytes() == getattr(want, name).tobytes(), name
