"""Tests for raglab.embedding.neural.encoder: our numpy forward pass against sentence-transformers' outputs.

Tolerances: 1e-5 absolute for the pooled and the normalised embeddings, 1e-4 for per-token states
(the brief's bounds; the pass reaches about 2e-6 on both), 1e-6 between batch sizes.
"""

from __future__ import annotations

import hashlib
import math
import tracemalloc

import numpy as np
import pytest

from raglab.base.threads import blas_thread_count, blas_threads
from raglab.embedding.neural import encoder as encoder_module
from raglab.embedding.neural.encoder import (
    SCORES_BLOCK,
    _attention,
    forward,
    gelu,
    layer_norm,
    load_kernels,
    pooled_batch,
    unit_rows32,
)
from raglab.embedding.neural.model import NeuralModel

from .conftest import F32, Reference

EMBEDDING_TOL = 1e-5
STATE_TOL = 1e-4
BATCH_TOL = 1e-6
TEXTS = range(30)


def test_the_model_is_the_reference_checkpoint(model: NeuralModel, reference: Reference) -> None:
    """oracle: the sha256 of model.safetensors in reference.json, and hashlib over the whole file
    read at once (the model streams it in blocks)."""
    whole = hashlib.sha256((model.path / "model.safetensors").read_bytes()).hexdigest()
    assert model.model_hash == reference.sha256 == whole
    assert (model.dim, model.max_seq_length, model.pooling) == (384, 256, "mean")


@pytest.mark.parametrize("i", TEXTS)
def test_word_piece_ids_equal_the_reference(
    model: NeuralModel, reference: Reference, i: int
) -> None:
    """oracle: reference.json input_ids (the HF tokenizer as sentence-transformers ran it: no
    padding, truncation at 256)."""
    assert model.token_ids([reference.texts[i]]) == [reference.input_ids[i]]


def test_long_text_is_truncated_at_max_seq_length(model: NeuralModel, reference: Reference) -> None:
    """oracle: reference.json: text 28 has 256 ids, [CLS] first and [SEP] last."""
    ids = model.token_ids([reference.texts[28]])[0]
    assert len(ids) == reference.max_seq_length == 256
    assert (ids[0], ids[-1]) == (101, 102)


@pytest.mark.parametrize("i", TEXTS)
def test_each_text_alone_matches_the_reference(
    model: NeuralModel, reference: Reference, alone: F32, i: int
) -> None:
    """oracle: reference.json embedding and embedding_normalized (sentence-transformers + torch)."""
    assert np.abs(alone[i] - reference.embedding[i]).max() <= EMBEDDING_TOL
    unit = model.encode([reference.texts[i]])[0]
    assert unit.dtype == np.float32 and unit.shape == (384,)
    assert np.abs(unit - reference.normalized[i]).max() <= EMBEDDING_TOL


def test_one_padded_batch_of_short_and_long_texts_matches_the_reference(
    model: NeuralModel, reference: Reference, batched: F32
) -> None:
    """oracle: reference.json. The batch of 30 mixes the empty text (2 word pieces) with text 28
    (256), so most rows are mostly padding; the normalised check takes five of them, padded to
    256 as well."""
    lengths = [len(ids) for ids in reference.input_ids]
    assert min(lengths) == 2 and max(lengths) == 256
    assert batched.shape == (30, 384) and batched.dtype == np.float32
    assert np.abs(batched - reference.embedding).max() <= EMBEDDING_TOL
    mixed = [0, 28, 2, 14, 3]
    unit = model.encode([reference.texts[i] for i in mixed], batch_size=32)
    assert np.abs(unit - reference.normalized[mixed]).max() <= EMBEDDING_TOL


def test_batch_size_does_not_change_the_vectors(
    model: NeuralModel, reference: Reference, alone: F32, batched: F32
) -> None:
    """oracle: each text encoded alone (batch_size=1, no padding at all), normalised, against
    batch sizes 32 (one padded batch) and 7 (batches of mixed lengths, order restored)."""
    one = unit_rows32(alone)
    assert np.abs(model.encode(reference.texts, batch_size=1) - one).max() == 0.0
    assert np.abs(unit_rows32(batched) - one).max() <= BATCH_TOL
    assert np.abs(model.encode(reference.texts, batch_size=7) - one).max() <= BATCH_TOL


def test_rows_follow_the_input_order(model: NeuralModel, reference: Reference) -> None:
    """oracle: permuting the input permutes the rows (texts are sorted by length inside)."""
    texts = reference.texts[:12]
    order = np.random.default_rng(3).permutation(len(texts))
    forward = model.encode(texts, batch_size=4)
    shuffled = model.encode([texts[i] for i in order], batch_size=4)
    assert np.abs(shuffled - forward[order]).max() <= BATCH_TOL


@pytest.mark.parametrize("which", [0, 1])
def test_token_states_of_texts_2_and_3_match_the_reference(
    model: NeuralModel, reference: Reference, which: int
) -> None:
    """oracle: reference.json token_embeddings_of_texts_2_and_3, alone and in a padded batch with
    the empty text and the 256-piece text 28."""
    text = reference.texts[2 + which]
    expected = reference.states[which]
    (single,) = model.token_states([text])
    assert single.shape == expected.shape == (13, 384)
    assert np.abs(single - expected).max() <= STATE_TOL
    batch = model.token_states([reference.texts[28], text, reference.texts[0]], batch_size=3)
    assert [s.shape[0] for s in batch] == [256, 13, 2]
    assert np.abs(batch[1] - expected).max() <= STATE_TOL


@pytest.mark.parametrize("compiled", [True, False], ids=["numba", "numpy"])
def test_each_kernel_set_matches_the_reference(
    model: NeuralModel, reference: Reference, compiled: bool
) -> None:
    """oracle: reference.json embedding and token states. The pass with numba's kernels and with
    their numpy twins, all 30 texts in one batch (2 to 256 word pieces), and texts 2 and 3
    padded in a batch with text 28."""
    kernels = load_kernels(compiled=compiled)
    pooled = pooled_batch(model, model.token_ids(reference.texts), kernels=kernels)
    assert np.abs(pooled - reference.embedding).max() <= EMBEDDING_TOL
    ids = model.token_ids([reference.texts[28], reference.texts[2], reference.texts[3]])
    padded = np.zeros((3, 256), dtype=np.int64)
    mask = np.zeros((3, 256), dtype=np.bool_)
    for row, pieces in enumerate(ids):
        padded[row, : len(pieces)] = pieces
        mask[row, : len(pieces)] = True
    states = forward(model.weights, padded, mask, kernels=kernels)
    for which in (0, 1):
        got = states[1 + which, : len(ids[1 + which])]
        assert np.abs(got - reference.states[which]).max() <= STATE_TOL
    assert not states[~mask].any()


@pytest.mark.parametrize("compiled", [True, False], ids=["numba", "numpy"])
def test_threads_change_no_value(model: NeuralModel, reference: Reference, compiled: bool) -> None:
    """oracle: the pass on one thread, bit for bit, and reference.json within 1e-5. Attention
    shared text by text and GELU and LayerNorm by blocks of rows among 2 and 3 threads: all 30
    texts in one batch (2 to 256 word pieces, 3,000 rows, so several blocks a thread)."""
    kernels = load_kernels(compiled=compiled)
    rows = model.token_ids(reference.texts)
    one = pooled_batch(model, rows, kernels=kernels, threads=1)
    assert np.abs(one - reference.embedding).max() <= EMBEDDING_TOL
    for threads in (2, 3):
        many = pooled_batch(model, rows, kernels=kernels, threads=threads)
        assert np.array_equal(many, one)


def test_the_pass_follows_blas_threads_and_leaves_them_as_found(
    model: NeuralModel, reference: Reference
) -> None:
    """oracle: threadpoolctl's count as set around the call. encode() shares its own steps among
    as many threads as BLAS runs (attention with BLAS at one thread), and gives BLAS back its
    count afterwards; the vectors equal the one-thread pass's within 1e-6 (BLAS's large products
    may round differently on two threads)."""
    texts = reference.texts[:12]
    single = model.encode(texts)
    with blas_threads(2):
        assert blas_thread_count() == 2
        double = model.encode(texts)
        assert blas_thread_count() == 2
    assert blas_thread_count() == 1
    assert np.abs(double - single).max() <= BATCH_TOL


def test_mean_pooling_is_the_mean_of_the_token_states(
    model: NeuralModel, reference: Reference, alone: F32
) -> None:
    """oracle: the definition, over reference.json's token states (mean over all 13 tokens)."""
    for which in (0, 1):
        assert np.abs(alone[2 + which] - reference.states[which].mean(axis=0)).max() <= 1e-5


def test_normalised_rows_have_unit_length(model: NeuralModel, reference: Reference) -> None:
    """oracle: numpy.linalg.norm in float64."""
    unit = model.encode(reference.texts[:8])
    assert np.allclose(np.linalg.norm(unit.astype(np.float64), axis=1), 1.0, atol=1e-6)


def test_progress_wraps_every_batch_once(model: NeuralModel, reference: Reference) -> None:
    """oracle: hand count; 10 texts in batches of 4 are 3 batches covering positions 0..9 once."""
    seen: list[list[int]] = []

    def wrap(batches: list[np.ndarray]) -> list[np.ndarray]:
        seen.extend(b.tolist() for b in batches)
        return batches

    model.encode(reference.texts[:10], batch_size=4, progress=wrap)
    assert [len(b) for b in seen] == [4, 4, 2]
    assert sorted(i for b in seen for i in b) == list(range(10))


def test_no_texts_give_an_empty_matrix(model: NeuralModel) -> None:
    """oracle: the contract, shape (0, dim)."""
    out = model.encode([])
    assert out.shape == (0, 384) and out.dtype == np.float32


@pytest.mark.parametrize("bad", ["one string", [1, "a"], [b"bytes"]])
def test_texts_must_be_a_list_of_strings(model: NeuralModel, bad: object) -> None:
    """oracle: the contract (a bare string would be read as its characters)."""
    with pytest.raises(ValueError):
        model.encode(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("size", [0, -1, 1.5, True])
def test_batch_size_must_be_a_positive_integer(model: NeuralModel, size: object) -> None:
    """oracle: the contract."""
    with pytest.raises(ValueError, match="batch_size"):
        model.encode(["a"], batch_size=size)  # type: ignore[arg-type]


def test_gelu_is_the_exact_erf_form() -> None:
    """oracle: x/2 (1 + erf(x / sqrt 2)) with the standard library's math.erf, in float64."""
    x = np.linspace(-8, 8, 2001, dtype=np.float32)
    expected = np.array([v / 2 * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(float)])
    got = gelu(x.copy())
    assert got.dtype == np.float32
    assert np.abs(got - expected).max() <= 1e-6


def test_layer_norm_matches_the_formula() -> None:
    """oracle: (x - mean) / sqrt(var + eps) * gamma + beta written out in float64."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 7, 384)).astype(np.float32) * 3 + 1
    gamma = rng.standard_normal(384).astype(np.float32)
    beta = rng.standard_normal(384).astype(np.float32)
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=-1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=-1, keepdims=True)
    expected = (x64 - mean) / np.sqrt(var + 1e-12) * gamma + beta
    assert np.abs(layer_norm(x, gamma, beta, 1e-12) - expected).max() <= 1e-5


@pytest.mark.parametrize("block", [SCORES_BLOCK, 4 * 30 * 30 * 3], ids=["default", "small"])
def test_attention_reuses_its_scores_buffer_and_nothing_leaks_between_texts(
    block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """oracle: softmax(Q K^T / sqrt(d)) V head by head in float64, within 1e-6, for texts of 50,
    9, 30 and 1 word pieces (each shorter one reading scores left by a longer one), on 1 and 2
    threads, all heads of a text at once or (``SCORES_BLOCK`` small) by 1, by 3 then 1, by 4;
    and tracemalloc: once warm, a call's peak is under a tenth of the longest text's
    (H, 50, 50) scores (only array headers and views), where a fresh array a text (2 MB at 200
    word pieces, at every layer) is mapped and faulted in page by page."""
    heads, d, lengths = 4, 8, [50, 9, 30, 1]
    h = heads * d
    packed = np.random.default_rng(5).standard_normal((sum(lengths), 3 * h)).astype(np.float32)
    expected = np.empty((sum(lengths), h))
    start = 0
    for t in lengths:
        q, k, v = (
            packed[start : start + t].astype(np.float64).reshape(t, 3, heads, d).swapaxes(0, 1)
        )
        for head in range(heads):
            scores = q[:, head] @ k[:, head].T / math.sqrt(d)
            e = np.exp(scores - scores.max(axis=1, keepdims=True))
            expected[start : start + t, head * d : (head + 1) * d] = (
                e / e.sum(axis=1, keepdims=True)
            ) @ v[:, head]
        start += t
    monkeypatch.setattr(encoder_module, "SCORES_BLOCK", block)
    softmax = load_kernels().softmax_rows
    for threads in (1, 2):
        out = np.full((sum(lengths), h), np.nan, dtype=np.float32)
        _attention(packed, lengths, heads, softmax, out, threads)
        assert np.abs(out - expected).max() <= 1e-6
    tracemalloc.start()
    try:
        _attention(packed, lengths, heads, softmax, out, 1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < heads * 50 * 50 * 4 / 10
