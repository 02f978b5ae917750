"""Tests for raglab.embedding.neural.index: cosine search over chunk vectors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from raglab.embedding.neural.index import NeuralIndex
from raglab.embedding.neural.model import NeuralModel

from .conftest import Reference

# Handbook-like chunks, and questions that share almost no word with the chunk that answers them.
CHUNKS = [
    "The mount stalls when slewing in cold weather.",
    "Returns are accepted within 30 days of delivery.",
    "Support is closed on Sundays and on bank holidays.",
    "A lost certificate is reissued free of charge as a PDF.",
    "Spent CR2 cells and worn RB-2 packs must not go in household waste.",
    "Firmware v3.2.1 fixes the Wi-Fi drop-outs.",
    "The tripod leg locks slip.",
]
PARAPHRASES = {
    "My telescope stops moving when it's freezing outside.": 0,
    "How long do I have to send a mount back?": 1,
    "Can I ring you on a Sunday?": 2,
    "Somebody nicked the paperwork proving my level was tested.": 3,
    "Where do old batteries go?": 4,
}


@pytest.fixture(scope="module")
def index(model: NeuralModel, tmp_path_factory: pytest.TempPathFactory) -> NeuralIndex:
    return NeuralIndex(model, CHUNKS, cache_dir=tmp_path_factory.mktemp("index-cache"))


def _explicit_scores(index: NeuralIndex, query: str) -> np.ndarray:
    """q . d_j for every chunk, each product summed in float64 by hand (unit vectors)."""
    q = index.model.encode([query])[0].astype(np.float64)
    return np.array(
        [sum(float(a) * float(b) for a, b in zip(d, q, strict=True)) for d in index.vectors]
    )


@pytest.mark.parametrize("query", list(PARAPHRASES))
def test_a_paraphrase_ranks_its_chunk_first(index: NeuralIndex, query: str) -> None:
    """oracle: hand labels; each question is a paraphrase of exactly one chunk."""
    ranking = index.search(query, k=3)
    assert int(ranking.indices[0]) == PARAPHRASES[query]


@pytest.mark.parametrize("query", [*PARAPHRASES, "firmware", ""])
def test_the_order_is_the_argsort_of_the_dot_products(index: NeuralIndex, query: str) -> None:
    """oracle: exact reference computed here: the dot products summed in float64 and
    numpy.argsort(-scores, kind="stable")."""
    scores = _explicit_scores(index, query)
    expected = np.argsort(-scores, kind="stable")
    gaps = np.abs(np.diff(np.sort(scores)))
    assert gaps.min() > 1e-5  # no near-tie: float32 products cannot swap two chunks
    ranking = index.search(query, k=len(CHUNKS))
    assert ranking.indices.tolist() == expected.tolist()
    assert ranking.scores.dtype == np.float64
    assert np.abs(ranking.scores - scores[expected]).max() <= 1e-6


def test_search_many_gives_the_rows_of_search(index: NeuralIndex) -> None:
    """oracle: search() of each query alone (same chunks; scores within float rounding)."""
    queries = list(PARAPHRASES)
    chunks, scores = index.search_many(queries, k=4)
    assert chunks.shape == scores.shape == (len(queries), 4)
    for q, query in enumerate(queries):
        alone = index.search(query, k=4)
        assert chunks[q].tolist() == alone.indices.tolist()
        assert np.abs(scores[q] - alone.scores).max() <= 1e-6
    empty_chunks, empty_scores = index.search_many([], k=4)
    assert empty_chunks.shape == empty_scores.shape == (0, 4)


def test_k_beyond_the_chunks_gives_them_all(index: NeuralIndex) -> None:
    """oracle: the contract, min(k, n) results."""
    assert len(index.search("mount", k=100)) == len(CHUNKS)


def test_equal_vectors_tie_to_the_lower_index(model: NeuralModel, tmp_path: Path) -> None:
    """oracle: raglab's tie rule, by hand: the same text at positions 1 and 3 scores the same
    (one cached vector), so 1 comes before 3."""
    chunks = ["Returns within 30 days.", "The mount stalls.", "Support hours.", "The mount stalls."]
    index = NeuralIndex(model, chunks, cache_dir=tmp_path)
    ranking = index.search("the mount stalls", k=2)
    assert ranking.indices.tolist() == [1, 3]
    assert ranking.scores[0] == ranking.scores[1]


def test_cosine_matches_the_reference_vectors(
    model: NeuralModel, reference: Reference, index: NeuralIndex
) -> None:
    """oracle: the dot product of reference.json's normalised embeddings of texts 2 and 3
    (sentence-transformers + torch)."""
    expected = float(reference.normalized[2] @ reference.normalized[3])
    got = index.cosine(reference.texts[2], reference.texts[3])
    assert abs(got - expected) <= 1e-5
    assert index.cosine(reference.texts[2], reference.texts[2]) == pytest.approx(1.0, abs=1e-6)


def test_vectors_are_unit_rows_and_read_only(index: NeuralIndex, model: NeuralModel) -> None:
    """oracle: model.encode of the chunks, and numpy's writeable flag."""
    assert index.vectors.shape == (len(CHUNKS), 384) and len(index) == len(CHUNKS)
    assert np.abs(index.vectors - model.encode(CHUNKS)).max() <= 1e-6
    with pytest.raises(ValueError):
        index.vectors[0, 0] = 1.0


def test_an_index_without_cache_writes_nothing(model: NeuralModel, private_cache: Path) -> None:
    """oracle: the (absent) default cache folder, and from_vectors over the same vectors."""
    index = NeuralIndex(model, CHUNKS[:3], cache=False)
    assert not private_cache.exists()
    again = NeuralIndex.from_vectors(model, model.encode(CHUNKS[:3], normalize=False))
    assert np.abs(again.vectors - index.vectors).max() <= 1e-6


@pytest.mark.parametrize("k", [0, -2, 1.5, True])
def test_k_must_be_a_positive_integer(index: NeuralIndex, k: object) -> None:
    """oracle: the contract, as BM25Index and LSAModel."""
    with pytest.raises(ValueError, match="k must be"):
        index.search("mount", k=k)  # type: ignore[arg-type]


def test_the_query_must_be_a_string(index: NeuralIndex) -> None:
    """oracle: the contract."""
    with pytest.raises(ValueError, match="query_text"):
        index.search(["mount"], k=1)  # type: ignore[arg-type]


def test_scores_taken_a_block_of_chunks_at_a_time_equal_the_whole_product(
    index: NeuralIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """oracle: each cosine summed in float64 by hand (``_explicit_scores``), within 1e-15: with
    the chunks widened to float64 three at a time (7 chunks: blocks of 3, 3 and 1), every score
    is still its own dot product, so the float64 copy stays bounded without moving a number."""
    import raglab.embedding.neural.index as index_module

    monkeypatch.setattr(index_module, "_SCORE_BLOCK_ROWS", 3)
    for query in PARAPHRASES:
        got = index.scores(query)
        assert got.shape == (len(CHUNKS),)
        np.testing.assert_allclose(got, _explicit_scores(index, query), rtol=0, atol=1e-15)


def _all_scores(index: NeuralIndex, query: np.ndarray) -> np.ndarray:
    """search_vector's score of every row, in row order."""
    ranking = index.search_vector(query, k=len(index))
    out = np.empty(len(index))
    out[ranking.indices] = ranking.scores
    return out


def test_a_subset_of_rows_scores_the_same_bits_as_the_whole(model: NeuralModel) -> None:
    """oracle: the index over all 5,000 rows (exact reference: each row's cosine depends on
    that row alone, so an index over a slice or a pick of the rows, at any offset, gives the
    same bits, as a cluster's shards need). BLAS's matrix-vector product failed this: a row's
    rounding moved with its place in the block."""
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((5_000, model.dim)).astype(np.float32)
    whole = NeuralIndex.from_vectors(model, vectors)
    for query in rng.standard_normal((3, model.dim)).astype(np.float32):
        query /= np.linalg.norm(query)
        scores = _all_scores(whole, query)
        for lo, hi in ((0, 422), (422, 3_072), (3_072, 4_999), (17, 18)):
            part = NeuralIndex.from_vectors(model, vectors[lo:hi])
            assert np.array_equal(_all_scores(part, query), scores[lo:hi])
        picked = rng.integers(0, 5_000, size=20)
        some = NeuralIndex.from_vectors(model, vectors[picked])
        assert np.array_equal(_all_scores(some, query), scores[picked])
