"""Tests for raglab.embedding.vectors: vocabulary, counts, TF-IDF and cosine similarities."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
from sklearn.metrics.pairwise import cosine_similarity

from raglab.embedding.vectors import (
    Vocabulary,
    cosine_matrix,
    count_matrix,
    document_frequencies,
    idf_weights,
    tfidf_matrix,
)

# ---------------------------------------------------------------- fixtures

# Three short documents, small enough to work by hand.
HAND_DOCS = [["mount", "tripod", "mount"], ["tripod", "leg"], ["mount", "tripod", "lock"]]


@pytest.fixture
def random_docs() -> list[list[str]]:
    """A seeded corpus of 40 documents over 25 terms with Zipf-like frequencies."""
    rng = np.random.default_rng(7)
    terms = [f"t{i:02d}" for i in range(25)]
    p = 1.0 / np.arange(1, 26)
    p /= p.sum()
    docs = [list(rng.choice(terms, size=int(rng.integers(0, 30)), p=p)) for _ in range(40)]
    docs[5] = []  # an empty document must give an empty row
    return docs


def identity(tokens: list[str]) -> list[str]:
    return tokens


# ---------------------------------------------------------------- Vocabulary


def test_vocabulary_is_sorted_and_indexes_terms() -> None:
    """oracle: hand-worked; the distinct tokens of HAND_DOCS in code-point order."""
    vocab = Vocabulary.from_docs(HAND_DOCS)
    assert vocab.terms == ("leg", "lock", "mount", "tripod")
    assert [vocab[t] for t in vocab.terms] == [0, 1, 2, 3]
    assert "mount" in vocab and "stand" not in vocab
    assert vocab.get("stand") is None
    assert len(vocab) == 4


def test_vocabulary_ids_keep_repeats_and_drop_unknown_tokens() -> None:
    """oracle: hand-worked; mount -> 2, tripod -> 3, stand unknown."""
    vocab = Vocabulary.from_docs(HAND_DOCS)
    assert vocab.ids(["mount", "stand", "tripod", "mount"]).tolist() == [2, 3, 2]
    assert vocab.ids([]).dtype == np.int64


def test_vocabulary_does_not_depend_on_document_order(random_docs: list[list[str]]) -> None:
    """oracle: invariance; the vocabulary is a sorted set, so any permutation gives the same."""
    rng = np.random.default_rng(1)
    shuffled = [random_docs[i] for i in rng.permutation(len(random_docs))]
    assert Vocabulary.from_docs(shuffled) == Vocabulary.from_docs(random_docs)


def test_vocabulary_rejects_repeated_terms_and_text() -> None:
    """oracle: the contract; duplicates and bare strings are errors."""
    with pytest.raises(ValueError, match="distinct"):
        Vocabulary(("a", "a"))
    with pytest.raises(ValueError, match="string"):
        Vocabulary.from_docs(["a text, not tokens"])


# ---------------------------------------------------------------- count_matrix


def test_count_matrix_hand_example() -> None:
    """oracle: hand-worked counts.

    columns leg lock mount tripod
    doc 0:    0    0    2     1      (mount twice)
    doc 1:    1    0    0     1
    doc 2:    0    1    1     1
    """
    X = count_matrix(HAND_DOCS)
    assert sp.issparse(X) and X.format == "csr" and X.dtype == np.float64
    assert X.toarray().tolist() == [[0, 0, 2, 1], [1, 0, 0, 1], [0, 1, 1, 1]]


def test_count_matrix_matches_scikit_learn(random_docs: list[list[str]]) -> None:
    """oracle: scikit-learn's CountVectorizer on the same token lists (its vocabulary is sorted
    too)."""
    vectorizer = CountVectorizer(analyzer=identity)
    expected = vectorizer.fit_transform(random_docs).toarray()
    X = count_matrix(random_docs)
    assert list(vectorizer.get_feature_names_out()) == list(Vocabulary.from_docs(random_docs))
    np.testing.assert_array_equal(X.toarray(), expected)
    assert X[5].nnz == 0


def test_count_matrix_ignores_tokens_outside_a_given_vocabulary() -> None:
    """oracle: hand-worked; with vocabulary (mount, tripod), 'leg' and 'lock' vanish."""
    vocab = Vocabulary(("mount", "tripod"))
    X = count_matrix([*HAND_DOCS, ["stand"]], vocabulary=vocab)
    assert X.shape == (4, 2)
    assert X.toarray().tolist() == [[2, 1], [0, 1], [1, 1], [0, 0]]


def test_count_matrix_with_unknown_tokens_and_empty_documents_equals_counting(
    random_docs: list[list[str]],
) -> None:
    """oracle: collections.Counter over each document, restricted to the vocabulary; the CSR
    arrays are canonical (sorted columns, no repeated entry) and count every kept token once.
    Unknown tokens sit at the start, middle and end of documents, and whole documents hold
    nothing else, so rows must close where their kept tokens end."""
    vocab = Vocabulary(tuple(f"t{i:02d}" for i in range(0, 25, 2)))  # every other term
    docs = [["zz", *d[:3], "yy", *d[3:], "xx"] for d in random_docs]
    docs[7] = ["xx", "yy"]
    X = count_matrix(docs, vocabulary=vocab)
    expected = np.zeros((len(docs), len(vocab)))
    for r, doc in enumerate(docs):
        for term, n in Counter(doc).items():
            if term in vocab:
                expected[r, vocab[term]] = n
    assert X.shape == expected.shape and X.dtype == np.float64
    np.testing.assert_array_equal(X.toarray(), expected)
    assert X.has_canonical_format and X.nnz == np.count_nonzero(expected)
    assert X.data.sum() == sum(t in vocab for d in docs for t in d)
    assert X[5].nnz == 0 and X[7].nnz == 0
    assert count_matrix([], vocabulary=vocab).shape == (0, len(vocab))


def test_count_matrix_rows_follow_a_permutation(random_docs: list[list[str]]) -> None:
    """oracle: invariance; permuting documents permutes rows and nothing else."""
    perm = np.random.default_rng(3).permutation(len(random_docs))
    X = count_matrix(random_docs).toarray()
    Y = count_matrix([random_docs[i] for i in perm]).toarray()
    np.testing.assert_array_equal(Y, X[perm])


# ---------------------------------------------------------------- TF-IDF


def test_tfidf_hand_example() -> None:
    """oracle: hand-worked, idf = ln(N / df) with N = 3.

    df: leg 1, lock 1, mount 2, tripod 3
    idf: leg ln 3, lock ln 3, mount ln(3/2), tripod ln 1 = 0 (in every document)
    doc 0 = (0, 0, 2 ln 1.5, 0); doc 1 = (ln 3, 0, 0, 0); doc 2 = (0, ln 3, ln 1.5, 0)
    """
    X, idf = tfidf_matrix(HAND_DOCS)
    np.testing.assert_allclose(idf, [math.log(3), math.log(3), math.log(1.5), 0.0])
    expected = [
        [0, 0, 2 * math.log(1.5), 0],
        [math.log(3), 0, 0, 0],
        [0, math.log(3), math.log(1.5), 0],
    ]
    np.testing.assert_allclose(X.toarray(), expected, rtol=1e-15)


def test_tfidf_matches_scikit_learn_without_its_plus_one(random_docs: list[list[str]]) -> None:
    """oracle: scikit-learn's TfidfTransformer(smooth_idf=False, norm=None), whose idf is
    ln(N / df) + 1; subtracting the 1 (and tf once) gives ours."""
    counts = CountVectorizer(analyzer=identity).fit_transform(random_docs)
    transformer = TfidfTransformer(smooth_idf=False, norm=None).fit(counts)
    X, idf = tfidf_matrix(random_docs)
    np.testing.assert_allclose(idf, transformer.idf_ - 1.0, rtol=1e-12, atol=1e-15)
    expected = transformer.transform(counts).toarray() - counts.toarray()
    np.testing.assert_allclose(X.toarray(), expected, rtol=1e-12, atol=1e-12)


def test_tfidf_scaled_block_by_block_is_tf_times_idf_entry_by_entry(
    random_docs: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: every stored count times its column's idf, computed here entry by entry; with
    blocks of 7 entries the matrix is scaled in many blocks, and the counts are not shared."""
    import raglab.embedding.vectors as vectors

    monkeypatch.setattr(vectors, "_SCALE_BLOCK", 7)
    counts = count_matrix(random_docs)
    X, idf = tfidf_matrix(random_docs)
    assert counts.nnz > 7 * 3
    assert X.indices.tolist() == counts.indices.tolist()
    assert X.data.tolist() == [c * idf[j] for c, j in zip(counts.data, counts.indices, strict=True)]


def test_tfidf_with_a_fitted_idf_weights_new_documents_the_same_way() -> None:
    """oracle: hand-worked; a new document ['mount', 'mount', 'stand'] under HAND_DOCS' idf is
    2 ln 1.5 in the mount column and nothing else."""
    vocab = Vocabulary.from_docs(HAND_DOCS)
    _, idf = tfidf_matrix(HAND_DOCS, vocabulary=vocab)
    X, same = tfidf_matrix([["mount", "mount", "stand"]], vocabulary=vocab, idf=idf)
    np.testing.assert_array_equal(same, idf)
    np.testing.assert_allclose(X.toarray(), [[0, 0, 2 * math.log(1.5), 0]])


def test_tfidf_rejects_an_idf_without_its_vocabulary_or_of_the_wrong_length() -> None:
    """oracle: the contract."""
    vocab = Vocabulary.from_docs(HAND_DOCS)
    with pytest.raises(ValueError, match="vocabulary"):
        tfidf_matrix(HAND_DOCS, idf=np.zeros(4))
    with pytest.raises(ValueError, match="shape"):
        tfidf_matrix(HAND_DOCS, vocabulary=vocab, idf=np.zeros(3))


def test_idf_of_an_unseen_vocabulary_term_is_zero() -> None:
    """oracle: the documented convention; df = 0 gives idf 0, not infinity."""
    np.testing.assert_allclose(idf_weights(np.array([0, 1, 4]), 4), [0.0, math.log(4), 0.0])
    with pytest.raises(ValueError):
        idf_weights(np.array([5]), 4)


def test_document_frequencies_count_documents_not_occurrences() -> None:
    """oracle: hand-worked; mount occurs 3 times in 2 documents."""
    assert document_frequencies(count_matrix(HAND_DOCS)).tolist() == [1, 1, 2, 3]


# ---------------------------------------------------------------- cosine


def test_cosine_matrix_hand_example() -> None:
    """oracle: hand-worked; (1, 0) and (1, 1) meet at 45 degrees, cos = 1 / sqrt 2; a zero row
    has cosine 0 with everything, itself included."""
    C = cosine_matrix(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]))
    r = 1 / math.sqrt(2)
    np.testing.assert_allclose(C, [[1, r, 0], [r, 1, 0], [0, 0, 0]], rtol=1e-15)


def test_cosine_matrix_matches_scikit_learn_on_sparse_tfidf(random_docs: list[list[str]]) -> None:
    """oracle: scikit-learn's cosine_similarity (which also gives 0 for zero rows)."""
    X, _ = tfidf_matrix(random_docs)
    C = cosine_matrix(X)
    assert C.shape == (40, 40)
    np.testing.assert_allclose(C, cosine_similarity(X), atol=1e-12)
    np.testing.assert_allclose(C, cosine_matrix(X.toarray()), atol=1e-15)
    np.testing.assert_allclose(C, C.T, atol=0)
    assert C.min() >= 0.0 and C.max() <= 1.0


def test_cosine_matrix_of_wide_sparse_rows_holds_their_columns_only() -> None:
    """oracle: scikit-learn's cosine_similarity, and tracemalloc's peak against a hand bound.
    Twenty rows of five entries each in a vocabulary of 2,000,000 columns (identifiers make a
    vocabulary grow with the chunks): the cosines are scikit-learn's, and the peak stays under
    1 MB, where a dense copy of the rows alone is 20 x 2,000,000 x 8 = 320 MB."""
    import tracemalloc

    rng = np.random.default_rng(7)
    width = 2_000_000
    cols = np.sort(rng.choice(width, size=(20, 5), replace=False), axis=1)
    X = sp.csr_matrix(
        (rng.uniform(0.5, 2.0, 100), cols.ravel(), np.arange(0, 101, 5)), shape=(20, width)
    )
    X[3, cols[3, 0]] = 0.0  # an explicit zero, as a weighted term of idf 0 leaves
    expected = cosine_similarity(X)
    tracemalloc.start()
    try:
        C = cosine_matrix(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(C, expected, atol=1e-12)
    assert peak < 1_000_000


def test_cosine_matrix_rejects_non_matrices() -> None:
    """oracle: the contract."""
    with pytest.raises(ValueError, match="2-d"):
        cosine_matrix(np.ones(3))
